package pipeline

import "github.com/kobana/workflow/mcpserver/inbox"

// Observer hears what the stages recorded, once it is committed: an agent
// run, a workflow run, an attempt of a webhook delivery, a raw message
// purged. A server hangs its log lines and metrics on it. Its methods must
// not block; they are called on the stage's goroutine.
type Observer interface {
	AgentRun(workspace string, run inbox.AgentRun)
	WorkflowRun(workspace string, run inbox.WorkflowRun)
	DeliveryAttempt(workspace string, d inbox.Delivery, a inbox.DeliveryAttempt)
	Purged(workspace, emailID string)
}

// noObserver hears nothing.
type noObserver struct{}

func (noObserver) AgentRun(string, inbox.AgentRun)                               {}
func (noObserver) WorkflowRun(string, inbox.WorkflowRun)                         {}
func (noObserver) DeliveryAttempt(string, inbox.Delivery, inbox.DeliveryAttempt) {}
func (noObserver) Purged(string, string)                                         {}

// observer is Config.Observer, or one that hears nothing.
func (p *Pipeline) observer() Observer {
	if p.cfg.Observer != nil {
		return p.cfg.Observer
	}
	return noObserver{}
}
