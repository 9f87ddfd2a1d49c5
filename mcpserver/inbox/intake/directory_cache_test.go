package intake

import (
	"context"
	"errors"
	"testing"
	"time"
)

// countingDirectory knows one inbox and counts the lookups.
type countingDirectory struct {
	Directory
	calls int
	known bool
}

func (d *countingDirectory) ByAddress(_ context.Context, a string) (Recipient, error) {
	d.calls++
	if !d.known {
		return Recipient{}, ErrUnknownAddress
	}
	return Recipient{Workspace: "ws", InboxID: "ibx", Address: a}, nil
}

// Finds are remembered for the TTL (any case of the address); misses never
// are, so an inbox created meanwhile is found at once.
func TestCachedDirectoryRemembersFindsOnly(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	inner := &countingDirectory{}
	c := &cachedDirectory{Directory: inner, ttl: 2 * time.Second, now: func() time.Time { return now }, entries: map[string]cachedRecipient{}}
	if _, err := c.ByAddress(ctx, "a@x.test"); !errors.Is(err, ErrUnknownAddress) {
		t.Fatalf("unknown address: %v", err)
	}
	inner.known = true
	if _, err := c.ByAddress(ctx, "a@x.test"); err != nil || inner.calls != 2 {
		t.Fatalf("after the inbox appeared: %v, %d lookups; want found, looked up again", err, inner.calls)
	}
	if _, err := c.ByAddress(ctx, "A@X.test"); err != nil || inner.calls != 2 {
		t.Fatalf("within the TTL: %v, %d lookups; want the remembered find", err, inner.calls)
	}
	inner.known = false
	now = now.Add(3 * time.Second)
	if _, err := c.ByAddress(ctx, "a@x.test"); !errors.Is(err, ErrUnknownAddress) || inner.calls != 3 {
		t.Fatalf("past the TTL, inbox gone: %v, %d lookups", err, inner.calls)
	}
}
