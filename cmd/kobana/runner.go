package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/eml"
)

// workflowRunner runs Inbox's workflows (emails_reprocess) on the
// executor's document path, returning the redacted record.
type workflowRunner struct {
	ex *executor.Executor
}

// RunWorkflow implements inbox.WorkflowRunner. Attachments are streamed
// from the run's snapshot of the raw message; without one (purged), a step
// that uses an attachment fails before sending.
func (w workflowRunner) RunWorkflow(ctx context.Context, in inbox.WorkflowInput) (json.RawMessage, error) {
	env := executor.Env{Secrets: resolve.SecretMap(in.Secrets), Facts: resolve.FactMap(in.Facts)}
	env.Attachments = func() (resolve.Attachments, error) {
		return nil, fmt.Errorf("%w: %w", eml.ErrUnreadable, inbox.ErrPurged)
	}
	if m := in.Message; m != nil {
		env.Attachments = func() (resolve.Attachments, error) {
			msg, err := eml.New(m, m.Size())
			if err != nil {
				return nil, fmt.Errorf("reading the e-mail: %w", err)
			}
			return msg, nil
		}
	}
	return json.Marshal(w.ex.RunDocument(ctx, in.Document, env))
}
