package budget

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Limits are an endpoint's configured ceilings; a zero field sets none.
type Limits struct {
	// RequestsPerMinute is the most requests sent per minute, paced
	// evenly (at most a second's worth at once).
	RequestsPerMinute int
	// TokensPerMinute is the most tokens (estimated before a call,
	// corrected by the usage its answer reports) per minute.
	TokensPerMinute int
	// InFlight is the most calls sent and not yet answered.
	InFlight int
}

// Stats is an endpoint's state, as an Observer sees it.
type Stats struct {
	// InFlight is the calls admitted and not yet done; Waiting the calls
	// queued for admission.
	InFlight, Waiting int
}

// Observer is told of each endpoint's state as it changes: for metrics.
// Its methods are called with the budget locked: they must return quickly
// and not call the Budget.
type Observer interface {
	// Changed is the endpoint's new state.
	Changed(endpoint string, s Stats)
	// Limited is an answer that slowed the endpoint (429, 503, 529) and
	// the pause it started.
	Limited(endpoint string, status int, pause time.Duration)
}

// Clock is the time a Budget reads and waits on; nil in Options means the
// real one. AfterFunc calls f once d has passed and returns a function that
// stops it.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// Options configure a Budget.
type Options struct {
	Clock    Clock
	Observer Observer
	// Backoff is the pause after a 429, 503 or 529 that names no wait,
	// doubled for each such answer in a row; 0 means 1 s.
	Backoff time.Duration
	// MaxPause is the longest pause an answer can start, whatever it asks;
	// 0 means 60 s.
	MaxPause time.Duration
}

// ErrClosed is returned by Acquire once the Budget is closed.
var ErrClosed = errors.New("the model budget is closed: the server is stopping")

// Budget admits model calls to their endpoints: at most as many, as fast,
// as each endpoint's configured Limits and its provider's rate-limit
// headers allow, a workspace at a time in turn among those waiting. One
// Budget is shared by every agent and workspace of a process.
type Budget struct {
	opts      Options
	mu        sync.Mutex
	limits    map[string]Limits
	endpoints map[string]*endpoint
	closed    bool
}

// New returns a Budget with no ceilings configured: each endpoint is then
// limited by what its provider's answers say.
func New(opts Options) *Budget {
	if opts.Clock == nil {
		opts.Clock = realClock{}
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.MaxPause <= 0 {
		opts.MaxPause = time.Minute
	}
	return &Budget{opts: opts, limits: map[string]Limits{}, endpoints: map[string]*endpoint{}}
}

// EndpointID names an endpoint (its base URL and key) without the key:
// the base URL's host and the first 16 hex digits of SHA-256 of the URL and
// key, e.g. "api.openai.com#3fa2b1c4d5e6f708". Two keys on one URL are two
// endpoints, each with its provider's limits.
func EndpointID(baseURL, apiKey string) string {
	sum := sha256.Sum256([]byte(baseURL + "\x00" + apiKey))
	host := baseURL
	if u, err := url.Parse(baseURL); err == nil && u.Host != "" {
		host = u.Host
	}
	return host + "#" + hex.EncodeToString(sum[:8])
}

// SetLimits configures an endpoint's ceilings; calls already admitted are
// not affected.
func (b *Budget) SetLimits(endpoint string, l Limits) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.limits[endpoint] = l
	if ep, ok := b.endpoints[endpoint]; ok {
		ep.configure(l, b.opts.Clock.Now())
		b.dispatch(ep)
	}
}

// Lease is an admitted call. Its holder calls Done with the answer, or
// Cancel if the call was not sent; exactly one of them, once.
type Lease struct {
	b      *Budget
	ep     *endpoint
	tokens float64
	// seqReq and seqTok are the endpoint's admission counters after this
	// call's admission: the calls admitted later are the difference.
	seqReq, seqTok float64
	at             time.Time
	done           bool
	// Waited is how long the call waited for admission.
	Waited time.Duration
}

// Result is what a call's answer said.
type Result struct {
	// Status is the HTTP status; 0 when no answer came (the connection
	// failed), which may still have counted against the provider's limits.
	Status int
	// Header is the answer's headers, read for rate-limit headers.
	Header http.Header
	// Tokens is the tokens the answer's usage reports (prompt and
	// completion); 0 when it reports none, and the estimate stands.
	Tokens int
}

