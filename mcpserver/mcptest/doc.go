// Package mcptest is the test kit of MCP products served by mcpserver.
//
//   - Connect (and ConnectChecked) opens a go-sdk client session over HTTP
//     (HTTP) or in process (Stdio) on either protocol era; every message the
//     server sends on it is checked by a Checker against the official MCP
//     JSON Schema of the era (vendored in testdata/schema) and every tool
//     result against its tool's outputSchema: a violation fails the test.
//   - ToolCall.Send sends one raw 2026-07-28 tools/call (per-request _meta,
//     requestState, inputResponses: what a go-sdk client cannot express) and
//     checks the answer the same way; FormCaps and YesAnswer are the usual
//     capabilities and answer of a client that confirms with a form.
//   - Snapshot compares what a session lists (tools, resources, templates,
//     prompts) with a golden file (internal/golden; -update rewrites it);
//     Snapshots does so for each role of an Env.
//   - Env is a product's server under test as its token holders reach it
//     (Serve starts it over HTTP): Connect, ConnectStdio, Call, OK, Fails,
//     RawCall and ToolCall (whose Concurrently sends one call many times at
//     once); Clock is a settable clock; DemoTokens, Member and Token mint
//     the tokens, Count counts stored records.
//   - EveryMessageKind drives a product's wire test: both eras, HTTP and in
//     process, every answer checked against the official schema, and every
//     kind of answer required to have been seen.
//   - CallConcurrently, TextOf, ErrorCode, RPCCode, ResultCode help
//     assertions; Tag and WantAnchored check a tool argument's schema tags
//     (enums, id patterns) against the product's values.
package mcptest
