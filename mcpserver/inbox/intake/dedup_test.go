package intake_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/store"
)

// lossyProxy relays SMTP connections to target and, while armed, swallows
// the server's 250 for a stored message and cuts the connection there: the
// message is stored, the sending client never hears so.
type lossyProxy struct {
	addr  string
	armed atomic.Bool
	cut   atomic.Int32
}

func startLossyProxy(t *testing.T, target string) *lossyProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &lossyProxy{addr: ln.Addr().String()}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.relay(c, target)
		}
	}()
	return p
}

func (p *lossyProxy) relay(c net.Conn, target string) {
	defer c.Close()
	s, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer s.Close()
	go io.Copy(s, c)
	r := bufio.NewReader(s)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		if strings.HasPrefix(line, "250 2.0.0 OK: stored as") && p.armed.CompareAndSwap(true, false) {
			p.cut.Add(1)
			return // the reply is lost with the connection
		}
		if _, err := io.WriteString(c, line); err != nil {
			return
		}
	}
}

// sendRetrying sends as an MTA does: a connection lost before the reply is
// a temporary failure, and the message is sent again.
func sendRetrying(t *testing.T, addr, msg string) (attempts int) {
	t.Helper()
	for attempts = 1; attempts <= 3; attempts++ {
		c, err := smtp.Dial(addr)
		if err != nil {
			t.Fatal(err)
		}
		err = c.SendMail("billing@supplier.test", []string{"invoices@in.kobana.test"}, strings.NewReader(msg))
		c.Close()
		if err == nil {
			return attempts
		}
	}
	t.Fatalf("the message was not accepted in %d attempts", attempts-1)
	return 0
}

// The server's 250 is lost on the way back, the sender delivers again: the
// inbox has one e-mail to process and the second copy recorded as its
// duplicate, which runs nothing (before: two e-mails, two agent runs).
func TestLostReplyIsProcessedOnce(t *testing.T) {
	e := startStore(t)
	p := startLossyProxy(t, e.addr)
	p.armed.Store(true)
	msg := message("invoice-4107", 3000)
	if n := sendRetrying(t, p.addr, msg); n != 2 || p.cut.Load() != 1 {
		t.Fatalf("%d attempts, %d replies lost; want the first reply lost and a second attempt", n, p.cut.Load())
	}
	emails := e.emails()
	if len(emails) != 2 {
		t.Fatalf("%d e-mails recorded, want the message and its duplicate", len(emails))
	}
	var first, dup inbox.Email
	for _, m := range emails {
		if m.Status == inbox.EmailDuplicate {
			dup = m
		} else {
			first = m
		}
	}
	if first.Status != inbox.EmailPending || dup.DuplicateOf != first.ID || !strings.Contains(dup.StatusDetail, "Message-ID <invoice-4107@supplier.test> and the same content") {
		t.Fatalf("first %s (%s), duplicate of %q (%s); want one pending and one duplicate of it", first.Status, first.ID, dup.DuplicateOf, dup.StatusDetail)
	}
	if jobs := e.jobs(); len(jobs) != 1 || !strings.Contains(jobs[0], first.ID) {
		t.Fatalf("agent jobs %v, want one, for %s", jobs, first.ID)
	}
	if e.events(inbox.EventEmailReceived) != 1 || e.events(inbox.EventEmailDuplicate) != 1 {
		t.Fatalf("%d email.received and %d email.duplicate events, want one of each", e.events(inbox.EventEmailReceived), e.events(inbox.EventEmailDuplicate))
	}
}

// Copies of one message arriving at the same time over several sessions
// are one e-mail: the claim on the message is made in the records'
// transaction, and every other copy finds it.
func TestConcurrentCopiesAreOneEmail(t *testing.T) {
	concurrentCopies(t, startStore(t), "invoice-88")
}

