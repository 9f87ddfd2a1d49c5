// Package inbox is the Inbox MCP product: e-mail inboxes whose AI agent reads
// each message and may answer with a workflow of outgoing requests. It
// declares the product's tools, the kobana://inbox/ resources and templates,
// its four prompts, its completions and its confirmation policy, for the
// mcpserver framework.
//
// Entry points:
//   - New(Options) returns the *mcpserver.Product; Options injects the store,
//     the workflow linter (Lint), the workflow runner (Runner), the agent
//     runner (AgentRunner, default ReplayRunner: no model calls) and the
//     SSRF-guarded HTTP client used for webhooks.
//   - DownloadHandler serves the short-lived signed .eml URLs that
//     emails_eml hands out.
//   - Seed fills a store with the demo organization of `kobana serve -demo`.
//
// Records are kept as JSON documents in store.Records under the kinds
// declared in records.go; every read and write is scoped to the caller's
// workspace, so a record of another workspace is simply not found.
package inbox
