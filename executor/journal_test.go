package executor_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/runrecord"
)

// journal records what a run tells it, checks each request against the
// receiver (nothing may have arrived before Sending), and fails the
// Sending or Done calls it is told to.
type journal struct {
	rv       *receiver
	ids      bool
	mu       sync.Mutex
	sending  []runrecord.Step
	done     []runrecord.Step
	arrived  []int64 // the receiver's count when each Sending was called
	refuse   map[int]bool
	failDone map[int]bool
}

func (j *journal) Identity(i int) string {
	if !j.ids {
		return ""
	}
	return runrecord.StepID("wrun_test", i)
}

func (j *journal) Sending(_ context.Context, s runrecord.Step) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.sending = append(j.sending, s)
	j.arrived = append(j.arrived, j.rv.hits.Load())
	if j.refuse[s.Index] {
		return errors.New("the database is full")
	}
	return nil
}

func (j *journal) Done(_ context.Context, s runrecord.Step) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.done = append(j.done, s)
	if j.failDone[s.Index] {
		return errors.New("the connection was cut")
	}
	return nil
}

const threeSteps = `{"result":1,"workflow":[
	{"type":"request","label":"create tok-secret-77","url":"https://erp.example/a","headers":{"Authorization":"Bearer ${{secrets.T}}"},"body":{"n":1}},
	{"type":"request","url":"https://erp.example/b"},
	{"type":"request","url":"https://erp.example/c"}]}`

// The journal hears of each request — state sending, its identity, its
// redacted request and label — before the receiver has it, and of every
// step's outcome after; the record and the journal agree.
func TestTheJournalHearsOfEachRequestBeforeItLeaves(t *testing.T) {
	rv := newReceiver(t, func(http.ResponseWriter, *http.Request, *received) {})
	g := allowLoopback()
	j := &journal{rv: rv, ids: true}
	e := env(map[string]string{"T": "tok-secret-77"})
	e.Journal = j
	rec := executor.New(executor.Options{Guard: g, Network: to(g, rv)}).Run(t.Context(), compilePlan(t, threeSteps), e)
	if rec.Status != runrecord.RunSucceeded || len(j.sending) != 3 || len(j.done) != 3 {
		t.Fatalf("record %s; journal told %d sending, %d done", recordJSON(t, rec), len(j.sending), len(j.done))
	}
	for i, s := range j.sending {
		if j.arrived[i] != int64(i) {
			t.Errorf("step %d: the receiver had %d requests when the journal heard of it, want %d", i, j.arrived[i], i)
		}
		if s.Index != i || s.State != runrecord.Sending || s.ID != runrecord.StepID("wrun_test", i) || s.Request == nil || s.StartedAt.IsZero() {
			t.Errorf("sending %d: %+v", i, s)
		}
	}
	if j.sending[0].Label != "create [redacted secrets.T]" || j.sending[0].Request.Headers["Authorization"] != "Bearer [redacted secrets.T]" {
		t.Errorf("the journal saw a secret: %+v %v", j.sending[0].Label, j.sending[0].Request.Headers)
	}
	for i, s := range j.done {
		if s.State != runrecord.Succeeded || s.ID != rec.Steps[i].ID || s.Response == nil || s.Response.Status != 200 {
			t.Errorf("done %d: %+v", i, s)
		}
	}
}

// A journal that cannot record that a step is being sent refuses it: the
// receiver never gets it, its record says why, and the steps that do not
// depend on it still run.
func TestAJournalThatCannotRecordRefusesTheRequest(t *testing.T) {
	rv := newReceiver(t, func(http.ResponseWriter, *http.Request, *received) {})
	g := allowLoopback()
	j := &journal{rv: rv, refuse: map[int]bool{1: true}}
	e := env(map[string]string{"T": "tok-secret-77"})
	e.Journal = j
	rec := executor.New(executor.Options{Guard: g, Network: to(g, rv)}).Run(t.Context(), compilePlan(t, threeSteps), e)
	s := rec.Steps[1]
	if s.State != runrecord.Failed || s.Reason != runrecord.ReasonNotRecorded || !strings.Contains(s.Error, "not sent") || !strings.Contains(s.Error, "the database is full") {
		t.Errorf("refused step: %+v", s)
	}
	if rec.Steps[0].State != runrecord.Succeeded || rec.Steps[2].State != runrecord.Succeeded {
		t.Errorf("record %s", recordJSON(t, rec))
	}
	for _, r := range rv.requests {
		if r.Path == "/b" {
			t.Error("the refused request reached the receiver")
		}
	}
	if rv.hits.Load() != 2 {
		t.Errorf("the receiver got %d requests, want 2", rv.hits.Load())
	}
}

