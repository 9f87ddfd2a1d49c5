package server

import (
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kobana/workflow/mcpserver/agent"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
)

// The queue of a processing server gets the configured workers, the
// store's defaults for the stages left at zero, the lease and the share; a
// server that does not process works no queue.
func TestQueueConfigTakesTheWorkers(t *testing.T) {
	a := &assembly{log: slog.New(slog.DiscardHandler), cfg: Config{Process: true, QueueLease: 45 * time.Second,
		Workers: Workers{Agent: 3, Webhook: 5, WorkspaceShare: 0.25}}}
	for _, c := range []struct {
		replicas bool
		want     map[string]int
	}{
		{false, map[string]int{queue.QueueAgent: 3, queue.QueueWorkflow: queue.DefaultWorkers[queue.QueueWorkflow], queue.QueueWebhook: 5, queue.QueueMaintenance: 1}},
		{true, map[string]int{queue.QueueAgent: 3, queue.QueueWorkflow: queue.ReplicaWorkers[queue.QueueWorkflow], queue.QueueWebhook: 5, queue.QueueMaintenance: 1}},
	} {
		q := a.queueConfig(c.replicas)
		if diff := cmp.Diff(c.want, q.Workers); diff != "" {
			t.Errorf("replicas %v: workers (-want +got):\n%s", c.replicas, diff)
		}
		if q.Lease != 45*time.Second || q.WorkspaceShare != 0.25 {
			t.Errorf("replicas %v: lease %v, share %v; want 45s, 0.25", c.replicas, q.Lease, q.WorkspaceShare)
		}
	}
	if got := (Workers{}).PoolConns(); got != 2*queue.ReplicaWorkers[queue.QueueWorkflow]+agentPoolConns {
		t.Errorf("the pool for the default workers: %d connections", got)
	}
	a.cfg.Workers.Agent = 0
	if n := a.queueConfig(true).Workers[queue.QueueAgent]; n != queue.AgentWorkers {
		t.Errorf("agent workers with no endpoint ceiling: %d, want %d", n, queue.AgentWorkers)
	}
	// max_in_flight 100 and 50 over a share of 0.25: one workspace alone
	// can fill both endpoints.
	a.cfg.Agents = agent.Config{Providers: map[string]agent.Endpoint{"openai": {MaxInFlight: 100}, agent.AnyProvider: {MaxInFlight: 50}}}
	if n := a.queueConfig(false).Workers[queue.QueueAgent]; n != 600 {
		t.Errorf("agent workers for max_in_flight 100+50: %d, want 600", n)
	}
	a.cfg.Agents.Providers["openai"] = agent.Endpoint{MaxInFlight: 8}
	if n := a.queueConfig(false).Workers[queue.QueueAgent]; n != queue.AgentWorkers {
		t.Errorf("agent workers for max_in_flight 8+50: %d, want at least %d", n, queue.AgentWorkers)
	}
	a.cfg.Agents.Providers["openai"] = agent.Endpoint{}
	if n := a.queueConfig(false).Workers[queue.QueueAgent]; n != queue.AgentWorkers {
		t.Errorf("agent workers when an endpoint has no ceiling: %d, want %d", n, queue.AgentWorkers)
	}
	a.cfg.Process = false
	if q := a.queueConfig(true); q.Workers == nil || len(q.Workers) != 0 {
		t.Errorf("a server that does not process works %v", q.Workers)
	}
}
