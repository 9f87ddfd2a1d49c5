// Package examples holds the project's sample inputs — example workflow
// documents (workflows/), sample e-mails (emails/), and run facts and
// example responses to plan the complete example with (inputs/) —
// and embeds the ones that `kobana demo` and the playground need, so that
// they run from any directory with nothing else on disk.
//
// The runnable example programs live in the sub-directories: run (a workflow
// run from Go with a custom secret source and an .eml), receiver (the
// receiving end of a multipart upload) and lint (the linter as a library).
package examples
