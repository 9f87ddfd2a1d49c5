// Package prompt writes what an agent's model is told: the system message
// (the agent's own instructions and skills, then the platform's rules for
// the answer — result always, a workflow only when an action is needed, the
// step fields, the four placeholder namespaces, the workspace's secret
// names — with a worked example) and the user message (the e-mail: sender
// and its authentication, recipients, subject, date, attachments as
// metadata, text body), and the repair message that sends the linter's
// diagnostics back.
//
// The text lives in one place, the embedded templates system.tmpl,
// user.tmpl and repair.tmpl, named by Version, which every agent run
// records. The rule lists come from the compiler's own tables, so the prompt
// and the validator cannot disagree. Attachment bytes are never part of the
// text: an attachment is its index, filename, content type, size and
// defects, whatever its size.
//
// Entry points: Render (the first two messages), Repair (a repair round's
// message), Version, Example.
package prompt
