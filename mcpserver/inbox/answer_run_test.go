package inbox_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/runrecord"
)

// documentReceiver counts the requests it gets and answers 201 with a JSON
// body that holds an id.
func documentReceiver(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"data":{"id":"pay_1"}}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func documentExecutor() *executor.Executor {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return executor.New(executor.Options{
		Guard: &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		Now:   func() time.Time { return at },
	})
}

// topKeys returns the keys of the JSON object rec encodes to.
func topKeys(t *testing.T, rec *runrecord.Document) map[string]json.RawMessage {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAnswerRunNotValidSendsNothing(t *testing.T) {
	srv, sent := documentReceiver(t)
	const secret = "tok-Secret-77a1"
	// The second step has a misspelt field named after a secret's value: the
	// diagnostic quotes it, and the record must not.
	doc := `{"result": {}, "workflow": [
		{"type": "request", "url": "` + srv.URL + `/a"},
		{"type": "request", "url": "` + srv.URL + `/b", "` + secret + `": 1}
	]}`
	rec := inbox.ReadAnswer([]byte(doc)).Run(t.Context(), documentExecutor(), executor.Env{Secrets: resolve.SecretMap{"TOKEN": secret}})
	if n := sent.Load(); n != 0 {
		t.Errorf("the receiver got %d requests from a document that did not validate", n)
	}
	if rec.Valid() || rec.Status != runrecord.RunFailed || rec.Error != runrecord.NotValidError || len(rec.Steps) != 0 {
		t.Errorf("record: valid %v, status %q, error %q, %d steps", rec.Valid(), rec.Status, rec.Error, len(rec.Steps))
	}
	if len(rec.Diagnostics) != 1 || rec.Diagnostics[0].Code != compile.CodeUnknownField || rec.Diagnostics[0].Severity != compile.SeverityError {
		t.Fatalf("diagnostics: %v", rec.Diagnostics)
	}
	b, _ := json.Marshal(rec)
	if strings.Contains(string(b), secret) || !strings.Contains(rec.Diagnostics[0].Message, "[redacted secrets.TOKEN]") ||
		rec.Diagnostics[0].Pointer != "/workflow/1/[redacted secrets.TOKEN]" {
		t.Errorf("the record quotes the secret: %s", b)
	}
	keys := topKeys(t, rec)
	for _, k := range []string{"status", "started_at", "finished_at", "steps", "error", "diagnostics"} {
		if keys[k] == nil {
			t.Errorf("the record lacks %q: %s", k, b)
		}
	}
	if string(keys["steps"]) != "[]" {
		t.Errorf(`steps = %s, want []`, keys["steps"])
	}
}

func TestAnswerRunRunsAndKeepsWarnings(t *testing.T) {
	srv, sent := documentReceiver(t)
	doc := `{"result": {}, "note": "unknown top-level keys are a warning", "workflow": [
		{"type": "request", "url": "` + srv.URL + `/payables", "expected_status": 201},
		{"type": "request", "url": "` + srv.URL + `/payables/${{steps.0.response.body.data.id}}/done", "expected_status": 201}
	]}`
	rec := inbox.ReadAnswer([]byte(doc)).Run(t.Context(), documentExecutor(), executor.Env{})
	if !rec.Valid() || rec.Status != runrecord.RunSucceeded || len(rec.Steps) != 2 || sent.Load() != 2 {
		t.Fatalf("record: valid %v, status %q, %d steps, %d sent", rec.Valid(), rec.Status, len(rec.Steps), sent.Load())
	}
	if len(rec.Diagnostics) != 1 || rec.Diagnostics[0].Severity != compile.SeverityWarning {
		t.Errorf("diagnostics: %v", rec.Diagnostics)
	}
	if rec.Steps[1].Request == nil || !strings.HasSuffix(rec.Steps[1].Request.URL, "/payables/pay_1/done") {
		t.Errorf("step 1 request: %+v", rec.Steps[1].Request)
	}
	if keys := topKeys(t, rec); keys["error"] != nil {
		t.Errorf("a run that validated has an error key: %s", keys["error"])
	}
}

func TestAnswerRunWithoutWorkflow(t *testing.T) {
	for _, doc := range []string{`{"result": {"supplier": "ACME"}}`, `{"result": 1, "workflow": []}`} {
		rec := inbox.ReadAnswer([]byte(doc)).Run(t.Context(), documentExecutor(), executor.Env{})
		keys := topKeys(t, rec)
		if !rec.Valid() || rec.Status != runrecord.RunSucceeded || string(keys["steps"]) != "[]" || keys["error"] != nil {
			t.Errorf("%s: valid %v, status %q, steps %s", doc, rec.Valid(), rec.Status, keys["steps"])
		}
		if rec.StartedAt.IsZero() || !rec.FinishedAt.Equal(rec.StartedAt) {
			t.Errorf("%s: times %v %v", doc, rec.StartedAt, rec.FinishedAt)
		}
	}
}
