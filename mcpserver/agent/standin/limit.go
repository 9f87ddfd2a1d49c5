package standin

import (
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// RateLimit is a provider's rate limit as the stand-in enforces it: at
// most Requests requests and Tokens prompt tokens (EstimateTokens) per
// Window, a token bucket refilled continuously — as Anthropic documents
// its limits, and with the meaning OpenAI documents for its headers:
// remaining is what is left now, reset the time until the bucket is full
// again. A zero Requests or Tokens limits nothing in that dimension; a
// zero Window is a minute. A request counts when it arrives.
type RateLimit struct {
	Requests, Tokens int
	Window           time.Duration
}

// limiter is the state of a RateLimit.
type limiter struct {
	mu       sync.Mutex
	rl       RateLimit
	req, tok float64 // levels
	at       time.Time
	limited  int
}

func newLimiter(rl RateLimit, now time.Time) *limiter {
	if rl.Window <= 0 {
		rl.Window = time.Minute
	}
	return &limiter{rl: rl, req: float64(rl.Requests), tok: float64(rl.Tokens), at: now}
}

// take charges a request of tokens prompt tokens arriving at now and writes
// the rate-limit headers of its answer into h; it reports false, with
// retry-after and retry-after-ms set, when the request is past the limit.
func (l *limiter) take(tokens int, now time.Time, h http.Header) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.rl.Window.Seconds()
	if dt := now.Sub(l.at).Seconds(); dt > 0 {
		l.req = min(float64(l.rl.Requests), l.req+dt*float64(l.rl.Requests)/w)
		l.tok = min(float64(l.rl.Tokens), l.tok+dt*float64(l.rl.Tokens)/w)
		l.at = now
	}
	var wait float64 // seconds until the request would fit
	if l.rl.Requests > 0 && l.req < 1 {
		wait = max(wait, (1-l.req)*w/float64(l.rl.Requests))
	}
	need := float64(min(tokens, l.rl.Tokens))
	if l.rl.Tokens > 0 && l.tok < need {
		wait = max(wait, (need-l.tok)*w/float64(l.rl.Tokens))
	}
	ok := wait == 0
	if ok {
		l.req--
		l.tok -= float64(tokens)
	} else {
		l.limited++
		h.Set("Retry-After", strconv.Itoa(int(math.Ceil(wait))))
		h.Set("Retry-After-Ms", strconv.Itoa(int(math.Ceil(wait*1000))))
	}
	dim := func(name string, limit int, level float64) {
		if limit == 0 {
			return
		}
		h.Set("X-Ratelimit-Limit-"+name, strconv.Itoa(limit))
		h.Set("X-Ratelimit-Remaining-"+name, strconv.Itoa(max(int(math.Floor(level)), 0)))
		reset := time.Duration((float64(limit) - level) * w / float64(limit) * float64(time.Second))
		h.Set("X-Ratelimit-Reset-"+name, reset.Round(time.Millisecond).String())
	}
	dim("Requests", l.rl.Requests, l.req)
	dim("Tokens", l.rl.Tokens, l.tok)
	return ok
}

// Limited is how many requests the server answered 429 for its RateLimit.
func (s *Server) Limited() int {
	if s.limiter == nil {
		return 0
	}
	s.limiter.mu.Lock()
	defer s.limiter.mu.Unlock()
	return s.limiter.limited
}
