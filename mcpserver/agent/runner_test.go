package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/compile/lint"
	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/agent/budget"
	"github.com/kobana/workflow/mcpserver/agent/prompt"
	"github.com/kobana/workflow/mcpserver/agent/standin"
	"github.com/kobana/workflow/mcpserver/inbox"
)

// TestRequestShape checks what a provider is sent: the model under the
// endpoint's name for it, the system and user messages of the prompt, the
// response format with the workflow schema, the key as a bearer token.
func TestRequestShape(t *testing.T) {
	h := newHarness(t, standin.Always(standin.Answer(payableAnswer)), func(e *Endpoint) {
		e.Models = map[string]string{"claude-sonnet-4-5": "anthropic/claude-sonnet-4.5"}
	})
	in := invoiceInput(t)
	res := h.run(t, in)
	if res.Status != inbox.RunSucceeded {
		t.Fatalf("status %s (%s: %s)", res.Status, res.Cause, res.Error)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Model != "anthropic/claude-sonnet-4.5" {
		t.Errorf("model %q, want the endpoint's name anthropic/claude-sonnet-4.5", r.Model)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization %q", got)
	}
	want, err := prompt.Render(prompt.Input{Agent: in.Agent, InboxAddress: in.Inbox.Address, SecretNames: in.SecretNames, Email: in.Email,
		Attachments: []prompt.Attachment{
			{Index: 0, Filename: in.Email.Attachments[0].Filename, ContentType: in.Email.Attachments[0].ContentType, Size: in.Email.Attachments[0].Size},
			{Index: 1, Filename: in.Email.Attachments[1].Filename, ContentType: in.Email.Attachments[1].ContentType, Size: in.Email.Attachments[1].Size}}})
	if err != nil {
		t.Fatal(err)
	}
	wantMsgs := []standin.Message{{Role: "system", Text: want.System}, {Role: "user", Text: want.User}}
	if d := cmp.Diff(wantMsgs, r.Messages); d != "" {
		t.Errorf("messages (-want +got):\n%s", d)
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string         `json:"name"`
			Strict bool           `json:"strict"`
			Schema map[string]any `json:"schema"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(r.ResponseFormat, &rf); err != nil {
		t.Fatalf("response_format %s: %v", r.ResponseFormat, err)
	}
	if rf.Type != "json_schema" || rf.JSONSchema.Name != "kobana_agent_answer" || rf.JSONSchema.Strict {
		t.Errorf("response_format %s", r.ResponseFormat)
	}
	if _, ok := rf.JSONSchema.Schema["$defs"].(map[string]any)["step"]; !ok {
		t.Errorf("the schema sent is not workflow.schema.json: %s", r.ResponseFormat)
	}
	if _, ok := rf.JSONSchema.Schema["$schema"]; ok {
		t.Errorf("the schema sent keeps $schema")
	}
	if res.PromptVersion != prompt.Version {
		t.Errorf("prompt version %q, want %q", res.PromptVersion, prompt.Version)
	}
	if string(res.Output) != strings.TrimSpace(payableAnswer) || res.Fenced {
		t.Errorf("output %s (fenced %v)", res.Output, res.Fenced)
	}
}

// TestResponseFormats checks the JSON-mode and no-format endpoints.
func TestResponseFormats(t *testing.T) {
	for format, want := range map[string]string{FormatJSONObject: `{"type":"json_object"}`, FormatNone: ""} {
		t.Run(format, func(t *testing.T) {
			h := newHarness(t, standin.Always(standin.Answer(payableAnswer)), func(e *Endpoint) { e.ResponseFormat = format })
			if res := h.run(t, invoiceInput(t)); res.Status != inbox.RunSucceeded {
				t.Fatalf("%s: %s", res.Cause, res.Error)
			}
			if got := string(h.srv.Requests()[0].ResponseFormat); got != want {
				t.Errorf("response_format %q, want %q", got, want)
			}
		})
	}
}

// TestFencedAnswer checks an answer in a Markdown fence is taken, and
// recorded as fenced.
func TestFencedAnswer(t *testing.T) {
	h := newHarness(t, standin.Always(standin.Answer("Here is my answer:\n\n```json\n"+payableAnswer+"\n```\n")))
	res := h.run(t, invoiceInput(t))
	if res.Status != inbox.RunSucceeded || !res.Fenced {
		t.Fatalf("status %s fenced %v (%s)", res.Status, res.Fenced, res.Error)
	}
	if !json.Valid(res.Output) || !inbox.HasWorkflow(res.Output) {
		t.Errorf("output %s", res.Output)
	}
}

func TestUnfence(t *testing.T) {
	for _, c := range []struct {
		in, doc string
		fenced  bool
	}{
		{`{"result": 1}`, `{"result": 1}`, false},
		{"  \n{\"result\": 1}\n", `{"result": 1}`, false},
		{"```json\n{\"result\": 1}\n```", `{"result": 1}`, true},
		{"```\n{\"result\": 1}\n```", `{"result": 1}`, true},
		{"~~~JSON\n{\"result\": 1}\n~~~", `{"result": 1}`, true},
		{"Sure.\n```json\n{\"result\": 1}\n```\nAnything else?", `{"result": 1}`, true},
		{"```python\nx = 1\n```\n```json\n{\"result\": 2}\n```", `{"result": 2}`, true},
		{"```json\n{\"result\": 1", `{"result": 1`, true},
		{"I cannot help with that.", "I cannot help with that.", false},
		{"{\"result\": \"a ``` b\"}", "{\"result\": \"a ``` b\"}", false},
	} {
		doc, fenced := unfence(c.in)
		if doc != c.doc || fenced != c.fenced {
			t.Errorf("unfence(%q) = %q, %v; want %q, %v", c.in, doc, fenced, c.doc, c.fenced)
		}
	}
}

// misspelt is an answer with two mistakes a model makes: expected-status
// for expected_status, and secret.TOKEN for secrets.TOKEN.
const misspelt = `{
  "result": {"supplier": "ACME", "amount": 1250.5},
  "workflow": [
    {
      "type": "request",
      "url": "https://erp.example.com/payables",
      "headers": {"Authorization": "Bearer ${{secret.FINANCE_TOKEN}}"},
      "body": {"supplier": "ACME", "amount": 1250.5},
      "expected-status": 201
    }
  ]
}`

const repaired = `{
  "result": {"supplier": "ACME", "amount": 1250.5},
  "workflow": [
    {
      "type": "request",
      "url": "https://erp.example.com/payables",
      "headers": {"Authorization": "Bearer ${{secrets.FINANCE_TOKEN}}"},
      "body": {"supplier": "ACME", "amount": 1250.5},
      "expected_status": 201
    }
  ]
}`

// TestRepairRound checks an invalid answer goes back to the model with the
// linter's text — codes, positions, the line with a caret, did-you-mean —
// and the corrected answer is taken, each round's tokens counted.
func TestRepairRound(t *testing.T) {
	h := newHarness(t, standin.Sequence(standin.Answer(misspelt), standin.Answer(repaired)))
	res := h.run(t, invoiceInput(t))
	if res.Status != inbox.RunSucceeded {
		t.Fatalf("status %s (%s: %s)", res.Status, res.Cause, res.Error)
	}
	if string(res.Output) != repaired {
		t.Errorf("output %s", res.Output)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	second := reqs[1].Messages
	if len(second) != 4 || second[2].Role != "assistant" || second[3].Role != "user" {
		t.Fatalf("the repair request's messages: %+v", second)
	}
	if second[2].Text != misspelt {
		t.Errorf("the answer sent back is not the one linted:\n%s", second[2].Text)
	}
	lintText := Validate([]byte(misspelt)).Text()
	for _, want := range []string{
		lintText, // the linter's text output, whole
		`answer.json:9:7: error: unknown field "expected-status"`,
		`did you mean "expected_status"?`,
		"[step-unknown-field]",
		"secrets",
		"^",
	} {
		if !strings.Contains(second[3].Text, want) {
			t.Errorf("the repair message lacks %q:\n%s", want, second[3].Text)
		}
	}
	if len(res.Repairs) != 1 || res.Repairs[0].Round != 1 {
		t.Fatalf("repairs %+v", res.Repairs)
	}
	var ds compile.Diagnostics
	if err := json.Unmarshal(res.Repairs[0].Diagnostics, &ds); err != nil || len(ds) != 2 {
		t.Errorf("the repair's diagnostics %s (%v)", res.Repairs[0].Diagnostics, err)
	}
	u0, u1 := reqs[0].PromptTokens(), reqs[1].PromptTokens()
	o0, o1 := standin.EstimateTokens(misspelt), standin.EstimateTokens(repaired)
	if want := (inbox.Tokens{Input: u0 + u1, Output: o0 + o1}); res.Tokens != want {
		t.Errorf("tokens %+v, want both rounds %+v", res.Tokens, want)
	}
	if want := (inbox.Tokens{Input: u1, Output: o1}); res.Repairs[0].Tokens != want {
		t.Errorf("the repair round's tokens %+v, want %+v", res.Repairs[0].Tokens, want)
	}
	if res.CostUSD != inbox.Cost("claude-sonnet-4-5", res.Tokens) || res.CostUSD == 0 {
		t.Errorf("cost %v", res.CostUSD)
	}
}

// TestStillInvalidFails checks an answer that stays invalid fails the run
// with invalid_output and its diagnostics, after exactly the agent's repair
// rounds; nothing else is asked.
func TestStillInvalidFails(t *testing.T) {
	for _, rounds := range []int{0, 1, 2} {
		h := newHarness(t, standin.Always(standin.Answer(misspelt)))
		in := invoiceInput(t)
		in.Agent.Settings.RepairRounds = &rounds
		res := h.run(t, in)
		if res.Status != inbox.RunFailed || res.Cause != inbox.CauseInvalidOutput {
			t.Fatalf("rounds %d: status %s cause %s", rounds, res.Status, res.Cause)
		}
		if n := len(h.srv.Requests()); n != rounds+1 {
			t.Errorf("rounds %d: %d requests, want %d", rounds, n, rounds+1)
		}
		if len(res.Repairs) != rounds || len(res.Output) != 0 || res.Answer != misspelt {
			t.Errorf("rounds %d: repairs %d, output %q, answer %q", rounds, len(res.Repairs), res.Output, res.Answer)
		}
		var ds compile.Diagnostics
		if err := json.Unmarshal(res.Diagnostics, &ds); err != nil || !ds.HasErrors() {
			t.Errorf("rounds %d: diagnostics %s", rounds, res.Diagnostics)
		}
		if !strings.Contains(res.Error, "nothing was sent. 2 errors, the first: 7:44: error: unknown namespace") {
			t.Errorf("rounds %d: error %q", rounds, res.Error)
		}
	}
}

// TestAnswersThatAreNotDocuments checks prose, an empty answer and an
// answer without "result" are repaired like any other invalid answer.
func TestAnswersThatAreNotDocuments(t *testing.T) {
	for name, first := range map[string]string{
		"prose":     "The e-mail is an invoice from ACME.",
		"empty":     "",
		"no result": `{"workflow": null}`,
		"array":     `[1, 2]`,
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, standin.Sequence(standin.Answer(first), standin.Answer(`{"result": {"kind": "invoice"}}`)))
			res := h.run(t, invoiceInput(t))
			if res.Status != inbox.RunSucceeded || len(res.Repairs) != 1 {
				t.Fatalf("status %s, %d repairs (%s)", res.Status, len(res.Repairs), res.Error)
			}
			if name == "no result" && !strings.Contains(h.srv.Requests()[1].LastUser(), `must be a JSON object with "result"`) {
				t.Errorf("the repair message does not ask for a result:\n%s", h.srv.Requests()[1].LastUser())
			}
		})
	}
}

