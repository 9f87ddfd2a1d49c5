package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/internal/demo"
	"github.com/kobana/workflow/mcpserver/mcptest"
)

// serveBuffer is a goroutine-safe output for a running serve.
type serveBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *serveBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *serveBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestServeUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-http", "127.0.0.1:0", "-products", "inbox,payroll"},
		{"-http", "127.0.0.1:0", "-allow", "not-a-cidr"},
		{"-http", "127.0.0.1:0", "extra"},
		{"-nope"},
	} {
		var stderr serveBuffer
		c := &Command{Stdout: io.Discard, Stderr: &stderr, Context: context.Background()}
		if code := c.Main(append([]string{"serve", "-db", filepath.Join(t.TempDir(), "x.db")}, args...)); code != exitUsage {
			t.Errorf("serve %v = %d, want %d (%s)", args, code, exitUsage, stderr.String())
		}
	}
}

var tokenLine = regexp.MustCompile(`^token for (.+) <(.+)>, (owner|viewer) of workspace (\S+), scopes (read,write|read): (kbn_[0-9a-f]{64})$`)

// The newcomer's path of the issue: serve -demo, connect a real client with
// the printed token, list and read resources, get prompts, complete ids,
// and be asked to confirm webhooks_test.
func TestServeDemoOverHTTP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr serveBuffer
	c := &Command{Stdout: &stdout, Stderr: &stderr, Context: ctx}
	done := make(chan int)
	db := filepath.Join(t.TempDir(), "demo.db")
	go func() { done <- c.Main([]string{"serve", "-demo", "-http", "127.0.0.1:0", "-db", db}) }()
	var addr string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := regexp.MustCompile(`serving MCP on (http://\S+/mcp)`).FindStringSubmatch(stderr.String()); m != nil {
			addr = m[1]
			break
		}
	}
	if addr == "" {
		cancel()
		t.Fatalf("serve did not start: %s", stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want two token lines, got %q", stdout.String())
	}
	var rw, ro []string
	for _, l := range lines {
		m := tokenLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("token line %q", l)
		}
		if m[5] == "read,write" {
			rw = m
		} else {
			ro = m
		}
	}
	if rw == nil || ro == nil || rw[4] != demo.Workspace {
		t.Fatalf("want a read-write and a read-only token: %q", lines)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "newcomer", Version: "1"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
	})
	cs, err := client.Connect(ctx, mcptest.HTTP(addr, rw[6]), nil)
	if err != nil {
		t.Fatal(err)
	}
	tpls, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	inboxTemplates := 0
	for _, tp := range tpls.ResourceTemplates {
		if strings.HasPrefix(tp.URITemplate, "kobana://inbox/") {
			inboxTemplates++
		}
	}
	if inboxTemplates != 9 {
		t.Fatalf("%d inbox templates, want 9", inboxTemplates)
	}
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "kobana://inbox/emails/{id}"}, Argument: mcp.CompleteParamsArgument{Name: "id", Value: "eml_inv"}})
	if err != nil || len(comp.Completion.Values) == 0 {
		t.Fatalf("complete: %v %v", comp, err)
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "kobana://inbox/emails/" + comp.Completion.Values[0]})
	if err != nil || !strings.Contains(res.Contents[0].Text, `"attachments"`) {
		t.Fatalf("read: %v %v", res, err)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "webhook_health"}); err != nil {
		t.Fatal(err)
	}
	// Both products are served by default, Billing with its demo records.
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "kobana://billing/organization"}); err != nil {
		t.Fatalf("billing organization: %v", err)
	}
	call, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "webhooks_test", Arguments: map[string]any{"id": "whk_chat"}})
	if err != nil || call.RequestState == "" || call.InputRequests["confirm"] == nil {
		t.Fatalf("webhooks_test did not ask: %+v %v", call, err)
	}
	cs.Close()
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("serve exit %d: %s", code, stderr.String())
	}
	// A second start on the same file keeps the data and mints new tokens.
	ctx2, cancel2 := context.WithCancel(context.Background())
	var out2 serveBuffer
	c2 := &Command{Stdout: &out2, Stderr: io.Discard, Context: ctx2}
	go func() { done <- c2.Main([]string{"serve", "-demo", "-http", "127.0.0.1:0", "-db", db}) }()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && strings.Count(out2.String(), "\n") < 2; time.Sleep(20 * time.Millisecond) {
	}
	cancel2()
	<-done
	if strings.Contains(out2.String(), rw[6]) || strings.Count(out2.String(), "token for") != 2 {
		t.Errorf("second start: %q", out2.String())
	}
}