// Acquire waits until a call of about tokens tokens (the prompt's estimate
// and the expected answer) may be sent to endpoint for workspace, and
// returns its Lease. It waits behind no other endpoint, and among the calls
// waiting for this endpoint each workspace is admitted in turn. It returns
// ctx's error when ctx ends first (the call leaves the queue) and ErrClosed
// once the Budget is closed.
func (b *Budget) Acquire(ctx context.Context, endpoint, workspace string, tokens int) (*Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("waiting for model endpoint %s: %w", endpoint, err)
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, ErrClosed
	}
	ep := b.endpoints[endpoint]
	if ep == nil {
		ep = newEndpoint(endpoint, b.limits[endpoint], b.opts.Clock.Now())
		b.endpoints[endpoint] = ep
	}
	w := &waiter{ws: workspace, tokens: float64(max(tokens, 0)), ready: make(chan struct{}), since: b.opts.Clock.Now()}
	ep.push(w)
	b.dispatch(ep)
	b.observe(ep)
	if w.lease != nil {
		b.mu.Unlock()
		return w.lease, nil
	}
	b.mu.Unlock()
	select {
	case <-w.ready:
		if w.err != nil {
			return nil, w.err
		}
		return w.lease, nil
	case <-ctx.Done():
		b.mu.Lock()
		switch {
		case w.lease != nil:
			// Admitted as ctx ended: give the place back.
			b.mu.Unlock()
			w.lease.Cancel()
		case w.err != nil:
			b.mu.Unlock()
		default:
			ep.remove(w)
			b.dispatch(ep) // the next workspace in turn may go now
			b.observe(ep)
			b.mu.Unlock()
		}
		return nil, fmt.Errorf("waiting for model endpoint %s: %w", endpoint, ctx.Err())
	}
}

// Done ends an admitted call that was sent: the endpoint learns from the
// answer's headers and usage, and a 429, 503 or 529 pauses the whole
// endpoint for the wait it asked (retry-after-ms, retry-after, the reset of
// an exhausted limit) or a growing backoff.
func (l *Lease) Done(r Result) {
	b := l.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if l.done {
		return
	}
	l.done = true
	ep, now := l.ep, b.opts.Clock.Now()
	ep.inFlight--
	if r.Status != 0 {
		ep.answered = true
	}
	if r.Tokens > 0 {
		// The estimate charged at admission, corrected by the usage.
		d := l.tokens - float64(r.Tokens)
		ep.cfgTok.adjust(d, now)
		ep.hdrTok.adjust(d, now)
	}
	sig := ParseHeaders(r.Header, now)
	since := now.Sub(l.at)
	ep.hdrReq.learn(sig.Requests, now, since, ep.admittedReq-l.seqReq)
	ep.hdrTok.learn(sig.Tokens, now, since, ep.admittedTok-l.seqTok)
	switch {
	case r.Status == http.StatusTooManyRequests || r.Status == http.StatusServiceUnavailable || r.Status == 529:
		wait, ok := sig.RetryAfter, sig.HasRetryAfter
		if !ok && sig.Requests.HasRemaining && sig.Requests.Remaining == 0 && sig.Requests.HasReset {
			wait, ok = sig.Requests.Reset, true
		}
		if !ok && sig.Tokens.HasRemaining && sig.Tokens.Remaining == 0 && sig.Tokens.HasReset {
			wait, ok = sig.Tokens.Reset, true
		}
		if !ok {
			wait = b.opts.Backoff << min(ep.backoffs, 16)
		}
		wait = min(wait, b.opts.MaxPause)
		ep.backoffs++
		if until := now.Add(wait); until.After(ep.pauseUntil) {
			ep.pauseUntil = until
		}
		// After the pause the endpoint starts from empty, at its rate:
		// the calls that waited do not all go at once.
		for _, bk := range ep.buckets() {
			bk.drain(ep.pauseUntil)
		}
		if b.opts.Observer != nil {
			b.opts.Observer.Limited(ep.id, r.Status, wait)
		}
	case r.Status >= 200 && r.Status < 300:
		ep.backoffs = 0
	}
	b.dispatch(ep)
	b.observe(ep)
}

// Cancel ends an admitted call that was not sent: its place and estimate
// go back to the endpoint.
func (l *Lease) Cancel() {
	b := l.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if l.done {
		return
	}
	l.done = true
	ep, now := l.ep, b.opts.Clock.Now()
	ep.inFlight--
	ep.cfgReq.adjust(1, now)
	ep.hdrReq.adjust(1, now)
	ep.cfgTok.adjust(l.tokens, now)
	ep.hdrTok.adjust(l.tokens, now)
	b.dispatch(ep)
	b.observe(ep)
}

// Close refuses every call still waiting and every later Acquire with
// ErrClosed; calls already admitted go on and end with Done or Cancel.
func (b *Budget) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for _, ep := range b.endpoints {
		for _, q := range ep.queues {
			for e := q.Front(); e != nil; e = e.Next() {
				w := e.Value.(*waiter)
				w.err = ErrClosed
				close(w.ready)
			}
		}
		ep.queues, ep.ring, ep.waiting = map[string]*list.List{}, nil, 0
		if ep.stopTimer != nil {
			ep.stopTimer()
			ep.stopTimer = nil
		}
		b.observe(ep)
	}
}

