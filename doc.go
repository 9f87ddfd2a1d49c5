// Package workflow is the root of the module. It holds Schema, the JSON
// Schema of an agent's answer (workflow.schema.json), for programs that pass
// it on, such as the agent runner asking a model for structured output.
//
// The language and its tools live in the sub-packages: lang (placeholders),
// compile (documents → plans and diagnostics), resolve, emit and executor
// (running a plan), agent (a model writes the document), inbox and mcpserver
// (the products).
package workflow
