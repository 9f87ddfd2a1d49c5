// Package examples holds the project's sample inputs — the seed's workflow
// documents (workflows/) and sample e-mails (emails/) — and embeds the ones
// that `kobana demo` needs, so that the demo runs from any directory with
// nothing else on disk.
//
// The runnable example programs live in the sub-directories: run (a workflow
// run from Go with a custom secret source and an .eml), receiver (the
// receiving end of a multipart upload) and lint (the linter as a library).
package examples