// concurrentCopies sends eight copies of one message at once to e, and
// checks that one is an e-mail to process and the others its duplicates.
func concurrentCopies(t *testing.T, e *storeEnv, subject string) {
	msg := message(subject, 2000)
	jobsBefore := e.jobCount()
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := smtp.Dial(e.addr)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			<-start
			errs <- c.SendMail("billing@supplier.test", []string{"invoices@in.kobana.test"}, strings.NewReader(msg))
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	pending, dups := 0, 0
	for _, m := range e.emails() {
		if m.Subject != subject {
			continue
		}
		switch m.Status {
		case inbox.EmailPending:
			pending++
		case inbox.EmailDuplicate:
			dups++
		}
	}
	if jobs := e.jobCount() - jobsBefore; pending != 1 || dups != 7 || jobs != 1 {
		t.Fatalf("%d pending, %d duplicates, %d jobs; want 1, 7, 1", pending, dups, jobs)
	}
}

// Without a Message-ID the message's bytes are its key; past the window a
// copy is a new e-mail again; the key is per inbox.
func TestDuplicatesByDigestWindowAndInbox(t *testing.T) {
	e := startStore(t)
	noID := "From: billing@supplier.test\r\nTo: invoices@in.kobana.test\r\nSubject: no id\r\n\r\nhello\r\n"
	for range 2 {
		if err := e.send("billing@supplier.test", []string{"invoices@in.kobana.test"}, noID); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.send("billing@supplier.test", []string{"invoices@in.kobana.test"}, strings.Replace(noID, "hello", "hello!", 1)); err != nil {
		t.Fatal(err)
	}
	// The same message to another inbox of the workspace is not a copy.
	if err := e.send("billing@supplier.test", []string{"other@in.kobana.test"}, noID); err != nil {
		t.Fatal(err)
	}
	byStatus := map[string]int{}
	for _, m := range e.emails() {
		byStatus[m.Status]++
		if m.Status == inbox.EmailDuplicate && !strings.Contains(m.StatusDetail, "the same bytes (no Message-ID)") {
			t.Errorf("duplicate detail %q", m.StatusDetail)
		}
	}
	if byStatus[inbox.EmailPending] != 2 || byStatus[inbox.EmailDuplicate] != 1 || byStatus[inbox.EmailRejected] != 1 {
		t.Fatalf("statuses %v: want the two distinct messages pending, one duplicate, and the paused inbox's copy rejected", byStatus)
	}

	short := startStore(t)
	short.rec.DedupWindow = time.Nanosecond
	for range 2 {
		if err := short.send("billing@supplier.test", []string{"invoices@in.kobana.test"}, noID); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(short.jobs()); n != 2 {
		t.Fatalf("past the window: %d agent jobs, want the second copy processed too", n)
	}
}

// A duplicate is visible in listings and can be run on purpose
// (emails_reprocess): it is an e-mail like another, with its raw message.
func TestDuplicateKeepsItsMessage(t *testing.T) {
	e := startStore(t)
	msg := message("kept-twice", 100)
	for range 2 {
		if err := e.send("billing@supplier.test", []string{"invoices@in.kobana.test"}, msg); err != nil {
			t.Fatal(err)
		}
	}
	list, err := inbox.NewRepo(e.st).Emails.All(context.Background(), wsID, store.Query{Status: inbox.EmailDuplicate})
	if err != nil || len(list) != 1 {
		t.Fatalf("listing duplicates: %d (%v), want 1", len(list), err)
	}
	m, err := e.dir.Open(context.Background(), wsID, list[0].ID)
	if err != nil {
		t.Fatalf("the duplicate's raw message: %v", err)
	}
	m.Close()
	if _, err := intake.LoadIndex(context.Background(), e.st, wsID, list[0].ID); err != nil {
		t.Fatalf("the duplicate's part index: %v", err)
	}
	if e.files() != 2 {
		t.Fatalf("%d raw messages, want both copies", e.files())
	}
}
