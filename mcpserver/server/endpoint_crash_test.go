package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/agent"
	"github.com/kobana/workflow/mcpserver/server"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// childEnv names the environment variable that turns the test binary into
// a server process running server.Run: its value is a childConfig in JSON.
const childEnv = "KOBANA_SERVER_TEST_CHILD"

func TestMain(m *testing.M) {
	if raw := os.Getenv(childEnv); raw != "" {
		if err := runChild(raw); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// childConfig is what a child server runs.
type childConfig struct {
	DB, Path string // PostgreSQL's connection string, or the SQLite file
	Model    string // the model's base URL
	DNS      string // the SPF zone's server
	Ready    string // the file the SMTP address is written to
	RPM      int
}

func runChild(raw string) error {
	var c childConfig
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	var st store.Store
	if c.Path != "" {
		lst, err := sqlite.Open(ctx, c.Path, store.Options{})
		if err != nil {
			return err
		}
		st = lst
	} else {
		pst, err := pg.Open(ctx, c.DB, pg.Options{PurgeInterval: -1})
		if err != nil {
			return err
		}
		st = pst
	}
	defer st.Close()
	ep := agent.Endpoint{BaseURL: c.Model, ResponseFormat: agent.FormatJSONSchema, Family: agent.FamilyOpenAI, RPM: c.RPM}
	return server.Run(ctx, server.Config{Store: st, StorePath: c.Path, Process: true, Output: io.Discard, Notices: io.Discard,
		Agents: agent.Config{Providers: map[string]agent.Endpoint{agent.AnyProvider: ep}}, QueueLease: 3 * time.Second,
		Guard:  &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}},
		Intake: &server.Intake{SMTPAddr: "127.0.0.1:0", DNSServer: c.DNS},
		Ready: func(addrs map[string]net.Addr) {
			os.WriteFile(c.Ready+".tmp", []byte(addrs["smtp"].String()), 0o644)
			os.Rename(c.Ready+".tmp", c.Ready)
		}})
}

// A server process (server.Run in a child process) killed (SIGKILL, no
// grace) with 256 model calls in flight (the workspace's share of the 512
// agent workers; 44 more e-mails queued) loses none: after a restart on the
// same store every e-mail is
// processed by one agent run, its model call answered once, its step sent
// once.
func TestACrashWithHundredsInFlight(t *testing.T) {
	eachStore(t, func(t *testing.T, onPG bool) {
		const n = 300
		rv := newStepReceiver(t)
		probe, base := newModelProbe(t, stepDoc(rv), 0, true)
		st, path, dsn := endpointStoreAt(t, onPG)
		c := childConfig{Path: path, DB: dsn, Model: base, DNS: spfZone(t), Ready: filepath.Join(t.TempDir(), "ready"), RPM: 1 << 30}
		raw, _ := json.Marshal(c)
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var addr string
		if err := testwait.Until(time.Minute, func() error {
			b, err := os.ReadFile(c.Ready)
			addr = string(b)
			return err
		}); err != nil {
			cmd.Process.Kill()
			t.Fatalf("the server did not start: %v\n%s", err, out.String())
		}
		sendMarked(t, addr, marks("A", n), 8)
		if err := testwait.Until(time.Minute, func() error {
			if got := probe.inFlight.Load(); got < 250 {
				return fmt.Errorf("%d calls in flight", got)
			}
			return nil
		}); err != nil {
			cmd.Process.Kill()
			t.Fatal(err)
		}
		cmd.Process.Kill()
		cmd.Wait()
		// The restarted server asks another stand-in: the calls held at
		// the first are never answered (their client is gone).
		after, base := newModelProbe(t, stepDoc(rv), 0, false)
		cfg := endpointConfig(t, st, path, base, 0)
		cfg.QueueLease = 3 * time.Second // the killed replica's jobs are taken over after its lease
		_, stop := start(t, cfg)
		emails := settledEmails(t, st, "A", n, 3*time.Minute)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		checkOnce(t, st, "A", emails, rv)
		probe.mu.Lock()
		if len(probe.answered) != 0 {
			t.Errorf("the crashed server's calls got %d answers", len(probe.answered))
		}
		probe.mu.Unlock()
		after.mu.Lock()
		defer after.mu.Unlock()
		for _, m := range marks("A", n) {
			if after.answered[m] != 1 {
				t.Errorf("%s answered %d times after the restart", m, after.answered[m])
			}
		}
	})
}