// TestRetryAfter checks a 429 with Retry-After: 1 is retried after one
// second (recorded, not slept) and the run succeeds on the second attempt.
func TestRetryAfter(t *testing.T) {
	h := newHarness(t, standin.Sequence(standin.RateLimited(1), standin.Answer(payableAnswer)))
	res := h.run(t, invoiceInput(t))
	if res.Status != inbox.RunSucceeded {
		t.Fatalf("status %s (%s)", res.Status, res.Error)
	}
	if d := cmp.Diff([]time.Duration{time.Second}, h.waits); d != "" {
		t.Errorf("waits (-want +got):\n%s", d)
	}
	if len(res.Calls) != 2 {
		t.Fatalf("calls %+v", res.Calls)
	}
	c0, c1 := res.Calls[0], res.Calls[1]
	if c0.Attempt != 1 || c0.Status != http.StatusTooManyRequests || c0.Cause != inbox.CauseRateLimited || c0.WaitMS != 1000 {
		t.Errorf("first call %+v", c0)
	}
	if c1.Attempt != 2 || c1.Status != http.StatusOK || c1.Cause != "" || c1.WaitMS != 0 || c1.Tokens == (inbox.Tokens{}) {
		t.Errorf("second call %+v", c1)
	}
	if res.Tokens != c1.Tokens {
		t.Errorf("tokens %+v, want the answer's %+v", res.Tokens, c1.Tokens)
	}
}

