package executor_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/resolve"
)

// BenchmarkRunOneStep runs a one-step workflow (a JSON POST to a loopback
// server) through the executor, next to the same request sent with a bare
// http.Client.
func BenchmarkRunOneStep(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":{"id":"pay_1"}}`)
	}))
	defer srv.Close()
	body := `{"supplier":"ACME","amount":1250.5,"source_email_id":"em_42"}`
	b.Run("executor", func(b *testing.B) {
		ex := executor.New(executor.Options{Guard: allowLoopback()})
		p := compilePlan(b, `{"result":1,"workflow":[{"type":"request","url":"`+srv.URL+`/payables","headers":{"Authorization":"Bearer ${{secrets.T}}"},"body":{"supplier":"ACME","amount":1250.5,"source_email_id":"${{kobana.email_id}}"}}]}`)
		env := executor.Env{Secrets: resolve.SecretMap{"T": "tok"}, Facts: resolve.FactMap{"email_id": "em_42"}}
		b.ReportAllocs()
		for b.Loop() {
			if rec := ex.Run(b.Context(), p, env); rec.Status != executor.RunSucceeded {
				b.Fatal(rec.Steps[0].Error)
			}
		}
	})
	bare := func(client *http.Client) func(b *testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequestWithContext(b.Context(), "POST", srv.URL+"/payables", bytes.NewReader([]byte(body)))
				req.Header.Set("Authorization", "Bearer tok")
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatal(resp.Status)
				}
			}
		}
	}
	b.Run("bare-http-client", bare(&http.Client{Transport: &http.Transport{Proxy: nil}}))
	// The same bare request through the guarded client, to tell the
	// guard's share of the cost from the executor's.
	b.Run("bare-guarded-client", bare(allowLoopback().Client()))
}

// cannedTransport answers every request at once with a small JSON body.
type cannedTransport struct{}

func (cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	io.Copy(io.Discard, r.Body)
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"data":{"id":"pay_1"}}`)), ContentLength: 23, Request: r}, nil
}

// BenchmarkRunOneStepOverhead runs the same one-step workflow against a
// transport that answers in memory: what the executor itself costs per step
// (rendering, record, redaction, deadlines), without any network.
func BenchmarkRunOneStepOverhead(b *testing.B) {
	ex := executor.New(executor.Options{Guard: allowLoopback(), Transport: cannedTransport{}})
	p := compilePlan(b, `{"result":1,"workflow":[{"type":"request","url":"http://127.0.0.1:1/payables","headers":{"Authorization":"Bearer ${{secrets.T}}"},"body":{"supplier":"ACME","amount":1250.5,"source_email_id":"${{kobana.email_id}}"}}]}`)
	env := executor.Env{Secrets: resolve.SecretMap{"T": "tok"}, Facts: resolve.FactMap{"email_id": "em_42"}}
	b.ReportAllocs()
	for b.Loop() {
		if rec := ex.Run(b.Context(), p, env); rec.Status != executor.RunSucceeded {
			b.Fatal(rec.Steps[0].Error)
		}
	}
}