// Stats returns an endpoint's state.
func (b *Budget) Stats(endpoint string) Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ep, ok := b.endpoints[endpoint]; ok {
		return ep.stats()
	}
	return Stats{}
}

func (b *Budget) observe(ep *endpoint) {
	if b.opts.Observer != nil {
		b.opts.Observer.Changed(ep.id, ep.stats())
	}
}

// dispatch admits the waiting calls that may go now, a workspace at a time
// in turn, and sets a timer for when the next may go if only time holds it.
func (b *Budget) dispatch(ep *endpoint) {
	now := b.opts.Clock.Now()
	for ep.waiting > 0 {
		w := ep.head()
		at, ok := ep.admissible(now, w.tokens)
		if !ok {
			if !at.IsZero() {
				b.wakeAt(ep, at, now)
			}
			return
		}
		ep.pop()
		ep.admit(w, now)
		w.lease.b = b
		close(w.ready)
	}
}

// wakeAt makes dispatch run again at t.
func (b *Budget) wakeAt(ep *endpoint, t, now time.Time) {
	if ep.stopTimer != nil {
		if ep.timerAt.Equal(t) {
			return
		}
		ep.stopTimer()
	}
	ep.timerAt = t
	ep.stopTimer = b.opts.Clock.AfterFunc(t.Sub(now), func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if !ep.timerAt.Equal(t) {
			return // replaced by a later timer
		}
		ep.stopTimer = nil
		b.dispatch(ep)
		b.observe(ep)
	})
}

// waiter is a call queued for admission.
type waiter struct {
	ws     string
	tokens float64
	since  time.Time
	ready  chan struct{}
	lease  *Lease
	err    error
	elem   *list.Element
}

// endpoint is one endpoint's state.
type endpoint struct {
	id     string
	limits Limits
	// cfgReq and cfgTok pace the configured ceilings; hdrReq and hdrTok
	// what the provider's headers said.
	cfgReq, cfgTok, hdrReq, hdrTok bucket
	inFlight                       int
	// answered says an answer came: until then, with no ceiling to pace
	// by, one call at a time finds out the provider's limits.
	answered   bool
	pauseUntil time.Time
	backoffs   int
	// admittedReq and admittedTok count the calls and estimated tokens
	// admitted so far.
	admittedReq, admittedTok float64
	// queues holds each workspace's waiting calls, oldest first; ring the
	// workspaces with calls waiting, in turn from next.
	queues    map[string]*list.List
	ring      []string
	next      int
	waiting   int
	stopTimer func() bool
	timerAt   time.Time
}

func newEndpoint(id string, l Limits, now time.Time) *endpoint {
	ep := &endpoint{id: id, queues: map[string]*list.List{}}
	ep.configure(l, now)
	return ep
}

// configure sets the configured ceilings' buckets: a minute's allowance
// paced evenly, at most a second's worth (and at least one call) at once.
func (ep *endpoint) configure(l Limits, now time.Time) {
	ep.limits = l
	set := func(bk *bucket, perMinute int) {
		if perMinute <= 0 {
			*bk = bucket{}
			return
		}
		rate := float64(perMinute) / 60
		bk.rate, bk.cap = rate, max(rate, 1)
		if bk.at.IsZero() {
			bk.level, bk.at = bk.cap, now
		}
		bk.level = min(bk.level, bk.cap)
	}
	set(&ep.cfgReq, l.RequestsPerMinute)
	set(&ep.cfgTok, l.TokensPerMinute)
}

func (ep *endpoint) buckets() []*bucket {
	return []*bucket{&ep.cfgReq, &ep.cfgTok, &ep.hdrReq, &ep.hdrTok}
}

func (ep *endpoint) stats() Stats { return Stats{InFlight: ep.inFlight, Waiting: ep.waiting} }

// admissible reports whether a call of tokens may go now; when only time
// holds it, at is when it may.
func (ep *endpoint) admissible(now time.Time, tokens float64) (at time.Time, ok bool) {
	if now.Before(ep.pauseUntil) {
		return ep.pauseUntil, false
	}
	if ep.limits.InFlight > 0 && ep.inFlight >= ep.limits.InFlight {
		return time.Time{}, false
	}
	if !ep.answered && ep.cfgReq.rate == 0 && ep.hdrReq.rate == 0 && ep.inFlight > 0 {
		return time.Time{}, false
	}
	for i, bk := range ep.buckets() {
		need := 1.0
		if i%2 == 1 {
			need = tokens
		}
		if t, ok := bk.when(now, need); !ok && t.After(at) {
			at = t
		}
	}
	return at, at.IsZero()
}

