package executor

import (
	"context"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/runrecord"
)

// RunDocument validates doc, the agent's output, and runs its workflow with
// env (see RunCompiled).
func (e *Executor) RunDocument(ctx context.Context, doc []byte, env Env) *runrecord.Document {
	plan, diags := compile.Compile(doc)
	return e.RunCompiled(ctx, plan, diags, env)
}

// RunCompiled runs a document the caller compiled already: plan and diags
// are what compile.Compile returned for it, so a service that reads an
// agent's document once (to decide what to do with it) runs it without
// reading it again. A document whose diagnostics hold an error sends
// nothing: its record is a failed run with no steps, runrecord.NotValidError
// and the errors. A document without a workflow, or with an empty one, is
// a succeeded run with no steps. Diagnostics quote the document, so they
// are redacted with env's secrets like the rest of the record.
func (e *Executor) RunCompiled(ctx context.Context, plan *compile.Plan, diags compile.Diagnostics, env Env) *runrecord.Document {
	red := resolve.NewRedactor(env.Secrets)
	if diags.HasErrors() {
		now := e.opts.Now().UTC()
		return &runrecord.Document{
			Run:         runrecord.Run{Status: runrecord.RunFailed, StartedAt: now, FinishedAt: now, Steps: []runrecord.Step{}},
			Error:       runrecord.NotValidError,
			Diagnostics: redactDiagnostics(diags.Errors(), red),
		}
	}
	rec := &runrecord.Document{Diagnostics: redactDiagnostics(diags, red)}
	if plan == nil || len(plan.Steps) == 0 {
		now := e.opts.Now().UTC()
		rec.Run = runrecord.Run{Status: runrecord.RunSucceeded, StartedAt: now, FinishedAt: now, Steps: []runrecord.Step{}}
		return rec
	}
	rec.Run = *e.Run(ctx, plan, env)
	return rec
}

// RunDocument validates and runs doc on the shared Executor with default
// Options (see Run).
func RunDocument(ctx context.Context, doc []byte, env Env) *runrecord.Document {
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
