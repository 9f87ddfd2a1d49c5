package workflow

import _ "embed" // for the go:embed directive below

// Schema is workflow.schema.json: the JSON Schema (draft 2020-12) of the
// document an agent answers with, {"result": …, "workflow": [steps]}.
// Editors use the file; programs that hand the schema on (a model's
// structured output) use this copy, which is always the file's.
//
//go:embed workflow.schema.json
var Schema []byte
