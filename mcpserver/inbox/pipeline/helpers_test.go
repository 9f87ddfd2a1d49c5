package pipeline_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/workflow/examples"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/inbox/pipeline"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/internal/pgtest"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/pg"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
	"github.com/kobana/workflow/resolve/eml"
)

// The test workspace and its records.
const (
	testWS      = "ws_test"
	testInbox   = "ibx_test"
	testAgent   = "agt_test"
	testToken   = "erp-token-Qx81zP"
	testHookSec = "whsec_test_0123456789abcdef"
)

// env is a store, a raw-message directory, a queue and a pipeline on them,
// with a receiver for workflow steps and webhooks on loopback.
type env struct {
	t     *testing.T
	ctx   context.Context
	root  string
	st    store.Store
	dir   *mailstore.Dir          // SQLite only
	lo    *mailstore.LargeObjects // PostgreSQL only
	raw   mailstore.Store         // dir or lo
	q     *queue.Queue
	p     *pipeline.Pipeline
	recv  *receiver
	agent *scripted
	// indexed counts the part indexes the pipeline loaded.
	indexed atomic.Int64
}

// options tune newEnv.
type options struct {
	cfg   func(*pipeline.Config)
	start bool
	// pg runs on PostgreSQL (KOBANA_TEST_POSTGRES), raw messages as large
	// objects; the default is the embedded SQLite store with files.
	pg bool
	// poolConns sizes the PostgreSQL pool (pool_max_conns; zero: pgx's
	// default).
	poolConns int
	// root is the directory of the SQLite database and the raw messages
	// (empty: a temporary directory of the test).
	root string
	// dsn is the PostgreSQL connection string (empty: a schema of
	// KOBANA_TEST_POSTGRES's own).
	dsn string
}

func newEnv(t *testing.T, agent *scripted, opt options) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	root := opt.root
	if root == "" {
		root = t.TempDir()
	}
	e := &env{t: t, ctx: ctx, root: root, agent: agent}
	if opt.pg {
		dsn := opt.dsn
		if dsn == "" {
			dsn, _ = pgtest.SchemaDSN(t, "pipeline", "pipeline-test")
		}
		if opt.poolConns > 0 {
			dsn += fmt.Sprintf(" pool_max_conns=%d", opt.poolConns)
		}
		st, err := pg.Open(ctx, dsn, pg.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() }) // after the queue has stopped
		e.st, e.lo = st, mailstore.NewLargeObjects(st.PgxPool(), root)
		if err := e.lo.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if e.q, err = queue.OpenPostgres(ctx, st.PgxPool(), queue.Config{PollInterval: 100 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		e.raw = e.lo
	} else {
		st, err := sqlite.Open(ctx, filepath.Join(root, "kobana.db"), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() }) // after the queue has stopped
		e.st = st
		if e.dir, err = mailstore.OpenDir(root); err != nil {
			t.Fatal(err)
		}
		if e.q, err = queue.OpenSQLite(ctx, st.SQLDB(), queue.Config{PollInterval: 100 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		e.raw = e.dir
	}
	recv := newReceiver(t)
	e.recv = recv
	g := &guard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	cfg := pipeline.Config{
		Store: e.st, Queue: e.q, Raw: e.raw, Agents: agent,
		Index: func(ctx context.Context, ws, id string) (*eml.Index, error) {
			e.indexed.Add(1)
			return intake.LoadIndex(ctx, e.st, ws, id)
		},
		Executor:        executor.Options{Guard: g, StepTimeout: 10 * time.Second, RunTimeout: 30 * time.Second},
		WebhookSchedule: []time.Duration{100 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond},
		WebhookJitter:   -1,
		AppURL:          "https://kobana.test",
	}
	if opt.cfg != nil {
		opt.cfg(&cfg)
	}
	p, err := pipeline.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.p = p
	e.seed()
	if opt.start {
		e.start()
	}
	return e
}

// start starts the queue's workers (stopped at the end of the test).
func (e *env) start() {
	e.t.Helper()
	if err := e.q.Start(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		e.q.Stop(ctx)
	})
}

