package queue

import (
	"context"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/kobana/workflow/mcpserver/internal/panics"
)

// panicReporter is River's ErrorHandler: River recovers a worker's panic
// and records it on the job (its value and trace among the job's errors);
// the panic is reported on panics.Job, so that it is logged with its stack
// and counted, and the job follows its retry schedule as after an error.
type panicReporter struct{}

func (panicReporter) HandleError(context.Context, *rivertype.JobRow, error) *river.ErrorHandlerResult {
	return nil
}

func (panicReporter) HandlePanic(_ context.Context, job *rivertype.JobRow, value any, trace string) *river.ErrorHandlerResult {
	panics.Report(panics.Job, job.Kind, value, []byte(trace))
	return nil // retried, not cancelled
}
