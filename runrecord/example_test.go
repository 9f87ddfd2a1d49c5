package runrecord_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/runrecord"
)

// journal is a service's own Journal: it gives each step an identity the
// receiver sees as Idempotency-Key, and keeps what the run says as it goes.
// A real one writes Sending to durable storage before returning, so a crash
// after the request left is remembered as unknown, never as not sent.
type journal struct {
	runID string
	log   []string
}

func (j *journal) Identity(i int) string { return fmt.Sprintf("%s.step%d", j.runID, i) }

func (j *journal) Sending(_ context.Context, s runrecord.Step) error {
	j.log = append(j.log, fmt.Sprintf("sending step %d as %s", s.Index, s.ID))
	return nil
}

func (j *journal) Done(_ context.Context, s runrecord.Step) error {
	j.log = append(j.log, fmt.Sprintf("step %d %s", s.Index, s.State))
	return nil
}

func ExampleJournal() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Header.Get("Idempotency-Key"))
	}))
	defer srv.Close()
	plan, _ := compile.Compile([]byte(strings.ReplaceAll(`{"result": 1, "workflow": [
  {"type": "request", "method": "POST", "url": "SERVER/payables", "body": {"amount": 10}},
  {"type": "request", "method": "POST", "url": "SERVER/notify", "body": {"text": "${{steps.0.response.body}}"}}]}`,
		"SERVER", srv.URL)), compile.Options{})

	j := &journal{runID: "wrun_1"}
	ex := executor.New(executor.Options{Guard: &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
	rec := ex.Run(context.Background(), plan, executor.Env{Journal: j})
	fmt.Println(strings.Join(j.log, "\n"))
	// The receiver echoes the Idempotency-Key it got: a structured-field
	// string, quoted (and the record holds the text body as a JSON string).
	fmt.Println(rec.Status, string(rec.Steps[0].Response.Body))
	// Output:
	// sending step 0 as wrun_1.step0
	// step 0 succeeded
	// sending step 1 as wrun_1.step1
	// step 1 succeeded
	// succeeded "\"wrun_1.step0\""
}
