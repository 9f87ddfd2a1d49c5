package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// serveBuffer is a goroutine-safe output for a running serve.
type serveBuffer = syncbuf.Buffer

// startServe runs `kobana serve args…` with c in the background and returns
// once it serves (c.Ready was called), with the addresses it reported and a
// function that stops it and returns its exit code. If serve ends before it
// is ready, the test fails with its standard error.
func startServe(t *testing.T, c *Command, stderr *serveBuffer, args ...string) (addrs map[string]net.Addr, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	c.Context = ctx
	ready := make(chan map[string]net.Addr, 1)
	c.Ready = func(a map[string]net.Addr) { ready <- a }
	done := make(chan int, 1)
	go func() { done <- c.Main(append([]string{"serve"}, args...)) }()
	stop = func() int { cancel(); return <-done }
	select {
	case addrs = <-ready:
		return addrs, stop
	case code := <-done:
		cancel()
		t.Fatalf("serve %v ended with %d before serving: %s", args, code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("serve %v did not start within 30s: %s", args, stderr.String())
	}
	return nil, nil
}

// mcpURL is the MCP endpoint of a serve's HTTP listener.
func mcpURL(t *testing.T, addrs map[string]net.Addr) string {
	t.Helper()
	a := addrs["http"]
	if a == nil {
		t.Fatalf("serve reported no http address: %v", addrs)
	}
	return "http://" + a.String() + "/mcp"
}

// seedDemo runs serve -demo once on db, so the demo organization exists.
func seedDemo(t *testing.T, db string) (stdout string) {
	t.Helper()
	var out, stderr serveBuffer
	_, stop := startServe(t, &Command{Stdout: &out, Stderr: &stderr}, &stderr, "-demo", "-http", "127.0.0.1:0", "-db", db)
	if code := stop(); code != exitOK {
		t.Fatalf("serve -demo exit %d: %s", code, stderr.String())
	}
	return out.String()
}

func TestServeUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "nothing to serve: pass -http ADDR, -stdio, -smtp ADDR (or several)"},
		{[]string{"-http", "127.0.0.1:0", "-products", "inbox,payroll"}, `unknown product "payroll" (available: inbox, billing)`},
		{[]string{"-http", "127.0.0.1:0", "-products", ""}, `unknown product "" (available: inbox, billing)`},
		{[]string{"-http", "127.0.0.1:0", "-allow", "not-a-cidr"}, `"not-a-cidr" is not a network in CIDR notation`},
		{[]string{"-http", "127.0.0.1:0", "extra"}, `unexpected argument "extra"`},
		{[]string{"-stdio", "-public-url", "https://mcp.example.com"}, "-public-url, -allowed-host and -allowed-origin need -http ADDR"},
		{[]string{"-nope"}, "flag provided but not defined: -nope"},
	} {
		var stderr serveBuffer
		c := &Command{Stdout: io.Discard, Stderr: &stderr, Context: context.Background()}
		if code := c.Main(append([]string{"serve", "-db", filepath.Join(t.TempDir(), "x.db")}, tc.args...)); code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("serve %v = %d, want %d and %q; stderr:\n%s", tc.args, code, exitUsage, tc.want, stderr.String())
		}
	}
}

// TestServeProducts: -products chooses what the one endpoint serves, from
// the registry of products; the others' tools, resources and instructions
// are absent.
func TestServeProducts(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	seeded := seedDemo(t, db)
	for _, tc := range []struct {
		products string
		want     []string // products whose tools are listed
	}{
		{"inbox", []string{"inbox"}},
		{"billing", []string{"billing"}},
		{"billing, inbox,billing", []string{"inbox", "billing"}},
	} {
		var stdout, stderr serveBuffer
		addrs, stop := startServe(t, &Command{Stdout: &stdout, Stderr: &stderr}, &stderr, "-demo", "-http", "127.0.0.1:0", "-db", db, "-products", tc.products)
		m := tokenLine.FindStringSubmatch(strings.SplitN(seeded, "\n", 2)[0])
		if m == nil {
			t.Fatalf("no token line in %q", seeded)
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "products", Version: "1"}, nil)
		cs, err := client.Connect(t.Context(), mcptest.HTTP(mcpURL(t, addrs), m[6]), nil)
		if err != nil {
			t.Fatal(err)
		}
		tools, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, tl := range tools.Tools {
			if strings.HasPrefix(tl.Name, "billing_") {
				got["billing"]++
			} else {
				got["inbox"]++
			}
		}
		instructions := cs.InitializeResult().Instructions
		for _, p := range []string{"inbox", "billing"} {
			served := slices.Contains(tc.want, p)
			if (got[p] > 0) != served {
				t.Errorf("-products %s: %d %s tools listed", tc.products, got[p], p)
			}
			if strings.Contains(strings.ToLower(instructions), "kobana "+p) != served {
				t.Errorf("-products %s: instructions %q", tc.products, instructions)
			}
		}
		cs.Close()
		if code := stop(); code != exitOK {
			t.Errorf("-products %s: exit %d: %s", tc.products, code, stderr.String())
		}
	}
}

