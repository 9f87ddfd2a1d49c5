package inbox

import (
	"context"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/runrecord"
)

// Run runs the answer's workflow with ex and env and returns the document's
// record. An answer whose diagnostics hold an error sends nothing: its
// record is a failed run with no steps, runrecord.NotValidError and the
// errors. An answer without a workflow, or with an empty one, is a
// succeeded run with no steps. Diagnostics quote the document, so they are
// redacted with env's secrets like the rest of the record.
func (a Answer) Run(ctx context.Context, ex *executor.Executor, env executor.Env) *runrecord.Document {
	red := resolve.NewRedactor(env.Secrets)
	if a.Diagnostics.HasErrors() {
		// A run of no steps, for its times from ex's clock; it sends nothing.
		run := ex.Run(ctx, nil, executor.Env{})
		run.Status = runrecord.RunFailed
		return &runrecord.Document{Run: *run, Error: runrecord.NotValidError,
			Diagnostics: redactDiagnostics(a.Diagnostics.Errors(), red)}
	}
	return &runrecord.Document{Run: *ex.Run(ctx, a.Plan, env), Diagnostics: redactDiagnostics(a.Diagnostics, red)}
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
