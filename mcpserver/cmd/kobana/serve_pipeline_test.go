package main

import (
	"fmt"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"io"
	"net/smtp"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// serve works the Inbox's queue by default: mail received over SMTP is
// processed by its inbox's agent in the same process (here without a model,
// so the agent run fails with no_recorded_output, recorded).
func TestServeProcessesReceivedMail(t *testing.T) {
	db := filepath.Join(t.TempDir(), "kobana.db")
	var out, stderr serveBuffer
	addrs, stop := startServe(t, &Command{Stdout: &out, Stderr: &stderr}, &stderr,
		"-demo", "-db", db, "-http", "127.0.0.1:0", "-smtp", "127.0.0.1:0", "-dns", spfZone(t))
	defer stop()
	if !strings.Contains(stderr.String(), "processing the Inbox's queue") {
		t.Errorf("serve did not say it processes the queue: %s", stderr.String())
	}
	if err := smtp.SendMail(addrs["smtp"].String(), nil, "billing@acme.example", []string{"invoices@finance.in.kobana.email"}, []byte(demoInvoice)); err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.Open(t.Context(), db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	repo := inbox.NewRepo(st)
	got := awaitProcessedInvoice(t, st, 30*time.Second, stderr.String)
	run, err := repo.AgentRuns.Get(t.Context(), "ws_finance", got.AgentRunID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != inbox.EmailFailed || run.Cause != inbox.CauseNoRecordedOutput || run.AgentID != "agt_invoices" {
		t.Errorf("e-mail %s (%s), agent run %s (%s)", got.Status, got.StatusDetail, run.Status, run.Cause)
	}
}

// One process works an embedded store's queue: a second serve on the same
// file serves without processing, and takes the queue over once the first
// stops.
func TestServeOneProcessWorksTheEmbeddedQueue(t *testing.T) {
	db := filepath.Join(t.TempDir(), "kobana.db")
	var stderr serveBuffer
	_, stop := startServe(t, &Command{Stdout: &serveBuffer{}, Stderr: &stderr}, &stderr, "-db", db, "-http", "127.0.0.1:0")
	if !strings.Contains(stderr.String(), "processing the Inbox's queue") {
		t.Fatalf("the first serve does not process: %s", stderr.String())
	}
	var stderr2 serveBuffer
	_, stop2 := startServe(t, &Command{Stdout: &serveBuffer{}, Stderr: &stderr2}, &stderr2, "-db", db, "-http", "127.0.0.1:0")
	if want := "another kobana serve works the Inbox's queue of " + db; !strings.Contains(stderr2.String(), want) {
		t.Errorf("the second serve: %q, want %q", stderr2.String(), want)
	}
	var stderr3 serveBuffer
	_, stop3 := startServe(t, &Command{Stdout: &serveBuffer{}, Stderr: &stderr3}, &stderr3, "-db", db, "-http", "127.0.0.1:0", "-process=false")
	if strings.Contains(stderr3.String(), "Inbox's queue") {
		t.Errorf("-process=false speaks of the queue: %s", stderr3.String())
	}
	if code := stop3(); code != exitOK {
		t.Errorf("serve -process=false exit %d: %s", code, stderr3.String())
	}
	// The first stops: the second takes the queue over.
	if code := stop(); code != exitOK {
		t.Fatalf("serve exit %d: %s", code, stderr.String())
	}
	err := testwait.Until(10*time.Second, func() error {
		if !strings.Contains(stderr2.String(), "this one processes it now") {
			return fmt.Errorf("the second serve has not taken the queue over: %s", stderr2.String())
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	if code := stop2(); code != exitOK {
		t.Errorf("the second serve: exit %d: %s", code, stderr2.String())
	}
}

// A serve an MCP client starts on stdio (Claude Desktop's way) does not
// work the queue unless asked with -process: it neither takes the embedded
// store's queue from the server that should work it nor competes for jobs
// with no model configured. Before, it took the queue's lock, and the
// server started next only served.
func TestServeStdioDoesNotWorkTheQueue(t *testing.T) {
	db := filepath.Join(t.TempDir(), "kobana.db")
	seedDemo(t, db)
	var tokOut serveBuffer
	if code := (&Command{Stdout: &tokOut, Stderr: io.Discard, Context: t.Context()}).Main([]string{"token", "create", "-person", demo.Viewer, "-workspace", demo.Workspace, "-db", db}); code != exitOK {
		t.Fatalf("token create = %d", code)
	}
	env := func(k string) string {
		if k == "KOBANA_TOKEN" {
			return strings.TrimSpace(tokOut.String())
		}
		return ""
	}
	inR, inW := io.Pipe()
	defer inW.Close()
	var stdio serveBuffer
	_, stopStdio := startServe(t, &Command{Stdin: inR, Stdout: io.Discard, Stderr: &stdio, Getenv: env}, &stdio, "-stdio", "-db", db)
	if strings.Contains(stdio.String(), "Inbox's queue") {
		t.Errorf("serve -stdio speaks of the queue: %s", stdio.String())
	}
	var srv serveBuffer
	_, stopSrv := startServe(t, &Command{Stdout: io.Discard, Stderr: &srv}, &srv, "-http", "127.0.0.1:0", "-db", db)
	if !strings.Contains(srv.String(), "processing the Inbox's queue") {
		t.Errorf("the server started beside serve -stdio does not work the queue: %s", srv.String())
	}
	if code := stopSrv(); code != exitOK {
		t.Errorf("serve -http: exit %d: %s", code, srv.String())
	}
	if code := stopStdio(); code != exitOK {
		t.Errorf("serve -stdio: exit %d: %s", code, stdio.String())
	}
	// Asked, it does.
	in2R, in2W := io.Pipe()
	defer in2W.Close()
	var asked serveBuffer
	_, stop := startServe(t, &Command{Stdin: in2R, Stdout: io.Discard, Stderr: &asked, Getenv: env}, &asked, "-stdio", "-process", "-db", db)
	if !strings.Contains(asked.String(), "processing the Inbox's queue") {
		t.Errorf("serve -stdio -process does not work the queue: %s", asked.String())
	}
	stop()
}