func TestServeStdioUsesKobanaToken(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	// Seed and mint through the commands a user runs.
	var seedOut serveBuffer
	ctx, cancel := context.WithCancel(context.Background())
	c := &Command{Stdout: &seedOut, Stderr: io.Discard, Context: ctx}
	done := make(chan int, 1)
	go func() { done <- c.Main([]string{"serve", "-demo", "-http", "127.0.0.1:0", "-db", db}) }()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && strings.Count(seedOut.String(), "\n") < 2; time.Sleep(20 * time.Millisecond) {
	}
	cancel()
	<-done
	var tokOut, tokErr serveBuffer
	tc := &Command{Stdout: &tokOut, Stderr: &tokErr, Context: context.Background()}
	if code := tc.Main([]string{"token", "create", "-person", demo.Viewer, "-workspace", demo.Workspace, "-scopes", "read", "-db", db}); code != exitOK {
		t.Fatalf("token create = %d: %s", code, tokErr.String())
	}
	token := strings.TrimSpace(tokOut.String())

	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		var stderr serveBuffer
		ctx, cancel := context.WithCancel(context.Background())
		sc := &Command{Stdin: inR, Stdout: outW, Stderr: &stderr, Context: ctx, Getenv: func(k string) string {
			if k == "KOBANA_TOKEN" {
				return token
			}
			return ""
		}}
		go func() { done <- sc.Main([]string{"serve", "-stdio", "-db", db}) }()
		client := mcp.NewClient(&mcp.Implementation{Name: "stdio", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: era})
		if err != nil {
			t.Fatalf("%s: %v (%s)", era, err, stderr.String())
		}
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range tools.Tools {
			if !tl.Annotations.ReadOnlyHint {
				t.Errorf("%s: read-only token lists %s", era, tl.Name)
			}
		}
		cs.Close()
		inW.Close()
		select {
		case code := <-done:
			if code != exitOK {
				t.Errorf("%s: stdio serve exit %d: %s", era, code, stderr.String())
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: serve did not stop when stdin closed", era)
		}
		cancel()
		outR.Close()
	}
	// Without a token, -stdio refuses to start.
	var stderr serveBuffer
	sc := &Command{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Context: context.Background()}
	if code := sc.Main([]string{"serve", "-stdio", "-db", db}); code != exitUsage || !strings.Contains(stderr.String(), "KOBANA_TOKEN") {
		t.Errorf("no token: %d %s", code, stderr.String())
	}
}

func TestTokenCreate(t *testing.T) {
	db := filepath.Join(t.TempDir(), "t.db")
	var out serveBuffer
	ctx, cancel := context.WithCancel(context.Background())
	c := &Command{Stdout: &out, Stderr: io.Discard, Context: ctx}
	done := make(chan int, 1)
	go func() { done <- c.Main([]string{"serve", "-demo", "-http", "127.0.0.1:0", "-db", db}) }()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && strings.Count(out.String(), "\n") < 2; time.Sleep(20 * time.Millisecond) {
	}
	cancel()
	<-done
	cases := []struct {
		args []string
		code int
	}{
		{[]string{"token"}, exitUsage},
		{[]string{"token", "revoke"}, exitUsage},
		{[]string{"token", "create", "-db", db}, exitUsage},
		{[]string{"token", "create", "-person", "per_ana", "-workspace", "ws_finance", "-scopes", "admin", "-db", db}, exitUsage},
		{[]string{"token", "create", "-person", "per_nobody", "-workspace", "ws_finance", "-db", db}, exitFailure},
		{[]string{"token", "create", "-person", "per_bruno", "-workspace", "ws_sandbox", "-db", db}, exitFailure},
		{[]string{"token", "create", "-person", "per_ana", "-workspace", "ws_finance", "-scopes", "read,write", "-expires", "24h", "-db", db}, exitOK},
	}
	for _, tc := range cases {
		var stdout, stderr serveBuffer
		cmd := &Command{Stdout: &stdout, Stderr: &stderr, Context: context.Background()}
		if code := cmd.Main(tc.args); code != tc.code {
			t.Errorf("%v = %d, want %d (%s)", tc.args, code, tc.code, stderr.String())
		}
		if tc.code == exitOK {
			if !regexp.MustCompile(`^kbn_[0-9a-f]{64}\n$`).MatchString(stdout.String()) || !regexp.MustCompile(`^tok_[0-9a-f]+: token for per_ana in workspace ws_finance, scopes read,write, expires `).MatchString(stderr.String()) {
				t.Errorf("token output %q / %q", stdout.String(), stderr.String())
			}
			// Revoke it; a second revoke fails.
			for i, want := range []int{exitOK, exitFailure} {
				var errOut serveBuffer
				rc := &Command{Stdin: strings.NewReader(stdout.String()), Stdout: io.Discard, Stderr: &errOut, Context: context.Background()}
				if code := rc.Main([]string{"token", "revoke", "-db", db}); code != want {
					t.Errorf("revoke #%d = %d, want %d (%s)", i+1, code, want, errOut.String())
				}
			}
		}
	}
	var errOut serveBuffer
	rc := &Command{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errOut, Context: context.Background()}
	if code := rc.Main([]string{"token", "revoke", "-db", db}); code != exitUsage {
		t.Errorf("revoke without a token = %d", code)
	}
}

