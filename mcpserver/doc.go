// Package mcpserver is the product-neutral MCP server framework of Kobana: a
// product (Inbox, Billing) declares its tools, resources, prompts, completion
// source and confirmation policy, and the framework serves them over stdio
// and Streamable HTTP for both protocol eras (2025 handshake sessions and the
// stateless 2026-07-28 protocol), with one endpoint for both.
//
// Entry points:
//   - New builds a Server from Options (a store and the products), after
//     checking every declaration (names, templates, the tools resources and
//     prompts rely on, completion sources); see validate.go.
//   - NewTool declares a typed tool, its schemas derived from Go types (one
//     type per node, constraint tags; see schema.go); Resource, Prompt,
//     IDCompleter and Policy declare the rest.
//   - Server.HTTPHandler serves /mcp (bearer tokens, Origin/Host checks, era
//     routing); Server.ServeStdio serves one stdio connection for a token
//     and answers what it read before the input ended.
//   - CallerFrom gives handlers the authenticated caller of the request.
//
// Permissions: a token names a person, organization, workspace and scopes;
// the person's role in the workspace bounds the tools it may run. The set of
// tools a caller may run (role ∩ scope) is computed once per request, and
// every list, read, prompt and completion is derived from that set.
//
// Destructive tools are confirmed with the user on 2026-07-28 through a
// signed, expiring, single-use requestState (see package confirm and
// confirm.go); the product's Policy decides what other clients get.
package mcpserver
