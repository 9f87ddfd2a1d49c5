package server_test

import (
	"io"
	"net/http"
	"net/smtp"
	"testing"

	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/mcpserver/server"
)

// BenchmarkScrape measures what one Prometheus scrape of /metrics costs a
// running server (the queue's depth read from SQLite included, after mail
// went through so that the series exist), against GET /healthz on the same
// listener in the same run: the HTTP round trip alone.
func BenchmarkScrape(b *testing.B) {
	st, path := openStore(b)
	var out syncbuf.Buffer
	addrs, stop := start(b, server.Config{Store: st, StorePath: path, Demo: true, Process: true, Output: &out,
		HTTP: &server.HTTP{Addr: "127.0.0.1:0"}, Intake: &server.Intake{SMTPAddr: "127.0.0.1:0", DNSServer: spfZone(b)}, Monitor: &server.Monitor{Addr: "127.0.0.1:0"}})
	defer stop()
	monitor := addrs["monitor"].String()
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
	client, url := mcptest.BearerClient(demoToken(b, out.String())), "http://"+addrs["http"].String()+"/mcp"
	mcptest.BenchmarkSessions(b, client, url)
}