// A journal that cannot record a step's outcome stops the run: no request
// is sent after one whose outcome its record lacks.
func TestAJournalThatCannotRecordAnOutcomeStopsTheRun(t *testing.T) {
	rv := newReceiver(t, func(http.ResponseWriter, *http.Request, *received) {})
	g := allowLoopback()
	j := &journal{rv: rv, failDone: map[int]bool{0: true}}
	e := env(map[string]string{"T": "tok-secret-77"})
	e.Journal = j
	rec := executor.New(executor.Options{Guard: g, Network: to(g, rv)}).Run(t.Context(), compilePlan(t, threeSteps), e)
	if rec.Steps[0].State != runrecord.Succeeded || rv.hits.Load() != 1 {
		t.Fatalf("record %s, %d requests received", recordJSON(t, rec), rv.hits.Load())
	}
	for _, s := range rec.Steps[1:] {
		if s.State != runrecord.Skipped || s.Reason != runrecord.ReasonNotRecorded || !strings.Contains(s.Error, "the outcome of step 0 could not be recorded") {
			t.Errorf("step %d: %+v", s.Index, s)
		}
	}
}

// A step's identity goes out as X-Kobana-Step-Id on every request that has
// one and as an Idempotency-Key (a quoted structured-field string) on a
// POST or PATCH whose step sets none; a step's own Idempotency-Key is sent
// as written. The record shows what was sent. Without an identity, nothing
// is added.
func TestAStepCarriesItsIdentity(t *testing.T) {
	doc := `{"result":1,"workflow":[
		{"type":"request","method":"POST","url":"https://erp.example/a","body":{"n":1}},
		{"type":"request","method":"PATCH","url":"https://erp.example/b","body":{"n":2}},
		{"type":"request","method":"PUT","url":"https://erp.example/c","body":{"n":3}},
		{"type":"request","method":"GET","url":"https://erp.example/d"},
		{"type":"request","method":"POST","url":"https://erp.example/e","headers":{"idempotency-key":"agent-own-1"}}]}`
	for _, ids := range []bool{true, false} {
		rv := newReceiver(t, func(http.ResponseWriter, *http.Request, *received) {})
		g := allowLoopback()
		e := env(nil)
		e.Journal = &journal{rv: rv, ids: ids}
		rec := executor.New(executor.Options{Guard: g, Network: to(g, rv)}).Run(t.Context(), compilePlan(t, doc), e)
		if rec.Status != runrecord.RunSucceeded {
			t.Fatal(recordJSON(t, rec))
		}
		wantKey := map[string]string{"/a": `"wrun_test/0"`, "/b": `"wrun_test/1"`, "/e": "agent-own-1"}
		for i, r := range rv.requests {
			id, key := r.Header.Get(runrecord.HeaderStepID), r.Header.Get(runrecord.HeaderIdempotencyKey)
			step := rec.Steps[i]
			switch {
			case !ids:
				if id != "" || (key != "" && r.Path != "/e") || step.ID != "" {
					t.Errorf("without identities %s got %q %q (record id %q)", r.Path, id, key, step.ID)
				}
			case id != runrecord.StepID("wrun_test", i) || key != wantKey[r.Path] || step.ID != id:
				t.Errorf("%s %s: step id %q, key %q (record id %q)", r.Method, r.Path, id, key, step.ID)
			}
			if ids && (step.Request.Headers[runrecord.HeaderStepID] != id || wantKey[r.Path] != "" && r.Path != "/e" && step.Request.Headers[runrecord.HeaderIdempotencyKey] != key) {
				t.Errorf("%s: the record's headers %v, sent %q %q", r.Path, step.Request.Headers, id, key)
			}
		}
	}
}

