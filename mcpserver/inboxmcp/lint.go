package inboxmcp

import "encoding/json"

// LintFunc validates a workflow document; diagnostics is JSON the tool
// returns as is, ok reports whether the document may run.
type LintFunc func(doc []byte) (diagnostics json.RawMessage, ok bool)
