package pg

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/internal/sqlq"
)

// Authenticate implements store.Identity. While the database is unreachable
// a token that the database accepted less than Options.AuthGrace ago is
// still accepted (see Options.AuthGrace); an unknown, revoked or expired
// token never is.
func (s *Store) Authenticate(ctx context.Context, token string) (store.Principal, error) {
	hash := store.HashToken(token)
	p, err := sqlq.AuthenticateHash(ctx, &s.shared, hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.grace.forget(hash)
	case err != nil:
		if s.opts.AuthGrace > 0 && unavailable(err) {
			if p, ok := s.grace.get(hash, s.opts.AuthGrace); ok && (p.Expires.IsZero() || s.now().Before(p.Expires)) {
				return p, nil
			}
		}
	case s.opts.AuthGrace > 0:
		s.grace.put(hash, p)
	}
	return p, err
}

// graceCache remembers the principals of recently authenticated tokens, by
// token hash, for Options.AuthGrace.
type graceCache struct {
	mu sync.Mutex
	m  map[string]graceEntry
}

type graceEntry struct {
	p    store.Principal
	seen time.Time // monotonic: the process clock, not Options.Now
}

// graceMax bounds the cache; when full it starts over (entries are only
// needed during an outage, and any request refills them).
const graceMax = 10000

func (g *graceCache) put(hash string, p store.Principal) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.m) >= graceMax {
		clear(g.m)
	}
	g.m[hash] = graceEntry{p: p, seen: time.Now()}
}

func (g *graceCache) get(hash string, grace time.Duration) (store.Principal, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e, ok := g.m[hash]
	if !ok || time.Since(e.seen) > grace {
		return store.Principal{}, false
	}
	return e.p, true
}

func (g *graceCache) forget(hash string) {
	g.mu.Lock()
	delete(g.m, hash)
	g.mu.Unlock()
}