func TestRetryAfterForms(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second, true},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond, true},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond, true},
		{http.Header{"Retry-After": {now.Add(3 * time.Second).Format(http.TimeFormat)}}, 3 * time.Second, true},
		{http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0, true},
		{http.Header{"Retry-After": {"soon"}}, 0, false},
		{http.Header{"Retry-After": {"-1"}}, 0, false},
		{http.Header{}, 0, false},
	} {
		got, ok := budget.RetryAfter(c.h, now)
		if got != c.want || ok != c.ok {
			t.Errorf("retryAfter(%v) = %v, %v; want %v, %v", c.h, got, ok, c.want, c.ok)
		}
	}
}

// TestRetriesExhausted checks each kind of retried failure ends with its
// cause once the attempts are used, with a wait before each retry.
func TestRetriesExhausted(t *testing.T) {
	for name, c := range map[string]struct {
		reply standin.Reply
		cause inbox.Cause
	}{
		"429":     {standin.Error(429, "rate_limit_exceeded", "slow down"), inbox.CauseRateLimited},
		"503":     {standin.Error(503, "overloaded", "try later"), inbox.CauseProviderError},
		"529":     {standin.Error(529, "overloaded_error", "Overloaded"), inbox.CauseProviderError},
		"408":     {standin.Error(408, "timeout", "request timeout"), inbox.CauseProviderError},
		"garbage": {standin.Reply{Status: 502, Body: "<html>bad gateway</html>"}, inbox.CauseProviderError},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, standin.Always(c.reply))
			h.runner.Retry = Retry{Attempts: 3, Backoff: 100 * time.Millisecond}
			res := h.run(t, invoiceInput(t))
			if res.Status != inbox.RunFailed || res.Cause != c.cause {
				t.Fatalf("status %s cause %s (%s)", res.Status, res.Cause, res.Error)
			}
			if len(h.srv.Requests()) != 3 || len(res.Calls) != 3 || len(h.waits) != 2 {
				t.Fatalf("%d requests, %d calls, waits %v", len(h.srv.Requests()), len(res.Calls), h.waits)
			}
			// Backoff: 100 ms then 200 ms, each less up to a quarter.
			for i, w := range h.waits {
				top := 100 * time.Millisecond << i
				if w > top || w < top*3/4 {
					t.Errorf("wait %d is %v, want within [%v, %v]", i, w, top*3/4, top)
				}
				if res.Calls[i].WaitMS != w.Milliseconds() {
					t.Errorf("call %d records wait %d ms, slept %v", i, res.Calls[i].WaitMS, w)
				}
			}
			if !strings.Contains(res.Error, "gave up after 3 attempts") {
				t.Errorf("error %q", res.Error)
			}
		})
	}
}

