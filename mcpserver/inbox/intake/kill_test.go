package intake_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// startServerProcess runs the intake in a process of its own on the data
// directory dir (the same directory across restarts) and returns its SMTP
// address and the process.
func startServerProcess(t *testing.T, dir string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"=intake", "KOBANA_INTAKE_DIR="+dir)
	stdinR, stdinW, _ := os.Pipe()
	cmd.Stdin = stdinR
	t.Cleanup(func() { stdinW.Close() })
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	out := bufio.NewScanner(stdout)
	if !out.Scan() {
		t.Fatal("the server process printed no address")
	}
	addr, ok := strings.CutPrefix(out.Text(), "ADDR ")
	if !ok {
		t.Fatalf("server process: %q", out.Text())
	}
	return addr, cmd
}

// TestSIGKILL: a message answered 250 survives the server being killed at
// once (record, job and raw message on disk); a message whose DATA is cut
// by a kill leaves no record, and what it left in the spool is swept.
func TestSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	dir := t.TempDir()
	ctx := context.Background()

	addr, proc := startServerProcess(t, dir)
	c, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SendMail("billing@supplier.test", []string{"invoices@in.kobana.test"}, strings.NewReader(message("acknowledged", 5000))); err != nil {
		t.Fatal(err)
	}
	proc.Process.Kill() // right after 250, with the client still connected
	proc.Wait()

	addr, proc = startServerProcess(t, dir)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	fmt.Fprintf(conn, "EHLO c\r\nMAIL FROM:<billing@supplier.test>\r\nRCPT TO:<invoices@in.kobana.test>\r\nDATA\r\n")
	for replies := 0; replies < 4; {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if len(line) > 3 && line[3] == ' ' {
			replies++
		}
	}
	// Larger than a spool holds in memory: it goes to a spool file.
	fmt.Fprint(conn, message("cut-off", 2*mailstore.SpoolMemoryBytes)[:mailstore.SpoolMemoryBytes+100<<10])
	// Kill once the server is spooling the message to its file.
	root := filepath.Join(dir, "1") // the child's data directory
	err = testwait.Until(10*time.Second, func() error {
		if f, _ := os.ReadDir(filepath.Join(root, "spool")); len(f) == 0 {
			return errors.New("the server never started spooling the message to a file")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	proc.Process.Kill()
	proc.Wait()

	// What a restart finds.
	st, err := sqlite.Open(ctx, filepath.Join(root, "kobana.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	emails, err := inbox.NewRepo(st).Emails.All(ctx, wsID, store.Query{})
	if err != nil {
		t.Fatal(err)
	}
	if len(emails) != 1 || emails[0].Subject != "acknowledged" {
		t.Fatalf("after the kills: %d e-mails (%v), want only the acknowledged one", len(emails), emails)
	}
	var jobs int
	st.SQLDB().QueryRow(`SELECT count(*) FROM river_job WHERE kind = 'inbox.agent'`).Scan(&jobs)
	if jobs != 1 {
		t.Fatalf("%d agent jobs, want 1", jobs)
	}
	d, err := mailstore.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.Open(ctx, wsID, emails[0].ID)
	if err != nil {
		t.Fatalf("the acknowledged message's raw bytes: %v", err)
	}
	m.Close()
	n, err := intake.Sweep(ctx, d, st, time.Time{}, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(filepath.Join(root, "spool")); len(left) != 0 || n != 1 {
		t.Fatalf("the sweep removed %d files and left %d in the spool; want the cut-off spool removed", n, len(left))
	}
	if _, err := d.Open(ctx, wsID, emails[0].ID); err != nil {
		t.Fatal("the sweep removed the acknowledged message")
	}
}