func (ep *endpoint) admit(w *waiter, now time.Time) {
	ep.inFlight++
	ep.admittedReq++
	ep.admittedTok += w.tokens
	ep.cfgReq.adjust(-1, now)
	ep.hdrReq.adjust(-1, now)
	ep.cfgTok.adjust(-w.tokens, now)
	ep.hdrTok.adjust(-w.tokens, now)
	w.lease = &Lease{ep: ep, tokens: w.tokens, seqReq: ep.admittedReq, seqTok: ep.admittedTok, at: now, Waited: now.Sub(w.since)}
}

func (ep *endpoint) push(w *waiter) {
	q := ep.queues[w.ws]
	if q == nil {
		q = list.New()
		ep.queues[w.ws] = q
		ep.ring = append(ep.ring, w.ws)
	}
	w.elem = q.PushBack(w)
	ep.waiting++
}

// head is the call whose turn it is.
func (ep *endpoint) head() *waiter {
	ep.next %= len(ep.ring)
	return ep.queues[ep.ring[ep.next]].Front().Value.(*waiter)
}

// pop takes the head out and passes the turn to the next workspace.
func (ep *endpoint) pop() {
	ws := ep.ring[ep.next]
	q := ep.queues[ws]
	q.Remove(q.Front())
	ep.waiting--
	if q.Len() == 0 {
		ep.dropWorkspace(ep.next)
		return
	}
	ep.next++
}

func (ep *endpoint) remove(w *waiter) {
	q := ep.queues[w.ws]
	q.Remove(w.elem)
	ep.waiting--
	if q.Len() == 0 {
		for i, ws := range ep.ring {
			if ws == w.ws {
				ep.dropWorkspace(i)
				if i < ep.next {
					ep.next--
				}
				break
			}
		}
	}
}

func (ep *endpoint) dropWorkspace(i int) {
	delete(ep.queues, ep.ring[i])
	ep.ring = append(ep.ring[:i], ep.ring[i+1:]...)
}

// bucket paces one dimension: level refills at rate per second up to cap.
// A bucket with no rate limits nothing.
type bucket struct {
	rate, cap, level float64
	at               time.Time
}

func (bk *bucket) fill(now time.Time) {
	if bk.rate == 0 || !now.After(bk.at) {
		return
	}
	bk.level = min(bk.cap, bk.level+bk.rate*now.Sub(bk.at).Seconds())
	bk.at = now
}

// when reports whether need is available now, or when it will be. A need
// larger than the bucket waits for a full bucket.
func (bk *bucket) when(now time.Time, need float64) (time.Time, bool) {
	if bk.rate == 0 {
		return time.Time{}, true
	}
	bk.fill(now)
	need = min(need, bk.cap)
	if bk.level >= need && !now.Before(bk.at) {
		return time.Time{}, true
	}
	from := bk.at
	if from.Before(now) {
		from = now
	}
	return from.Add(time.Duration(math.Ceil((need - bk.level) / bk.rate * float64(time.Second)))), false
}

// adjust adds d (negative: a charge) to the level.
func (bk *bucket) adjust(d float64, now time.Time) {
	if bk.rate == 0 {
		return
	}
	bk.fill(now)
	bk.level = min(bk.cap, bk.level+d)
}

// drain empties the bucket until t: it refills from then.
func (bk *bucket) drain(t time.Time) {
	if bk.rate == 0 {
		return
	}
	bk.level = min(bk.level, 0)
	if t.After(bk.at) {
		bk.at = t
	}
}

// learn takes what an answer said of a dimension: its limit sets the rate
// (a minute's worth, faster if the remaining and reset say so) and the
// size; its remaining, less the calls admitted since the answered one was
// and plus what refilled meanwhile, caps the level.
func (bk *bucket) learn(d Dim, now time.Time, since time.Duration, admittedSince float64) {
	if d.HasLimit && d.Limit > 0 {
		limit := float64(d.Limit)
		rate := limit / 60
		if d.HasRemaining && d.HasReset && d.Reset > 0 && d.Remaining < d.Limit {
			rate = max(rate, float64(d.Limit-d.Remaining)/d.Reset.Seconds())
		}
		if bk.rate == 0 {
			bk.level, bk.at = limit, now
		}
		bk.fill(now)
		bk.rate, bk.cap = rate, limit
		bk.level = min(bk.level, limit)
	}
	if d.HasRemaining && bk.rate > 0 {
		bk.fill(now)
		est := float64(d.Remaining) + bk.rate*since.Seconds() - admittedSince
		bk.level = min(bk.level, est, bk.cap)
	}
}
