package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/riverqueue/river"

	"github.com/kobana/workflow/egress"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/groupcommit"
	"github.com/kobana/workflow/resolve/eml"
)

// Config is what the stages run on. Store, Queue, Raw and Agents are
// required.
type Config struct {
	// Store holds the records, the workspace secrets and the transactions
	// the stages write in (the database the Queue is on).
	Store store.Store
	// Queue is River on the Store's database; New registers the stages'
	// workers on it and the retention job among its periodic jobs, so call
	// New before Queue.Start.
	Queue *queue.Queue
	// Raw is where the raw messages are kept (mailstore.Dir or
	// mailstore.LargeObjects, the storage the intake keeps them in; with
	// mailstore.WithBlobs for messages kept in the store's blobs).
	Raw mailstore.Store
	// Agents runs an inbox's agent on an e-mail: the model client, or a
	// ScriptedAgent. It is the one place the model plugs in.
	Agents inbox.AgentRunner
	// Index returns the part index stored with an e-mail when it arrived
	// (intake.LoadIndex), so a workflow run reads only the byte ranges of
	// the attachments it sends; nil, or an error matching store.ErrNotFound,
	// reads the message's structure when a step first needs it.
	Index func(ctx context.Context, workspace, emailID string) (*eml.Index, error)
	// Executor configures the workflow runs: the SSRF guard, the network
	// (guard.Network: who dials, with which TLS settings — always checked
	// by the guard), timeouts and limits. Webhook deliveries go through the
	// same guard and network, with the guard's client (no redirects).
	Executor executor.Options
	// WebhookSchedule is the delay before each retry of a failed delivery
	// (the first entry after the first attempt), each stretched or shrunk
	// by up to WebhookJitter; nil means DefaultWebhookSchedule. A delivery
	// is attempted at most len(schedule)+1 times, and never more than
	// queue.WebhookMaxAttempts.
	WebhookSchedule []time.Duration
	// WebhookJitter is the fraction (0 to 1) by which each retry delay may
	// vary, so that deliveries failing together do not retry together;
	// zero means DefaultWebhookJitter, a negative value none.
	WebhookJitter float64
	// AgentRetrySchedule is the delay before each new run of an e-mail's
	// agent after a run that failed for a cause that may pass
	// (inbox.AgentResult.IsTransient: the model unavailable, rate-limited,
	// not answering in time, failing after the runner's own retries), the
	// first entry after the first run, each varied like the webhook
	// schedule by WebhookJitter; nil means DefaultAgentRetrySchedule, an
	// empty schedule fails such an e-mail at once. Every run is recorded,
	// and the e-mail stays pending with its next attempt's time.
	AgentRetrySchedule []time.Duration
	// RetentionEvery is how often raw messages past their workspace's
	// retention are purged (default one hour; the first run is at start).
	RetentionEvery time.Duration
	// Environment is kobana.env ("development", "sandbox", "production")
	// for the workspaces that do not name their own; empty means
	// "development".
	Environment string
	// AppURL is kobana.app_url, this server's public URL.
	AppURL string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives what an operator should know about (a stage that
	// failed and will be retried, a run found interrupted); nil discards.
	Logger *slog.Logger
	// Observer, when set, hears of each run, delivery attempt and purge
	// once recorded (logs, metrics).
	Observer Observer
}

// Pipeline is the Inbox's processing stages working on a Queue.
type Pipeline struct {
	cfg      Config
	repo     inbox.Repo
	log      *slog.Logger
	executor *executor.Executor
	webhooks *http.Client
	schedule []time.Duration
	// commits runs the stages' writes in shared transactions.
	commits *groupcommit.Committer[struct{}]
	// agentSchedule is AgentRetrySchedule with its default.
	agentSchedule []time.Duration
}

// New checks cfg and registers the stages' workers and, when the queue
// works jobs in this process, the retention job on cfg.Queue. It starts
// nothing: the workers run once the queue starts. On an insert-only queue
// the Pipeline still enqueues (Notify, Processor).
func New(cfg Config) (*Pipeline, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("pipeline: Config.Store is required")
	case cfg.Queue == nil:
		return nil, errors.New("pipeline: Config.Queue is required")
	case cfg.Raw == nil:
		return nil, errors.New("pipeline: Config.Raw is required")
	case cfg.Agents == nil:
		return nil, errors.New("pipeline: Config.Agents is required (the model client, or a ScriptedAgent)")
	case cfg.WebhookJitter > 1:
		return nil, fmt.Errorf("pipeline: Config.WebhookJitter is %v; it is a fraction between 0 and 1", cfg.WebhookJitter)
	}
	for i, d := range cfg.WebhookSchedule {
		if d <= 0 {
			return nil, fmt.Errorf("pipeline: Config.WebhookSchedule[%d] is %v; retry delays must be positive", i, d)
		}
	}
	for i, d := range cfg.AgentRetrySchedule {
		if d <= 0 {
			return nil, fmt.Errorf("pipeline: Config.AgentRetrySchedule[%d] is %v; retry delays must be positive", i, d)
		}
	}
	p := &Pipeline{cfg: cfg, repo: inbox.NewRepo(cfg.Store), log: cfg.Logger, commits: newCommitter(cfg.Store, cfg.Queue)}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	g := cfg.Executor.Guard
	if g == nil {
		g = &guard.Guard{}
	}
	p.executor = executor.New(cfg.Executor)
	// A delivery is sent once per attempt: the transport never resends it on
	// its own (HTTP/2 would, after a reset stream).
	p.webhooks = g.SendOnceVia(cfg.Executor.Network)
	p.schedule = cfg.WebhookSchedule
	if p.schedule == nil {
		p.schedule = DefaultWebhookSchedule
	}
	if len(p.schedule) > queue.WebhookMaxAttempts-1 {
		p.schedule = p.schedule[:queue.WebhookMaxAttempts-1]
	}
	p.agentSchedule = cfg.AgentRetrySchedule
	if p.agentSchedule == nil {
		p.agentSchedule = DefaultAgentRetrySchedule
	}
	if p.cfg.WebhookJitter == 0 {
		p.cfg.WebhookJitter = DefaultWebhookJitter
	}
	if p.cfg.RetentionEvery <= 0 {
		p.cfg.RetentionEvery = time.Hour
	}
	w := cfg.Queue.Workers()
	if err := river.AddWorkerSafely(w, &agentWorker{p: p}); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if err := river.AddWorkerSafely(w, &workflowWorker{p: p}); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if err := river.AddWorkerSafely(w, &webhookWorker{p: p}); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if err := river.AddWorkerSafely(w, &retentionWorker{p: p}); err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	if cfg.Queue.Working() {
		cfg.Queue.PeriodicJobs().Add(river.NewPeriodicJob(river.PeriodicInterval(p.cfg.RetentionEvery),
			func() (river.JobArgs, *river.InsertOpts) { return queue.RetentionArgs{}, nil },
			&river.PeriodicJobOpts{RunOnStart: true}))
	}
	return p, nil
}

