package lint

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kobana/workflow/compile"
)

// Report is the result of linting one document.
type Report struct {
	// File is the name the document is reported under.
	File string
	// Source is the document as read; the text writer quotes its lines.
	Source []byte
	// Diagnostics is every problem found, ordered by position.
	Diagnostics compile.Diagnostics
	// Err is set when the document could not be read; there are then no
	// diagnostics and Source is empty.
	Err error
}

// Options are what the linter knows of the workspace a document will run
// in: its secret names and where its requests may go (compile.Options).
// The zero Options know nothing, and lint the document alone.
type Options = compile.Options

// OK reports whether the document may run: no diagnostic is an error (and
// it could be read).
func (r Report) OK() bool { return r.Err == nil && r.Errors() == 0 }

// Bytes lints one document held in memory with what is known of the
// workspace, and reports it under name. The agent's repair loop and the
// workflows_validate tool call it with the workspace's secret names and
// policy.
func Bytes(name string, doc []byte, opts Options) Report {
	_, ds := compile.Compile(doc, opts)
	return Report{File: name, Source: doc, Diagnostics: ds}
}

// Reader lints the document read from r and reports it under name. It reads
// at most compile.MaxDocumentSize+1 bytes, so an endless stream is answered
// with a document-too-large diagnostic rather than a hang; a read error is
// returned in Report.Err.
func Reader(name string, r io.Reader, opts Options) Report {
	doc, err := io.ReadAll(io.LimitReader(r, compile.MaxDocumentSize+1))
	if err != nil {
		return Report{File: name, Err: fmt.Errorf("read %s: %w", name, err)}
	}
	if len(doc) > compile.MaxDocumentSize {
		// The rest of the stream is not read: its size is unknown.
		return Report{File: name, Source: doc, Diagnostics: compile.Diagnostics{{
			Severity: compile.SeverityError,
			Code:     compile.CodeTooLarge,
			Message:  fmt.Sprintf("document is larger than %d bytes (1 MiB), the limit", compile.MaxDocumentSize),
			Range:    compile.Range{Start: compile.Pos{Line: 1, Column: 1}, End: compile.Pos{Line: 1, Column: 1}},
		}}}
	}
	return Bytes(name, doc, opts)
}

// Files lints each file at paths, in order, reporting each under its path;
// an unreadable file gives a Report whose Err names it.
func Files(opts Options, paths ...string) []Report {
	out := make([]Report, len(paths))
	for i, p := range paths {
		out[i] = file(p, opts)
	}
	return out
}

func file(path string, opts Options) Report {
	f, err := os.Open(path)
	if err != nil {
		return Report{File: path, Err: err}
	}
	defer f.Close()
	r := Reader(path, f, opts)
	var pe *os.PathError
	if r.Err != nil && errors.As(r.Err, &pe) {
		r.Err = pe // it names the file already
	}
	return r
}

// Errors counts the report's diagnostics of error severity.
func (r Report) Errors() int { return r.count(compile.SeverityError) }

// Warnings counts the report's diagnostics of warning severity.
func (r Report) Warnings() int { return r.count(compile.SeverityWarning) }

func (r Report) count(s compile.Severity) int {
	n := 0
	for _, d := range r.Diagnostics {
		if d.Severity == s {
			n++
		}
	}
	return n
}

// Failed reports whether any report has an error, or, when strict is set,
// a warning. Unreadable files do not count here: they are I/O errors.
func Failed(reports []Report, strict bool) bool {
	for _, r := range reports {
		if r.Errors() > 0 || (strict && r.Warnings() > 0) {
			return true
		}
	}
	return false
}
