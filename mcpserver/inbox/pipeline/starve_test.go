package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/pipeline"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/store"
)

// slowModel stands for a model that does not answer: each run reads the
// e-mail as agents do (its raw message open), then waits until released or
// stopped.
type slowModel struct {
	release chan struct{}
	mu      sync.Mutex
	waiting int
}

func (m *slowModel) RunAgent(ctx context.Context, in inbox.AgentInput) (inbox.AgentResult, error) {
	m.mu.Lock()
	m.waiting++
	m.mu.Unlock()
	select {
	case <-m.release:
	case <-ctx.Done():
		return inbox.AgentResult{}, ctx.Err()
	}
	return inbox.AgentResult{Status: inbox.RunSucceeded, Output: json.RawMessage(invoiceWorkflow)}, nil
}

func (m *slowModel) runs() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.waiting
}

// readyWorkflow records an e-mail whose agent has answered and queues its
// workflow, as the agent stage does.
func (e *env) readyWorkflow(i int) inbox.Email {
	e.t.Helper()
	m := e.receive(uniqueEmail(1000 + i))
	run := inbox.AgentRun{ID: fmt.Sprintf("arun_ready_%d", i), AgentID: testAgent, EmailID: m.ID, InboxID: testInbox, Status: inbox.RunSucceeded,
		Output: json.RawMessage(invoiceWorkflow), WorkflowRunID: fmt.Sprintf("wrun_ready_%d", i), StartedAt: time.Now().UTC()}
	m.AgentRunID, m.WorkflowRunID = run.ID, run.WorkflowRunID
	e.withWorkflowJob(run, m)
	return m
}

// stagePool is the PostgreSQL pool kobana serve gives the default workers
// (server.Workers.PoolConns): twice the agent and workflow workers, so that
// every one of them can have its e-mail's message open (a snapshot holds a
// connection, and snapshots take at most half the pool) without waiting on
// the other stage.
var stagePool = 2 * (queue.ReplicaWorkers[queue.QueueAgent] + queue.ReplicaWorkers[queue.QueueWorkflow])

// Agent runs waiting on a model that does not answer hold every agent
// worker (those of two workspaces); e-mails whose agent has answered still
// have their workflows run
// (the stages have workers, and on PostgreSQL message snapshots, of their
// own).
func TestASlowModelDoesNotHoldUpWorkflows(t *testing.T) {
	for _, opt := range []options{{}, {pg: true, poolConns: stagePool}} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[opt.pg], func(t *testing.T) {
			model := &slowModel{release: make(chan struct{})}
			e := newEnv(t, agentAnswering(invoiceWorkflow), opt)
			e.restartWith(model)
			defer close(model.release)
			// As many as the agent workers from each of two workspaces (one
			// holds its share of them at most).
			other := seedWorkspace(e, "ws_other", "other", e.recv.URL(""))
			workers := e.q.Concurrency(queue.QueueAgent)
			for i := range workers {
				e.receive(uniqueEmail(i))
				e.receiveIn("ws_other", other, uniqueEmail(i))
			}
			if err := testwait.Until(30*time.Second, func() error {
				if n := model.runs(); n < workers {
					return fmt.Errorf("%d agent runs waiting on the model", n)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			var ready []inbox.Email
			for i := range 6 {
				ready = append(ready, e.readyWorkflow(i))
			}
			for _, m := range ready {
				if got := e.settled(m.ID); got.Status != inbox.EmailProcessed {
					t.Errorf("e-mail %s: %s (%s)", m.ID, got.Status, got.StatusDetail)
				}
			}
		})
	}
}

// hangingReceiver answers nothing until released (the caller closes
// release).
func hangingReceiver(t *testing.T) (*httptest.Server, chan struct{}) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	return srv, release
}

// hangingEnv is an environment whose steps wait on a receiver longer than
// the tests wait, and a receiver that hangs until the test ends (released
// before the queue stops).
func hangingEnv(t *testing.T, opt options) (*env, *httptest.Server) {
	opt.cfg = func(c *pipeline.Config) {
		c.Executor.StepTimeout, c.Executor.RunTimeout = 5*time.Minute, 10*time.Minute
	}
	e := newEnv(t, agentAnswering(invoiceWorkflow), opt)
	hang, release := hangingReceiver(t)
	t.Cleanup(func() { close(release) })
	return e, hang
}

