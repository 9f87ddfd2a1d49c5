// Package inbox is the Inbox domain: e-mail inboxes whose AI agent reads
// each message and may answer with a workflow of outgoing requests. It holds
// what every consumer of the Inbox shares — the MCP product
// (mcpserver/inboxmcp) and the mail pipeline (intake, queue, stages) — and
// imports none of them.
//
// Records (records.go): Workspace (plan Limits), Inbox (recipients, Filters,
// AttachmentRules), Email (headers, body, attachments metadata, SenderAuth),
// Agent, AgentRun, WorkflowRun, Webhook, Delivery and SystemEvent. Each is
// a Document: its Key says where it is stored (kind, id, and the parent and
// status that listings filter on).
//
// Repository: Repo holds the store's typed repository (store.Repo) of each
// kind (Repo.Emails, Repo.AgentRuns, …), built by NewRepo from a store or,
// with In, from a transaction, so that records written together commit
// together. Every read and write names the workspace, so a record of
// another workspace is not found; errors are *store.RecordError, matching
// store.ErrNotFound and store.ErrConflict.
//
// Rules, as pure functions the intake calls: Screen applies an inbox's
// allowed senders (matched against the authenticated sender, never the From
// header: Inbox.AllowsSender, MatchSender), its filters (Filters.Check,
// AutoReply) and attachment rules (AttachmentRules.Check, TypeAllowed), and
// returns a *Rejection with a stable reason, recorded with Email.Reject.
//
// Messages: ParseEmail and ReadEmail turn a raw message into an e-mail
// record. A stored message is read through Message, one consistent snapshot
// (io.ReaderAt plus Size), opened by Messages; ErrPurged says it is gone.
// BlobMessages serves messages kept in store.Blobs.
//
// Runs: AgentRunner (ReplayRunner makes no model call) is the seam the model
// client plugs into; AgentInput never holds a secret value. ReadAnswer reads
// an agent's answer once, as the compiler does (is it an answer, does it
// ask for a workflow, its plan). RunContext.Facts gives the kobana.* facts
// of a run — kobana.env by one rule (RunContext.Env) for every run and dry
// run. NewAgentRun and Email.ApplyRun turn results into records; a
// WorkflowRun holds package runrecord's step records, and the
// workflow_run.failed payload (WorkflowRunFailed) its words. Processor is
// what emails_reprocess calls (the pipeline implements it), in the modes
// ReprocessRestart and ReprocessResume.
//
// Models and money: Models, ModelByID and Cost (USD, rounded by RoundUSD);
// UsageOf adds up a workspace's records of a period.
//
// Webhooks: the event names (Event* constants, WebhookEvents), the delivery
// body (DeliveryBody), its signature (Sign, VerifySignature), one delivery
// attempt (Send) and a webhook's health (Webhook.Observe).
//
// Demo: Seed fills a store with the demo organization that `kobana serve
// -demo` and the tests use; the Demo* constants name its records.
package inbox
