package inbox_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
)

// One attempt of a delivery at a time: a second claim is refused while
// the first holds, granted once it is released, and a claim its holder
// never released (its process stopped) is taken over once it is older
// than an attempt can take.
func TestClaimDelivery(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	release, err := inbox.ClaimDelivery(ctx, st, "ws1", "dlv_1", now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inbox.ClaimDelivery(ctx, st, "ws1", "dlv_1", now.Add(time.Second)); !errors.Is(err, inbox.ErrDeliveryBusy) {
		t.Fatalf("a second claim: %v, want ErrDeliveryBusy", err)
	}
	if r, err := inbox.ClaimDelivery(ctx, st, "ws1", "dlv_2", now); err != nil {
		t.Errorf("another delivery: %v", err)
	} else {
		r(ctx)
	}
	release(ctx)
	again, err := inbox.ClaimDelivery(ctx, st, "ws1", "dlv_1", now.Add(2*time.Second))
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	_ = again // never released: its holder "stopped"
	if _, err := inbox.ClaimDelivery(ctx, st, "ws1", "dlv_1", now.Add(2*time.Second+inbox.DeliveryTimeout)); !errors.Is(err, inbox.ErrDeliveryBusy) {
		t.Errorf("within an attempt's time: %v, want ErrDeliveryBusy", err)
	}
	if _, err := inbox.ClaimDelivery(ctx, st, "ws1", "dlv_1", now.Add(2*time.Second+inbox.DeliveryTimeout+time.Minute)); err != nil {
		t.Errorf("a stale claim is not taken over: %v", err)
	}
}
