//go:build !(js && wasm)

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "playground/wasm is the playground's WebAssembly module: build it with GOOS=js GOARCH=wasm (go generate ./mcpserver/playground)")
	os.Exit(2)
}
