package pipeline_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/smtp"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// crashWorkflow is invoiceWorkflow with the e-mail's id in every step's
// URL, so the receiver counts each step of each e-mail.
var crashWorkflow = strings.NewReplacer(
	`/payables"`, `/payables?email=${{kobana.email_id}}"`,
	`/attachments"`, `/attachments?email=${{kobana.email_id}}"`,
	`/notify"`, `/notify?email=${{kobana.email_id}}"`,
).Replace(invoiceWorkflow)

// stepPaths are crashWorkflow's steps as the receiver sees them.
var stepPaths = []string{"/payables", "/payables/pay_1/attachments", "/notify"}

// server is a server process (the test binary started again, see
// TestMain).
type server struct {
	t      testing.TB
	cmd    *exec.Cmd
	addr   string
	done   chan struct{}
	err    error
	output *syncbuf.Buffer
}

// startServer starts a server process and waits until it takes mail.
func startServer(t testing.TB, cfg serverConfig) *server {
	t.Helper()
	cfg.Ready = filepath.Join(t.TempDir(), "ready")
	if cfg.Document == "" {
		cfg.Document = crashWorkflow
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, done: make(chan struct{}), output: &syncbuf.Buffer{}}
	s.cmd = exec.Command(os.Args[0], "-test.run=^$")
	s.cmd.Env = append(os.Environ(), serverEnv+"="+string(b))
	s.cmd.Stdout, s.cmd.Stderr = s.output, s.output
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { s.stop() })
	exited := errors.New("exited")
	err = testwait.Until(30*time.Second, func() error {
		select {
		case <-s.done:
			return nil // reported below
		default:
		}
		a, err := os.ReadFile(cfg.Ready)
		s.addr = string(a)
		return err
	})
	select {
	case <-s.done:
		err = fmt.Errorf("%w before taking mail (%v)", exited, s.err)
	default:
	}
	if err != nil {
		t.Fatalf("starting the server: %v; its output:\n%s", err, s.output)
	}
	return s
}

// release lets a held server work its queue.
func (s *server) release() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		s.t.Fatal(err)
	}
}

// killed waits for the server to kill itself at its crash point.
func (s *server) killed() {
	s.t.Helper()
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		s.t.Fatalf("the server never reached its crash point; its output:\n%s", s.output)
	}
	var ee *exec.ExitError
	if !errors.As(s.err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		s.t.Fatalf("the server ended with %v, not killed; its output:\n%s", s.err, s.output)
	}
}

// stop ends the server (SIGTERM) and waits for it.
func (s *server) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// send sends a message over SMTP to the test inbox; nil means 250.
func send(addr, raw string) error {
	return smtp.SendMail(addr, nil, "billing@supplier.test", []string{testAddress}, []byte(raw))
}

// crashPoints are the stage boundaries the server is killed at.
var crashPoints = []string{
	"agent.start", "agent.ran", "agent.committed",
	"workflow.start", "workflow.sending", "workflow.sent", "workflow.ran", "workflow.committed",
	"webhook.sent",
}

// Kill the server (SIGKILL) at each stage boundary and start it again:
// every accepted e-mail is processed once, no step reaches the receiver
// twice, and the records say exactly what the receiver got.
func TestAKilledServerLosesNothingAndSendsNoStepTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	points := crashPoints
	if underRace {
		// The points around a step's request, where the race between the
		// record and the send matters most; the race detector makes each
		// kill and restart several times slower.
		points = []string{"agent.committed", "workflow.sending", "workflow.sent"}
	}
	for _, point := range points {
		t.Run(point, func(t *testing.T) { testCrash(t, point) })
	}
}

func testCrash(t *testing.T, point string) {
	ctx := t.Context()
	dir := t.TempDir()
	db := filepath.Join(dir, "kobana.db")
	recv := newReceiver(t)
	st, err := sqlite.Open(ctx, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	seedRecords(t, ctx, st, recv)
	st.Close()
	cfg := serverConfig{DB: db, Data: dir, Hold: true, CrashAt: point, Replica: "crashing"}

	// Every message is accepted before the queue is worked, then the server
	// kills itself at the point.
	s := startServer(t, cfg)
	const n = 3
	for i := range n {
		if err := send(s.addr, uniqueEmail(i)); err != nil {
			t.Fatalf("sending message %d: %v", i, err)
		}
	}
	s.release()
	s.killed()

	// Started again, it finishes what it accepted.
	cfg.CrashAt, cfg.Hold, cfg.Replica = "", false, "restarted"
	s = startServer(t, cfg)
	st, err = sqlite.Open(ctx, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	emails := waitProcessed(t, st, n, s)
	s.stop()

	interrupted := checkOnce(t, st, recv, emails)
	// Only a stop while a request was on its way leaves a run interrupted.
	if interrupted > 0 && point != "workflow.sending" && point != "workflow.sent" {
		t.Logf("%d runs interrupted by a stop at %s (another run was sending at that moment)", interrupted, point)
	}
	if (point == "workflow.sending" || point == "workflow.sent") && interrupted == 0 {
		t.Errorf("a stop at %s left no run interrupted", point)
	}
	// Every delivery reached the webhook, at most twice: deliveries are at
	// least once — a stop after an attempt was sent and before it was
	// recorded (at this point, or while another job was at it) sends it
	// again, with the same delivery id for the receiver to deduplicate.
	ds, _ := inbox.NewRepo(st).Deliveries.All(ctx, testWS, store.Query{})
	for _, d := range ds {
		got := 0
		for _, h := range recv.requests("/hooks") {
			if h.Header.Get(inbox.HeaderDelivery) == d.ID {
				got++
			}
		}
		if got < 1 || got > 2 {
			t.Errorf("delivery %s (%s) reached the webhook %d times", d.ID, d.Event, got)
		}
	}
	received := 0
	for _, d := range ds {
		if d.Event == inbox.EventEmailReceived {
			received++
		}
	}
	if received != n {
		t.Errorf("%d email.received deliveries for %d accepted e-mails", received, n)
	}
	// Nothing is left in the queue.
	var left int
	if err := st.SQLDB().QueryRowContext(ctx, `SELECT count(*) FROM river_job WHERE state <> 'completed' AND kind <> 'inbox.retention'`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d jobs left unfinished", left)
	}
}
