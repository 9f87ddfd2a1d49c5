package server

import (
	"fmt"
	"log/slog"
	"math"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/kobana/workflow/mcpserver/agent"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
)

// Workers sizes the Inbox's pipeline in one process (Config.Process): how
// many jobs of each stage run at once. Each stage has its own queue and its
// own workers, so a model that answers slowly holds agent workers only and
// a receiver that hangs holds workflow (or webhook) workers only.
//
// The agent stage is bounded by the model endpoints, not by its workers:
// every model request waits for its endpoint's budget (agent.Config's rpm,
// tpm and max_in_flight, and what the provider's rate-limit headers say),
// shared by every agent and workspace of the process, which admits the
// workspaces in turn. Its workers only need to be enough to keep the
// endpoints full: by default the endpoints' max_in_flight ceilings over a
// workspace's share (so that one workspace alone can fill them, and others'
// first e-mails still find a worker to queue in the budget with), and at
// least queue.AgentWorkers. A waiting agent run holds no database
// connection.
//
// Zero fields take these defaults; the workflow and webhook stages take
// queue.DefaultWorkers with the embedded store, queue.ReplicaWorkers with
// PostgreSQL.
type Workers struct {
	// Agent, when set, is how many agent runs run at once (-agent-workers),
	// overriding the size the endpoints give: each waits for its model
	// call's admission, then for the answer.
	Agent int
	// Workflow is how many workflow runs run at once (each waits on its
	// steps' receivers, up to the step timeout).
	Workflow int
	// Webhook is how many webhook deliveries run at once.
	Webhook int
	// WorkspaceShare is the share of each stage's workers one workspace's
	// jobs may hold at once, across the replicas; its other jobs wait while
	// other workspaces' run (queue.Config.WorkspaceShare; zero:
	// queue.DefaultWorkspaceShare, 1 for no limit). Among the agent runs
	// that hold a worker, the endpoint budget decides whose call goes next.
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
// for the store (replicas: PostgreSQL's) and, for the agent stage, for the
// model endpoints of agents.
func (w Workers) perQueue(replicas bool, agents agent.Config) map[string]int {
	defaults := queue.DefaultWorkers
	if replicas {
		defaults = queue.ReplicaWorkers
	}
	out := map[string]int{}
	for q, n := range defaults {
		out[q] = n
	}
	out[queue.QueueAgent] = w.agentWorkers(agents)
	for q, n := range map[string]int{queue.QueueAgent: w.Agent, queue.QueueWorkflow: w.Workflow, queue.QueueWebhook: w.Webhook} {
		if n > 0 {
			out[q] = n
		}
	}
	return out
}

// agentWorkers is the agent stage's default size for the endpoints of
// agents: their max_in_flight ceilings together over a workspace's share
// of the workers, so that one workspace can fill them, and at least
// queue.AgentWorkers — which is also the size when an endpoint sets no
// ceiling (or none is configured). The workers beyond the calls in flight
// wait in the budget's queues, a goroutine each: enough of them let the
// other workspaces' e-mails past one workspace's backlog in the queue's
// order (the share puts that workspace's extra jobs back) into the
// budget, which admits the workspaces in turn.
func (w Workers) agentWorkers(agents agent.Config) int {
	sum := 0
	for _, e := range agents.Providers {
		if e.MaxInFlight <= 0 {
			return queue.AgentWorkers
		}
		sum += e.MaxInFlight
	}
	share := w.WorkspaceShare
	if share <= 0 {
		share = queue.DefaultWorkspaceShare
	}
	return max(queue.AgentWorkers, int(math.Ceil(float64(sum)/share)))
}

// agentPoolConns is the PostgreSQL connections a replica keeps for its
// agent stage: an agent run uses one only for its reads before the model
// call and its write after, never while it waits, so however many run at
// once they take turns on a few.
const agentPoolConns = 16

// PoolConns is how many PostgreSQL connections a replica working the queue
// with these workers needs: a workflow run holds one while it has its
// e-mail's message open (at most half the pool does, see
// mailstore.LargeObjects), so twice the workflow workers lets every one of
// them read its message, with the other half for the records they write,
// the queue and the MCP server; and agentPoolConns for the agent stage,
// whatever its size.
func (w Workers) PoolConns() int {
	q := w.perQueue(true, agent.Config{})
	return max(16, 2*q[queue.QueueWorkflow]+agentPoolConns)
}

// checkPool tells the operator when a PostgreSQL pool is too small for the
// workers: the workflow runs would wait on each other for connections to
// read messages with.
func (a *assembly) checkPool(pool *pgxpool.Pool) {
	have, need := int(pool.Config().MaxConns), a.cfg.Workers.PoolConns()
	if !a.cfg.Process || have >= need {
		return
	}
	q := a.cfg.Workers.perQueue(true, a.cfg.Agents)
	msg := fmt.Sprintf("the PostgreSQL pool has %d connections: %d workflow runs can have their e-mail open at once, fewer than their %d workers, and the agent stage's reads and writes share the rest; give -db pool_max_conns=%d or more",
		have, max(1, have/2), q[queue.QueueWorkflow], need)
	fmt.Fprintln(a.notices, "warning: "+msg)
	a.log.Warn("server: " + msg)
}

// queueConfig is the queue's configuration for this process, on a store of
// replicas (PostgreSQL) or not.
func (a *assembly) queueConfig(replicas bool) queue.Config {
	soft, _ := stopBudget(a.cfg.StopGrace)
	qcfg := queue.Config{Logger: slog.New(atLeast{a.log.Handler(), slog.LevelWarn}), SoftStopTimeout: soft,
		Workers: a.cfg.Workers.perQueue(replicas, a.cfg.Agents), Lease: a.cfg.QueueLease, WorkspaceShare: a.cfg.Workers.WorkspaceShare}
	if !a.cfg.Process {
		qcfg.Workers = map[string]int{}
	}
	return qcfg
}