// TestRetryAfterPastTheTimeout checks a Retry-After longer than the time
// left is not waited: the run fails rate_limited at once.
func TestRetryAfterPastTheTimeout(t *testing.T) {
	h := newHarness(t, standin.Always(standin.RateLimited(30)))
	in := invoiceInput(t)
	in.Agent.Settings.TimeoutSeconds = 10
	res := h.run(t, in)
	if res.Cause != inbox.CauseRateLimited || len(h.waits) != 0 || len(h.srv.Requests()) != 1 {
		t.Fatalf("cause %s, waits %v, %d requests (%s)", res.Cause, h.waits, len(h.srv.Requests()), res.Error)
	}
	if !strings.Contains(res.Error, "would pass the agent's timeout of 10s") {
		t.Errorf("error %q", res.Error)
	}
}

// TestFailuresNotRetried checks the failures a retry cannot fix end the
// run at once, each with its own cause.
func TestFailuresNotRetried(t *testing.T) {
	for name, c := range map[string]struct {
		reply standin.Reply
		cause inbox.Cause
		says  string
	}{
		"context length code":    {standin.Error(400, "context_length_exceeded", "This model's maximum context length is 8192 tokens."), inbox.CauseContextLength, "context"},
		"context length message": {standin.Error(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"), inbox.CauseContextLength, "context"},
		"too large":              {standin.Error(413, "request_too_large", "Request exceeds the maximum size"), inbox.CauseContextLength, "context"},
		"quota":                  {standin.Error(429, "insufficient_quota", "You exceeded your current quota"), inbox.CauseRateLimited, "quota"},
		"unauthorized":           {standin.Error(401, "invalid_api_key", "Incorrect API key provided"), inbox.CauseProviderError, "refused the API key"},
		"not found":              {standin.Error(404, "model_not_found", "The model does not exist"), inbox.CauseProviderError, "model names"},
		"bad request":            {standin.Error(400, "invalid_request_error", "Unsupported parameter: 'temperature'"), inbox.CauseProviderError, "rejected the request (400 Bad Request): Unsupported parameter"},
		"refusal":                {standin.Reply{Refusal: "I can't help with that."}, inbox.CauseRefusal, "I can't help with that."},
		"content filter":         {standin.Reply{Content: "", FinishReason: "content_filter"}, inbox.CauseRefusal, "content filter"},
		"truncated":              {standin.Reply{Content: "{\n  \"result\": {\"supp", FinishReason: "length"}, inbox.CauseOutputTruncated, "output limit"},
		"no choices":             {standin.Reply{Body: `{"id": "x", "object": "chat.completion", "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 0}}`}, inbox.CauseProviderError, "without a choice"},
		"not json":               {standin.Reply{Body: `this is not json`}, inbox.CauseProviderError, "not a Chat Completions response"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, standin.Always(c.reply))
			res := h.run(t, invoiceInput(t))
			if res.Status != inbox.RunFailed || res.Cause != c.cause {
				t.Fatalf("status %s cause %s (%s)", res.Status, res.Cause, res.Error)
			}
			if n := len(h.srv.Requests()); n != 1 || len(h.waits) != 0 {
				t.Errorf("%d requests, waits %v: want 1 and none", n, h.waits)
			}
			if !strings.Contains(res.Error, c.says) {
				t.Errorf("error %q does not say %q", res.Error, c.says)
			}
			if len(res.Output) != 0 {
				t.Errorf("a failed run has output %s", res.Output)
			}
			if c.cause == inbox.CauseOutputTruncated && res.Answer != c.reply.Content {
				t.Errorf("the truncated answer is recorded as %q, not as the model wrote it", res.Answer)
			}
		})
	}
}

