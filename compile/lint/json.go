package lint

import (
	"encoding/json"
	"fmt"
	"io"
)

// JSONOutput is the document WriteJSON prints.
type JSONOutput struct {
	// Diagnostics of every file in order; never null.
	Diagnostics []JSONDiagnostic `json:"diagnostics"`
}

// JSONDiagnostic is one diagnostic of the json format. Lines and columns
// are 1-based (columns count Unicode characters), Offset is the 0-based
// byte offset of the start.
type JSONDiagnostic struct {
	File       string `json:"file"`
	Line       int    `json:"line"`
	Column     int    `json:"column"`
	EndLine    int    `json:"end_line"`
	EndColumn  int    `json:"end_column"`
	Offset     int    `json:"offset"`
	Severity   string `json:"severity"`
	Code       string `json:"code"`
	Message    string `json:"message"`
	Pointer    string `json:"pointer"`
	Suggestion string `json:"suggestion,omitempty"`
}

// JSON converts reports to the json format; unreadable files are left out.
func JSON(reports []Report) JSONOutput {
	out := JSONOutput{Diagnostics: []JSONDiagnostic{}}
	for _, r := range reports {
		for _, d := range r.Diagnostics {
			out.Diagnostics = append(out.Diagnostics, JSONDiagnostic{
				File: r.File, Line: d.Range.Start.Line, Column: d.Range.Start.Column,
				EndLine: d.Range.End.Line, EndColumn: d.Range.End.Column, Offset: d.Range.Start.Byte,
				Severity: d.Severity.String(), Code: d.Code, Message: d.Message, Pointer: d.Pointer,
				Suggestion: d.Suggestion,
			})
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
