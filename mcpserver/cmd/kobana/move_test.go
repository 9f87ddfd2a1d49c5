package main

import (
	"context"
	"io"
	"net/smtp"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
)

// kobana move takes an embedded store to PostgreSQL with its history: on
// the new store the tokens minted before still work, the e-mails are there
// with their raw messages, the secrets open with the key, and the job
// left waiting is worked by a serve on PostgreSQL. A second move into the
// same database is refused.
func TestMoveToPostgres(t *testing.T) {
	dsn := pgtest.SchemaURL(t, "move", "kobana-move-test")
	db := filepath.Join(t.TempDir(), "kobana.db")
	key := strings.Repeat("3c", 32)
	env := map[string]string{"KOBANA_SECRET_KEY": key}
	var out, stderr serveBuffer
	c := &Command{Stdout: &out, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
	// Received, not processed: its agent job waits in the queue.
	addrs, stop := startServe(t, c, &stderr, "-demo", "-db", db, "-smtp", "127.0.0.1:0", "-dns", spfZone(t), "-process=false")
	if err := smtp.SendMail(addrs["smtp"].String(), nil, "billing@acme.example", []string{"invoices@finance.in.kobana.email"}, []byte(demoInvoice)); err != nil {
		t.Fatal(err)
	}
	var owner string
	for _, l := range strings.Split(out.String(), "\n") {
		if m := tokenLine.FindStringSubmatch(l); m != nil && m[3] == "owner" {
			owner = m[6]
		}
	}
	if code, _, errOut := kobana(t, env, "move", "-db", db, "-to", dsn); code != exitFailure || !strings.Contains(errOut, "stop every kobana serve") {
		t.Fatalf("move while a serve runs on the store: %d %q", code, errOut)
	}
	stop()
	if code, _, errOut := kobana(t, nil, "move", "-db", db, "-to", dsn); code != exitUsage || !strings.Contains(errOut, "KOBANA_SECRET_KEY") {
		t.Errorf("move without the key: %d %q", code, errOut)
	}
	code, _, errOut := kobana(t, env, "move", "-db", db, "-to", dsn)
	if code != exitOK || !strings.Contains(errOut, "1 raw messages") || !strings.Contains(errOut, "1 inbox.agent") || !strings.Contains(errOut, "checked") {
		t.Fatalf("move: %d %s", code, errOut)
	}
	if strings.Contains(errOut, pgtest.BaseDSN(t)) && strings.Contains(pgtest.BaseDSN(t), "password") {
		t.Error("the output shows the database password")
	}
	if code, _, errOut := kobana(t, env, "move", "-db", db, "-to", dsn); code != exitFailure || !strings.Contains(errOut, "not empty") {
		t.Errorf("a second move: %d %q", code, errOut)
	}

	// serve on PostgreSQL: the old token works, the waiting job runs.
	var stderr2 serveBuffer
	c2 := &Command{Stdout: io.Discard, Stderr: &stderr2, Getenv: func(k string) string { return env[k] }}
	addrs, stop = startServe(t, c2, &stderr2, "-db", dsn, "-http", "127.0.0.1:0")
	defer stop()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "move-test", Version: "1"}, nil).Connect(t.Context(), mcptest.HTTP(mcpURL(t, addrs), owner), nil)
	if err != nil {
		t.Fatalf("the token minted before the move: %v", err)
	}
	defer cs.Close()
	ctx := context.Background()
	raw := make([]byte, 32)
	for i := range raw {
		raw[i] = 0x3c
	}
	st, err := pg.Open(ctx, dsn, pg.Options{Options: store.Options{SecretKey: raw}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got := awaitProcessedInvoice(t, st, 60*time.Second, stderr2.String)
	if got.AgentRunID == "" {
		t.Errorf("the moved e-mail %+v has no agent run", got)
	}
	secrets, err := st.RevealSecrets(ctx, "ws_finance")
	if err != nil || secrets["ERP_TOKEN"] == "" {
		t.Errorf("the moved secrets: %v %v", len(secrets), err)
	}
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "emails_get", Arguments: map[string]any{"id": got.ID}})
	if err != nil || r.IsError || !strings.Contains(mcptest.TextOf(r), "inv-118.pdf") {
		t.Errorf("emails_get on PostgreSQL: %v %s", err, mcptest.TextOf(r))
	}
}
