package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// tokenCmd runs kobana token ARGS and returns its exit code and outputs.
func tokenCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr serveBuffer
	c := &Command{Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr, Context: context.Background()}
	code := c.Main(append([]string{"token"}, args...))
	return code, stdout.String(), stderr.String()
}

// TestTokenListAndRevokeByID: kobana token list shows id, person,
// workspace, scopes, label, created, last used and expiry of every token —
// never a value — and revoke takes an id (or -person for all of a
// person's); signin prints a one-time code for the OAuth sign-in page.
func TestTokenListAndRevokeByID(t *testing.T) {
	db := filepath.Join(t.TempDir(), "t.db")
	seedDemo(t, db)
	code, tok, _ := tokenCmd(t, "", "create", "-person", "per_bruno", "-workspace", "ws_finance", "-scopes", "read", "-label", "laptop", "-expires", "48h", "-db", db)
	if code != exitOK {
		t.Fatal(code)
	}
	tok = strings.TrimSpace(tok)
	code, out, _ := tokenCmd(t, "", "list", "-db", db)
	if code != exitOK || strings.Contains(out, "kbn_") || !strings.Contains(out, "laptop") || !strings.HasPrefix(out, "ID ") || !strings.Contains(out, "LAST USED") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	code, out, _ = tokenCmd(t, "", "list", "-json", "-person", "per_bruno", "-db", db)
	var rows []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("list -json: %v\n%s", err, out)
		}
		rows = append(rows, m)
	}
	var id string
	for _, m := range rows {
		if m["label"] == "laptop" {
			id, _ = m["id"].(string)
			if m["person"] != "per_bruno" || m["workspace"] != "ws_finance" || m["kind"] != "token" || m["expires"] == "" || m["created"] == "" {
				t.Errorf("row = %v", m)
			}
		}
	}
	if code != exitOK || !strings.HasPrefix(id, "tok_") || strings.Contains(out, tok) {
		t.Fatalf("list -json: exit %d\n%s", code, out)
	}
	if code, _, errOut := tokenCmd(t, "", "revoke", "-db", db, id); code != exitOK || !strings.Contains(errOut, "revoked "+id) {
		t.Errorf("revoke %s: exit %d %s", id, code, errOut)
	}
	if code, _, _ := tokenCmd(t, "", "revoke", "-db", db, id); code != exitFailure {
		t.Errorf("revoke twice: exit %d", code)
	}
	if code, out, _ := tokenCmd(t, "", "list", "-db", db); code != exitOK || strings.Contains(out, id) {
		t.Errorf("a revoked token is listed without -all:\n%s", out)
	}
	if code, out, _ := tokenCmd(t, "", "list", "-all", "-db", db); code != exitOK || !regexp.MustCompile(id+`.*revoked `).MatchString(out) {
		t.Errorf("list -all:\n%s", out)
	}
	// Sign-in codes.
	code, sc, errOut := tokenCmd(t, "", "signin", "-person", "per_ana", "-workspace", "ws_finance", "-db", db)
	if code != exitOK || !regexp.MustCompile(`^kbs_[0-9a-f]{32}\n$`).MatchString(sc) || !strings.Contains(errOut, "once, until") {
		t.Errorf("signin: exit %d %q %q", code, sc, errOut)
	}
	for _, args := range [][]string{
		{"signin", "-person", "per_ana", "-db", db},
		{"signin", "-person", "per_ana", "-workspace", "ws_finance", "-expires", "48h", "-db", db},
		{"revoke", "-workspace", "ws_finance", "-db", db},
		{"revoke", "-person", "per_ana", "tok_x", "-db", db},
	} {
		if code, _, _ := tokenCmd(t, "", args...); code != exitUsage {
			t.Errorf("%v: exit %d, want usage", args, code)
		}
	}
	if code, _, _ := tokenCmd(t, "", "signin", "-person", "per_bruno", "-workspace", "ws_sandbox", "-db", db); code != exitFailure {
		t.Errorf("signin for a non-member: exit %d", code)
	}
	// Revoking a person's access revokes all their tokens.
	if code, _, errOut := tokenCmd(t, "", "revoke", "-person", "per_ana", "-db", db); code != exitOK || !strings.Contains(errOut, "of per_ana in every workspace") {
		t.Errorf("revoke -person: exit %d %s", code, errOut)
	}
	if code, out, _ := tokenCmd(t, "", "list", "-person", "per_ana", "-db", db); code != exitOK || strings.Contains(out, "per_ana") {
		t.Errorf("per_ana's tokens after revoke -person:\n%s", out)
	}
}
