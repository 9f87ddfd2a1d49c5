// Package inboxmcp is the Inbox MCP product: the tools, the kobana://inbox/
// resources and templates, the four prompts, the completions and the
// confirmation policy through which people and agents see and change the
// Inbox domain (package github.com/kobana/workflow/inbox) with the mcpserver
// framework. It holds no domain rules of its own: records, filters, runs and
// webhook signatures are the domain's (the demo records, package inboxdemo's).
//
// Entry points:
//   - New(Options) returns the *mcpserver.Product; Options injects the store,
//     the workflow linter (Lint), the Processor that emails_reprocess calls
//     (default inbox.Inline over the AgentRunner and workflow Runner: the
//     stages run within the call), the Messages the raw .eml is read from,
//     and the SSRF-guarded HTTP client used for webhooks.
//   - Product.DownloadHandler serves the short-lived signed .eml links that
//     emails_eml hands out.
//
// Every read and write is scoped to the caller's workspace, so a record of
// another workspace is simply not found.
package inboxmcp
