package executor_test

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
	"github.com/kobana/workflow/resolve"
)

// Run a two-step workflow against a local server. Loopback is denied by the
// SSRF guard, so the server's address is allowed explicitly.
func ExampleExecutor_Run() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/payables" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"data":{"id":"pay_1"}}`)
			return
		}
		io.WriteString(w, "ok "+r.URL.Path)
	}))
	defer srv.Close()

	doc := strings.ReplaceAll(`{"result": 1, "workflow": [
  {"type": "request", "url": "SERVER/payables", "headers": {"Authorization": "Bearer ${{secrets.TOKEN}}"}, "body": {"amount": 10}, "expected_status": 201},
  {"type": "request", "url": "SERVER/payables/${{steps.0.response.body.data.id}}/approve"}]}`, "SERVER", srv.URL)
	plan, diags := compile.Compile([]byte(doc), compile.Options{})
	if plan == nil {
		fmt.Println(diags)
		return
	}
	ex := executor.New(executor.Options{Guard: &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
	rec := ex.Run(context.Background(), plan, executor.Env{Secrets: resolve.SecretMap{"TOKEN": "tok-1"}})
	fmt.Println(rec.Status)
	for _, s := range rec.Steps {
		fmt.Println(s.Index, s.State, s.Response.Status, string(s.Response.Body), s.Request.Headers["Authorization"])
	}
	// Output:
	// succeeded
	// 0 succeeded 201 {"data":{"id":"pay_1"}} Bearer [redacted secrets.TOKEN]
	// 1 succeeded 200 "ok /payables/pay_1/approve"
}

// With the default options only the deny-list applies: a step aimed at a
// private or loopback address fails, and nothing is sent.
func ExampleExecutor_Run_denied() {
	plan, _ := compile.Compile([]byte(`{"result": 1, "workflow": [
  {"type": "request", "url": "http://169.254.169.254/latest/meta-data/"},
  {"type": "request", "url": "http://[::ffff:10.0.0.1]/admin"}]}`), compile.Options{})

	rec := executor.New(executor.Options{}).Run(context.Background(), plan, executor.Env{})
	for _, s := range rec.Steps {
		fmt.Println(s.Index, s.State, s.Reason, s.Error)
	}
	// Output:
	// 0 failed ssrf-denied not sent: address 169.254.169.254 is denied: link-local
	// 1 failed ssrf-denied not sent: address ::ffff:10.0.0.1 is denied: IPv4-mapped IPv6 address embedding 10.0.0.1, which is private (RFC 1918)
}
