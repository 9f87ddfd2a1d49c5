package senderauth

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"
)

// maxCached bounds the answers a cache holds; past it, it starts over.
const maxCached = 20000

// NewCachingResolver returns a Resolver that remembers r's answers (and
// "no such name") for ttl, as the local caching resolver of a mail server
// would: the same sender's SPF, DMARC and key records are asked for at
// every message. Failures (a timeout, SERVFAIL) are never remembered. The
// answers' own TTLs are not known (net.Resolver does not give them): keep
// ttl short, a minute or so.
func NewCachingResolver(r Resolver, ttl time.Duration) Resolver {
	return &dnsCache{r: r, ttl: ttl, now: time.Now, entries: map[string]cached{}}
}

// dnsCache is NewCachingResolver's Resolver.
type dnsCache struct {
	r   Resolver
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[string]cached
}

type cached struct {
	v       any
	err     error
	expires time.Time
}

// lookup answers from the cache or asks ask, remembering what is final.
func lookup[T any](c *dnsCache, key string, ask func() (T, error)) (T, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		v, _ := e.v.(T)
		return v, e.err
	}
	v, err := ask()
	var dnsErr *net.DNSError
	if err == nil || errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		c.mu.Lock()
		if len(c.entries) >= maxCached {
			c.entries = map[string]cached{}
		}
		c.entries[key] = cached{v: v, err: err, expires: now.Add(c.ttl)}
		c.mu.Unlock()
	}
	return v, err
}

func (c *dnsCache) LookupTXT(ctx context.Context, name string) ([]string, error) {
	return lookup(c, "txt "+name, func() ([]string, error) { return c.r.LookupTXT(ctx, name) })
}

func (c *dnsCache) LookupMX(ctx context.Context, name string) ([]*net.MX, error) {
	return lookup(c, "mx "+name, func() ([]*net.MX, error) { return c.r.LookupMX(ctx, name) })
}

func (c *dnsCache) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	return lookup(c, "ip "+host, func() ([]net.IPAddr, error) { return c.r.LookupIPAddr(ctx, host) })
}

func (c *dnsCache) LookupAddr(ctx context.Context, addr string) ([]string, error) {
	return lookup(c, "ptr "+addr, func() ([]string, error) { return c.r.LookupAddr(ctx, addr) })
}
