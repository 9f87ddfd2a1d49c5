package main

import (
	"flag"
	"fmt"
	"net/url"
	"strconv"

	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/server"
)

// registerWorkerFlags adds the pipeline's sizing flags to serve's.
func registerWorkerFlags(fs *flag.FlagSet, cfg *server.Config) {
	d, r := queue.DefaultWorkers, queue.ReplicaWorkers
	fs.IntVar(&cfg.Workers.Agent, "agent-workers", 0, fmt.Sprintf("agent runs at once in this process, overriding the size the model endpoints give: each waits for its endpoint's budget (rpm, tpm, max_in_flight in -agents-config, and the provider's rate-limit headers), then for the answer (default: the endpoints' max_in_flight over -workspace-share, at least %d)", queue.AgentWorkers))
	fs.IntVar(&cfg.Workers.Workflow, "workflow-workers", 0, fmt.Sprintf("workflow runs at once in this process, each waiting on its steps' receivers (default %d, %d with PostgreSQL)", d[queue.QueueWorkflow], r[queue.QueueWorkflow]))
	fs.IntVar(&cfg.Workers.Webhook, "webhook-workers", 0, fmt.Sprintf("webhook deliveries at once in this process (default %d, %d with PostgreSQL)", d[queue.QueueWebhook], r[queue.QueueWebhook]))
	fs.Float64Var(&cfg.Workers.WorkspaceShare, "workspace-share", queue.DefaultWorkspaceShare, "the share (0 to 1) of each stage's workers one workspace's jobs may hold at once, across replicas; its other jobs wait while other workspaces' run (1: no limit)")
	fs.DurationVar(&cfg.QueueLease, "queue-lease", queue.DefaultLease, "with PostgreSQL: how long the jobs of a replica that stopped answering (crashed, cut off) stay with it before another takes them over; negative leaves it to River's rescue after 20 minutes")
}

// checkWorkers reports a negative worker count (0 is the default).
func checkWorkers(w server.Workers) error {
	for _, f := range []struct {
		name string
		n    int
	}{{"-agent-workers", w.Agent}, {"-workflow-workers", w.Workflow}, {"-webhook-workers", w.Webhook}} {
		if f.n < 0 {
			return fmt.Errorf("%s must not be negative (0: the default), got %d", f.name, f.n)
		}
	}
	if w.WorkspaceShare <= 0 || w.WorkspaceShare > 1 {
		return fmt.Errorf("-workspace-share is a share of the workers, above 0 and at most 1, got %v", w.WorkspaceShare)
	}
	return nil
}

// sizePool gives a postgres:// URL without pool_max_conns a pool large
// enough for the workers (server.Workers.PoolConns); a URL that sets it is
// the operator's choice, which the server checks and warns about.
func sizePool(db string, w server.Workers) string {
	u, err := url.Parse(db)
	if err != nil {
		return db // opening it says what is wrong, without its password
	}
	q := u.Query()
	if q.Has("pool_max_conns") {
		return db
	}
	q.Set("pool_max_conns", strconv.Itoa(w.PoolConns()))
	u.RawQuery = q.Encode()
	return u.String()
}