// TestTimeout checks a model that does not answer within the agent's
// timeout fails the run with model_timeout.
func TestTimeout(t *testing.T) {
	h := newHarness(t, standin.Always(standin.Reply{Hang: true}))
	in := invoiceInput(t)
	in.Agent.Settings.TimeoutSeconds = 1
	start := time.Now()
	res := h.run(t, in)
	if res.Cause != inbox.CauseModelTimeout || !strings.Contains(res.Error, "within the agent's timeout of 1s") {
		t.Fatalf("cause %s: %s", res.Cause, res.Error)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the run took %v with a 1 s timeout", took)
	}
}

// TestStoppingIsNotAResult checks a run cut short by its caller (the
// server stopping) is an error to retry, not a failed run.
func TestStoppingIsNotAResult(t *testing.T) {
	h := newHarness(t, standin.Always(standin.Reply{Hang: true}))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer cancel()
		if err := testwait.Until(10*time.Second, func() error {
			if len(h.srv.Requests()) == 0 {
				return errors.New("the model has no request yet")
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
	}()
	if _, err := h.runner.RunAgent(ctx, invoiceInput(t)); err == nil || !strings.Contains(err.Error(), "canceled") {
		t.Fatalf("err %v, want the cancellation", err)
	}
}

// TestNoConnection checks an endpoint nobody listens on is retried, then
// fails with provider_error.
func TestNoConnection(t *testing.T) {
	h := newHarness(t, standin.Always(standin.Answer(payableAnswer)), func(e *Endpoint) { e.BaseURL = "http://127.0.0.1:1/v1" })
	h.runner.Retry = Retry{Attempts: 2, Backoff: time.Millisecond}
	res := h.run(t, invoiceInput(t))
	if res.Cause != inbox.CauseProviderError || len(res.Calls) != 2 || res.Calls[0].Status != 0 || !strings.Contains(res.Error, "no answer from the provider") {
		t.Fatalf("cause %s, calls %+v: %s", res.Cause, res.Calls, res.Error)
	}
}

// TestModelUnavailable checks a model outside the catalog, or a provider
// without an endpoint, fails without a request.
func TestModelUnavailable(t *testing.T) {
	h := newHarness(t, standin.Always(standin.Answer(payableAnswer)))
	in := invoiceInput(t)
	in.Agent.Model = "gpt-2"
	if res := h.run(t, in); res.Cause != inbox.CauseModelUnavailable || !strings.Contains(res.Error, `"gpt-2" is not in the catalog`) {
		t.Errorf("unknown model: %s %s", res.Cause, res.Error)
	}
	ep := h.runner.Config.Providers[AnyProvider]
	h.runner.Config = Config{Providers: map[string]Endpoint{"openai": ep}}
	if res := h.run(t, invoiceInput(t)); res.Cause != inbox.CauseModelUnavailable || !strings.Contains(res.Error, "no model endpoint is configured for anthropic") {
		t.Errorf("no endpoint: %s %s", res.Cause, res.Error)
	}
	if n := len(h.srv.Requests()); n != 0 {
		t.Errorf("%d requests made", n)
	}
	in = input(t, "gpt-4.1-mini", []byte(seedEML()))
	if res := h.run(t, in); res.Status != inbox.RunSucceeded {
		t.Errorf("the openai model on its endpoint: %s %s", res.Cause, res.Error)
	}
}

func seedEML() string { return string(makeEML("Invoice 4521", invoiceText)) }

// TestCost checks the run's cost is the catalog's price of every round's
// tokens.
func TestCost(t *testing.T) {
	h := newHarness(t, standin.Sequence(
		standin.Reply{Content: misspelt, CompletionTokens: 300},
		standin.Reply{Content: repaired, CompletionTokens: 200}))
	res := h.run(t, invoiceInput(t))
	in := h.srv.Requests()[0].PromptTokens() + h.srv.Requests()[1].PromptTokens()
	if res.Tokens != (inbox.Tokens{Input: in, Output: 500}) {
		t.Fatalf("tokens %+v", res.Tokens)
	}
	// claude-sonnet-4-5: 3 USD per million input tokens, 15 per million output.
	want := float64(in)*3/1e6 + 500*15/1e6
	if math.Abs(res.CostUSD-want) > 1e-6 {
		t.Errorf("cost %v, want %v", res.CostUSD, want)
	}
}

// TestValidateIsTheToolsLinter checks the repair loop's text and the
// workflows_validate tool's JSON come from one call, lint.Bytes with the
// workspace's options: the same diagnostics, each line of the text naming
// one of them.
func TestValidateIsTheToolsLinter(t *testing.T) {
	opts := lint.Options{SecretNames: []string{"FINANCE_TOKEN"}}
	for _, doc := range []string{misspelt, repaired, payableAnswer, `{"workflow": [{"type": "request", "url": "ftp://x", "method": "post"}]}`, `{`, ``} {
		v := ValidateWith([]byte(doc), opts)
		r := lint.Bytes(AnswerFile, []byte(doc), opts)
		if r.OK() != v.OK() {
			t.Errorf("lint.Bytes and ValidateWith disagree on %q", doc)
		}
		var ds compile.Diagnostics
		if err := json.Unmarshal(v.JSON(), &ds); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]compile.Diagnostic(r.Diagnostics), []compile.Diagnostic(ds), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("the tool's diagnostics are not the repair loop's (-want +got):\n%s", d)
		}
		if _, want := compile.Compile([]byte(doc), opts); cmp.Diff(want, ds, cmpopts.EquateEmpty()) != "" {
			d := cmp.Diff(want, ds, cmpopts.EquateEmpty())
			t.Errorf("the tool's diagnostics are not the compiler's (-want +got):\n%s", d)
		}
		text := v.Text()
		for _, d := range ds {
			line := AnswerFile + ":" + d.String()
			if !strings.Contains(text, line) {
				t.Errorf("the text lacks %q:\n%s", line, text)
			}
		}
	}
}

