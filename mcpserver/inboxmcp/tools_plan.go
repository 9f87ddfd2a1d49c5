package inboxmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/plan"
	"github.com/kobana/workflow/resolve/eml"
	"github.com/kobana/workflow/runrecord"
)

// PlanArg is the input of workflows_plan.
type PlanArg struct {
	Document string `json:"document" jsonschema:"the agent output to plan, as JSON text: {\"result\": …, \"workflow\": [steps]}" minLength:"1" maxLength:"1048576"`
	EmailID  string `json:"email_id,omitempty" jsonschema:"a received e-mail to plan against: its attachments, and the kobana.* facts a run of it has (see emails_list)" pattern:"^eml_[A-Za-z0-9_-]{1,64}$"`
	// Responses is JSON: the planner reads it in any of its forms.
	Responses json.RawMessage `json:"responses,omitempty" jsonschema:"example responses by step index, {\"0\": {\"status\": 201, \"headers\": {…}, \"body\": {…}}, …}, that steps.N.response references read"`
}

// Planned is the output of workflows_plan.
type Planned struct {
	// Plan is the dry run: per step its outcome (send, fail, skip), reason,
	// message and the request as it would be sent.
	Plan json.RawMessage `json:"plan" jsonschema:"the dry run: {version, valid, diagnostics, inputs, steps: [{index, label, outcome (send, fail or skip), reason, message, depends_on, request: {method, url, host: {name, check (allowed, denied or at-send), message}, headers: [{name, value}], body: {kind (json, text or multipart), size, unknown, json, text, parts}}, expected_status, example, unknown}], summary: {send, fail, skip}}"`
	// Text is the same plan for people.
	Text string `json:"text" jsonschema:"the same plan as kobana plan prints it, for people"`
}

// runFacts are the kobana.* facts a run of an e-mail has only once it
// starts.
var runFacts = []string{"agent_run_id", "workflow_run_id"}

// emailFacts are the facts that come from an e-mail, pending without one.
var emailFacts = []string{"inbox_id", "inbox_email", "email_id", "email_message_id", "agent_id"}

func (p *Product) workflowsPlan(ctx context.Context, c *mcpserver.Caller, in PlanArg) (Planned, error) {
	if err := required("document", in.Document); err != nil {
		return Planned{}, err
	}
	pin := plan.Inputs{SecretNames: []string{}, Guard: p.opts.Guard}
	if r := bytes.TrimSpace(in.Responses); len(r) > 0 && string(r) != "null" {
		if !json.Valid(r) {
			return Planned{}, mcpserver.Errorf("invalid_arguments", "responses is not JSON")
		}
		rs, err := plan.ParseResponses(r)
		if err != nil {
			return Planned{}, mcpserver.Errorf("invalid_arguments", "%v: %v", errPlanInput, err)
		}
		pin.Responses = rs
	}
	names, secrets, err := p.workspacePolicy(ctx, c.Workspace, "")
	if err != nil {
		return Planned{}, err
	}
	pin.SecretNames = append(pin.SecretNames, names...)
	pin.Policy = secrets
	w, err := p.workspace(ctx, c.Workspace)
	if err != nil {
		return Planned{}, err
	}
	rc := inbox.RunContext{Environment: p.opts.Environment, AppURL: p.opts.PublicURL, Workspace: w}
	pending := runFacts
	if in.EmailID != "" {
		e, err := p.getEmail(ctx, c.Workspace, in.EmailID)
		if err != nil {
			return Planned{}, err
		}
		rc.Email = e
		if rc.Inbox, err = p.repo.Inboxes.Get(ctx, c.Workspace, e.InboxID); err != nil {
			return Planned{}, err
		}
		rc.Agent.ID = rc.Inbox.AgentID
		if rc.Agent.ID != "" {
			// The e-mail's agent would run it: with its egress list.
			if ag, err := p.repo.Agents.Get(ctx, c.Workspace, rc.Agent.ID); err == nil {
				pin.Policy = inbox.RunPolicy(secrets, ag)
			} else if !errors.Is(err, store.ErrNotFound) {
				return Planned{}, err
			}
		}
		msg, err := p.opts.Messages.OpenMessage(ctx, c.Workspace, e.ID)
		switch {
		case errors.Is(err, inbox.ErrPurged):
			// The plan shows the attachments as references; a run of this
			// e-mail would fail the steps that send them.
		case err != nil:
			return Planned{}, err
		default:
			defer msg.Close()
			m, err := eml.New(msg, msg.Size())
			if err != nil {
				return Planned{}, fmt.Errorf("reading e-mail %s: %w", e.ID, err)
			}
			defer m.Close()
			pin.Email = m
		}
	} else {
		pending = append(append([]string{}, runFacts...), emailFacts...)
	}
	pin.Facts = map[string]string{}
	for k, v := range rc.Facts() {
		if v != "" && !slices.Contains(pending, k) {
			pin.Facts[k] = v
		}
	}
	pin.PendingFacts = pending
	if rc.Agent.ID == "" && in.EmailID != "" {
		pin.PendingFacts = append(pin.PendingFacts, "agent_id")
	}
	// The Inbox's runs send each step's identity; its run's id is known
	// only when the run starts.
	pin.StepID = func(i int) string { return runrecord.StepID(pendingRunID, i) }
	pl := plan.Make(ctx, []byte(in.Document), pin)
	var text strings.Builder
	if err := plan.WriteText(&text, pl); err != nil {
		return Planned{}, err
	}
	b, err := json.Marshal(pl)
	if err != nil {
		return Planned{}, err
	}
	return Planned{Plan: b, Text: text.String()}, nil
}

// pendingRunID stands for the id of the workflow run in the step
// identities a plan shows: the run's own, known when it starts.
const pendingRunID = "${{kobana.workflow_run_id}}"

// errPlanInput prefixes the refusal of example responses the planner
// cannot read: the caller's mistake.
const errPlanInput = "the plan's input is not usable"
