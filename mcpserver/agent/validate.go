package agent

import (
	"encoding/json"
	"strings"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/compile/lint"
)

// AnswerFile is the name an agent's answer is linted under: the file name
// in the diagnostics a model is sent ("answer.json:3:7: error: …").
const AnswerFile = "answer.json"

// Validation is what the platform's workflow linter says about an agent's
// answer: lint.Bytes's report, the call the workflows_validate tool makes
// too (returning JSON to an author) while the repair loop sends Text to the
// model, so what an agent is told and what an author sees agree.
type Validation struct {
	// Report is the linter's report on the answer.
	Report lint.Report
}

// Validate lints an agent's answer, {"result": …, "workflow": [steps]}, on
// its own.
func Validate(doc []byte) Validation { return ValidateWith(doc, lint.Options{}) }

// ValidateWith lints an agent's answer with what is known of the
// workspace: its secret names and where requests may go (lint.Bytes).
// The repair loop lints with the run's, so a reference to a secret the
// workspace lacks or a request the policy refuses is a diagnostic the
// model is sent back, not a failure at run time.
func ValidateWith(doc []byte, opts lint.Options) Validation {
	return Validation{Report: lint.Bytes(AnswerFile, doc, opts)}
}

// OK reports whether the workflow may run: no diagnostic is an error.
func (v Validation) OK() bool { return v.Report.Errors() == 0 }

// Answer reports whether the document is a usable agent answer: it may run,
// and it is an object with a "result" (the answer's contract, which the
// linter only warns about).
func (v Validation) Answer() bool { return v.OK() && !v.lacksResult() }

func (v Validation) lacksResult() bool {
	for _, d := range v.Report.Diagnostics {
		if d.Code == compile.CodeMissingResult || d.Code == compile.CodeNotObject {
			return true
		}
	}
	return false
}

// Text is the linter's text output: each diagnostic as
// "answer.json:LINE:COL: SEVERITY: MESSAGE [CODE]" with the source line and
// a caret under the range (the message carries the did-you-mean), then a
// summary line.
func (v Validation) Text() string {
	var b strings.Builder
	lint.WriteText(&b, []lint.Report{v.Report}, lint.TextOptions{})
	return b.String()
}

// JSON is the diagnostics as compile encodes them (severity, code, message,
// pointer, range, suggestion); "[]" when there are none.
func (v Validation) JSON() json.RawMessage {
	ds := v.Report.Diagnostics
	if ds == nil {
		ds = compile.Diagnostics{}
	}
	b, err := json.Marshal(ds)
	if err != nil {
		return json.RawMessage("[]")
	}
	return b
}

// unfence returns the document inside an answer wrapped in a Markdown code
// fence (```json … ``` or ~~~ … ~~~, with or without prose around it) and
// reports whether it was fenced. An answer that starts with "{" or "[" is
// taken as it is; so is one with no fence, which the linter then reports.
func unfence(answer string) (doc string, fenced bool) {
	s := strings.TrimSpace(answer)
	if s == "" || s[0] == '{' || s[0] == '[' {
		return s, false
	}
	lines := strings.SplitAfter(s, "\n")
	for i := 0; i < len(lines); i++ {
		t := strings.TrimSpace(lines[i])
		fence := ""
		switch {
		case strings.HasPrefix(t, "```"):
			fence = "```"
		case strings.HasPrefix(t, "~~~"):
			fence = "~~~"
		default:
			continue
		}
		info := strings.ToLower(strings.TrimSpace(strings.TrimLeft(t, fence[:1])))
		var body strings.Builder
		j := i + 1
		for ; j < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[j]), fence); j++ {
			body.WriteString(lines[j])
		}
		if info == "" || info == "json" || info == "jsonc" || info == "json5" {
			return strings.TrimSpace(body.String()), true
		}
		i = j // another language's block: skip it whole
	}
	return s, false
}
