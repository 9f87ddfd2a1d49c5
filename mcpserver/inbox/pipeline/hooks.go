package pipeline

// crashHook, when set, is called at the named points of the stages where
// the crash tests stop the process (SIGKILL) to check what a restart
// finds: "agent.start", "agent.ran", "agent.committed", "workflow.start",
// "workflow.sending" (the record says a step is being sent, nothing sent
// yet), "workflow.sent" (the receiver answered, the outcome not yet
// recorded), "workflow.ran", "workflow.committed", "workflow.interrupted",
// "webhook.sent". Only the package's tests set it; it is nil otherwise.
var crashHook func(point string)

// hit marks a named point of the stages (see crashHook).
func hit(point string) {
	if h := crashHook; h != nil {
		h(point)
	}
}
