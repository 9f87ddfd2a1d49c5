// Package resolve answers the references of a compiled workflow step against
// the run's Scope: workspace secrets, run facts (kobana.*), the responses of
// earlier steps and the attachments of the triggering e-mail.
//
// Scope.Resolve is the entry point. Its errors are typed so that the
// executor can tell a step to skip (*SkipError: it depends on a step that
// failed or was skipped) from a step that fails before anything is sent
// (*RefError: a missing secret, an undefined fact, a forward reference, a
// null or missing path, a missing attachment, an unreadable e-mail).
//
// Every source is an interface (Secrets, Facts, Attachments) so services plug
// in their own; SecretMap, FactMap and package resolve/eml (EMLFile,
// EMLIndexed) are the ready-made implementations. The e-mail is opened once
// per run and is one snapshot for the whole run; before a step sends an
// attachment's bytes, Attachments.Check confirms they can still be read,
// else the step fails before sending. Scope.Close releases the e-mail. A Redactor collects the secret values a run used, so that
// anything persisted can be scrubbed of them.
package resolve
