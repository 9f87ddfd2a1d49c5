package main

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/server"
)

// The pipeline's workers are serve's flags; a PostgreSQL URL that does not
// size its pool gets one with room for them.
func TestServeWorkerFlags(t *testing.T) {
	c := &Command{Stdout: io.Discard, Stderr: io.Discard, Context: context.Background()}
	f, _, ok := parseServe(c, []string{"-http", "127.0.0.1:0", "-agent-workers", "8", "-workflow-workers", "16", "-webhook-workers", "3",
		"-workspace-share", "0.25", "-queue-lease", "45s", "-db", "postgres://kobana@db.internal/kobana?sslmode=verify-full"})
	if !ok {
		t.Fatal("flags refused")
	}
	if want := (server.Workers{Agent: 8, Workflow: 16, Webhook: 3, WorkspaceShare: 0.25}); f.cfg.Workers != want {
		t.Errorf("workers %+v, want %+v", f.cfg.Workers, want)
	}
	if f.cfg.QueueLease != 45*time.Second {
		t.Errorf("-queue-lease 45s gave %v", f.cfg.QueueLease)
	}
	if !strings.Contains(f.db, "pool_max_conns=48") || !strings.Contains(f.db, "sslmode=verify-full") {
		t.Errorf("-db became %q, want its pool sized for 8+16 workers and its parameters kept", f.db)
	}
	f, _, _ = parseServe(c, []string{"-http", "127.0.0.1:0", "-db", "postgres://kobana@db.internal/kobana"})
	if !strings.HasSuffix(f.db, "pool_max_conns=48") {
		t.Errorf("-db with the default workers became %q, want a pool of 2 x (8 + 16)", f.db)
	}
	f, _, _ = parseServe(c, []string{"-http", "127.0.0.1:0", "-db", "postgres://kobana@db.internal/kobana?pool_max_conns=6"})
	if !strings.HasSuffix(f.db, "pool_max_conns=6") {
		t.Errorf("an explicit pool size was changed: %q", f.db)
	}
	f, _, _ = parseServe(c, []string{"-http", "127.0.0.1:0", "-process=false", "-db", "postgres://kobana@db.internal/kobana"})
	if strings.Contains(f.db, "pool_max_conns") {
		t.Errorf("a process that works no queue had its pool sized: %q", f.db)
	}
	for _, args := range [][]string{{"-agent-workers", "-1"}, {"-workflow-workers", "-2"}, {"-webhook-workers", "-1"}, {"-workspace-share", "1.5"}} {
		var stderr serveBuffer
		c := &Command{Stdout: io.Discard, Stderr: &stderr, Context: context.Background()}
		if code := c.Main(append([]string{"serve", "-http", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "x.db")}, args...)); code != exitUsage ||
			!strings.Contains(stderr.String(), args[0]) {
			t.Errorf("serve %v = %d: %s", args, code, stderr.String())
		}
	}
}

// A pool too small for the workers is said at start: the stages would wait
// on each other for connections to read their e-mails with.
func TestServeWarnsOfAPoolTooSmallForItsWorkers(t *testing.T) {
	dsn := pgtest.SchemaURL(t, "serve", "kobana-serve-test") + "&pool_max_conns=4"
	var stderr serveBuffer
	_, stop := startServe(t, &Command{Stdout: io.Discard, Stderr: &stderr}, &stderr, "-http", "127.0.0.1:0", "-db", dsn)
	defer stop()
	if want := "give -db pool_max_conns=48 or more"; !strings.Contains(stderr.String(), want) {
		t.Errorf("serve with a pool of 4: %q, want a warning ending %q", stderr.String(), want)
	}
}