func (e *env) repo() inbox.Repo { return inbox.NewRepo(e.st) }

// put writes records of any of the domain's types.
// leaveRunning puts the state a server leaves when it stops during the
// workflow of e-mail m: agent run arun_ID (done), workflow run wrun_ID still
// running with the given steps (JSON, as a server wrote them — this or an
// earlier version) and the step in flight, and the workflow job to run
// again. The intake's agent job is done already (its run is recorded): the
// agent fails from here on, so it cannot produce another run.
func (e *env) leaveRunning(m inbox.Email, id string, inFlight *int, steps string) {
	e.t.Helper()
	run := inbox.AgentRun{ID: "arun_" + id, AgentID: testAgent, EmailID: m.ID, InboxID: testInbox, Status: inbox.RunSucceeded,
		Output: json.RawMessage(invoiceWorkflow), WorkflowRunID: "wrun_" + id, StartedAt: time.Now().UTC()}
	// The running record, written as bytes: what the store holds is what
	// a server wrote, not what this version's types would write.
	wr, err := json.Marshal(map[string]any{"id": "wrun_" + id, "agent_run_id": run.ID, "email_id": m.ID, "inbox_id": testInbox,
		"status": "running", "steps": json.RawMessage(steps), "in_flight": inFlight, "started_at": time.Now().UTC()})
	if err == nil {
		err = e.st.PutRecord(e.ctx, store.Record{Workspace: testWS, Kind: inbox.KindWorkflowRun, ID: "wrun_" + id, Parent: run.ID,
			Status: "running", Created: time.Now().UTC(), Data: wr})
	}
	if err != nil {
		e.t.Fatal(err)
	}
	m.AgentRunID, m.WorkflowRunID = run.ID, "wrun_"+id
	e.withWorkflowJob(run, m)
	e.agent.errs = 1 << 20
}

// withWorkflowJob stores an agent run and its e-mail and queues the run's
// workflow, as the agent stage does.
func (e *env) withWorkflowJob(run inbox.AgentRun, m inbox.Email) {
	e.t.Helper()
	e.put(run, m)
	if err := e.st.WithTx(e.ctx, func(tx store.Tx) error {
		_, err := e.q.InsertTx(e.ctx, tx, queue.WorkflowArgs{Workspace: testWS, AgentRunID: run.ID}, nil)
		return err
	}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) put(docs ...inbox.Document) {
	e.t.Helper()
	for _, d := range docs {
		k := d.Key()
		b, err := json.Marshal(d)
		if err == nil {
			err = e.st.PutRecord(e.ctx, store.Record{Workspace: testWS, Kind: k.Kind, ID: k.ID, Parent: k.Parent, Status: k.Status, Created: k.Created, Data: b})
		}
		if err != nil {
			e.t.Fatal(err)
		}
	}
}

// seed writes the workspace, its inbox, agent, secrets and webhook.
func (e *env) seed() {
	e.t.Helper()
	seedRecords(e.t, e.ctx, e.st, e.recv)
}

// seedRecords writes the test workspace (identity and Inbox record), its
// inbox, agent, secrets and a webhook subscribed to every event, with the
// ERP and the webhook played by recv.
func seedRecords(t testing.TB, ctx context.Context, st store.Store, recv *receiver) {
	t.Helper()
	now := time.Now().UTC()
	repo := inbox.NewRepo(st)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.PutOrganization(ctx, store.Organization{ID: "org_test", Name: "Test"}))
	must(st.PutWorkspace(ctx, store.Workspace{ID: testWS, Organization: "org_test", Name: "Test", Slug: "test"}))
	must(repo.Workspaces.Put(ctx, testWS, inbox.Workspace{ID: testWS, Name: "Test", Slug: "test", ExternalID: "ext-42", Plan: "business",
		Environment: "sandbox", Limits: inbox.Limits{RetentionDays: 30}, CreatedAt: now}))
	must(repo.Agents.Put(ctx, testWS, inbox.Agent{ID: testAgent, Name: "Invoices", Model: "gpt-4.1-mini", Status: inbox.StatusActive, CreatedAt: now}))
	must(repo.Inboxes.Put(ctx, testWS, inbox.Inbox{ID: testInbox, Name: "Invoices", Address: testAddress, AgentID: testAgent,
		Recipients: []string{}, Status: inbox.StatusActive, CreatedAt: now}))
	must(repo.Webhooks.Put(ctx, testWS, inbox.Webhook{ID: "whk_test", URL: recv.URL("/hooks"), Events: inbox.WebhookEvents(),
		Status: inbox.WebhookActive, CreatedAt: now}))
	for k, v := range map[string]string{"ERP_TOKEN": testToken, "ERP_URL": recv.URL(""), inbox.WebhookSecretName("whk_test"): testHookSec} {
		must(st.SetSecret(ctx, testWS, k, v))
	}
}

