package workflow_test

import (
	"encoding/json"
	"fmt"

	"github.com/kobana/workflow"
)

// Schema is the JSON Schema of an agent's answer, for a program that hands
// it on: an editor's settings, or a model asked for structured output.
func Example() {
	var s struct {
		Schema string `json:"$schema"`
		Title  string `json:"title"`
	}
	if err := json.Unmarshal(workflow.Schema, &s); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Title)
	fmt.Println(s.Schema)
	// Output:
	// Kobana agent output
	// https://json-schema.org/draft/2020-12/schema
}