// The runner wired into serve compiles and executes the agent's workflow
// with the real executor and returns the redacted record.
func TestServeWorkflowRunner(t *testing.T) {
	var got []string
	var mu sync.Mutex
	rv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(201)
		w.Write([]byte(`{"data":{"id":"pay_1"}}`))
	}))
	defer rv.Close()
	g := guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	wr := workflowRunner{ex: executor.New(executor.Options{Guard: &g}), now: time.Now}
	doc := `{"result":{},"workflow":[{"type":"request","url":"` + rv.URL + `/payables","headers":{"authorization":"Bearer ${{secrets.ERP_TOKEN}}"},"body":{"email":"${{kobana.email_id}}"},"expected_status":201},
	{"type":"request","url":"` + rv.URL + `/payables/${{steps.0.response.body.data.id}}/done"}]}`
	raw, err := wr.RunWorkflow(context.Background(), inbox.WorkflowInput{Document: json.RawMessage(doc), Secrets: map[string]string{"ERP_TOKEN": "s3cr3t-erp"}, Facts: map[string]string{"email_id": "eml_1"}})
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Status string `json:"status"`
		Steps  []struct {
			State string `json:"state"`
		} `json:"steps"`
	}
	json.Unmarshal(raw, &rec)
	if rec.Status != "succeeded" || len(rec.Steps) != 2 || bytes.Contains(raw, []byte("s3cr3t-erp")) || !bytes.Contains(raw, []byte("[redacted secrets.ERP_TOKEN]")) {
		t.Fatalf("record %s", raw)
	}
	if len(got) != 2 || got[0] != "POST /payables Bearer s3cr3t-erp" || !strings.HasPrefix(got[1], "POST /payables/pay_1/done") {
		t.Errorf("receiver got %q", got)
	}
	// An invalid workflow is a failed run that sent nothing.
	raw, _ = wr.RunWorkflow(context.Background(), inbox.WorkflowInput{Document: json.RawMessage(`{"result":{},"workflow":[{"type":"email"}]}`)})
	if !bytes.Contains(raw, []byte(`"status":"failed"`)) || !bytes.Contains(raw, []byte(`"diagnostics"`)) || len(got) != 2 {
		t.Errorf("invalid workflow record %s", raw)
	}
}

func TestServeStoreSelection(t *testing.T) {
	var stderr serveBuffer
	c := &Command{Stdout: io.Discard, Stderr: &stderr, Context: context.Background()}
	if code := c.Main([]string{"serve", "-http", "127.0.0.1:0", "-db", "postgres://kobana:hunter2@%zz/db"}); code != exitFailure ||
		strings.Contains(stderr.String(), "hunter2") || !strings.Contains(stderr.String(), "PostgreSQL") {
		t.Errorf("bad postgres URL: %d %q", code, stderr.String())
	}
	stderr = serveBuffer{}
	c = &Command{Stdout: io.Discard, Stderr: &stderr, Context: context.Background(), Getenv: func(k string) string {
		if k == "KOBANA_SECRET_KEY" {
			return "not-hex"
		}
		return ""
	}}
	if code := c.Main([]string{"serve", "-http", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "x.db")}); code != exitUsage || !strings.Contains(stderr.String(), "KOBANA_SECRET_KEY") {
		t.Errorf("bad secret key: %d %q", code, stderr.String())
	}
	// With a PostgreSQL server (source .ci/postgres), the demo runs on it.
	dsn := os.Getenv("KOBANA_TEST_POSTGRES")
	if dsn == "" {
		t.Skip("KOBANA_TEST_POSTGRES is not set; the PostgreSQL half of this test needs a server")
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out serveBuffer
	done := make(chan int, 1)
	go func() {
		done <- (&Command{Stdout: &out, Stderr: io.Discard, Context: ctx}).Main([]string{"serve", "-demo", "-http", "127.0.0.1:0", "-db", dsn})
	}()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && strings.Count(out.String(), "\n") < 2; time.Sleep(50 * time.Millisecond) {
	}
	cancel()
	if code := <-done; code != exitOK || strings.Count(out.String(), "token for") != 2 {
		t.Errorf("serve -demo on PostgreSQL: %d %q", code, out.String())
	}
}
