// Package pipeline is the Inbox's processing: the stages that run, as jobs
// on the queue (package inbox/queue, River), on every e-mail the intake
// accepted — the agent, the workflow it answers with, the webhook
// deliveries of what happened — and the retention of raw messages.
//
// Entry points:
//
//   - New registers the stages' workers and the periodic retention job on a
//     queue, over a Config: the store, the raw messages (the
//     mailstore.Store the intake keeps them in, with mailstore.WithBlobs
//     for messages kept in the store's blobs), the AgentRunner (the model client,
//     or a ScriptedAgent, which calls no model: the one place a model plugs
//     in), the part index the intake stored (Index), and the executor's
//     options (SSRF guard, network, timeouts), which webhook deliveries go
//     through too.
//   - Pipeline.Notify fans an event out to the webhooks that subscribe to it,
//     in the transaction that records the event (the intake calls it for
//     email.received).
//   - Pipeline.Processor is emails_reprocess's inbox.Processor: it enqueues
//     the same stages (a restart), or the workflow stage that resumes an
//     interrupted run (a resume).
//   - Pipeline.Recover is the restart scan of a process that alone works its
//     database's queue (the embedded store): jobs a stopped process left
//     running resume at once.
//
// The stages (docs/pipeline.md):
//
//  1. Agent (queue.AgentArgs): the inbox's agent runs on the e-mail; the
//     agent run (status, cause, output, tokens, cost), the e-mail's state,
//     the events and their deliveries and — when the answer has a workflow —
//     the workflow job are written in one transaction with the job's
//     completion.
//  2. Workflow (queue.WorkflowArgs): the agent's document is read once and
//     its plan run by the executor with the workspace's secrets, every
//     kobana.* fact taken from the records and the stored message read from
//     one snapshot. The run's journal (a runrecord.Journal on the store)
//     commits, before each request leaves, the record saying which step is
//     being sent, and after the response the step's outcome (retried for a
//     few seconds when the write fails, and for as long as the job lives
//     while the store refuses writes: the stages pause, see
//     store.ErrRefused); it gives each step its identity,
//     the workflow run's id and the step's index. A job that runs again and
//     finds its run still running (the process stopped mid-run, or its
//     earlier attempt could not record a step's outcome — its error says
//     so) records it interrupted — the step that was in flight "unknown",
//     with the reason — and sends nothing: steps are never sent again on
//     their own. A job the queue stops mid-run records the same at once.
//     The final record, the agent run's and the e-mail's outcome, the
//     events and their deliveries commit with the job's completion. A
//     resume (WorkflowArgs.ResumeOf) takes up an interrupted run: its ended
//     steps are kept, the unknown one is sent again with the same identity.
//  3. Webhooks (queue.WebhookArgs): each delivery is signed, sent through
//     the SSRF-guarded client, and retried on a schedule of about a day
//     (DefaultWebhookSchedule, with jitter); every attempt is recorded on
//     the delivery, with the webhook's health and an event.
//  4. Retention (queue.RetentionArgs, periodic): raw messages kept longer
//     than their workspace's retention are deleted and their e-mails marked
//     purged; a later run that needs their attachments fails those steps
//     before sending, saying so.
//
// Records carry ids derived from their job's ids, so a job that runs again
// after a crash finds what it committed the first time: each e-mail is
// processed once, each workflow run once.
package pipeline
