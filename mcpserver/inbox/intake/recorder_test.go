package intake_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-msgauth/dkim"
	"github.com/emersion/go-smtp"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/inbox/senderauth"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
	"github.com/kobana/workflow/resolve/eml"
)

// txtResolver answers TXT queries from a table (the senderauth package's
// own tests use a real DNS server; here a table is enough), and fails
// names under "timeout." as a server that does not answer.
type txtResolver struct {
	noDNS
	mu  sync.Mutex
	txt map[string][]string
}

func (r *txtResolver) LookupTXT(_ context.Context, name string) ([]string, error) {
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	if strings.Contains(name, "timeout.") {
		return nil, &net.DNSError{Err: "i/o timeout", Name: name, IsTimeout: true, IsTemporary: true}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.txt[name]; ok {
		return v, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
}

// storeEnv is the intake over the real parts: a SQLite store, River on its
// write handle, messages as files.
type storeEnv struct {
	t     testing.TB
	st    *sqlite.Store
	dir   *mailstore.Dir
	q     *queue.Queue
	rec   *intake.StoreRecorder
	srv   *intake.Server
	addr  string
	dns   *txtResolver
	store store.Transactor // what the recorder commits through (tests may wrap it)
	// pgEmails and pgJobs replace emails and jobs for an env on
	// PostgreSQL (addr and these only).
	pgEmails func() []inbox.Email
	pgJobs   func() int
}

const wsID = "ws_acme"

func startStore(t testing.TB) *storeEnv { t.Helper(); return startStoreChecking(t, nil) }

// startStoreChecking is startStore with the sender checks configured by
// configure (nil: none beyond the test DNS).
func startStoreChecking(t testing.TB, configure func(*senderauth.Checker)) *storeEnv {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(root, "kobana.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	dir, err := mailstore.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	q, err := queue.OpenSQLite(ctx, st.SQLDB(), queue.Config{Workers: map[string]int{}})
	if err != nil {
		t.Fatal(err)
	}
	repo := inbox.NewRepo(st)
	must := func(err error) {
		if err != nil {
			t.Helper()
			t.Fatal(err)
		}
	}
	must(st.PutOrganization(ctx, store.Organization{ID: "org_acme", Name: "Acme"}))
	must(st.PutWorkspace(ctx, store.Workspace{ID: wsID, Organization: "org_acme", Name: "Acme", Slug: "acme"}))
	now := time.Now().UTC()
	must(repo.Workspaces.Put(ctx, wsID, inbox.Workspace{ID: wsID, OrganizationID: "org_acme", Name: "Acme", Plan: "pro", Environment: "production",
		Limits: inbox.Limits{EmailsPerMonth: 1000, MaxAttachmentBytes: 10 << 20, RetentionDays: 30}, CreatedAt: now}))
	for _, ib := range []inbox.Inbox{
		{ID: "ibx_invoices", Name: "Invoices", Address: "invoices@in.kobana.test", Recipients: []string{}, Status: inbox.StatusActive, CreatedAt: now},
		{ID: "ibx_receipts", Name: "Receipts", Address: "receipts@in.kobana.test", Recipients: []string{"@supplier.test"}, Status: inbox.StatusActive, CreatedAt: now,
			Filters: inbox.Filters{SubjectContains: []string{"receipt", "invoice"}}},
		{ID: "ibx_other", Name: "Paused", Address: "other@in.kobana.test", Recipients: []string{}, Status: inbox.StatusPaused, CreatedAt: now},
		{ID: "ibx_orders", Name: "Orders", Address: "orders@in.kobana.test", Recipients: []string{}, Status: inbox.StatusActive, CreatedAt: now,
			Filters: inbox.Filters{RejectAutoReplies: true}},
	} {
		must(repo.Inboxes.Put(ctx, wsID, ib))
	}
	e := &storeEnv{t: t, st: st, dir: dir, q: q, dns: &txtResolver{txt: map[string][]string{}}, store: st}
	e.rec = &intake.StoreRecorder{Store: transactorFunc(func(ctx context.Context, fn func(store.Tx) error) error { return e.store.WithTx(ctx, fn) }),
		Raw: dir, Queue: q}
	dirx := directory{}
	for k, v := range testInboxes {
		v.Workspace = wsID
		dirx[k] = v
	}
	checker := &senderauth.Checker{Resolver: e.dns}
	if configure != nil {
		configure(checker)
	}
	e.srv = intake.NewServer(intake.Config{Domain: "mx.kobana.test"}, dirx, e.rec, dir, checker)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go e.srv.Serve(ln)
	t.Cleanup(func() { e.srv.Close() })
	e.addr = ln.Addr().String()
	return e
}

type transactorFunc func(ctx context.Context, fn func(store.Tx) error) error

func (f transactorFunc) WithTx(ctx context.Context, fn func(store.Tx) error) error { return f(ctx, fn) }

// send delivers a message over SMTP and returns the server's reply error.
func (e *storeEnv) send(from string, to []string, msg string) error {
	c, err := smtp.Dial(e.addr)
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.Close()
	return c.SendMail(from, to, strings.NewReader(msg))
}

func (e *storeEnv) emails() []inbox.Email {
	e.t.Helper()
	if e.pgEmails != nil {
		return e.pgEmails()
	}
	var out []inbox.Email
	for _, ib := range []string{"ibx_invoices", "ibx_receipts", "ibx_other", "ibx_orders"} {
		list, err := inbox.NewRepo(e.st).Emails.All(context.Background(), wsID, store.Query{Parent: ib})
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, list...)
	}
	return out
}

func (e *storeEnv) events(typ string) int {
	e.t.Helper()
	list, err := inbox.NewRepo(e.st).Events.All(context.Background(), wsID, store.Query{Status: typ})
	if err != nil {
		e.t.Fatal(err)
	}
	return len(list)
}

func (e *storeEnv) jobs() []string {
	e.t.Helper()
	rows, err := e.st.SQLDB().Query(`SELECT args FROM river_job WHERE kind = 'inbox.agent' ORDER BY id`)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		out = append(out, s)
	}
	return out
}

// jobCount is the number of agent jobs queued.
func (e *storeEnv) jobCount() int {
	if e.pgJobs != nil {
		return e.pgJobs()
	}
	return len(e.jobs())
}

func (e *storeEnv) files() int {
	n := 0
	e.dir.Walk(context.Background(), func(mailstore.Stored) error { n++; return nil })
	return n
}

func TestRecorderAcceptsAndCommitsRecordEventAndJob(t *testing.T) {
	e := startStore(t)
	msg := message("inv-7", 4000)
	if err := e.send("billing@supplier.test", []string{"invoices@in.kobana.test"}, msg); err != nil {
		t.Fatal(err)
	}
	emails := e.emails()
	if len(emails) != 1 {
		t.Fatalf("%d e-mails recorded, want 1", len(emails))
	}
	em := emails[0]
	if em.Status != inbox.EmailPending || em.InboxID != "ibx_invoices" || em.Subject != "inv-7" || em.Text != "Invoice attached." {
		t.Errorf("e-mail = %+v", em)
	}
	if len(em.Attachments) != 1 || em.Attachments[0].Filename != "invoice.pdf" || em.Attachments[0].ContentType != "application/pdf" {
		t.Errorf("attachments = %+v", em.Attachments)
	}
	if em.Auth == nil || em.Auth.EnvelopeFrom != "billing@supplier.test" || em.Auth.Client != "127.0.0.1" || em.Auth.DMARC.Result != senderauth.None || em.Auth.AuthenticatedFrom != "" {
		t.Errorf("auth = %+v", em.Auth)
	}
	if n := e.events(inbox.EventEmailReceived); n != 1 {
		t.Errorf("%d email.received events, want 1", n)
	}
	if jobs := e.jobs(); len(jobs) != 1 || !strings.Contains(jobs[0], em.ID) {
		t.Errorf("agent jobs = %v, want one for %s", jobs, em.ID)
	}
	m, err := e.dir.Open(context.Background(), wsID, em.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	// What is stored is the trace fields this server prepends, then the
	// message byte for byte as received.
	stored, err := io.ReadAll(inbox.MessageReader(m))
	if err != nil {
		t.Fatal(err)
	}
	trace, ok := strings.CutSuffix(string(stored), msg)
	if !ok {
		t.Fatalf("the stored message does not end with the message as received (%d bytes stored, %d sent)", len(stored), len(msg))
	}
	for _, want := range []string{"Return-Path: <billing@supplier.test>\r\nReceived: from ", " ([127.0.0.1])\r\n\tby mx.kobana.test (kobana) with ESMTP id " + em.ID + "\r\n\tfor <invoices@in.kobana.test>; ",
		"\r\nAuthentication-Results: mx.kobana.test;\r\n\tspf=none smtp.mailfrom=supplier.test;\r\n\tdkim=none;\r\n\tdmarc=none header.from=supplier.test\r\n"} {
		if !strings.Contains(trace, want) {
			t.Errorf("trace fields %q lack %q", trace, want)
		}
	}
	if em.SizeBytes != len(stored) || em.Headers["Return-Path"] != "<billing@supplier.test>" {
		t.Errorf("record: size %d (stored %d), Return-Path %q", em.SizeBytes, len(stored), em.Headers["Return-Path"])
	}
	// The part index made at intake opens the stored message without reading
	// it again, and its digest is the attachment's.
	ix, err := intake.LoadIndex(context.Background(), e.st, wsID, em.ID)
	if err != nil {
		t.Fatal(err)
	}
	indexed, err := eml.NewIndexed(m, m.Size(), ix)
	if err != nil {
		t.Fatal(err)
	}
	a, err := indexed.Attachment(0)
	if err != nil || a.Filename != "invoice.pdf" || a.Size != em.Attachments[0].Size {
		t.Fatalf("indexed attachment %+v, %v; want invoice.pdf of %d bytes", a, err, em.Attachments[0].Size)
	}
	rc, err := indexed.Open(0)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	io.Copy(h, rc)
	rc.Close()
	var part *eml.Part
	for i := range ix.Parts {
		if ix.Parts[i].Attachment != nil {
			part = &ix.Parts[i]
		}
	}
	if part == nil || part.SHA256 != hex.EncodeToString(h.Sum(nil)) {
		t.Fatalf("index part %+v: digest differs from the attachment's bytes", part)
	}
	// The attachment read through the index is the one sent, byte for byte.
	lines := (4000 + 56) / 57
	if sent := sha256.Sum256([]byte(strings.Repeat("ABC", 19*lines))); part.SHA256 != hex.EncodeToString(sent[:]) {
		t.Fatalf("the attachment read through the index is not the one sent")
	}
}

func TestRecorderOneMessageForTwoInboxes(t *testing.T) {
	e := startStore(t)
	e.dns.txt["supplier.test"] = []string{"v=spf1 ip4:127.0.0.1 -all"}
	err := e.send("billing@supplier.test", []string{"invoices@in.kobana.test", "receipts@in.kobana.test"}, message("invoice 8", 100))
	if err != nil {
		t.Fatal(err)
	}
	emails := e.emails()
	if len(emails) != 2 || emails[0].ID == emails[1].ID {
		t.Fatalf("e-mails = %+v, want two records", emails)
	}
	for _, em := range emails {
		if em.Status != inbox.EmailPending || em.Auth.AuthenticatedFrom != "billing@supplier.test" {
			t.Errorf("%s: status %s auth %+v: the SPF-aligned sender is allowed", em.InboxID, em.Status, em.Auth)
		}
	}
	if len(e.jobs()) != 2 || e.files() != 2 {
		t.Fatalf("jobs %d, files %d; want 2 and 2", len(e.jobs()), e.files())
	}
}

func TestRecorderForgedFromIsRejectedAndRecorded(t *testing.T) {
	e := startStore(t)
	// The receipts inbox allows @supplier.test; nothing vouches for this From.
	err := e.send("attacker@evil.test", []string{"receipts@in.kobana.test"}, strings.Replace(message("invoice 9", 100), "billing@supplier.test", "ceo@supplier.test", 1))
	var se *smtp.SMTPError
	if !errors.As(err, &se) || se.Code != 550 || se.EnhancedCode != (smtp.EnhancedCode{5, 7, 1}) {
		t.Fatalf("forged From: %v, want 550 5.7.1", err)
	}
	emails := e.emails()
	if len(emails) != 1 || emails[0].Status != inbox.EmailRejected || !strings.HasPrefix(emails[0].StatusDetail, inbox.RejectSender) {
		t.Fatalf("e-mails = %+v, want one rejected for the sender", emails)
	}
	if e.events(inbox.EventEmailRejected) != 1 || len(e.jobs()) != 0 {
		t.Fatalf("rejected events %d, jobs %d; want 1 and none", e.events(inbox.EventEmailRejected), len(e.jobs()))
	}
	if e.files() != 1 {
		t.Fatal("the rejected message's raw bytes were not kept with its record")
	}
}

func TestRecorderDKIMAuthenticatedSenderPasses(t *testing.T) {
	e := startStore(t)
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	e.dns.txt["k1._domainkey.supplier.test"] = []string{"v=DKIM1; k=ed25519; p=" + base64.StdEncoding.EncodeToString(pub)}
	e.dns.txt["_dmarc.supplier.test"] = []string{"v=DMARC1; p=reject"}
	var signed strings.Builder
	if err := dkim.Sign(&signed, strings.NewReader(message("receipt 10", 100)), &dkim.SignOptions{Domain: "supplier.test", Selector: "k1", Signer: priv}); err != nil {
		t.Fatal(err)
	}
	// Relayed through another provider: SPF is about the relay, DKIM vouches.
	if err := e.send("bounces@relay.test", []string{"receipts@in.kobana.test"}, signed.String()); err != nil {
		t.Fatal(err)
	}
	em := e.emails()[0]
	if em.Status != inbox.EmailPending || em.Auth.AuthenticatedFrom != "billing@supplier.test" || em.Auth.DMARC.Result != senderauth.Pass || em.Auth.DKIM[0].Selector != "k1" {
		t.Fatalf("e-mail status %s auth %+v, want accepted, DKIM-authenticated", em.Status, em.Auth)
	}
}

func TestRecorderFiltersAndPausedInbox(t *testing.T) {
	e := startStore(t)
	e.dns.txt["supplier.test"] = []string{"v=spf1 ip4:127.0.0.1 -all"}
	// Subject without "receipt" or "invoice": recorded, rejected, 250.
	if err := e.send("billing@supplier.test", []string{"receipts@in.kobana.test"}, message("hello", 100)); err != nil {
		t.Fatalf("a filtered e-mail: %v, want 250 (recorded, not bounced)", err)
	}
	if err := e.send("billing@supplier.test", []string{"other@in.kobana.test"}, message("invoice", 100)); err != nil {
		t.Fatalf("a paused inbox: %v, want 250", err)
	}
	got := map[string]string{}
	for _, em := range e.emails() {
		got[em.InboxID] = em.Status + " " + em.StatusDetail
	}
	if !strings.HasPrefix(got["ibx_receipts"], "rejected "+inbox.RejectSubject) || !strings.HasPrefix(got["ibx_other"], "rejected "+intake.RejectInboxPaused) {
		t.Fatalf("statuses = %v", got)
	}
	if len(e.jobs()) != 0 || e.events(inbox.EventEmailRejected) != 2 {
		t.Fatalf("jobs %d, rejected events %d", len(e.jobs()), e.events(inbox.EventEmailRejected))
	}
}

func TestRecorderDNSFailureAsksToRetry(t *testing.T) {
	e := startStore(t)
	err := e.send("billing@timeout.test", []string{"receipts@in.kobana.test"}, strings.Replace(message("receipt", 100), "supplier.test", "timeout.test", -1))
	var se *smtp.SMTPError
	if !errors.As(err, &se) || se.Code != 451 || se.EnhancedCode != (smtp.EnhancedCode{4, 7, 0}) {
		t.Fatalf("DNS failure on a restricted inbox: %v, want 451 4.7.0", err)
	}
	if len(e.emails()) != 0 || e.files() != 0 || len(e.jobs()) != 0 {
		t.Fatal("something was kept")
	}
	// An open inbox takes the same message, results recorded.
	if err := e.send("billing@timeout.test", []string{"invoices@in.kobana.test"}, strings.Replace(message("x", 100), "supplier.test", "timeout.test", -1)); err != nil {
		t.Fatal(err)
	}
	if em := e.emails(); len(em) != 1 || em[0].Auth.DMARC.Result != senderauth.TempError {
		t.Fatalf("open inbox: %+v", em)
	}
}

func TestRecorderCommitFailureLeavesNothing(t *testing.T) {
	e := startStore(t)
	// The transaction does all its work, then the commit fails.
	e.store = transactorFunc(func(ctx context.Context, fn func(store.Tx) error) error {
		err := e.st.WithTx(ctx, func(tx store.Tx) error {
			if err := fn(tx); err != nil {
				return err
			}
			return errors.New("commit failed: disk I/O error")
		})
		return err
	})
	err := e.send("billing@supplier.test", []string{"invoices@in.kobana.test", "other@in.kobana.test"}, message("inv", 100))
	var se *smtp.SMTPError
	if !errors.As(err, &se) || se.Code != 451 || se.EnhancedCode != (smtp.EnhancedCode{4, 3, 0}) {
		t.Fatalf("failing commit: %v, want 451 4.3.0", err)
	}
	if len(e.emails()) != 0 || e.files() != 0 || len(e.jobs()) != 0 || e.events(inbox.EventEmailReceived) != 0 {
		t.Fatalf("after a failed commit: %d e-mails, %d files, %d jobs: want nothing", len(e.emails()), e.files(), len(e.jobs()))
	}
	// The store works again: the sender's retry is stored once.
	e.store = e.st
	if err := e.send("billing@supplier.test", []string{"invoices@in.kobana.test"}, message("inv", 100)); err != nil {
		t.Fatal(err)
	}
	if len(e.emails()) != 1 || e.files() != 1 || len(e.jobs()) != 1 {
		t.Fatalf("after the retry: %d e-mails, %d files, %d jobs", len(e.emails()), e.files(), len(e.jobs()))
	}
}

func TestFilesSweepRemovesOrphansOnly(t *testing.T) {
	ctx := context.Background()
	e := startStore(t)
	if err := e.send("billing@supplier.test", []string{"invoices@in.kobana.test"}, message("kept", 100)); err != nil {
		t.Fatal(err)
	}
	// A crash between keeping the file and committing: a file no record names.
	sp, _ := e.dir.NewSpool(0)
	sp.Write([]byte("orphan"))
	if err := e.dir.Keep(ctx, &mailstore.Incoming{Body: sp}, wsID, "eml_orphan"); err != nil {
		t.Fatal(err)
	}
	sp.Remove()
	// A large receipt cut off mid-DATA: a spool file.
	cut, _ := e.dir.NewSpool(0)
	cut.Write(make([]byte, mailstore.SpoolMemoryBytes+1))
	if n, err := intake.Sweep(ctx, e.dir, e.st, time.Time{}, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("sweeping what is younger than the margin: %d, %v; want nothing removed", n, err)
	}
	if n, err := intake.Sweep(ctx, e.dir, e.st, time.Now().Add(time.Minute), time.Now().Add(2*time.Minute)); err != nil || n != 1 {
		t.Fatalf("sweeping only files touched in the future: %d, %v; want the spool only (spools are not bounded below)", n, err)
	}
	n, err := intake.Sweep(ctx, e.dir, e.st, time.Now().Add(-time.Hour), time.Now().Add(time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want the orphan removed", n, err)
	}
	if e.files() != 1 {
		t.Fatalf("%d stored messages after the sweep, want the recorded one", e.files())
	}
	if _, err := e.dir.Open(ctx, wsID, e.emails()[0].ID); err != nil {
		t.Fatalf("the recorded message was swept: %v", err)
	}
}

func TestRecorderMonthlyQuota(t *testing.T) {
	ctx := context.Background()
	e := startStore(t)
	repo := inbox.NewRepo(e.st)
	ws, _ := repo.Workspaces.Get(ctx, wsID, wsID)
	ws.Limits.EmailsPerMonth = 2
	repo.Workspaces.Put(ctx, wsID, ws)
	// A rejected e-mail does not count; two accepted do; the third is over.
	e.send("billing@supplier.test", []string{"other@in.kobana.test"}, message("paused inbox", 100))
	for i := range 3 {
		if err := e.send("billing@supplier.test", []string{"invoices@in.kobana.test"}, message(fmt.Sprint("n", i), 100)); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]int{}
	for _, em := range e.emails() {
		reason, _, _ := strings.Cut(em.StatusDetail, ":")
		got[em.Status+" "+reason]++
	}
	if got["pending "] != 2 || got["rejected "+intake.RejectQuota] != 1 || got["rejected "+intake.RejectInboxPaused] != 1 {
		t.Fatalf("statuses %v, want 2 accepted, 1 over quota, 1 paused", got)
	}
	if len(e.jobs()) != 2 {
		t.Fatalf("%d jobs, want 2", len(e.jobs()))
	}
}

func TestRecorderNonUTF8Message(t *testing.T) {
	e := startStore(t)
	latin1 := "From: Jos\xe9 <billing@supplier.test>\r\nTo: invoices@in.kobana.test\r\nSubject: =?iso-8859-1?q?Fatura_de_mar=E7o?=\r\nContent-Type: text/plain; charset=iso-8859-1\r\nContent-Transfer-Encoding: 8bit\r\n\r\nA\xe7\xe3o pendente.\r\n"
	if err := e.send("billing@supplier.test", []string{"invoices@in.kobana.test"}, latin1); err != nil {
		t.Fatal(err)
	}
	em := e.emails()
	if len(em) != 1 {
		t.Fatalf("%d e-mails", len(em))
	}
	if em[0].Status != inbox.EmailPending || em[0].From != "billing@supplier.test" || em[0].Subject != "Fatura de março" || em[0].Text != "Ação pendente." {
		t.Fatalf("a Latin-1 message: status %s (%s), from %q, subject %q, text %q; want it accepted and decoded",
			em[0].Status, em[0].StatusDetail, em[0].From, em[0].Subject, em[0].Text)
	}
}

func TestRecorderConcurrentSessions(t *testing.T) {
	e := startStore(t)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for c := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl, err := smtp.Dial(e.addr)
			if err != nil {
				errs <- err
				return
			}
			defer cl.Close()
			for i := range 4 {
				errs <- cl.SendMail("billing@supplier.test", []string{"invoices@in.kobana.test"}, strings.NewReader(message(fmt.Sprintf("c%d-%d", c, i), 2000)))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(e.emails()) != 20 || len(e.jobs()) != 20 || e.files() != 20 {
		t.Fatalf("%d e-mails, %d jobs, %d files; want 20 of each", len(e.emails()), len(e.jobs()), e.files())
	}
}
