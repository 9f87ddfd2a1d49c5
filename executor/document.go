package executor

import (
	"context"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/resolve"
)

// NotValidError is the Error of a DocumentRecord whose document did not
// validate.
const NotValidError = "the workflow did not validate; nothing was sent"

// DocumentRecord is the persisted outcome of running an agent's document
// ({"result": …, "workflow": […]}): the run record, and what the compiler
// said about the document. Like RunRecord, it holds no secret value and no
// attachment byte.
type DocumentRecord struct {
	RunRecord
	// Error is NotValidError when the document did not validate; then no
	// step ran and Steps is empty. It is empty when the workflow ran.
	Error string `json:"error,omitempty"`
	// Diagnostics are the document's errors when it did not validate, else
	// its warnings (e.g. a forward reference its step failed on).
	Diagnostics compile.Diagnostics `json:"diagnostics,omitempty"`
}

// Valid reports whether the document validated (and so its workflow ran).
func (r *DocumentRecord) Valid() bool { return r.Error == "" }

// RunDocument validates doc, the agent's output, and runs its workflow with
// env. A document that does not validate sends nothing: its record is a
// failed run with no steps, NotValidError and the errors. A document
// without a workflow, or with an empty one, is a succeeded run with no
// steps. Diagnostics quote the document, so they are redacted with env's
// secrets like the rest of the record.
func (e *Executor) RunDocument(ctx context.Context, doc []byte, env Env) *DocumentRecord {
	plan, diags := compile.Compile(doc)
	red := resolve.NewRedactor(env.Secrets)
	if diags.HasErrors() {
		now := e.opts.Now().UTC()
		return &DocumentRecord{
			RunRecord:   RunRecord{Status: RunFailed, StartedAt: now, FinishedAt: now, Steps: []StepRecord{}},
			Error:       NotValidError,
			Diagnostics: redactDiagnostics(diags.Errors(), red),
		}
	}
	rec := &DocumentRecord{Diagnostics: redactDiagnostics(diags, red)}
	if plan == nil || len(plan.Steps) == 0 {
		now := e.opts.Now().UTC()
		rec.RunRecord = RunRecord{Status: RunSucceeded, StartedAt: now, FinishedAt: now, Steps: []StepRecord{}}
		return rec
	}
	rec.RunRecord = *e.Run(ctx, plan, env)
	return rec
}

// RunDocument validates and runs doc on the shared Executor with default
// Options (see Run).
func RunDocument(ctx context.Context, doc []byte, env Env) *DocumentRecord {
	return defaultExecutor().RunDocument(ctx, doc, env)
}

// redactDiagnostics returns a copy of ds whose texts, which may quote the
// document, hold no secret value.
func redactDiagnostics(ds compile.Diagnostics, red *resolve.Redactor) compile.Diagnostics {
	if len(ds) == 0 {
		return nil
	}
	out := make(compile.Diagnostics, len(ds))
	for i, d := range ds {
		d.Message = red.String(d.Message)
		d.Pointer = red.String(d.Pointer)
		d.Suggestion = red.String(d.Suggestion)
		out[i] = d
	}
	return out
}
