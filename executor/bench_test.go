package executor_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/runrecord"
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
			if rec := ex.Run(b.Context(), p, env); rec.Status != runrecord.RunSucceeded {
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

// memNetwork serves requests in memory: every connection is one end of a
// net.Pipe whose other end an http.Server answers at once with a small
// JSON body. Its connections say they reach 127.0.0.1, which the
// benchmark's guard allows; the guard still checks them.
func memNetwork(b *testing.B) guard.Network {
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":{"id":"pay_1"}}`)
	})}
	go srv.Serve(l)
	b.Cleanup(func() { srv.Close() })
	return guard.Network{Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		client, server := net.Pipe()
		select {
		case l.conns <- server:
			return loopbackConn{client}, nil
		case <-l.done:
			return nil, net.ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
}

type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return loopbackAddr }

var loopbackAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}

// loopbackConn is an in-memory connection that reports a loopback peer.
type loopbackConn struct{ net.Conn }

func (loopbackConn) RemoteAddr() net.Addr { return loopbackAddr }

// BenchmarkRunOneStepOverhead runs the same one-step workflow against a
// receiver in memory: what the executor itself costs per step (rendering,
// record, redaction, deadlines, the guard's checks), without a socket.
func BenchmarkRunOneStepOverhead(b *testing.B) {
	ex := executor.New(executor.Options{Guard: allowLoopback(), Network: memNetwork(b)})
	p := compilePlan(b, `{"result":1,"workflow":[{"type":"request","url":"http://127.0.0.1:1/payables","headers":{"Authorization":"Bearer ${{secrets.T}}"},"body":{"supplier":"ACME","amount":1250.5,"source_email_id":"${{kobana.email_id}}"}}]}`)
	env := executor.Env{Secrets: resolve.SecretMap{"T": "tok"}, Facts: resolve.FactMap{"email_id": "em_42"}}
	b.ReportAllocs()
	for b.Loop() {
		if rec := ex.Run(b.Context(), p, env); rec.Status != runrecord.RunSucceeded {
			b.Fatal(rec.Steps[0].Error)
		}
	}
}