// TestAttachmentBytesNeverInThePrompt runs the same e-mail with a 5 KB and
// a 5 MB PDF: no request holds the attachment's bytes (raw or base64), and
// the prompt costs the same tokens within 1 %.
func TestAttachmentBytesNeverInThePrompt(t *testing.T) {
	tokens := map[int]int{}
	prompts := map[int]int{}
	for _, size := range []int{5 << 10, 5 << 20} {
		data := pdf(size, uint64(size))
		raw := makeEML("Nota fiscal 4521", invoiceText, attachment{"danfe-4521.pdf", "application/pdf", data})
		h := newHarness(t, standin.Always(standin.Answer(payableAnswer)))
		res := h.run(t, input(t, "claude-sonnet-4-5", raw))
		if res.Status != inbox.RunSucceeded {
			t.Fatalf("%d bytes: %s %s", size, res.Cause, res.Error)
		}
		b64 := base64.StdEncoding.EncodeToString(data)
		for _, needle := range []string{"LEAK-MARKER-9f31", b64[len(b64)/2 : len(b64)/2+64], b64[:64]} {
			if h.srv.Contains(needle) {
				t.Errorf("%d bytes: a request holds the attachment's bytes (%q)", size, needle)
			}
		}
		r := h.srv.Requests()[0]
		if len(r.Body) > 64<<10 {
			t.Errorf("%d bytes: the request is %d bytes long", size, len(r.Body))
		}
		tokens[size] = res.Tokens.Input
		prompts[size] = len(r.Messages[0].Text) + len(r.Messages[1].Text)
	}
	// The prompts differ only in the size's digits: 5120 and 5242880.
	if d := prompts[5<<20] - prompts[5<<10]; d != len("5242880")-len("5120") {
		t.Errorf("prompt bytes %d (5 KB) and %d (5 MB): they differ by %d, not by the size's 3 more digits", prompts[5<<10], prompts[5<<20], d)
	}
	t.Logf("prompt bytes (system + user): 5 KB attachment %d, 5 MB attachment %d", prompts[5<<10], prompts[5<<20])
	small, large := tokens[5<<10], tokens[5<<20]
	t.Logf("prompt tokens (stand-in estimate, bytes/4): 5 KB attachment %d, 5 MB attachment %d (%+.3f%%)", small, large, 100*float64(large-small)/float64(small))
	if diff := math.Abs(float64(large-small)) / float64(small); diff > 0.01 {
		t.Errorf("prompt tokens %d (5 KB) vs %d (5 MB): %.2f%% apart, want within 1%%", small, large, 100*diff)
	}
}

