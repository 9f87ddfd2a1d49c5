//go:build js && wasm

package main

import (
	"encoding/json"
	"syscall/js"

	"github.com/kobana/workflow/mcpserver/playground/engine"
)

// version is reported to the page and, as the language server's version,
// to its client; the build may set it with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	var listener js.Value
	session := engine.NewSession(func(msg string) {
		if listener.Type() == js.TypeFunction {
			listener.Invoke(msg)
		}
	}, version)
	api := map[string]any{
		"version": version,
		// lspListen(fn) sets the function each server message goes to.
		"lspListen": js.FuncOf(func(_ js.Value, args []js.Value) any {
			listener = args[0]
			return nil
		}),
		// lspSend(message) passes one JSON-RPC message to the language
		// server; its answers reach the listener before lspSend returns.
		"lspSend": js.FuncOf(func(_ js.Value, args []js.Value) any {
			session.Send(args[0].String())
			return nil
		}),
		// plan(document, inputs, eml) returns the dry run as JSON; inputs
		// is a JSON object (secret_names, facts, responses, now) and eml a
		// Uint8Array or null.
		"plan": js.FuncOf(func(_ js.Value, args []js.Value) any {
			var in engine.Inputs
			if err := json.Unmarshal([]byte(args[1].String()), &in); err != nil {
				return `{"problems":["the page's inputs are not JSON"]}`
			}
			if len(args) > 2 && args[2].Type() == js.TypeObject {
				in.EML = make([]byte, args[2].Get("length").Int())
				js.CopyBytesToGo(in.EML, args[2])
			}
			return engine.PlanJSON(args[0].String(), in)
		}),
		// compileLoop(document, n) compiles the document n times.
		"compileLoop": js.FuncOf(func(_ js.Value, args []js.Value) any {
			return engine.CompileLoop(args[0].String(), args[1].Int())
		}),
		// samples() returns the sample documents and their inputs as JSON.
		"samples": js.FuncOf(func(js.Value, []js.Value) any {
			b, _ := json.Marshal(engine.Samples())
			return string(b)
		}),
		// sampleEmail() returns {name, data} of the sample e-mail.
		"sampleEmail": js.FuncOf(func(js.Value, []js.Value) any {
			name, data := engine.SampleEmail()
			arr := js.Global().Get("Uint8Array").New(len(data))
			js.CopyBytesToJS(arr, data)
			return map[string]any{"name": name, "data": arr}
		}),
	}
	js.Global().Set("kobana", js.ValueOf(api))
	if ready := js.Global().Get("kobanaReady"); ready.Type() == js.TypeFunction {
		ready.Invoke()
	}
	select {} // serve the page's calls for as long as it lives
}
