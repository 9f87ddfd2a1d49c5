package agent

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/kobana/workflow/mcpserver/agent/budget"
	"github.com/kobana/workflow/mcpserver/agent/standin"
	"github.com/kobana/workflow/mcpserver/inbox"
)

func TestConfigCeilings(t *testing.T) {
	path := writeFile(t, "agents.json", `{"providers": {
		"openai": {"base_url": "https://api.openai.com/v1", "api_key_env": "K", "rpm": 60000, "tpm": 20000000, "max_in_flight": 300},
		"*":      {"base_url": "http://127.0.0.1:8000/v1"}}}`)
	c, err := Load(Flags{ConfigFile: path}, env(map[string]string{"K": "sk-ceilings"}), providers())
	if err != nil {
		t.Fatal(err)
	}
	e := c.Providers["openai"]
	if e.limits() != (budget.Limits{RequestsPerMinute: 60000, TokensPerMinute: 20000000, InFlight: 300}) {
		t.Fatalf("limits %+v", e.limits())
	}
	if id := e.ID(); strings.Contains(id, "sk-ceilings") || !strings.HasPrefix(id, "api.openai.com#") {
		t.Fatalf("endpoint id %q", id)
	}
	b := c.Budget(budget.Options{})
	for range 300 {
		if _, err := b.Acquire(context.Background(), e.ID(), "w", 100); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Acquire(ctx, e.ID(), "w", 100); err == nil {
		t.Fatal("the 301st call was admitted past max_in_flight 300")
	}
}

// openai-go (v3.99.0, internal/requestconfig) retries on its own: with its
// default MaxRetries of 2 it sends a request that got a 408, 409, 429 or
// 5xx (or no answer) twice more, waiting retry-after-ms / retry-after (up to
// 2 min) or 0.5 s·2^n with jitter, unless the answer says x-should-retry:
// false. Those retries would bypass the budget; the runner turns them off
// (option.WithMaxRetries(0)) and retries through the budget, one request
// per attempt, each recorded.
func TestSDKRetriesOnItsOwnUnlessTurnedOff(t *testing.T) {
	srv := standin.New(standin.Always(rateLimitedMs(1)))
	hs := httptest.NewServer(srv)
	defer hs.Close()
	svc := openai.NewChatCompletionService(option.WithBaseURL(hs.URL+"/v1"), option.WithAPIKey("k"))
	_, err := svc.New(context.Background(), openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	if err == nil || len(srv.Requests()) != 3 {
		t.Fatalf("the SDK's defaults: %v after %d requests; want a 429 after 3", err, len(srv.Requests()))
	}
	if got := srv.Requests()[2].Header.Get("X-Stainless-Retry-Count"); got != "2" {
		t.Errorf("third request's retry count %q", got)
	}

	h := newHarness(t, standin.Always(rateLimitedMs(1)))
	h.runner.Retry = Retry{Attempts: 1}
	h.runner.Budget = budget.New(budget.Options{})
	res := h.run(t, invoiceInput(t))
	if res.Cause != inbox.CauseRateLimited || len(h.srv.Requests()) != 1 || len(res.Calls) != 1 {
		t.Fatalf("the runner: %s after %d requests, %d recorded; want one request", res.Cause, len(h.srv.Requests()), len(res.Calls))
	}
}

func rateLimitedMs(ms int) standin.Reply {
	r := standin.RateLimited(0)
	r.Header = http.Header{"Retry-After-Ms": {strconv.Itoa(ms)}}
	return r
}

// With a budget, a 429 pauses the endpoint and the retry waits in the
// budget, not in the runner's own sleep; the budget learns the answer's
// headers and every lease is returned.
func TestRunnerRetriesThroughTheBudget(t *testing.T) {
	limited := standin.RateLimited(0)
	limited.Header = http.Header{"Retry-After-Ms": {"30"}, "X-Ratelimit-Limit-Requests": {"600"}, "X-Ratelimit-Remaining-Requests": {"0"}}
	h := newHarness(t, standin.Sequence(limited, standin.Answer(payableAnswer)))
	var o observed
	h.runner.Budget = budget.New(budget.Options{Observer: &o})
	res := h.run(t, invoiceInput(t))
	if res.Status != inbox.RunSucceeded || len(res.Calls) != 2 || res.Calls[0].Status != http.StatusTooManyRequests || res.Calls[0].WaitMS != 30 {
		t.Fatalf("%s %s %+v", res.Status, res.Error, res.Calls)
	}
	if len(h.waits) != 0 {
		t.Errorf("the runner slept %v itself; the budget is where a rate-limited retry waits", h.waits)
	}
	ep := h.runner.Config.Providers[AnyProvider].ID()
	if o.limited != 1 || h.runner.Budget.Stats(ep) != (budget.Stats{}) {
		t.Errorf("limited %d, stats %+v; want one 429 seen and nothing left in flight", o.limited, h.runner.Budget.Stats(ep))
	}
}

type observed struct{ limited int }

func (o *observed) Changed(string, budget.Stats)       {}
func (o *observed) Limited(string, int, time.Duration) { o.limited++ }

// A run whose request the budget refuses because it was closed (the server
// is stopping) is no result: RunAgent returns an error matching
// budget.ErrClosed, nothing was sent, and the pipeline's job is tried again
// — it must not be recorded as a failed run. Before, it was a failed result
// (model_unavailable) and the e-mail waited on the retry schedule.
func TestAClosedBudgetIsNoResult(t *testing.T) {
	h := newHarness(t, standin.Always(standin.Answer(payableAnswer)))
	b := budget.New(budget.Options{})
	b.Close()
	h.runner.Budget = b
	res, err := h.runner.RunAgent(context.Background(), invoiceInput(t))
	if !errors.Is(err, budget.ErrClosed) {
		t.Fatalf("RunAgent on a closed budget: %+v, %v; want an error matching ErrClosed", res, err)
	}
	if n := len(h.srv.Requests()); n != 0 {
		t.Fatalf("%d requests sent through a closed budget", n)
	}
}
