// Command generate builds the playground's WebAssembly module into
// playground/static (playground.wasm and wasm_exec.js), where the
// playground package embeds it: `go generate ./mcpserver/playground`.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/kobana/workflow/mcpserver/playground"
)

func main() {
	if err := playground.Build(context.Background(), "static"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