// The executor always reaches the network through the guard: a caller's
// own dialer that goes to loopback is refused when the guard does not
// allow loopback (nothing reaches the receiver), a connection whose peer
// is no IP address is refused, and the same dialer works once the guard
// allows the address — so a test's dialer counts connections through the
// guard rather than around it.
func TestANetworkCannotTakeARequestPastTheGuard(t *testing.T) {
	rv := newReceiver(t, func(http.ResponseWriter, *http.Request, *received) {})
	var dials int
	var mu sync.Mutex
	var d net.Dialer
	toReceiver := func(ctx context.Context, network, _ string) (net.Conn, error) {
		mu.Lock()
		dials++
		mu.Unlock()
		return d.DialContext(ctx, network, rv.Listener.Addr().String())
	}
	plan := compilePlan(t, `{"result":1,"workflow":[{"type":"request","url":"https://erp.example.com/a"}]}`)
	for name, network := range map[string]guard.Network{
		"a plain dialer to loopback": {Dial: toReceiver, TLS: to(allowLoopback(), rv).TLS},
		"an in-memory pipe": {Dial: func(context.Context, string, string) (net.Conn, error) {
			c, _ := net.Pipe()
			return c, nil
		}},
	} {
		rec := executor.New(executor.Options{Network: network}).Run(t.Context(), plan, env(nil))
		s := rec.Steps[0]
		if s.State != runrecord.Failed || (name == "a plain dialer to loopback" && (s.Reason != runrecord.ReasonDenied || !strings.Contains(s.Error, "is denied: loopback"))) {
			t.Errorf("%s: %+v", name, s)
		}
	}
	if rv.hits.Load() != 0 {
		t.Fatalf("a request reached the receiver past the guard")
	}
	rec := executor.New(executor.Options{Guard: allowLoopback(), Network: guard.Network{Dial: toReceiver, TLS: to(allowLoopback(), rv).TLS}}).Run(t.Context(), plan, env(nil))
	if rec.Steps[0].State != runrecord.Succeeded || rv.hits.Load() != 1 || dials != 2 {
		t.Errorf("through an allowing guard: %s, %d requests, %d dials", recordJSON(t, rec), rv.hits.Load(), dials)
	}
}

// A resumed run does not send again the steps its earlier run ended: their
// records are kept, naming that run, and their recorded responses answer
// the references to them; the step whose outcome was unknown is sent again
// with its identity, and the steps after it follow.
func TestAResumedRunSendsTheUnknownStepAgainWithItsIdentity(t *testing.T) {
	rv := newReceiver(t, func(w http.ResponseWriter, r *http.Request, _ *received) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok":true}`)
	})
	g := allowLoopback()
	doc := `{"result":1,"workflow":[
		{"type":"request","method":"POST","url":"https://erp.example/payables","body":{"n":1}},
		{"type":"request","method":"POST","url":"https://erp.example/payables/${{steps.0.response.body.data.id}}/attachments","headers":{"X-Loc":"${{steps.0.response.headers.location}}"}},
		{"type":"request","url":"https://erp.example/notify"}]}`
	prior := []runrecord.Step{
		{Index: 0, State: runrecord.Succeeded, ID: "wrun_first/0", Request: &runrecord.Request{Method: "POST", URL: "https://erp.example/payables"},
			Response: &runrecord.Response{Status: 200, Headers: map[string]string{"Content-Type": "application/json", "Location": "/payables/pay_7"},
				Body: []byte(`{"data":{"id":"pay_7"}}`), Size: 23}},
		{Index: 1, State: runrecord.Unknown, Reason: runrecord.ReasonInterrupted, ID: "wrun_first/1"},
		{Index: 2, State: runrecord.Skipped, Reason: runrecord.ReasonCancelled, Error: "not run: the run was interrupted before this step"},
	}
	j := &journal{rv: rv}
	e := env(nil)
	e.Journal = firstRunIDs{j}
	e.Resume = &executor.Resume{RunID: "wrun_first", Steps: prior}
	rec := executor.New(executor.Options{Guard: g, Network: to(g, rv)}).Run(t.Context(), compilePlan(t, doc), e)
	if rec.Status != runrecord.RunSucceeded || len(rec.Steps) != 3 {
		t.Fatal(recordJSON(t, rec))
	}
	if s := rec.Steps[0]; s.FromRun != "wrun_first" || s.ID != "wrun_first/0" || s.Response.Status != 200 {
		t.Errorf("kept step %+v", s)
	}
	if len(rv.requests) != 2 || rv.requests[0].Path != "/payables/pay_7/attachments" || rv.requests[1].Path != "/notify" {
		t.Fatalf("the receiver got %d requests: %+v", len(rv.requests), rv.requests)
	}
	if r := rv.requests[0]; r.Header.Get("X-Loc") != "/payables/pay_7" || r.Header.Get(runrecord.HeaderStepID) != "wrun_first/1" ||
		r.Header.Get(runrecord.HeaderIdempotencyKey) != `"wrun_first/1"` {
		t.Errorf("the step sent again: %v", r.Header)
	}
	if len(j.sending) != 2 || len(j.done) != 3 || j.done[0].FromRun != "wrun_first" {
		t.Errorf("the journal heard %d sending, %d done", len(j.sending), len(j.done))
	}
}

