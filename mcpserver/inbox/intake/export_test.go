package intake

// SetTestHook makes fn run at the session's points (testHook) until the
// returned function is called.
func SetTestHook(fn func(point string)) (restore func()) {
	testHook.Store(&fn)
	return func() { testHook.Store(nil) }
}
