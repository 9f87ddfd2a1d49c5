package inboxmcp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/kobana/workflow/inbox"
)

// LintFunc validates a workflow document; diagnostics is JSON the tool
// returns as is, ok reports whether the document may run.
type LintFunc func(doc []byte) (diagnostics json.RawMessage, ok bool)

// PlanFunc makes the dry run of a workflow document (package plan) with
// what the Inbox knows of a run, opening no connection. It returns the plan
// as JSON (plan.Plan's schema) and as text for people; an error is a
// failure of the planner itself, not of the document.
type PlanFunc func(ctx context.Context, in PlanInput) (plan json.RawMessage, text string, err error)

// ErrPlanInput is wrapped by a PlanFunc's error about its input (example
// responses it cannot read): workflows_plan answers it as the caller's
// mistake.
var ErrPlanInput = errors.New("the plan's input is not usable")

// PlanInput is what workflows_plan plans a document with.
type PlanInput struct {
	Document []byte
	// SecretNames are the workspace's secret names (never their values).
	SecretNames []string
	// Facts are the kobana.* facts known before a run; PendingFacts those a
	// run will have whose values are known only then (its own ids), shown
	// as references.
	Facts        map[string]string
	PendingFacts []string
	// Message is the received e-mail whose attachments steps may send; nil
	// without one. The planner reads it and does not close it.
	Message inbox.Message
	// Responses are example responses, in any form plan.ParseResponses
	// reads; empty for none.
	Responses json.RawMessage
}