// firstRunIDs gives the identities of the run a resume takes up.
type firstRunIDs struct{ *journal }

func (firstRunIDs) Identity(i int) string { return runrecord.StepID("wrun_first", i) }

// A resumed run never hands a later step a redaction marker or a clipped
// body for the earlier response it needs: the step fails before sending,
// saying the record does not hold the response whole; a step that needs
// only what the record holds whole is sent.
func TestAResumedRunNeverResolvesToARedaction(t *testing.T) {
	rv := newReceiver(t, func(http.ResponseWriter, *http.Request, *received) {})
	g := allowLoopback()
	doc := `{"result":1,"workflow":[
		{"type":"request","method":"POST","url":"https://erp.example/payables"},
		{"type":"request","url":"https://erp.example/by-id/${{steps.0.response.body.data.id}}"},
		{"type":"request","url":"https://erp.example/by-token","headers":{"X-T":"${{steps.0.response.headers.x-token}}"}},
		{"type":"request","url":"https://erp.example/by-status/${{steps.0.response.status}}/${{steps.0.response.headers.location}}"},
		{"type":"request","url":"https://erp.example/by-text/${{steps.4.response.body}}"}]}`
	for name, body := range map[string]string{
		"redacted": `{"data":{"id":"[redacted secrets.ERP_TOKEN]"}}`,
	} {
		prior := []runrecord.Step{
			{Index: 0, State: runrecord.Succeeded, Response: &runrecord.Response{Status: 201,
				Headers: map[string]string{"Content-Type": "application/json", "X-Token": "Bearer [redacted secrets.ERP_TOKEN]", "Location": "/p/1"},
				Body:    []byte(body)}},
			{Index: 1, State: runrecord.Unknown},
		}
		e := env(nil)
		e.Resume = &executor.Resume{RunID: "wrun_first", Steps: prior}
		rec := executor.New(executor.Options{Guard: g, Network: to(g, rv)}).Run(t.Context(), compilePlan(t, doc), e)
		for _, i := range []int{1, 2} {
			if s := rec.Steps[i]; s.State != runrecord.Failed || s.Reason != runrecord.ReasonResponseUnavailable || s.Request != nil ||
				!strings.Contains(s.Error, "does not hold") {
				t.Errorf("%s: step %d %+v", name, i, s)
			}
		}
		if s := rec.Steps[3]; s.State != runrecord.Succeeded || s.Request.URL != "https://erp.example/by-status/201//p/1" {
			t.Errorf("%s: step 3 %+v", name, s)
		}
	}
	for _, r := range rv.requests {
		if strings.Contains(r.Path, "redacted") || strings.Contains(r.Header.Get("X-T"), "redacted") {
			t.Errorf("a redaction marker was sent: %s %v", r.Path, r.Header)
		}
	}
	// A clipped body, a JSON string body and a text body with U+FFFD are
	// not whole either; a text body otherwise is.
	for name, c := range map[string]struct {
		resp runrecord.Response
		ok   bool
	}{
		"clipped":     {runrecord.Response{Status: 200, Headers: map[string]string{"Content-Type": "text/plain"}, Body: []byte(`"abc"`), BodyClipped: true}, false},
		"json string": {runrecord.Response{Status: 200, Headers: map[string]string{"Content-Type": "application/json"}, Body: []byte(`"abc"`)}, false},
		"replaced":    {runrecord.Response{Status: 200, Headers: map[string]string{"Content-Type": "text/plain"}, Body: []byte(`"a\ufffdc"`)}, false},
		"text":        {runrecord.Response{Status: 200, Headers: map[string]string{"Content-Type": "text/plain"}, Body: []byte(`"abc"`)}, true},
	} {
		prior := []runrecord.Step{{Index: 0, State: runrecord.Succeeded, Response: &c.resp}}
		e := env(nil)
		e.Resume = &executor.Resume{RunID: "wrun_first", Steps: prior}
		rec := executor.New(executor.Options{Guard: g, Network: to(g, rv)}).Run(t.Context(),
			compilePlan(t, `{"result":1,"workflow":[{"type":"request","url":"https://erp.example/"},{"type":"request","url":"https://erp.example/t/${{steps.0.response.body}}"}]}`), e)
		s := rec.Steps[1]
		if c.ok != (s.State == runrecord.Succeeded) || !c.ok && s.Reason != runrecord.ReasonResponseUnavailable {
			t.Errorf("%s: %+v", name, s)
		}
		if c.ok && s.Request.URL != "https://erp.example/t/abc" {
			t.Errorf("%s: sent %s", name, s.Request.URL)
		}
	}
}
