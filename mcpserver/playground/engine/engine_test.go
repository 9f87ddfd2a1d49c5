package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kobana/workflow/examples"
	"github.com/kobana/workflow/plan"
)

type rpc struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
}

// TestSessionAnswersBeforeSendReturns: each Send returns once the server
// has handled the message — a change's diagnostics, a request's answer are
// delivered by then — which is what lets the page stay synchronous.
func TestSessionAnswersBeforeSendReturns(t *testing.T) {
	var got []rpc
	s := NewSession(func(msg string) {
		var m rpc
		if err := json.Unmarshal([]byte(msg), &m); err != nil {
			t.Errorf("the server sent %q: %v", msg, err)
		}
		got = append(got, m)
	}, "test")
	take := func() []rpc { out := got; got = nil; return out }

	s.Send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`)
	if m := take(); len(m) != 1 || string(m[0].ID) != "1" || !strings.Contains(string(m[0].Result), `"codeActionProvider"`) {
		t.Fatalf("initialize: %+v", m)
	}
	s.Send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	take()

	doc := strings.Replace(examples.Payable, `"label": "crea`, `"lable": "crea`, 1)
	open, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": map[string]any{
		"textDocument": map[string]any{"uri": "file:///playground/workflow.json", "languageId": "json", "version": 1, "text": doc}}})
	s.Send(string(open))
	m := take()
	if len(m) != 1 || m[0].Method != "textDocument/publishDiagnostics" || !strings.Contains(string(m[0].Params), `did you mean \"label\"`) {
		t.Fatalf("didOpen: %+v", m)
	}
	var pd struct {
		Diagnostics []struct {
			Range json.RawMessage `json:"range"`
		} `json:"diagnostics"`
	}
	json.Unmarshal(m[0].Params, &pd)

	action, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction", "params": map[string]any{
		"textDocument": map[string]any{"uri": "file:///playground/workflow.json"}, "range": pd.Diagnostics[0].Range,
		"context": map[string]any{"diagnostics": []any{}}}})
	s.Send(string(action))
	if m := take(); len(m) != 1 || !strings.Contains(string(m[0].Result), `"newText":"\"label\""`) {
		t.Fatalf("codeAction: %+v", m)
	}

	// Completion inside ${{ }} on the line of the first URL.
	lines := strings.Split(doc, "\n")
	line := -1
	for i, l := range lines {
		if strings.Contains(l, `"url": "https://erp.example.com/payables"`) {
			line = i
		}
	}
	change, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": map[string]any{
		"textDocument":   map[string]any{"uri": "file:///playground/workflow.json", "version": 2},
		"contentChanges": []any{map[string]any{"text": strings.Replace(doc, "erp.example.com/payables", "erp.example.com/${{", 1)}}}})
	s.Send(string(change))
	if m := take(); len(m) != 1 || m[0].Method != "textDocument/publishDiagnostics" {
		t.Fatalf("didChange: %+v", m)
	}
	col := strings.Index(lines[line], "payables")
	complete, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "textDocument/completion", "params": map[string]any{
		"textDocument": map[string]any{"uri": "file:///playground/workflow.json"}, "position": map[string]any{"line": line, "character": col + 3}}})
	s.Send(string(complete))
	m = take()
	if len(m) != 1 {
		t.Fatalf("completion: %+v", m)
	}
	for _, ns := range []string{`"secrets`, `"kobana`, `"steps`, `"email`} {
		if !strings.Contains(string(m[0].Result), ns) {
			t.Errorf("completion lacks %s: %s", ns, m[0].Result)
		}
	}

	s.Send(`{"jsonrpc":"2.0","id":4,"method":"shutdown"}`)
	s.Send(`{"jsonrpc":"2.0","method":"exit"}`) // returns although the server reads no more
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

func TestPlanJSON(t *testing.T) {
	_, emlData := SampleEmail()
	sample := Samples()[0]
	out := PlanJSON(sample.Document, Inputs{EML: emlData, SecretNames: sample.Secrets, Facts: sample.Facts, Responses: sample.Responses, Now: "2026-11-30T10:00:00Z"})
	var res struct {
		Plan     plan.Plan `json:"plan"`
		Text     string    `json:"text"`
		Problems []string  `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Problems) != 0 || res.Plan.Summary != (plan.Summary{Send: 3}) || !strings.Contains(res.Text, "POST https://erp.example.com/payables/pay_0193/attachments") {
		t.Errorf("plan: %+v %v\n%s", res.Plan.Summary, res.Problems, res.Text)
	}

	out = PlanJSON(sample.Document, Inputs{Facts: `{"nope":"1"}`, Responses: `[1]`, SecretNames: "A=1", Now: "soon"})
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	want := []string{"secret names: line 1", `facts: unknown fact "nope"`, "example responses:", `now: "soon"`}
	if len(res.Problems) != len(want) {
		t.Fatalf("problems %q", res.Problems)
	}
	for i, w := range want {
		if !strings.HasPrefix(res.Problems[i], w) {
			t.Errorf("problem %d: %q, want %q…", i, res.Problems[i], w)
		}
	}
	if n := CompileLoop(sample.Document, 3); n != 0 {
		t.Errorf("CompileLoop: %d diagnostics", n)
	}
}

// TestFactsAreCheckedAsKobanaRunChecksThem: the page's facts obey the rules
// kobana run and kobana plan apply to -facts (resolve.CheckFact).
func TestFactsAreCheckedAsKobanaRunChecksThem(t *testing.T) {
	sample := Samples()[0]
	for facts, want := range map[string]string{
		`{"env": "staging"}`:         `facts: fact "env" is "staging"; kobana.env is one of development, sandbox, production`,
		`{"app_url": "/relative"}`:   `facts: fact "app_url" is "/relative"`,
		`{"inbox_email": "A <a@b>"}`: `facts: fact "inbox_email" is "A <a@b>"`,
		`{"kobana.email_id": "e"}`:   `facts: key "kobana.email_id": write the fact without the "kobana." prefix`,
	} {
		var res Result
		if err := json.Unmarshal([]byte(PlanJSON(sample.Document, Inputs{Facts: facts, Now: "2026-11-30T10:00:00Z"})), &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Problems) != 1 || !strings.HasPrefix(res.Problems[0], want) {
			t.Errorf("facts %s: problems %q, want %q…", facts, res.Problems, want)
		}
	}
}
