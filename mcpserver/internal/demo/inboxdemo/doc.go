// Package inboxdemo is the Inbox's demo data: the records `kobana serve
// -demo`, `kobana demo` and the products' tests start from, on top of the
// demo organization of package demo — the Finance workspace's inboxes,
// agents, secrets and webhooks, and forty days of e-mails with their agent
// runs, workflow runs, deliveries and events (succeeded, and failed for
// each cause), plus a Sandbox workspace whose records Finance cannot see.
//
// Load is the entry point. It writes through package inbox's repositories
// only, so the demo data obeys the same rules as any other record (its
// e-mails pass their inboxes' sender rules, its automatic reply is
// rejected by the same Screen the intake uses).
package inboxdemo
