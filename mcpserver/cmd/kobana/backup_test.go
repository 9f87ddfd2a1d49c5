package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"net/smtp"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/server/backup"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// kobana backup copies the store while serve runs — the database, the raw
// messages, a manifest — and refuses without KOBANA_SECRET_KEY, whose key
// is never in the backup; backup -verify and restore check a copy with the
// key, and the restored store serves the mail received before the backup.
func TestBackupVerifyRestore(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "kobana.db")
	key := strings.Repeat("5e", 32)
	env := map[string]string{"KOBANA_SECRET_KEY": key}
	var out, stderr serveBuffer
	c := &Command{Stdout: &out, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
	addrs, stop := startServe(t, c, &stderr, "-demo", "-db", db, "-http", "127.0.0.1:0", "-smtp", "127.0.0.1:0", "-dns", spfZone(t), "-process=false")
	if err := smtp.SendMail(addrs["smtp"].String(), nil, "billing@acme.example", []string{"invoices@finance.in.kobana.email"}, []byte(demoInvoice)); err != nil {
		t.Fatal(err)
	}
	out1 := filepath.Join(dir, "backup-1")
	if code, _, errOut := kobana(t, nil, "backup", "-db", db, "-out", out1); code != exitFailure || !strings.Contains(errOut, "without a secret key from outside") {
		t.Errorf("a backup without KOBANA_SECRET_KEY: %d %q", code, errOut)
	}
	code, _, errOut := kobana(t, env, "backup", "-db", db, "-out", out1) // while serve runs
	if code != exitOK || !strings.Contains(errOut, "1 raw messages") || !strings.Contains(errOut, "not in the backup") {
		t.Fatalf("backup: %d %q", code, errOut)
	}
	stop()
	m, err := backup.ReadManifest(out1)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := hex.DecodeString(key)
	if m.KeyFingerprint != store.KeyFingerprint(raw) || m.Messages != 1 || m.Tables["records"] == 0 {
		t.Errorf("manifest %+v", m)
	}
	filepath.Walk(out1, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, raw) || bytes.Contains(b, []byte(key)) {
				t.Errorf("%s holds the secret key", p)
			}
		}
		return nil
	})
	// -verify: with the key, and with another.
	if code, _, errOut := kobana(t, env, "backup", "-verify", out1); code != exitOK || !strings.Contains(errOut, "is a complete backup") {
		t.Errorf("verify: %d %q", code, errOut)
	}
	if code, _, errOut := kobana(t, map[string]string{"KOBANA_SECRET_KEY": strings.Repeat("77", 32)}, "backup", "-verify", out1); code != exitFailure || !strings.Contains(errOut, "fingerprint") {
		t.Errorf("verify with another key: %d %q", code, errOut)
	}
	// Restore into a new place; it holds the e-mail and its raw message.
	restored := filepath.Join(t.TempDir(), "restored.db")
	if code, _, errOut := kobana(t, env, "restore", "-from", out1, "-db", restored); code != exitOK {
		t.Fatalf("restore: %d %q", code, errOut)
	}
	if code, _, errOut := kobana(t, env, "restore", "-from", out1, "-db", restored); code != exitFailure || !strings.Contains(errOut, "exists") {
		t.Errorf("a restore over a store: %d %q", code, errOut)
	}
	st, err := sqlite.Open(context.Background(), restored, store.Options{SecretKey: raw})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, ok := invoiceEmail(t, st)
	if !ok {
		t.Fatal("the restored store lacks the e-mail received before the backup")
	}
	msgs, err := mailstore.OpenDir(filepath.Join(filepath.Dir(restored), "kobana-messages"))
	if err != nil {
		t.Fatal(err)
	}
	msg, err := msgs.Open(context.Background(), "ws_finance", got.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer msg.Close()
	b, _ := io.ReadAll(io.NewSectionReader(msg, 0, msg.Size()))
	if !strings.HasSuffix(string(b), demoInvoice[strings.Index(demoInvoice, "MIME-Version"):]) {
		t.Errorf("the restored raw message (%d bytes) is not the message received:\n%s", len(b), b)
	}
}
