package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/server"
)

// getJSON GETs url with a Host header of host and decodes its JSON.
func getJSON(t *testing.T, url, host string) (int, map[string]any, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("GET %s: %s (%v)", url, b, err)
	}
	return resp.StatusCode, v, string(b)
}

// /healthz says the process is alive and which kobana it is; /readyz says
// whether it can take work, check by check: the store, the SMTP listener,
// the queue. Both answer without a token, whatever the Host (a load
// balancer's probe names an address), and reveal no data: a check that
// fails says so, never why.
func TestHealthAndReadiness(t *testing.T) {
	st, path := openStore(t)
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Process: true,
		HTTP: &server.HTTP{Addr: "127.0.0.1:0"}, Intake: &server.Intake{SMTPAddr: "127.0.0.1:0", DNSServer: spfZone(t)}, Monitor: &server.Monitor{Addr: "127.0.0.1:0"}})
	defer stop()
	monitor := addrs["monitor"].String()
	// The queue is "starting" until River runs: wait for the first ready.
	if err := testwait.Until(30*time.Second, func() error {
		if code, v, _ := getJSON(t, "http://"+monitor+"/readyz", "127.0.0.1"); code != 200 {
			return fmt.Errorf("/readyz: %d %v", code, v)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{"http://" + addrs["http"].String(), "http://" + monitor} {
		code, v, _ := getJSON(t, base+"/healthz", "10.0.0.5:8080")
		if code != 200 || v["status"] != "ok" || v["version"] == "" || !strings.HasPrefix(v["go"].(string), "go") {
			t.Errorf("%s/healthz: %d %v", base, code, v)
		}
		code, v, _ = getJSON(t, base+"/readyz", "10.0.0.5:8080")
		checks, _ := v["checks"].(map[string]any)
		if code != 200 || v["status"] != "ready" || checks["store"] != "ok" || checks["smtp"] != "ok" || checks["pipeline"] != "ok" {
			t.Errorf("%s/readyz: %d %v", base, code, v)
		}
	}
	// /metrics is on the monitoring listener only.
	resp, err := http.Get("http://" + addrs["http"].String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == 200 {
		t.Error("/metrics is served on the MCP listener")
	}
	// The store gone: not ready, and nothing of the error shown.
	st.Close()
	code, v, body := getJSON(t, "http://"+monitor+"/readyz", "127.0.0.1")
	if checks, _ := v["checks"].(map[string]any); code != 503 || v["status"] != "not_ready" || checks["store"] != "unreachable" || strings.Contains(body, "sql") || strings.Contains(body, "closed") {
		t.Errorf("/readyz with the store closed: %d %s", code, body)
	}
}
