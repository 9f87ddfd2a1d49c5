package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/smtp"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/internal/dnstest"
	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/mcpserver/server"
	"github.com/kobana/workflow/mcpserver/server/metrics"
	"github.com/kobana/workflow/mcpserver/store"
)

// prometheusBinary is the real Prometheus server (Debian's package
// prometheus); the test skips without it unless KOBANA_PROMETHEUS_REQUIRED
// is set (CI), and fails then.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("KOBANA_PROMETHEUS_REQUIRED") != "" {
			t.Fatal("prometheus is not installed (Debian: apt-get install prometheus) and KOBANA_PROMETHEUS_REQUIRED is set")
		}
		t.Skip("prometheus is not installed (Debian: apt-get install prometheus): the metrics are not checked against a real Prometheus")
	}
	return bin
}

// freePort returns a loopback address nothing listens on.
func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startPrometheus runs Prometheus scraping target every second and returns
// its address once it answers ready, and its output. Its port is picked
// free and then given to it, so another process may take it in between:
// a start that fails on a port in use is tried again on another.
func startPrometheus(t *testing.T, bin, target string) (string, *syncbuf.Buffer) {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: kobana\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; ; attempt++ {
		addr, log := freePort(t), &syncbuf.Buffer{}
		cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, fmt.Sprint("data-", attempt)),
			"--web.listen-address="+addr, "--log.level=warn")
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-exited })
		err := testwait.Until(60*time.Second, func() error {
			select {
			case <-exited:
				return nil
			default:
			}
			resp, err := http.Get("http://" + addr + "/-/ready")
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("/-/ready: %s", resp.Status)
			}
			return nil
		})
		select {
		case <-exited:
			if attempt < 3 && strings.Contains(log.String(), "address already in use") {
				continue
			}
			t.Fatalf("prometheus exited:\n%s", log)
		default:
		}
		if err != nil {
			t.Fatalf("prometheus never got ready: %v\n%s", err, log)
		}
		return addr, log
	}
}

// spfZone is a DNS server on loopback publishing one SPF record:
// acme.example sends from 127.0.0.1.
func spfZone(t testing.TB) string {
	t.Helper()
	return dnstest.Serve(t, map[string]string{"acme.example": "v=spf1 ip4:127.0.0.1 -all"})
}

