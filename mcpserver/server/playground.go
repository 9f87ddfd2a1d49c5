package server

import (
	"fmt"
	"net/http"

	"github.com/kobana/workflow/mcpserver/playground"
)

// PlaygroundPath is where the HTTP listener serves the browser playground.
const PlaygroundPath = "/playground/"

// addPlayground serves the playground embedded in this binary at
// PlaygroundPath among handlers. It is a static page: the compiler runs in
// the browser and no route reads a record.
func addPlayground(handlers map[string]http.Handler) {
	handlers[PlaygroundPath] = http.StripPrefix("/playground", playground.Handler(playground.Files()))
}

// playgroundNote is the notice about the playground, once the HTTP
// listener listens at base.
func playgroundNote(base string) string {
	if !playground.HasModule(playground.Files()) {
		return fmt.Sprintf("playground: %s%s needs its WebAssembly module, which this kobana was built without (go generate ./mcpserver/playground, then build kobana again)", base, PlaygroundPath)
	}
	return fmt.Sprintf("playground on %s%s", base, PlaygroundPath)
}