// TestFileInputs checks an agent that allows it sends its model the PDF
// and image attachments as files, byte for byte, within its byte cap; the
// prompt says which are attached.
func TestFileInputs(t *testing.T) {
	doc := pdf(30000, 1)
	img := pdf(20000, 2)
	big := pdf(50000, 3)
	raw := makeEML("Nota fiscal 4521", invoiceText,
		attachment{"danfe.pdf", "application/pdf", doc},
		attachment{"nfe.xml", "application/xml", []byte("<nfe/>")},
		attachment{"photo.png", "image/png", img},
		attachment{"contract.pdf", "application/pdf", big})
	h := newHarness(t, standin.Always(standin.Answer(payableAnswer)))
	in := input(t, "claude-sonnet-4-5", raw)
	in.Agent.Settings.FileInputs = true
	in.Agent.Settings.FileInputMaxBytes = 60000 // danfe.pdf and photo.png fit; contract.pdf would pass it
	res := h.run(t, in)
	if res.Status != inbox.RunSucceeded {
		t.Fatalf("%s %s", res.Cause, res.Error)
	}
	user := h.srv.Requests()[0].Messages[1]
	if len(user.Files) != 2 {
		t.Fatalf("%d files sent, want 2", len(user.Files))
	}
	if f := user.Files[0]; f.Type != "file" || f.Filename != "danfe.pdf" || f.Data != "data:application/pdf;base64,"+base64.StdEncoding.EncodeToString(doc) {
		t.Errorf("the PDF part: %s %s %.60s", f.Type, f.Filename, f.Data)
	}
	if f := user.Files[1]; f.Type != "image_url" || f.Data != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(img) {
		t.Errorf("the image part: %s %.60s", f.Type, f.Data)
	}
	for _, want := range []string{
		"0. danfe.pdf: application/pdf, 30000 bytes (attached for you to read)",
		"1. nfe.xml: application/xml, 6 bytes (not attached: the model reads PDF and image files, not application/xml)",
		"2. photo.png: image/png, 20000 bytes (attached for you to read)",
		"3. contract.pdf: application/pdf, 50000 bytes (not attached: it would pass this agent's limit of 60000 bytes of files)",
	} {
		if !strings.Contains(user.Text, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, user.Text)
		}
	}
	if strings.Contains(user.Text, base64.StdEncoding.EncodeToString(doc[:300])) || strings.Contains(user.Text, "LEAK-MARKER") {
		t.Errorf("the prompt text holds file data")
	}

	// Not without the agent's leave, a model that reads attachments, and an
	// endpoint that takes them.
	for name, change := range map[string]func(*inbox.AgentInput, *Runner){
		"agent": func(in *inbox.AgentInput, _ *Runner) { in.Agent.Settings.FileInputs = false },
		"model": func(in *inbox.AgentInput, r *Runner) { r.Models = noAttachments },
		"endpoint": func(_ *inbox.AgentInput, r *Runner) {
			e := r.Config.Providers[AnyProvider]
			no := false
			e.FileInputs = &no
			r.Config.Providers[AnyProvider] = e
		},
		"purged": func(in *inbox.AgentInput, _ *Runner) { in.Message = nil },
	} {
		h := newHarness(t, standin.Always(standin.Answer(payableAnswer)))
		in := input(t, "claude-sonnet-4-5", raw)
		in.Agent.Settings.FileInputs = true
		change(&in, h.runner)
		if res := h.run(t, in); res.Status != inbox.RunSucceeded {
			t.Fatalf("%s: %s %s", name, res.Cause, res.Error)
		}
		if n := len(h.srv.Requests()[0].Messages[1].Files); n != 0 {
			t.Errorf("%s: %d files sent", name, n)
		}
	}
}

