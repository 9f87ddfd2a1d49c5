package server_test

import (
	"database/sql"
	"errors"
	"fmt"
	"github.com/kobana/workflow/mcpserver/internal/smalldisk"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/server"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// metricLine returns the line of the metrics at url that starts with
// series, or "".
func metricLine(t *testing.T, url, series string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for line := range strings.Lines(string(b)) {
		if strings.HasPrefix(line, series+" ") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// The database's disk fills under a running server with SMTP and the
// monitoring listener: a message is deferred with 452 4.3.1 (never 250),
// /readyz says not ready (store_writes: refused) on every poll while the
// disk stays full and kobana_store_writable is 0; once space returns,
// /readyz says ready again without any mail arriving, and the sender's
// retry of the same message is stored.
func TestAFullDiskDefersMailAndReadinessHolds(t *testing.T) {
	disk := smalldisk.Mount(t, 32<<20)
	path := filepath.Join(disk, "kobana.db")
	st, err := sqlite.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var out syncbuf.Buffer
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Messages: t.TempDir(), Demo: true, Output: &out,
		Intake:  &server.Intake{SMTPAddr: "127.0.0.1:0", DNSServer: spfZone(t)},
		Monitor: &server.Monitor{Addr: "127.0.0.1:0"}})
	defer stop()
	monitor := "http://" + addrs["monitor"].String()
	readyz := func() (int, string) {
		code, v, _ := getJSON(t, monitor+"/readyz", "127.0.0.1")
		checks, _ := v["checks"].(map[string]any)
		w, _ := checks["store_writes"].(string)
		return code, w
	}
	if err := testwait.Until(30*time.Second, func() error {
		if code, _ := readyz(); code != 200 {
			return fmt.Errorf("/readyz: %d", code)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	const writable = `kobana_store_writable{store="sqlite"}`
	if got := metricLine(t, monitor+"/metrics", writable); got != writable+" 1" {
		t.Fatalf("before the disk fills: %q", got)
	}
	// Every later commit must grow the write-ahead log.
	var busy, logged, moved int
	if err := st.SQLDB().QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &moved); err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatal(err)
	}
	free := smalldisk.Fill(t, disk)

	msg := "From: billing@acme.example\r\nTo: " + demoInbox + "\r\nSubject: while the disk is full\r\nMessage-ID: <full-disk@acme.example>\r\n\r\nInvoice 42.\r\n.\r\n"
	deliver := func(want string) string {
		k := dialSMTP(t, addrs["smtp"].String())
		k.send("EHLO client.test\r\n")
		k.expect("250")
		k.send("MAIL FROM:<billing@acme.example>\r\n")
		k.expect("250")
		k.send("RCPT TO:<" + demoInbox + ">\r\n")
		k.expect("250")
		k.send("DATA\r\n")
		k.expect("354")
		k.send(msg)
		return k.expect(want)
	}
	deliver("452 4.3.1")

	// Not ready on every poll while the disk stays full.
	for i := range 20 {
		if code, w := readyz(); code != 503 || w != "refused" {
			t.Fatalf("poll %d of /readyz while the disk is full: %d, store_writes %q; want 503, refused", i, code, w)
		}
		if i%5 == 0 {
			if got := metricLine(t, monitor+"/metrics", writable); got != writable+" 0" {
				t.Fatalf("while the disk is full: %q", got)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}

	free()
	if err := testwait.Until(30*time.Second, func() error {
		if code, w := readyz(); code != 200 {
			return fmt.Errorf("/readyz after space returned: %d, store_writes %q", code, w)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := metricLine(t, monitor+"/metrics", writable); got != writable+" 1" {
		t.Fatalf("after space returned: %q", got)
	}
	if line := deliver("250"); !strings.Contains(line, "stored as eml_") {
		t.Fatalf("the retry: %q names no stored e-mail", line)
	}
}
