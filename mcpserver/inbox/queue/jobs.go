package queue

import (
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Queue names, one per stage so a slow stage (a model call, a receiver that
// times out) never holds up another.
const (
	QueueAgent       = "inbox_agent"
	QueueWorkflow    = "inbox_workflow"
	QueueWebhook     = "inbox_webhook"
	QueueMaintenance = "inbox_maintenance"
)

// Job kinds (stable: they are stored in River's table).
const (
	KindAgent     = "inbox.agent"
	KindWorkflow  = "inbox.workflow"
	KindWebhook   = "inbox.webhook"
	KindRetention = "inbox.retention"
)

// Stages name the pipeline's stages by their job kinds: the words logs and
// metrics use for them ("agent", "workflow", …). A stage's kind is added
// here beside its arguments.
var Stages = map[string]string{KindAgent: "agent", KindWorkflow: "workflow", KindWebhook: "webhook", KindRetention: "retention"}

// AgentArgs asks for an agent run on an e-mail: inserted with the e-mail
// record when it is received ("email.received"), and by emails_reprocess.
// Unique by workspace, e-mail and request: the intake's job for an e-mail is
// inserted once however often the insert is retried, and each reprocess
// request is its own job.
type AgentArgs struct {
	Workspace string `json:"workspace" river:"unique"`
	EmailID   string `json:"email_id" river:"unique"`
	// Request is "" for the run the intake asks for, the reprocess request's
	// id otherwise.
	Request string `json:"request,omitempty" river:"unique"`
	// Retry, from 1, is which retry of the e-mail's agent run this is: its
	// run before failed for a cause that may pass (the pipeline's retry
	// schedule); 0 for a first run.
	Retry int `json:"retry,omitempty" river:"unique"`
	// After is the agent run whose failure scheduled this retry: the
	// retry runs only if it is still the e-mail's latest run.
	After string `json:"after,omitempty"`
}

// Kind implements river.JobArgs.
func (AgentArgs) Kind() string { return KindAgent }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (AgentArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueAgent, MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// WorkflowArgs asks for the workflow of an agent run to be run, or — with
// ResumeOf — for an interrupted run of it to be resumed. Unique by agent
// run and resume request: one workflow run per agent run, one per resume
// request. A worker that finds the run's record already started (a crash
// mid-run) records it as interrupted and never sends its steps again.
type WorkflowArgs struct {
	Workspace  string `json:"workspace" river:"unique"`
	AgentRunID string `json:"agent_run_id" river:"unique"`
	// ResumeOf is the interrupted workflow run to take up; empty for the
	// agent run's own run.
	ResumeOf string `json:"resume_of,omitempty" river:"unique"`
	// Request is the resume request's id.
	Request string `json:"request,omitempty" river:"unique"`
}

// Kind implements river.JobArgs.
func (WorkflowArgs) Kind() string { return KindWorkflow }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (WorkflowArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueWorkflow, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// WebhookArgs asks for one event to be delivered to one webhook; the
// delivery record (created with the job) is updated after each attempt.
// Unique by delivery. Attempts are many and spaced (the worker's retry
// schedule spreads them over about a day).
type WebhookArgs struct {
	Workspace  string `json:"workspace" river:"unique"`
	DeliveryID string `json:"delivery_id" river:"unique"`
}

// Kind implements river.JobArgs.
func (WebhookArgs) Kind() string { return KindWebhook }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (WebhookArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueWebhook, MaxAttempts: WebhookMaxAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// unfinished are the states of a job not yet done: a unique job is unique
// among these only.
var unfinished = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
	rivertype.JobStateRunning, rivertype.JobStateScheduled}

// WebhookMaxAttempts is how many times a delivery is tried.
const WebhookMaxAttempts = 10

// RetentionArgs asks for the raw messages past their workspace's retention
// to be purged (a periodic job, also run when a process starts; Workspace ""
// means every workspace). Unique while one is queued or running, so that
// replicas scheduling it at once run it once — but never against a run that
// has finished: a process started again within the hour runs it at start.
type RetentionArgs struct {
	Workspace string `json:"workspace,omitempty" river:"unique"`
}

// Kind implements river.JobArgs.
func (RetentionArgs) Kind() string { return KindRetention }

// InsertOpts implements river.JobArgsWithInsertOpts.
func (RetentionArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueMaintenance, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: unfinished}}
}
