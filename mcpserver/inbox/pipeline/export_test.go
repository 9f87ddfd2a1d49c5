package pipeline

// SetCrashHook sets the hook the stages call at their named points (see
// crashHook); the crash tests' server process uses it to stop itself.
func SetCrashHook(f func(point string)) { crashHook = f }
