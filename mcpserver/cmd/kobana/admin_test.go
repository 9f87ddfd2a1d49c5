package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/mcptest"
)

// kobana runs one command in-process with env and returns its exit status
// and outputs.
func kobana(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut serveBuffer
	c := &Command{Stdout: &out, Stderr: &errOut, Context: t.Context(), Getenv: func(k string) string { return env[k] }}
	code = c.Main(args)
	return code, out.String(), errOut.String()
}

// mustKobana is kobana that fails the test unless the command exits 0.
func mustKobana(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	code, out, errOut := kobana(t, env, args...)
	if code != exitOK {
		t.Fatalf("kobana %s = %d\n%s", strings.Join(args, " "), code, errOut)
	}
	return strings.TrimSpace(out)
}

// The first-run path of an operator, without the demo and without editing
// the database: kobana init sets up a fresh store with its organization,
// workspace, owner and the owner's token; kobana admin adds a person,
// gives and takes a role and changes the plan's limits; kobana token then
// mints for the new member (before, it answered that the person was not a
// member of a workspace no command could create).
func TestInitAndAdminFromNothing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "acme.db")
	code, tok, errOut := kobana(t, nil, "init", "-db", db, "-organization", "Acme Ltda", "-workspace", "Finance", "-owner", "Ana Souza",
		"-email", "ana@acme.example", "-emails-per-month", "1000", "-retention-days", "30")
	if code != exitOK || !regexp.MustCompile(`^kbn_[0-9a-f]{64}\n$`).MatchString(tok) ||
		!strings.Contains(errOut, "organization org_acme_ltda (Acme Ltda), workspace ws_finance (Finance, slug finance, plan custom: 1000 e-mails a month, raw messages kept 30 days") {
		t.Fatalf("init = %d, %q, %q", code, tok, errOut)
	}
	owner := strings.TrimSpace(tok)
	if code, _, errOut := kobana(t, nil, "init", "-db", db, "-organization", "Other", "-workspace", "X", "-owner", "Y Z", "-email", "y@z.example"); code != exitFailure || !strings.Contains(errOut, "is not fresh") {
		t.Errorf("a second init = %d %q", code, errOut)
	}
	// A person, a role, a token for them.
	if id := mustKobana(t, nil, "admin", "person", "create", "-db", db, "-organization", "org_acme_ltda", "-name", "Bruno Lima", "-email", "bruno@acme.example"); id != "per_bruno" {
		t.Fatalf("person create printed %q", id)
	}
	mustKobana(t, nil, "admin", "member", "set", "-db", db, "-workspace", "ws_finance", "-person", "per_bruno", "-role", "viewer")
	viewer := mustKobana(t, nil, "token", "create", "-db", db, "-person", "per_bruno", "-workspace", "ws_finance", "-scopes", "read")
	// The plan: limits changed one by one, the others kept.
	mustKobana(t, nil, "admin", "workspace", "set", "-db", db, "-workspace", "ws_finance", "-emails-per-month", "2000", "-plan", "business")
	var view adminView
	if err := json.Unmarshal([]byte(mustKobana(t, nil, "admin", "show", "-db", db, "-json")), &view); err != nil {
		t.Fatal(err)
	}
	if len(view.Workspaces) != 1 || view.Workspaces[0].Limits.EmailsPerMonth != 2000 || view.Workspaces[0].Limits.RetentionDays != 30 || view.Workspaces[0].Plan != "business" ||
		len(view.People) != 2 || len(view.Memberships) != 2 || len(view.Organizations) != 1 {
		t.Errorf("admin show: %+v", view)
	}
	// A second workspace; a slug is one workspace's.
	if id := mustKobana(t, nil, "admin", "workspace", "create", "-db", db, "-organization", "org_acme_ltda", "-name", "Payroll", "-retention-days", "7"); id != "ws_payroll" {
		t.Errorf("workspace create printed %q", id)
	}
	if code, _, errOut := kobana(t, nil, "admin", "workspace", "create", "-db", db, "-organization", "org_acme_ltda", "-name", "Payroll 2", "-slug", "payroll", "-id", "ws_p2"); code != exitFailure || !strings.Contains(errOut, "has the slug payroll already") {
		t.Errorf("a second workspace with slug payroll = %d %q", code, errOut)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"admin", "member", "set", "-db", db, "-workspace", "ws_finance", "-person", "per_bruno", "-role", "admin"}, `-role "admin": one of owner, operator, viewer`},
		{[]string{"admin", "workspace", "set", "-db", db, "-workspace", "ws_finance", "-retention-days", "-1"}, "-retention-days must be 0 or more"},
		{[]string{"admin", "person", "create", "-db", db, "-organization", "org_acme_ltda", "-name", "X"}, "-email is required"},
		{[]string{"admin", "frobnicate"}, `unknown action "frobnicate"`},
	} {
		if code, _, errOut := kobana(t, nil, tc.args...); code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("kobana %v = %d %q, want usage and %q", tc.args, code, errOut, tc.want)
		}
	}

	// The server serves both, each with their role.
	var stderr serveBuffer
	addrs, stop := startServe(t, &Command{Stdout: io.Discard, Stderr: &stderr}, &stderr, "-http", "127.0.0.1:0", "-db", db)
	defer stop()
	call := func(token, tool string, args map[string]any) (*mcp.CallToolResult, error) {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "admin-test", Version: "1"}, nil).Connect(t.Context(), mcptest.HTTP(mcpURL(t, addrs), token), nil)
		if err != nil {
			return nil, err
		}
		defer cs.Close()
		return cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	}
	r, err := call(owner, "inboxes_create", map[string]any{"name": "Invoices", "local_part": "invoices"})
	if err != nil || r.IsError || !strings.Contains(mcptest.TextOf(r), "invoices@finance.in.kobana.email") {
		t.Fatalf("the owner creates an inbox: %v %s", err, mcptest.TextOf(r))
	}
	if r, err := call(viewer, "inboxes_list", map[string]any{}); err != nil || r.IsError {
		t.Fatalf("the viewer lists inboxes: %v %s", err, mcptest.TextOf(r))
	}
	// Taking the role away stops the viewer's token.
	mustKobana(t, nil, "admin", "member", "remove", "-db", db, "-workspace", "ws_finance", "-person", "per_bruno")
	req, _ := http.NewRequestWithContext(context.Background(), "POST", mcpURL(t, addrs), strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+viewer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a removed member's token: %s, want 401", resp.Status)
	}
}

