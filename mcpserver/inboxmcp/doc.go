// Package inboxmcp is the Inbox MCP product: the tools, the kobana://inbox/
// resources and templates, the four prompts, the completions and the
// confirmation policy through which people and agents see and change the
// Inbox domain (package github.com/kobana/workflow/inbox) with the mcpserver
// framework. It holds no domain rules of its own: records, filters, runs and
// webhook signatures are the domain's (the demo records, package inboxdemo's).
//
// Entry points:
//   - New(Options) returns the *mcpserver.Product; Options injects the store,
//     the Processor that emails_reprocess calls (the pipeline's; without
//     one a reprocess is refused), the Messages the raw .eml is read from,
//     the SSRF guard the runs use (which workflows_plan judges addresses
//     with) and the SSRF-guarded HTTP client used for webhooks.
//     workflows_validate is the platform's linter (compile/lint) and
//     workflows_plan the dry run (package plan), called directly.
//   - Product.DownloadHandler serves the short-lived signed .eml links that
//     emails_eml hands out.
//
// Every read and write is scoped to the caller's workspace, so a record of
// another workspace is simply not found.
package inboxmcp
