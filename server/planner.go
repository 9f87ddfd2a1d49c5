package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/plan"
	"github.com/kobana/workflow/resolve/eml"
)

// workflowPlanner is workflows_plan's planner: package plan with the
// serve's guard, so the plan judges addresses as the runs will.
func workflowPlanner(g *guard.Guard) inboxmcp.PlanFunc {
	return func(ctx context.Context, in inboxmcp.PlanInput) (json.RawMessage, string, error) {
		pin := plan.Inputs{SecretNames: in.SecretNames, Facts: in.Facts, PendingFacts: in.PendingFacts, Guard: g}
		if len(bytes.TrimSpace(in.Responses)) > 0 && string(bytes.TrimSpace(in.Responses)) != "null" {
			rs, err := plan.ParseResponses(in.Responses)
			if err != nil {
				return nil, "", fmt.Errorf("%w: %v", inboxmcp.ErrPlanInput, err)
			}
			pin.Responses = rs
		}
		if in.Message != nil {
			msg, err := eml.New(in.Message, in.Message.Size())
			if err != nil {
				return nil, "", fmt.Errorf("reading the e-mail: %w", err)
			}
			defer msg.Close()
			pin.Email = msg
		}
		p := plan.Make(ctx, in.Document, pin)
		var text bytes.Buffer
		if err := plan.WriteText(&text, p); err != nil {
			return nil, "", err
		}
		b, err := json.Marshal(p)
		return b, text.String(), err
	}
}
