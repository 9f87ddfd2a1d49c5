package inbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/internal/demo"
	"github.com/kobana/workflow/store"
)

// scriptedAgent is an AgentRunner that answers with a fixed result and
// remembers what it was given.
type scriptedAgent struct {
	res    inbox.AgentResult
	inputs []inbox.AgentInput
	// size is the size of the message it was shown (-1: none).
	size int64
}

func (a *scriptedAgent) RunAgent(_ context.Context, in inbox.AgentInput) (inbox.AgentResult, error) {
	a.inputs = append(a.inputs, in)
	a.size = -1
	if in.Message != nil {
		b, err := io.ReadAll(inbox.MessageReader(in.Message))
		if err != nil {
			return inbox.AgentResult{}, err
		}
		a.size = int64(len(b))
	}
	return a.res, nil
}

type recordingRunner struct {
	inputs  []inbox.WorkflowInput
	hadMsg  []bool
	record  string
	failErr error
}

func (r *recordingRunner) RunWorkflow(_ context.Context, in inbox.WorkflowInput) (json.RawMessage, error) {
	r.inputs = append(r.inputs, in)
	r.hadMsg = append(r.hadMsg, in.Message != nil)
	if r.failErr != nil {
		return nil, r.failErr
	}
	return json.RawMessage(r.record), nil
}

const workflowDoc = `{"result":{"ok":true},"workflow":[{"type":"request","url":"https://erp.example/x","form":{"file":"${{email.attachments.0}}"}}]}`

