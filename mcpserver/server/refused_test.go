package server_test

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/server"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// smallDisk mounts a file system of size bytes (tmpfs) in a new directory
// and returns it; the test is skipped where mounting is not allowed (it
// needs root). It is unmounted after everything else the test cleans up.
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("a small file system is needed (mount tmpfs: %v; run as root)", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes a file in dir until its file system is full, and returns a
// function that removes it.
func fill(t *testing.T, dir string) (free func()) {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for _, n := range []int{len(block), 4096, 512, 1} { // the last pages too
		for {
			if _, err := f.Write(block[:n]); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				break
			}
		}
	}
	return func() {
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
	}
}

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
	disk := smallDisk(t, 32<<20)
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
	free := fill(t, disk)

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