// kobana admin rotate-secret-key seals the secrets again with a new key:
// serve then starts with the new key only.
func TestAdminRotateSecretKey(t *testing.T) {
	db := filepath.Join(t.TempDir(), "k.db")
	oldKey, newKey := strings.Repeat("0a", 32), strings.Repeat("0b", 32)
	var out, stderr serveBuffer
	_, stop := startServe(t, &Command{Stdout: &out, Stderr: &stderr, Getenv: func(k string) string {
		return map[string]string{"KOBANA_SECRET_KEY": oldKey}[k]
	}}, &stderr, "-demo", "-http", "127.0.0.1:0", "-db", db)
	stop()
	if code, _, errOut := kobana(t, map[string]string{"KOBANA_SECRET_KEY": oldKey}, "admin", "rotate-secret-key", "-db", db); code != exitUsage || !strings.Contains(errOut, "KOBANA_NEW_SECRET_KEY") {
		t.Errorf("without a new key: %d %q", code, errOut)
	}
	errOut := ""
	if code, _, e := kobana(t, map[string]string{"KOBANA_SECRET_KEY": oldKey, "KOBANA_NEW_SECRET_KEY": newKey}, "admin", "rotate-secret-key", "-db", db); code != exitOK || !regexp.MustCompile(`sealed [1-9]\d* secret\(s\) again with the new key \(fingerprint [0-9a-f]{16}\)`).MatchString(e) {
		t.Fatalf("rotate = %d %q", code, e)
	} else {
		errOut = e
	}
	if strings.Contains(errOut, newKey) || strings.Contains(errOut, oldKey) {
		t.Errorf("the output shows a key: %q", errOut)
	}
	if code, _, e := kobana(t, map[string]string{"KOBANA_SECRET_KEY": oldKey}, "serve", "-http", "127.0.0.1:0", "-db", db); code != exitFailure || !strings.Contains(e, "does not open") {
		t.Errorf("serve with the old key: %d %q", code, e)
	}
	var s2 serveBuffer
	_, stop = startServe(t, &Command{Stdout: io.Discard, Stderr: &s2, Getenv: func(k string) string {
		return map[string]string{"KOBANA_SECRET_KEY": newKey}[k]
	}}, &s2, "-http", "127.0.0.1:0", "-db", db)
	if code := stop(); code != exitOK {
		t.Errorf("serve with the new key: %d %s", code, s2.String())
	}
}