func TestInlineReprocess(t *testing.T) {
	ctx := context.Background()
	st, r := seeded(t)
	agent := &scriptedAgent{res: inbox.AgentResult{Status: inbox.RunSucceeded, Output: json.RawMessage(workflowDoc), Tokens: inbox.Tokens{Input: 1000, Output: 100}}}
	runner := &recordingRunner{record: `{"status":"succeeded","steps":[{"index":0,"state":"succeeded"}]}`}
	p := &inbox.Inline{Store: st, Messages: inbox.BlobMessages{Blobs: st}, Agents: agent, Workflows: runner,
		Environment: "sandbox", AppURL: "https://app.example", Now: func() time.Time { return demoNow }}
	req := inbox.ReprocessRequest{Workspace: demo.Workspace, EmailID: "eml_inv_00", Actor: inbox.PersonActor(demo.Owner)}
	if err := p.Check(ctx, req); err != nil {
		t.Fatal(err)
	}
	out, err := p.Reprocess(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != inbox.RunSucceeded || out.AgentRun == nil || out.WorkflowRun == nil || out.AgentRun.WorkflowRunID != out.WorkflowRun.ID {
		t.Fatalf("outcome %+v", out)
	}
	raw, _ := st.GetBlob(ctx, demo.Workspace, "eml_inv_00")
	if agent.size != int64(len(raw)) {
		t.Errorf("the agent saw a message of %d bytes, the stored one has %d", agent.size, len(raw))
	}
	in := agent.inputs[0]
	if !slices.Equal(in.SecretNames, []string{"CHAT_WEBHOOK_URL", "ERP_TOKEN"}) || in.Previous == nil || in.Agent.ID != "agt_invoices" {
		t.Errorf("agent input: secret names %v, previous %v", in.SecretNames, in.Previous)
	}
	w := runner.inputs[0]
	if len(w.Secrets) != 2 || w.Secrets["ERP_TOKEN"] == "" || !runner.hadMsg[0] {
		t.Errorf("workflow input: %d secrets, message %v", len(w.Secrets), runner.hadMsg[0])
	}
	want := map[string]string{"env": "sandbox", "app_url": "https://app.example", "workspace_id": demo.Workspace, "workspace_slug": "finance",
		"workspace_external_id": "erp-7781", "inbox_id": "ibx_invoices", "inbox_email": "invoices@finance.in.kobana.email", "email_id": "eml_inv_00",
		"agent_id": "agt_invoices", "agent_run_id": out.AgentRun.ID, "workflow_run_id": out.WorkflowRun.ID}
	for k, v := range want {
		if w.Facts[k] != v {
			t.Errorf("fact %s = %q, want %q", k, w.Facts[k], v)
		}
	}
	if w.Facts["email_message_id"] == "" {
		t.Error("no email_message_id fact")
	}
	// Records: the runs, the e-mail's new state, the event.
	e, _ := r.Emails.Get(ctx, demo.Workspace, "eml_inv_00")
	run, err := r.AgentRuns.Get(ctx, demo.Workspace, out.AgentRun.ID)
	if err != nil || e.AgentRunID != run.ID || e.Status != inbox.EmailProcessed || run.CostUSD != inbox.Cost("claude-sonnet-4-5", run.Tokens) || run.ReprocessOf != "arun_inv_00" {
		t.Errorf("records: e-mail %s %s, run %+v %v", e.Status, e.AgentRunID, run, err)
	}
	var events []inbox.SystemEvent
	r.Events.Each(ctx, demo.Workspace, store.Query{Status: inbox.EventEmailReprocessed}, func(ev inbox.SystemEvent) error { events = append(events, ev); return nil })
	if len(events) != 1 || events[0].Actor != "person:"+demo.Owner || events[0].Subject != "eml_inv_00" {
		t.Errorf("events %+v", events)
	}
}

// A purged message does not stop a reprocess: the agent and the workflow
// run without it, and a step that needs an attachment fails there.
func TestInlineReprocessPurgedMessage(t *testing.T) {
	ctx := context.Background()
	st, _ := seeded(t)
	if err := st.DeleteBlob(ctx, demo.Workspace, "eml_inv_01"); err != nil {
		t.Fatal(err)
	}
	if _, err := (inbox.BlobMessages{Blobs: st}).OpenMessage(ctx, demo.Workspace, "eml_inv_01"); !errors.Is(err, inbox.ErrPurged) {
		t.Fatalf("OpenMessage of a purged message: %v", err)
	}
	agent := &scriptedAgent{res: inbox.AgentResult{Status: inbox.RunSucceeded, Output: json.RawMessage(workflowDoc)}}
	runner := &recordingRunner{record: `{"status":"failed","steps":[{"index":0,"state":"failed","reason":"email-unreadable"}]}`}
	p := &inbox.Inline{Store: st, Messages: inbox.BlobMessages{Blobs: st}, Agents: agent, Workflows: runner}
	out, err := p.Reprocess(ctx, inbox.ReprocessRequest{Workspace: demo.Workspace, EmailID: "eml_inv_01", Actor: "system"})
	if err != nil {
		t.Fatal(err)
	}
	if agent.size != -1 || runner.hadMsg[0] {
		t.Errorf("a purged message was handed out (agent saw %d bytes, runner %v)", agent.size, runner.hadMsg[0])
	}
	if out.Status != inbox.RunFailed || out.AgentRun.Cause != inbox.CauseWorkflowFailed || out.WorkflowRun.Status != inbox.RunFailed {
		t.Errorf("outcome %+v", out.AgentRun)
	}
}

func TestInlineReprocessRefusals(t *testing.T) {
	ctx := context.Background()
	st, r := seeded(t)
	count := func() int {
		recs, _ := st.ListRecords(ctx, demo.Workspace, inbox.KindAgentRun, store.Query{Limit: 1000})
		return len(recs)
	}
	before := count()
	agent := &scriptedAgent{res: inbox.AgentResult{Status: inbox.RunSucceeded, Output: json.RawMessage(workflowDoc)}}
	p := &inbox.Inline{Store: st, Messages: inbox.BlobMessages{Blobs: st}, Agents: agent}
	req := func(id string) inbox.ReprocessRequest {
		return inbox.ReprocessRequest{Workspace: demo.Workspace, EmailID: id, Actor: "system"}
	}
	// No workflow runner: refused, nothing recorded.
	_, err := p.Reprocess(ctx, req("eml_inv_00"))
	var de *inbox.Error
	if !errors.As(err, &de) || de.Code != inbox.CodeWorkflowRunnerUnavailable {
		t.Fatalf("no runner: %v", err)
	}
	// An unknown e-mail, and one of another workspace, are not found.
	for _, c := range []inbox.ReprocessRequest{req("eml_nope"), {Workspace: demo.Sandbox, EmailID: "eml_inv_00"}} {
		if err := p.Check(ctx, c); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Check %+v: %v", c, err)
		}
		if _, err := p.Reprocess(ctx, c); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Reprocess %+v: %v", c, err)
		}
	}
	// An inbox without agent, and an agent that was deleted: no_agent, from
	// Check as from Reprocess.
	ib, _ := r.Inboxes.Get(ctx, demo.Workspace, "ibx_receipts")
	ib.AgentID = ""
	r.Inboxes.Put(ctx, demo.Workspace, ib)
	r.Agents.Delete(ctx, demo.Workspace, "agt_invoices")
	for _, id := range []string{"eml_rcp_00", "eml_inv_02"} {
		if err := p.Check(ctx, req(id)); !errors.As(err, &de) || de.Code != inbox.CodeNoAgent {
			t.Errorf("Check %s: %v", id, err)
		}
		if _, err := p.Reprocess(ctx, req(id)); !errors.As(err, &de) || de.Code != inbox.CodeNoAgent {
			t.Errorf("Reprocess %s: %v", id, err)
		}
	}
	if n := count(); n != before {
		t.Errorf("refusals recorded %d agent runs", n-before)
	}
	if len(agent.inputs) != 1 {
		t.Errorf("the agent ran %d times, want once (before the missing runner was found)", len(agent.inputs))
	}
}