// TestServeReady: Ready reports each listener once serve takes requests;
// a stdio server has no network address to report.
func TestServeReady(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	inR, inW := io.Pipe()
	defer inW.Close()
	var stderr serveBuffer
	c := &Command{Stdin: inR, Stdout: io.Discard, Stderr: &stderr}
	addrs, stop := startServe(t, c, &stderr, "-demo", "-stdio", "-http", "127.0.0.1:0", "-db", db)
	if len(addrs) != 1 || addrs["http"] == nil {
		t.Errorf("addrs %v, want the http listener only", addrs)
	}
	// The HTTP endpoint answers as soon as Ready was called: no wait.
	resp, err := http.Get(mcpURL(t, addrs))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /mcp without a token: %s", resp.Status)
	}
	if code := stop(); code != exitOK {
		t.Errorf("exit %d: %s", code, stderr.String())
	}

	// The second start mints no token: stdio speaks for one minted then.
	var owner string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if m := tokenLine.FindStringSubmatch(l); m != nil && m[3] == "owner" {
			owner = m[6]
		}
	}
	var errOnly serveBuffer
	in2R, in2W := io.Pipe()
	defer in2W.Close()
	env := func(k string) string {
		if k == "KOBANA_TOKEN" {
			return owner
		}
		return ""
	}
	addrs, stop = startServe(t, &Command{Stdin: in2R, Stdout: io.Discard, Stderr: &errOnly, Getenv: env}, &errOnly, "-demo", "-stdio", "-db", db)
	if len(addrs) != 0 {
		t.Errorf("stdio alone reported %v", addrs)
	}
	if code := stop(); code != exitOK {
		t.Errorf("stdio exit %d: %s", code, errOnly.String())
	}
}

var tokenLine = regexp.MustCompile(`^token for (.+) <(.+)>, (owner|viewer) of workspace (\S+), scopes (read,write|read): (kbn_[0-9a-f]{64})$`)

// The newcomer's path of the issue: serve -demo, connect a real client with
// the printed token, list and read resources, get prompts, complete ids,
// and be asked to confirm webhooks_test.
func TestServeDemoOverHTTP(t *testing.T) {
	var stdout, stderr serveBuffer
	db := filepath.Join(t.TempDir(), "demo.db")
	addrs, stop := startServe(t, &Command{Stdout: &stdout, Stderr: &stderr}, &stderr, "-demo", "-http", "127.0.0.1:0", "-db", db)
	addr := mcpURL(t, addrs)
	if !strings.Contains(stderr.String(), "serving MCP on "+addr) {
		t.Errorf("stderr does not say where it serves (%s): %s", addr, stderr.String())
	}
	ctx := t.Context()
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
	if code := stop(); code != exitOK {
		t.Fatalf("serve exit %d: %s", code, stderr.String())
	}
	// A second start on the same file keeps the data and mints no token
	// (before, every start minted two more, all of them live): the tokens
	// printed at the first stay the ones there are.
	out2 := seedDemo(t, db)
	if strings.Contains(out2, "token for") || !strings.Contains(out2, "demo: the demo organization is already seeded") {
		t.Errorf("second start: %q", out2)
	}
	st, err := sqlite.Open(ctx, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var n int
	if err := st.SQLDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM tokens").Scan(&n); err != nil || n != 2 {
		t.Errorf("%d tokens in the store after two starts (%v), want the first start's 2", n, err)
	}

}

func TestServeStdioUsesKobanaToken(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	// Seed and mint through the commands a user runs.
	seedDemo(t, db)
	done := make(chan int, 1)
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
	seedDemo(t, db)
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
	dsn := pgtest.SchemaURL(t, "serve", "kobana-serve-test")
	var out, errOut serveBuffer
	_, stop := startServe(t, &Command{Stdout: &out, Stderr: &errOut}, &errOut, "-demo", "-http", "127.0.0.1:0", "-db", dsn)
	if code := stop(); code != exitOK || strings.Count(out.String(), "token for") != 2 {
		t.Errorf("serve -demo on PostgreSQL: %d %q %s", code, out.String(), errOut.String())
	}
}

// A store whose sealed secrets the key does not open (restored without its
// KOBANA_SECRET_KEY, or given another) is refused at start, saying which
// key and how to give it; before, serve started and every job that opened
// a secret failed later with "sealed secret cannot be opened".
func TestServeRefusesAStoreItsKeyDoesNotOpen(t *testing.T) {
	db := filepath.Join(t.TempDir(), "k.db")
	key := strings.Repeat("ab", 32)
	withKey := func(k string) func(string) string {
		return func(name string) string {
			if name == "KOBANA_SECRET_KEY" {
				return k
			}
			return ""
		}
	}
	var out, stderr serveBuffer
	_, stop := startServe(t, &Command{Stdout: &out, Stderr: &stderr, Getenv: withKey(key)}, &stderr, "-demo", "-http", "127.0.0.1:0", "-db", db)
	if code := stop(); code != exitOK {
		t.Fatalf("serve -demo with a key: %d %s", code, stderr.String())
	}
	for _, tc := range []struct{ key, want string }{
		{"", "KOBANA_SECRET_KEY is not set"},
		{strings.Repeat("cd", 32), "KOBANA_SECRET_KEY is set but is not the key"},
	} {
		var errOut serveBuffer
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a serve that starts ends there
		defer cancel()
		c := &Command{Stdout: io.Discard, Stderr: &errOut, Context: ctx, Getenv: withKey(tc.key)}
		if code := c.Main([]string{"serve", "-http", "127.0.0.1:0", "-db", db}); code != exitFailure ||
			!strings.Contains(errOut.String(), "the secret key does not open this store's sealed secrets") || !strings.Contains(errOut.String(), tc.want) ||
			strings.Contains(errOut.String(), "serving MCP") || strings.Contains(errOut.String(), tc.key+"\n") && tc.key != "" {
			t.Errorf("key %q: exit %d, stderr:\n%s", tc.key, code, errOut.String())
		}
	}
	// With its key it starts.
	var errOut serveBuffer
	_, stop = startServe(t, &Command{Stdout: io.Discard, Stderr: &errOut, Getenv: withKey(key)}, &errOut, "-http", "127.0.0.1:0", "-db", db)
	if code := stop(); code != exitOK {
		t.Errorf("with its key: %d %s", code, errOut.String())
	}
}
