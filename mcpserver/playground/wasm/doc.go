// Command wasm is the browser playground's WebAssembly module: the
// project's own compiler, language server and dry run (package
// playground/engine) built with GOOS=js GOARCH=wasm and handed to the page
// as globalThis.kobana — lspSend/lspListen for the language server, plan
// for the dry run, compileLoop for timing, samples and sampleEmail for the
// page's starting documents. It sets the global and calls
// globalThis.kobanaReady, if defined, once it is ready.
//
// Build it with `go generate ./mcpserver/playground` (or playground.Build); built for
// any other platform it only says so.
package main
