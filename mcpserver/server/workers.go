package server

import (
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kobana/workflow/mcpserver/inbox/queue"
)

// Workers sizes the Inbox's pipeline in one process (Config.Process): how
// many jobs of each stage run at once. Each stage has its own queue and its
// own workers, so a model that answers slowly holds agent workers only and
// a receiver that hangs holds workflow (or webhook) workers only. Zero
// fields take queue.DefaultWorkers with the embedded store,
// queue.ReplicaWorkers with PostgreSQL.
type Workers struct {
	// Agent is how many agent runs run at once (each waits on the model).
	Agent int
	// Workflow is how many workflow runs run at once (each waits on its
	// steps' receivers, up to the step timeout).
	Workflow int
	// Webhook is how many webhook deliveries run at once.
	Webhook int
	// WorkspaceShare is the share of each stage's workers one workspace's
	// jobs may hold at once, across the replicas; its other jobs wait while
	// other workspaces' run (queue.Config.WorkspaceShare; zero:
	// queue.DefaultWorkspaceShare, 1 for no limit).
	WorkspaceShare float64
}

// check reports a negative count.
func (w Workers) check() error {
	for name, n := range map[string]int{"agent": w.Agent, "workflow": w.Workflow, "webhook": w.Webhook} {
		if n < 0 {
			return &ConfigError{fmt.Errorf("%s workers must be positive, got %d", name, n)}
		}
	}
	if w.WorkspaceShare < 0 || w.WorkspaceShare > 1 {
		return &ConfigError{fmt.Errorf("a workspace's share of the workers is between 0 and 1, got %v", w.WorkspaceShare)}
	}
	return nil
}

// perQueue is the queue's Workers map: each stage's count, or its default
// for the store (replicas: PostgreSQL's).
func (w Workers) perQueue(replicas bool) map[string]int {
	defaults := queue.DefaultWorkers
	if replicas {
		defaults = queue.ReplicaWorkers
	}
	out := map[string]int{}
	for q, n := range defaults {
		out[q] = n
	}
	for q, n := range map[string]int{queue.QueueAgent: w.Agent, queue.QueueWorkflow: w.Workflow, queue.QueueWebhook: w.Webhook} {
		if n > 0 {
			out[q] = n
		}
	}
	return out
}

// PoolConns is how many PostgreSQL connections a replica working the queue
// with these workers needs: an agent or workflow run holds one while it has
// its e-mail's message open (at most half the pool does, see
// mailstore.LargeObjects), so twice their workers lets every one of them
// read its message without waiting on the other stage, with the other half
// for the records they write, the queue and the MCP server.
func (w Workers) PoolConns() int {
	q := w.perQueue(true)
	return max(16, 2*(q[queue.QueueAgent]+q[queue.QueueWorkflow]))
}

// checkPool tells the operator when a PostgreSQL pool is too small for the
// workers: the stages would wait on each other for connections to read
// messages with.
func (a *assembly) checkPool(pool *pgxpool.Pool) {
	have, need := int(pool.Config().MaxConns), a.cfg.Workers.PoolConns()
	if !a.cfg.Process || have >= need {
		return
	}
	q := a.cfg.Workers.perQueue(true)
	msg := fmt.Sprintf("the PostgreSQL pool has %d connections: %d agent and workflow runs together can have their e-mail open at once, fewer than their %d+%d workers, so a slow model or a hanging receiver can hold up the other stage; give -db pool_max_conns=%d or more",
		have, max(1, have/2), q[queue.QueueAgent], q[queue.QueueWorkflow], need)
	fmt.Fprintln(a.notices, "warning: "+msg)
	a.log.Warn("server: " + msg)
}

// queueConfig is the queue's configuration for this process, on a store of
// replicas (PostgreSQL) or not.
func (a *assembly) queueConfig(replicas bool) queue.Config {
	soft, _ := stopBudget(a.cfg.StopGrace)
	qcfg := queue.Config{Logger: slog.New(atLeast{a.log.Handler(), slog.LevelWarn}), SoftStopTimeout: soft,
		Workers: a.cfg.Workers.perQueue(replicas), Lease: a.cfg.QueueLease, WorkspaceShare: a.cfg.Workers.WorkspaceShare}
	if !a.cfg.Process {
		qcfg.Workers = map[string]int{}
	}
	return qcfg
}
