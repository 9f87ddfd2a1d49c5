// Package server runs the Kobana Inbox and Billing as one service: the MCP
// products on Streamable HTTP and stdio, the Inbox's mail intake (SMTP and
// HTTP), and the pipeline that works the Inbox's queue (agent runs,
// workflows, webhook deliveries, retention), all over one store. It is the
// wiring kobana serve runs, importable by a Go service that wants the same
// server with its own store, model runner or outbound transport.
//
// Entry points:
//
//   - Config: everything a server takes — the store (and, for the embedded
//     store, its file), the products (ProductNames), the demo, the SSRF
//     guard, the agents' model, the listeners (HTTP, Stdio, Intake), whether
//     this process works the queue (Process), and where it logs and tells
//     its operator what it does.
//   - Run serves a Config until its context ends or a service stops on its
//     own, then stops every service and waits for it. A Config that cannot
//     be served is a *ConfigError (ErrStdioToken among them).
//
// An embedded store's queue is worked by one process at a time: the one
// holding the lock file beside the database; another server on the same
// file serves and receives, and takes the queue over when the holder
// stops. Replicas on PostgreSQL share its queue.
package server