// Workflows whose receivers hang hold every workflow worker (those of two
// workspaces, each holding its share); new e-mails still get their agent
// runs (recorded, their workflows queued).
func TestHangingReceiversDoNotHoldUpAgents(t *testing.T) {
	for _, opt := range []options{{}, {pg: true, poolConns: stagePool}} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[opt.pg], func(t *testing.T) {
			e, hang := hangingEnv(t, opt)
			if err := e.st.SetSecret(e.ctx, testWS, "ERP_URL", hang.URL); err != nil {
				t.Fatal(err)
			}
			other := seedWorkspace(e, "ws_other", "other", hang.URL)
			e.start()
			workers := e.q.Concurrency(queue.QueueWorkflow)
			for i := range workers {
				e.receive(uniqueEmail(i))
				e.receiveIn("ws_other", other, uniqueEmail(i))
			}
			if err := testwait.Until(30*time.Second, func() error {
				n := len(all(e, e.repo().WorkflowRuns))
				more, err := e.repo().WorkflowRuns.All(e.ctx, "ws_other", store.Query{})
				if err != nil {
					return err
				}
				if n += len(more); n < workers {
					return fmt.Errorf("%d workflow runs sending to the hanging receiver, want %d", n, workers)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			later := e.receive(uniqueEmail(100))
			if err := testwait.Until(30*time.Second, func() error {
				m, err := e.repo().Emails.Get(e.ctx, testWS, later.ID)
				if err != nil {
					return err
				}
				if m.AgentRunID == "" {
					return fmt.Errorf("the later e-mail has no agent run")
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// seedWorkspace writes a second workspace of the test organization with an
// inbox and agent like the test workspace's, whose workflows' receiver (the
// ERP) is erp.
func seedWorkspace(e *env, ws, slug, erp string) (inboxID string) {
	e.t.Helper()
	now := time.Now().UTC()
	repo := inbox.NewRepo(e.st)
	must := func(err error) {
		e.t.Helper()
		if err != nil {
			e.t.Fatal(err)
		}
	}
	inboxID = "ibx_" + slug
	must(e.st.PutWorkspace(e.ctx, store.Workspace{ID: ws, Organization: "org_test", Name: slug, Slug: slug}))
	must(repo.Workspaces.Put(e.ctx, ws, inbox.Workspace{ID: ws, Name: slug, Slug: slug, ExternalID: "ext-" + slug, Plan: "business", CreatedAt: now}))
	must(repo.Agents.Put(e.ctx, ws, inbox.Agent{ID: testAgent, Name: "Invoices", Model: "gpt-4.1-mini", Status: inbox.StatusActive, CreatedAt: now}))
	must(repo.Inboxes.Put(e.ctx, ws, inbox.Inbox{ID: inboxID, Name: "Invoices", Address: "invoices@" + slug + "." + mailDomain, AgentID: testAgent,
		Recipients: []string{}, Status: inbox.StatusActive, CreatedAt: now}))
	for k, v := range map[string]string{"ERP_TOKEN": testToken, "ERP_URL": erp} {
		must(e.st.SetSecret(e.ctx, ws, k, v))
	}
	return inboxID
}

// One workspace's receivers hang: its workflow runs hold their share of
// the workflow workers (half, by default), not all of them — the rest of
// its e-mails wait — and another workspace's e-mails are processed
// meanwhile.
func TestAWorkspaceWhoseReceiversHangHoldsUpOnlyItsOwnMail(t *testing.T) {
	for _, opt := range []options{{}, {pg: true, poolConns: stagePool}} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[opt.pg], func(t *testing.T) {
			e, hang := hangingEnv(t, opt)
			slowInbox := seedWorkspace(e, "ws_slow", "slow", hang.URL)
			e.start()
			workers := e.q.Concurrency(queue.QueueWorkflow)
			for i := range 2 * workers {
				e.receiveIn("ws_slow", slowInbox, uniqueEmail(i))
			}
			limit := e.q.WorkspaceLimit(queue.QueueWorkflow)
			if limit == 0 || limit >= workers {
				t.Fatalf("one workspace may hold %d of %d workflow workers", limit, workers)
			}
			hung := func() int {
				runs, err := e.repo().WorkflowRuns.All(e.ctx, "ws_slow", store.Query{})
				if err != nil {
					t.Fatal(err)
				}
				return len(runs)
			}
			if err := testwait.Until(30*time.Second, func() error {
				if n := hung(); n < limit {
					return fmt.Errorf("%d workflow runs waiting on the hanging receiver", n)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			var prompt []inbox.Email
			for i := range 6 {
				prompt = append(prompt, e.receive(uniqueEmail(100+i)))
			}
			for _, m := range prompt {
				if got := e.settled(m.ID); got.Status != inbox.EmailProcessed {
					t.Errorf("e-mail %s of the other workspace: %s (%s)", m.ID, got.Status, got.StatusDetail)
				}
			}
			if n := hung(); n != limit {
				t.Errorf("%d workflow runs of the hanging workspace started, want its limit, %d", n, limit)
			}
		})
	}
}