// A real Prometheus scrapes a running server's /metrics; after a message
// went through (SMTP in, the agent stage run) and an MCP request, PromQL
// answers what happened.
func TestPrometheusScrapesTheServer(t *testing.T) {
	bin := prometheusBinary(t)
	st, path := openStore(t)
	var out syncbuf.Buffer
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Demo: true, Process: true, Output: &out,
		HTTP: &server.HTTP{Addr: "127.0.0.1:0"}, Intake: &server.Intake{SMTPAddr: "127.0.0.1:0", DNSServer: spfZone(t)},
		Monitor: &server.Monitor{Addr: "127.0.0.1:0"}})
	defer stop()
	monitor := addrs["monitor"].String()

	promAddr, promLog := startPrometheus(t, bin, monitor)

	// Before anything happens, every kobana family the server registers
	// is in what Prometheus scraped.
	if err := testwait.Until(60*time.Second, func() error {
		names, err := promNames(promAddr)
		if err != nil {
			return err
		}
		var missing []string
		for _, f := range registeredFamilies(t) {
			if !names[f] && !names[f+"_count"] {
				missing = append(missing, f)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("Prometheus has scraped no series of %v", missing)
		}
		return nil
	}); err != nil {
		t.Fatalf("%v\nprometheus:\n%s", err, promLog.String())
	}
	if got := len(registeredFamilies(t)); got < 20 {
		t.Fatalf("the server's registry lists %d kobana families; the list is wrong", got)
	}

	// A message through: SMTP in, recorded, its agent run (no model:
	// no_recorded_output, recorded).
	msg := "From: Billing <billing@acme.example>\r\nTo: invoices@finance.in.kobana.email\r\nSubject: Invoice 2026-900\r\n" +
		"Message-ID: <900@acme.example>\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n" +
		"--b\r\nContent-Type: text/plain\r\n\r\nThe invoice is attached.\r\n" +
		"--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=inv-900.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQKJeLjz9MK\r\n--b--\r\n"
	if err := smtp.SendMail(addrs["smtp"].String(), nil, "billing@acme.example", []string{"invoices@finance.in.kobana.email"}, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	if err := smtp.SendMail(addrs["smtp"].String(), nil, "billing@acme.example", []string{"nobody@finance.in.kobana.email"}, []byte(msg)); err == nil {
		t.Fatal("mail to an unknown address was taken")
	}
	cs := mcptest.Connect(t, mcptest.HTTP("http://"+addrs["http"].String()+"/mcp", demoToken(t, out.String())), mcptest.Modern, nil)
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}

	query := func(q string) (float64, error) {
		resp, err := http.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		var r struct {
			Status string `json:"status"`
			Error  string `json:"error"`
			Data   struct {
				Result []struct {
					Value [2]any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return 0, err
		}
		if r.Status != "success" {
			return 0, fmt.Errorf("%s: %s", q, r.Error)
		}
		if len(r.Data.Result) == 0 {
			return 0, fmt.Errorf("%s: no series yet", q)
		}
		s, _ := r.Data.Result[0].Value[1].(string)
		return strconv.ParseFloat(s, 64)
	}
	// A rate over a counter says the message came in: its series existed
	// (at zero) before it did.
	if err := testwait.Until(60*time.Second, func() error {
		got, err := query(`rate(kobana_smtp_transactions_total{result="stored"}[10s])`)
		if err != nil {
			return err
		}
		if got <= 0 {
			return fmt.Errorf("rate = %v, want more than 0", got)
		}
		return nil
	}); err != nil {
		t.Errorf("%v\nprometheus:\n%s", err, promLog.String())
	}
	// Each query must reach at least its value (a client's own requests,
	// the retention job, add to some).
	for q, want := range map[string]float64{
		`kobana_smtp_transactions_total{result="stored"}`:                             1,
		`sum(kobana_agent_runs_total{status="failed",cause="no_recorded_output"})`:    1,
		`kobana_smtp_transactions_total{result="refused",reason="unknown_recipient"}`: 1,
		`sum(kobana_messages_total{via="smtp",outcome="received"})`:                   1,
		`sum(kobana_job_seconds_count{stage="agent",result="completed"})`:             1,
		`kobana_intake_message_bytes_count{via="smtp"}`:                               1,
		`sum(kobana_mcp_requests_total{method="tools/list",result="ok"})`:             1,
		`kobana_queue_jobs{queue="inbox_agent",state="running"}`:                      0,
		`kobana_build_info`: 1,
		`up{job="kobana"}`:  1,
	} {
		err := testwait.Until(60*time.Second, func() error {
			got, err := query(q)
			if err != nil {
				return err
			}
			if got < want || want == 0 && got != 0 {
				return fmt.Errorf("%s = %v, want %v", q, got, want)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%v\nprometheus:\n%s", err, promLog.String())
		}
	}
}

// registeredFamilies lists the kobana metric families a server registers,
// read from a registry made as the server makes its own (every source
// present, a store that follows its writes).
func registeredFamilies(t *testing.T) []string {
	t.Helper()
	m := metrics.New(metrics.Sources{
		Sessions: func() int { return 0 },
		Queue:    func(context.Context) (map[string]queue.Depth, error) { return nil, nil },
	})
	m.WatchStore("sqlite", &store.WriteHealth{})
	descs := make(chan *prometheus.Desc, 1000)
	m.Registry().Describe(descs)
	close(descs)
	seen := map[string]bool{}
	var out []string
	for d := range descs {
		_, name, ok := strings.Cut(d.String(), `fqName: "`)
		name, _, _ = strings.Cut(name, `"`)
		if ok && strings.HasPrefix(name, "kobana_") && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// promNames returns the metric names Prometheus at addr has of the kobana
// job.
func promNames(addr string) (map[string]bool, error) {
	resp, err := http.Get("http://" + addr + "/api/v1/label/__name__/values?match[]=" + url.QueryEscape(`{job="kobana"}`))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string   `json:"status"`
		Data   []string `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("label values: %s", r.Status)
	}
	names := map[string]bool{}
	for _, n := range r.Data {
		names[n] = true
	}
	return names, nil
}