func noAttachments(id string) (inbox.Model, bool) {
	m, ok := inbox.ModelByID(id)
	m.SupportsAttachment = false
	return m, ok
}

// failingMessage is a stored message that reads once, then fails: the
// attachment stream breaks while the request is being sent.
type failingMessage struct {
	inbox.Message
	reads *int
	after int
}

func (f failingMessage) ReadAt(p []byte, off int64) (int, error) {
	*f.reads++
	if *f.reads > f.after {
		return 0, errBroken
	}
	return f.Message.ReadAt(p, off)
}

var errBroken = errors.New("the disk went away")

// TestFileInputUnreadable checks an attachment that cannot be read while
// it is sent fails the run with attachment_unreadable, not a short body.
func TestFileInputUnreadable(t *testing.T) {
	raw := makeEML("Nota fiscal 4521", invoiceText, attachment{"danfe.pdf", "application/pdf", pdf(300000, 9)})
	h := newHarness(t, standin.Always(standin.Answer(payableAnswer)))
	in := input(t, "claude-sonnet-4-5", raw)
	in.Agent.Settings.FileInputs = true
	// Reading the message to list its attachments takes some reads; the
	// stream of the attachment fails after a few more.
	probe := 0
	if _, err := openMessage(failingMessage{Message: inbox.BytesMessage(raw), reads: &probe, after: math.MaxInt}); err != nil {
		t.Fatal(err)
	}
	reads := 0
	in.Message = failingMessage{Message: inbox.BytesMessage(raw), reads: &reads, after: probe + 3}
	res := h.run(t, in)
	if res.Cause != inbox.CauseAttachmentUnreadable || !strings.Contains(res.Error, "the disk went away") {
		t.Fatalf("cause %s: %s", res.Cause, res.Error)
	}
	for _, r := range h.srv.Requests() {
		if len(r.Messages) > 0 {
			t.Errorf("the stand-in decoded a request whose attachment broke mid-body")
		}
	}
}

// FuzzUnfence checks any model answer is taken apart without a panic, and
// that what is linted is part of what the model said: a fence is only ever
// removed, never text added.
func FuzzUnfence(f *testing.F) {
	for _, s := range []string{payableAnswer, "```json\n" + payableAnswer + "\n```", "Sure:\n~~~\n{}\n~~~\nbye", "```python\n```\n```json\n{", "```", "~~~json", "\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, answer string) {
		doc, fenced := unfence(answer)
		if !strings.Contains(answer, doc) {
			t.Fatalf("unfence(%q) = %q, which the answer does not hold", answer, doc)
		}
		if doc != strings.TrimSpace(doc) {
			t.Fatalf("unfence(%q) = %q, not trimmed", answer, doc)
		}
		if !fenced && doc != strings.TrimSpace(answer) {
			t.Fatalf("unfence(%q) = %q: an answer without a fence was changed", answer, doc)
		}
	})
}

// The repairs made to read a damaged attachment reach the model as part of
// its metadata (never its bytes).
func TestAttachmentDefectsInThePrompt(t *testing.T) {
	h := newHarness(t, standin.Always(standin.Answer(payableAnswer)))
	in := invoiceInput(t)
	in.Email.Attachments[1].Defects = []inbox.AttachmentDefect{{Code: "base64-missing-padding", Message: "the base64 data ended without its padding"}}
	if res := h.run(t, in); res.Status != inbox.RunSucceeded {
		t.Fatalf("status %s (%s: %s)", res.Status, res.Cause, res.Error)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 1 || len(reqs[0].Messages) != 2 {
		t.Fatalf("requests %+v", reqs)
	}
	if user := reqs[0].Messages[1].Text; !strings.Contains(user, "the base64 data ended without its padding") {
		t.Errorf("the user message does not mention the defect:\n%s", user)
	}
}
