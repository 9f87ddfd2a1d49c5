package server_test

import (
	"io"
	"net/http"
	"net/smtp"
	"runtime"
	"strings"
	"testing"

	"github.com/kobana/workflow/internal/syncbuf"
	"github.com/kobana/workflow/server"
)

// BenchmarkScrape measures what one Prometheus scrape of /metrics costs a
// running server (the queue's depth read from SQLite included, after mail
// went through so that the series exist), against GET /healthz on the same
// listener in the same run: the HTTP round trip alone.
func BenchmarkScrape(b *testing.B) {
	st, path := openStore(b)
	monitor := freePort(b)
	var out syncbuf.Buffer
	addrs, stop := start(b, server.Config{Store: st, StorePath: path, Demo: true, Process: true, Output: &out,
		HTTP: &server.HTTP{Addr: "127.0.0.1:0"}, Intake: &server.Intake{SMTPAddr: "127.0.0.1:0", DNSServer: spfZone(b)}, Monitor: &server.Monitor{Addr: monitor}})
	defer stop()
	msg := "From: <billing@acme.example>\r\nTo: invoices@finance.in.kobana.email\r\nSubject: x\r\n\r\nx\r\n"
	for range 3 {
		smtp.SendMail(addrs["smtp"].String(), nil, "billing@acme.example", []string{"invoices@finance.in.kobana.email"}, []byte(msg))
	}
	get := func(b *testing.B, url string) int {
		resp, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return int(n)
	}
	for _, tc := range []struct{ name, path string }{{"healthz", "/healthz"}, {"metrics", "/metrics"}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			size := 0
			for b.Loop() {
				size = get(b, "http://"+monitor+tc.path)
			}
			b.ReportMetric(float64(size), "bytes/scrape")
		})
	}
}

// BenchmarkSessionMemory measures the live heap one open 2025-era session
// costs the real server (both products served): b.N sessions opened over
// HTTP and left open.
func BenchmarkSessionMemory(b *testing.B) {
	st, path := openStore(b)
	var out syncbuf.Buffer
	addrs, stop := start(b, server.Config{Store: st, StorePath: path, Demo: true, Output: &out,
		HTTP: &server.HTTP{Addr: "127.0.0.1:0", MaxSessionsPerToken: 1 << 20, MaxSessions: 1 << 20}})
	defer stop()
	token := demoToken(b, out.String())
	url := "http://" + addrs["http"].String() + "/mcp"
	post := func(session, body string) string {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.Header.Get("Mcp-Session-Id")
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	b.ResetTimer()
	for range b.N {
		id := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
		post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	b.StopTimer()
	b.ReportMetric(float64(heap()-before)/float64(b.N), "heap-bytes/session")
}
