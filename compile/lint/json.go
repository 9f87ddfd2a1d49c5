package lint

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/kobana/workflow/compile"
)

// JSONOutput is the document WriteJSON prints.
type JSONOutput struct {
	// Diagnostics of every file in order; never null.
	Diagnostics []JSONDiagnostic `json:"diagnostics"`
}

// JSONDiagnostic is one diagnostic of the json format: the file it was
// found in, then the compiler's diagnostic in the one JSON shape every
// diagnostic has — in run records, MCP results and the dry run too:
// severity, code, message, pointer, range {start, end} (each a 1-based
// line and column, columns counting Unicode characters, and the 0-based
// byte offset; the end is exclusive) and, when there is one, suggestion.
type JSONDiagnostic struct {
	File string `json:"file"`
	compile.Diagnostic
}

// JSON converts reports to the json format; unreadable files are left out.
func JSON(reports []Report) JSONOutput {
	out := JSONOutput{Diagnostics: []JSONDiagnostic{}}
	for _, r := range reports {
		for _, d := range r.Diagnostics {
			out.Diagnostics = append(out.Diagnostics, JSONDiagnostic{File: r.File, Diagnostic: d})
		}
	}
	return out
}

// WriteJSON prints the reports as {"diagnostics": […]}, indented, with one
// entry per diagnostic; an empty list is [], never null.
func WriteJSON(w io.Writer, reports []Report) error {
	return encodeJSON(w, JSON(reports))
}

func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
