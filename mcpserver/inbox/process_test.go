package inbox_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/kobana/workflow/mcpserver/inbox"
)

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
	run, _ := inbox.NewAgentRun(ag, inbox.Email{ID: "eml_1", InboxID: "ibx_1"}, inbox.AgentResult{Status: inbox.RunSucceeded, Output: json.RawMessage(`"text"`)}, demoNow)
	if run.Status != inbox.RunFailed || run.Cause != inbox.CauseInvalidOutput || run.InboxID != "ibx_1" || run.Model != "gpt-4.1-mini" {
		t.Fatalf("invalid output run %+v", run)
	}
	run, answer := inbox.NewAgentRun(ag, inbox.Email{}, inbox.AgentResult{Status: inbox.RunSucceeded, Output: json.RawMessage(`{"result":{}}`), Model: "claude-haiku-4-5", Tokens: inbox.Tokens{Input: 1e6}}, demoNow)
	if run.Status != inbox.RunSucceeded || run.Model != "claude-haiku-4-5" || run.CostUSD != 1 || !answer.Document || answer.Workflow {
		t.Fatalf("run on the model that answered %+v, answer %+v", run, answer)
	}
}

// An agent's answer is read as the compiler reads it. A key written twice
// is an error the workflow's run reports (it sends nothing), never a
// second value taken silently — encoding/json keeps the last "workflow",
// which made an answer whose first workflow had steps and whose second was
// empty pass for one asking for nothing.
func TestReadAnswerReadsAsTheCompilerDoes(t *testing.T) {
	step := `{"type":"request","url":"https://erp.example/x"}`
	for doc, want := range map[string]inbox.Answer{
		`{"result":1}`:                                              {Document: true},
		`{"result":1,"workflow":[]}`:                                {Document: true},
		`{"result":1,"workflow":null}`:                              {Document: true},
		`{"result":1,"workflow":[` + step + `]}`:                    {Document: true, Workflow: true},
		`{"result":1,"workflow":[` + step + `],"workflow":[]}`:      {Document: true, Workflow: true},
		`{"result":1,"workflow":[],"workflow":[` + step + `]}`:      {Document: true, Workflow: true},
		`{"result":1,"result":2}`:                                   {Document: true, Workflow: true},
		`{"workflow":[` + step + `]}`:                               {Workflow: true},
		`{"result":1,"workflow":"steps"}`:                           {Document: true, Workflow: true},
		`"just text"`:                                               {},
		`{"result":1,"workflow":[`:                                  {},
		`{"result":{"a":1},"workflow":[` + step + `,` + step + `]}`: {Document: true, Workflow: true},
	} {
		got := inbox.ReadAnswer(json.RawMessage(doc))
		if got.Document != want.Document || got.Workflow != want.Workflow {
			t.Errorf("%s: document %v workflow %v, want %v %v", doc, got.Document, got.Workflow, want.Document, want.Workflow)
		}
		if got.Plan != nil && got.Diagnostics.HasErrors() {
			t.Errorf("%s: a plan despite errors", doc)
		}
	}
	a := inbox.ReadAnswer(json.RawMessage(`{"result":1,"workflow":[` + step + `],"workflow":[]}`))
	if a.Plan != nil || !a.Diagnostics.HasErrors() || a.Diagnostics.Errors()[0].Code != "json-duplicate-key" {
		t.Errorf("a duplicate workflow: plan %v, diagnostics %v", a.Plan, a.Diagnostics)
	}
}

// kobana.env is the workspace's environment when it names one, else the
// server's, else development: one rule for every run and every plan.
func TestRunContextEnvironment(t *testing.T) {
	for _, c := range []struct{ server, workspace, want string }{
		{"", "", "development"},
		{"production", "", "production"},
		{"production", "sandbox", "sandbox"},
		{"", "sandbox", "sandbox"},
	} {
		rc := inbox.RunContext{Environment: c.server, Workspace: inbox.Workspace{ID: "ws_1", Environment: c.workspace}}
		if got := rc.Facts()["env"]; got != c.want {
			t.Errorf("server %q, workspace %q: kobana.env %q, want %q", c.server, c.workspace, got, c.want)
		}
	}
}

// LatestOutput walks an e-mail's reprocess chain back to the agent's
// latest run that recorded an output: a failed reprocess without one does
// not lose it, and another agent's runs are passed over.
func TestLatestOutputWalksTheReprocessChain(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	r := inbox.NewRepo(st)
	const ws = "ws_chain"
	for _, run := range []inbox.AgentRun{
		{ID: "arun_a", AgentID: "agt_1", Output: json.RawMessage(`{"result":"first"}`), Tokens: inbox.Tokens{Input: 7}, StartedAt: demoNow},
		{ID: "arun_b", AgentID: "agt_2", Output: json.RawMessage(`{"result":"other agent"}`), ReprocessOf: "arun_a", StartedAt: demoNow},
		{ID: "arun_c", AgentID: "agt_1", Status: inbox.RunFailed, Cause: inbox.CauseProviderError, ReprocessOf: "arun_b", StartedAt: demoNow},
	} {
		if err := r.AgentRuns.Put(ctx, ws, run); err != nil {
			t.Fatal(err)
		}
	}
	got, err := inbox.LatestOutput(ctx, r, ws, "arun_c", "agt_1")
	if err != nil || got == nil || got.ID != "arun_c" || string(got.Output) != `{"result":"first"}` || got.Tokens.Input != 7 {
		t.Fatalf("latest output %+v (%v)", got, err)
	}
	if got, _ := inbox.LatestOutput(ctx, r, ws, "arun_c", "agt_3"); got != nil {
		t.Errorf("an agent without runs on the e-mail: %+v", got)
	}
}
