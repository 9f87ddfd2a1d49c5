package server

import (
	"context"
	"time"

	"github.com/kobana/workflow/mcpserver/internal/panics"
	"github.com/kobana/workflow/mcpserver/store"
)

// writeProbeEvery is how often the store is tried with a write while it
// refuses them.
const writeProbeEvery = time.Second

// Where the write probe writes: a counter of a workspace no one has.
const (
	probeWorkspace = "_store_probe"
	probeCounter   = "store.write_probe"
)

// probeWrites tries a small write every writeProbeEvery while the store
// refuses writes (store.WriteHealth), so that it is seen to take them
// again — /readyz ready, kobana_store_writable 1 — when nothing else
// writes: a server out of the load balancer, its senders deferred, gets
// no mail to write until it says it is ready. It returns the function
// that stops it and waits for it; with a store that does not follow its
// writes it does nothing.
func probeWrites(a *assembly) func() {
	ww, ok := a.store.(store.WriteWatcher)
	if !ok {
		return func() {}
	}
	ctx, cancel := context.WithCancel(a.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		panics.Loop(ctx, "store write probe", panics.DefaultRestart, func(ctx context.Context) error {
			t := time.NewTicker(writeProbeEvery)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return nil
				case <-t.C:
				}
				if reason, _ := ww.WriteHealth().Refusing(); reason == "" {
					continue
				}
				pctx, cancel := context.WithTimeout(ctx, writeProbeEvery)
				// The outcome is the store's WriteHealth's to observe.
				a.store.WithTx(pctx, func(tx store.Tx) error {
					_, err := tx.NextNumber(pctx, probeWorkspace, probeCounter, 1)
					return err
				})
				cancel()
			}
		})
	}()
	return func() { cancel(); <-done }
}
