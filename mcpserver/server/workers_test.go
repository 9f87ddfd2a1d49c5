package server

import (
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
	if got := (Workers{}).PoolConns(); got != 2*(queue.ReplicaWorkers[queue.QueueAgent]+queue.ReplicaWorkers[queue.QueueWorkflow]) {
		t.Errorf("the pool for the default workers: %d connections", got)
	}
	a.cfg.Process = false
	if q := a.queueConfig(true); q.Workers == nil || len(q.Workers) != 0 {
		t.Errorf("a server that does not process works %v", q.Workers)
	}
}
