// Package billing is the Billing MCP product: an organization's customers,
// subscriptions, invoices (boletos and card charges in BRL) and the NF-e
// (Brazilian electronic invoices) issued for them. It declares the
// product's tools (all prefixed billing_), the kobana://billing/ resources
// and templates, its four prompts, its completions and its confirmation
// policy for the mcpserver framework.
//
// Entry points:
//   - New(Options) returns the *mcpserver.Product to serve and the
//     *Product behind it.
//   - SeedDemo fills a store with the Billing records of the demo
//     organization that inboxdemo.Load creates (same organization, people and
//     tokens).
//   - AccessKey, ValidAccessKey, ValidCPF and ValidCNPJ are the fiscal
//     number rules the product enforces.
//
// Billing data belongs to an organization, not to a workspace: every record
// is kept in store.Records under the caller's organization id (the kinds
// are declared in models.go), so a record of another organization is simply
// not found, whichever workspace the token names. Invoice and NF-e numbers
// come from the store's counters (store.Counters), so replicas sharing a
// database never hand out the same number.
//
// Outside systems: NF-e are issued in the homologation environment (tpAmb
// 2, no fiscal value) and SEFAZ's checks on the recipient are made in
// process; no web service is called. Refunds are recorded, and payment
// reminders are stored as queued e-mails (kind billing_reminder) for a
// mailer to send: this package sends nothing over the network.
//
// Policy: destructive tools (delete, cancel, refund) are confirmed with the
// user on 2026-07-28 when the client supports elicitation forms; a decline
// answers USER_DECLINED. On era 2025, or without form support, they run
// directly and confirmation is left to the client.
package billing