// mailDomain is the domain the test inboxes receive under.
const mailDomain = "in.kobana.test"

// testAddress is the test inbox's address.
const testAddress = "invoices@test." + mailDomain

// receive does what the intake does with an accepted message: keeps the raw
// message, then in one transaction writes the e-mail record, email.received
// (with its deliveries) and the agent job.
func (e *env) receive(raw string) inbox.Email {
	e.t.Helper()
	return e.receiveIn(testWS, testInbox, raw)
}

// receiveIn is receive for an inbox of another workspace.
func (e *env) receiveIn(ws, ibx, raw string) inbox.Email {
	e.t.Helper()
	m, err := inbox.ParseEmail([]byte(raw))
	if err != nil {
		e.t.Fatal(err)
	}
	m.ID, m.InboxID, m.Status, m.ReceivedAt = inbox.NewID("eml"), ibx, inbox.EmailPending, time.Now().UTC()
	sp, err := mailstore.NewSpool(e.root, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	defer sp.Remove()
	if _, err := io.WriteString(sp, raw); err != nil {
		e.t.Fatal(err)
	}
	in := &mailstore.Incoming{Body: sp}
	if _, err := e.raw.Prepare(e.ctx, in, ws, m.ID); err != nil {
		e.t.Fatal(err)
	}
	err = e.st.WithTx(e.ctx, func(tx store.Tx) error {
		if err := e.raw.KeepTx(e.ctx, tx, in, ws, m.ID); err != nil {
			return err
		}
		if err := e.repo().In(tx).Emails.Create(e.ctx, ws, m); err != nil {
			return err
		}
		// The part index, as the intake stores it with the e-mail.
		ix, err := eml.ReadIndex(strings.NewReader(raw), int64(len(raw)))
		if err != nil {
			return err
		}
		b, err := json.Marshal(ix)
		if err != nil {
			return err
		}
		if err := tx.PutRecord(e.ctx, store.Record{Workspace: ws, Kind: intake.KindEmailIndex, ID: m.ID, Data: b}); err != nil {
			return err
		}
		ev, err := inbox.NewEvent(inbox.EventEmailReceived, inbox.ActorSystem, m.ID, map[string]string{"email_id": m.ID, "inbox_id": ibx}, m.ReceivedAt)
		if err != nil {
			return err
		}
		if err := e.repo().In(tx).Events.Create(e.ctx, ws, ev); err != nil {
			return err
		}
		if err := e.p.Notify(e.ctx, tx, ws, ev); err != nil {
			return err
		}
		_, err = e.q.InsertTx(e.ctx, tx, queue.AgentArgs{Workspace: ws, EmailID: m.ID}, nil)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// settled waits for an e-mail to leave pending and returns it.
func (e *env) settled(id string) inbox.Email {
	e.t.Helper()
	var m inbox.Email
	err := testwait.Until(30*time.Second, func() error {
		var err error
		m, err = e.repo().Emails.Get(e.ctx, testWS, id)
		if err != nil {
			return err
		}
		if m.Status == inbox.EmailPending {
			return fmt.Errorf("e-mail %s is still pending", id)
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

// all returns every record of a repository in the test workspace, most
// recent first.
func all[T any](e *env, r store.Repo[T]) []T {
	e.t.Helper()
	out, err := r.All(e.ctx, testWS, store.Query{})
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// events returns the types of the workspace's events, oldest first.
func events(e *env) []string {
	evs := all(e, e.repo().Events)
	out := make([]string, 0, len(evs))
	for i := len(evs) - 1; i >= 0; i-- {
		out = append(out, evs[i].Type)
	}
	return out
}

// scripted is a scripted agent whose answer and failures a test sets.
type scripted struct {
	mu     sync.Mutex
	output json.RawMessage
	result inbox.AgentResult // when Status is set, answered instead of output
	// results are answered first, one per call, before result or output.
	results []inbox.AgentResult
	errs    int // errors to return before answering
	calls   int
	inputs  []inbox.AgentInput
}

func agentAnswering(doc string) *scripted { return &scripted{output: json.RawMessage(doc)} }

func (s *scripted) RunAgent(ctx context.Context, in inbox.AgentInput) (inbox.AgentResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.inputs = append(s.inputs, in)
	if s.errs > 0 {
		s.errs--
		return inbox.AgentResult{}, fmt.Errorf("the model provider is unreachable (scripted failure)")
	}
	if len(s.results) > 0 {
		r := s.results[0]
		s.results = s.results[1:]
		return r, nil
	}
	if s.result.Status != "" {
		return s.result, nil
	}
	// Answered as the agent's own model, so the run is priced.
	return inbox.AgentResult{Status: inbox.RunSucceeded, Output: s.output, Tokens: testTokens}, ctx.Err()
}

// testTokens are what the scripted agent reports using.
var testTokens = inbox.Tokens{Input: 1200, Output: 300}

func (s *scripted) called() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// receiver plays the ERP and the webhook endpoint on loopback and counts
// what it receives.
type receiver struct {
	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	got      []received
	failures map[string]int // path → how many requests to answer 500 before succeeding
	// held are paths whose requests the receiver holds, answering nothing
	// until the client gives up; each arrival is signalled on the channel.
	held map[string]chan struct{}
	// gates are paths whose requests wait, once read, until the gate's
	// channel is closed, and are then answered as usual.
	gates map[string]chan struct{}
	// arrivals counts the requests gates hold or held, by path.
	arrivals map[string]int
}

// received is one request the receiver got.
type received struct {
	Method, Path string
	// Email is the request's email query parameter (the crash tests' steps
	// carry the e-mail's id there).
	Email  string
	Header http.Header
	Body   []byte
	// Files are the SHA-256 of the file parts of a multipart body, by field.
	Files map[string]string
}

func newReceiver(t testing.TB) *receiver {
	r := &receiver{t: t, failures: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) URL(path string) string { return r.srv.URL + path }

// hold makes the receiver hold every request to path (see held) and
// returns the channel each arrival is signalled on.
func (r *receiver) hold(path string) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held == nil {
		r.held = map[string]chan struct{}{}
	}
	ch := make(chan struct{}, 16)
	r.held[path] = ch
	return ch
}

// gate makes the receiver keep every request to path, once read, until
// open is called; waiting counts the requests that arrived at the gate.
func (r *receiver) gate(path string) (waiting func() int, open func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gates == nil {
		r.gates, r.arrivals = map[string]chan struct{}{}, map[string]int{}
	}
	ch := make(chan struct{})
	r.gates[path] = ch
	return func() int {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.arrivals[path]
	}, sync.OnceFunc(func() { close(ch) })
}

// fail makes the next n requests to path answer 500.
func (r *receiver) fail(path string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures[path] = n
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	got := received{Method: req.Method, Path: req.URL.Path, Email: req.URL.Query().Get("email"), Header: req.Header.Clone(), Files: map[string]string{}}
	if mt, params, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err == nil && mt == "multipart/form-data" {
		mr := multipart.NewReader(req.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			h := sha256.New()
			io.Copy(h, p)
			got.Files[p.FormName()] = hex.EncodeToString(h.Sum(nil))
		}
	} else {
		got.Body, _ = io.ReadAll(req.Body)
	}
	r.mu.Lock()
	r.got = append(r.got, got)
	fail := r.failures[req.URL.Path] > 0
	if fail {
		r.failures[req.URL.Path]--
	}
	arrived := r.held[req.URL.Path]
	gate := r.gates[req.URL.Path]
	if gate != nil {
		r.arrivals[req.URL.Path]++
	}
	r.mu.Unlock()
	if gate != nil {
		<-gate
	}
	if arrived != nil {
		arrived <- struct{}{}
		<-req.Context().Done()
		panic(http.ErrAbortHandler) // no response reaches the client
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case fail:
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":"unavailable"}`)
	case req.URL.Path == "/payables":
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"data":{"id":"pay_1"}}`)
	default:
		io.WriteString(w, `{"ok":true}`)
	}
}

// count returns how many requests for an e-mail were received at a path.
func (r *receiver) count(path, email string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, g := range r.got {
		if g.Path == path && g.Email == email {
			n++
		}
	}
	return n
}

// total returns how many requests the receiver got.
func (r *receiver) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// requests returns the requests received at a path.
func (r *receiver) requests(path string) []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []received
	for _, g := range r.got {
		if g.Path == path {
			out = append(out, g)
		}
	}
	return out
}

// invoiceWorkflow is a workflow against the receiver: create a payable
// (with every kobana.* fact in its body), upload the e-mail's first
// attachment, notify.
const invoiceWorkflow = `{"result": {"supplier": "ACME", "amount": 1250.5},
 "workflow": [
  {"type": "request", "label": "create the payable", "url": "${{secrets.ERP_URL}}/payables",
   "headers": {"Authorization": "Bearer ${{secrets.ERP_TOKEN}}"},
   "body": {"env": "${{kobana.env}}", "app_url": "${{kobana.app_url}}", "workspace_id": "${{kobana.workspace_id}}",
     "workspace_slug": "${{kobana.workspace_slug}}", "workspace_external_id": "${{kobana.workspace_external_id}}",
     "inbox_id": "${{kobana.inbox_id}}", "inbox_email": "${{kobana.inbox_email}}", "email_id": "${{kobana.email_id}}",
     "email_message_id": "${{kobana.email_message_id}}", "agent_id": "${{kobana.agent_id}}",
     "agent_run_id": "${{kobana.agent_run_id}}", "workflow_run_id": "${{kobana.workflow_run_id}}", "now": "${{kobana.now}}"},
   "expected_status": 201},
  {"type": "request", "label": "attach the invoice", "url": "${{secrets.ERP_URL}}/payables/${{steps.0.response.body.data.id}}/attachments",
   "headers": {"Authorization": "Bearer ${{secrets.ERP_TOKEN}}"},
   "form": {"file": "${{email.attachments.0}}"}},
  {"type": "request", "label": "notify", "url": "${{secrets.ERP_URL}}/notify",
   "body": {"text": "payable ${{steps.0.response.body.data.id}} created"}}
 ]}`

// sampleEmail is the repository's sample invoice e-mail.
var sampleEmail = examples.InvoiceEmail

// withSubject returns the sample e-mail with another Message-ID, so each
// copy is a message of its own.
func uniqueEmail(n int) string {
	return strings.Replace(sampleEmail, "Message-ID: <nfe-4521.", fmt.Sprintf("Message-ID: <nfe-4521-%d.", n), 1)
}

// age makes a stored raw message look kept d ago.
func (e *env) age(id string, d time.Duration) {
	e.t.Helper()
	then := time.Now().Add(-d)
	var err error
	if e.dir != nil {
		path := filepath.Join(e.root, "messages", testWS, id+".eml")
		err = os.Chtimes(path, then, then)
	} else {
		_, err = e.st.(*pg.Store).PgxPool().Exec(e.ctx, `UPDATE inbox_messages SET created_at = $1 WHERE workspace_id = $2 AND id = $3`, then, testWS, id)
	}
	if err != nil {
		e.t.Fatal(err)
	}
}

// pipelineRaw is the env's raw-message storage.
func pipelineRaw(e *env) mailstore.Store { return e.raw }

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