// The replay runner answers with the recorded output; an output that is not
// an agent document is a failed run with cause invalid_output.
func TestNewAgentRunAndReplay(t *testing.T) {
	prev := &inbox.AgentRun{ID: "arun_1", Output: json.RawMessage(`{"result":1}`), Tokens: inbox.Tokens{Input: 10}}
	res, _ := inbox.ReplayRunner{}.RunAgent(context.Background(), inbox.AgentInput{Previous: prev})
	if res.Status != inbox.RunSucceeded || string(res.Output) != `{"result":1}` || res.Tokens.Input != 10 {
		t.Fatalf("replay %+v", res)
	}
	res, _ = inbox.ReplayRunner{}.RunAgent(context.Background(), inbox.AgentInput{})
	if res.Status != inbox.RunFailed || res.Cause != inbox.CauseNoRecordedOutput {
		t.Fatalf("replay without a run %+v", res)
	}
	ag := inbox.Agent{ID: "agt_1", Model: "gpt-4.1-mini"}
	run := inbox.NewAgentRun(ag, inbox.Email{ID: "eml_1", InboxID: "ibx_1"}, inbox.AgentResult{Status: inbox.RunSucceeded, Output: json.RawMessage(`"text"`)}, demoNow)
	if run.Status != inbox.RunFailed || run.Cause != inbox.CauseInvalidOutput || run.InboxID != "ibx_1" || run.Model != "gpt-4.1-mini" {
		t.Fatalf("invalid output run %+v", run)
	}
	run = inbox.NewAgentRun(ag, inbox.Email{}, inbox.AgentResult{Status: inbox.RunSucceeded, Output: json.RawMessage(`{"result":{}}`), Model: "claude-haiku-4-5", Tokens: inbox.Tokens{Input: 1e6}}, demoNow)
	if run.Status != inbox.RunSucceeded || run.Model != "claude-haiku-4-5" || run.CostUSD != 1 {
		t.Fatalf("run on the model that answered %+v", run)
	}
}