func (p *Pipeline) now() time.Time {
	if p.cfg.Now != nil {
		return p.cfg.Now().UTC()
	}
	return time.Now().UTC()
}

// Recover is the restart scan of a process that is the only one working
// its database's queue (the embedded SQLite store), called before the queue
// starts: the jobs a stopped process left running are made available again
// at once, so that their stages resume — and a workflow run such a job had
// started sending is recorded as interrupted when its job runs again, with
// nothing sent twice. With replicas on one database, do not call it: River
// makes the jobs of a replica that stopped available again after the
// queue's RescueAfter, with the same outcome.
func (p *Pipeline) Recover(ctx context.Context) (int, error) {
	n, err := p.cfg.Queue.RescueAbandoned(ctx)
	if err != nil {
		return n, fmt.Errorf("pipeline: restart scan: %w", err)
	}
	if n > 0 {
		p.log.Warn("pipeline: resuming the jobs a stopped process left running", "jobs", n)
	}
	return n, nil
}

// stableID derives a record id from the ids of the job that creates it, so
// a job that runs again finds the record it created the first time.
func stableID(prefix string, parts ...string) string {
	h := sha256.New()
	for _, s := range parts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return prefix + "_" + hex.EncodeToString(h.Sum(nil)[:10])
}

// agentRunID is the id of the agent run an AgentArgs job creates.
func agentRunID(a queue.AgentArgs) string {
	if a.Retry > 0 {
		return stableID("arun", a.Workspace, a.EmailID, a.Request, "retry", strconv.Itoa(a.Retry))
	}
	return stableID("arun", a.Workspace, a.EmailID, a.Request)
}

// workflowRunID is the id of the workflow run of an agent run.
func workflowRunID(workspace, agentRun string) string {
	return stableID("wrun", workspace, agentRun)
}

// resumeRunID is the id of the workflow run a resume request creates.
func resumeRunID(a queue.WorkflowArgs) string {
	return stableID("wrun", a.Workspace, a.AgentRunID, a.ResumeOf, a.Request)
}

// userSecrets returns the workspace's secrets a workflow may use — not the
// platform's own (webhook signing secrets) — and where they may go
// (inbox.SecretsPolicy: each secret's destinations, a URL secret bound to
// its host).
func (p *Pipeline) userSecrets(ctx context.Context, ws string) (map[string]string, *egress.Policy, error) {
	all, err := p.cfg.Store.RevealSecrets(ctx, ws)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the secrets of workspace %s: %w", ws, err)
	}
	user, policy := inbox.SecretsPolicy(all)
	return user, policy, nil
}
