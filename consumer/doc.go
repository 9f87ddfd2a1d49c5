// Package consumer is a module of its own that uses the library as another
// Kobana service would: through `go get github.com/kobana/workflow` (here a
// replace directive points at this repository), importing only the
// library's packages. Its three programs are what such a service writes
// first — validate an answer with positions, run the payable example
// against a receiver, list a template's references — and its test checks
// that the module's dependency graph holds nothing of the platform.
package consumer
