package budget

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Dim is what one answer said about one dimension of an endpoint's rate
// limit (requests, or tokens).
type Dim struct {
	// Limit is the most the provider allows per its window (per minute for
	// OpenAI's and Anthropic's RPM and TPM); Remaining is what is left now;
	// Reset is how long until the dimension is back at Limit.
	Limit, Remaining int64
	Reset            time.Duration
	// HasLimit, HasRemaining and HasReset say which were sent and readable.
	HasLimit, HasRemaining, HasReset bool
}

// Known reports whether the answer said anything about the dimension.
func (d Dim) Known() bool { return d.HasLimit || d.HasRemaining || d.HasReset }

// Signal is what an answer's headers say about the endpoint's rate limits.
type Signal struct {
	// Requests and Tokens are the request and token dimensions: OpenAI's
	// and Azure's x-ratelimit-*-requests|tokens, or Anthropic's
	// anthropic-ratelimit-requests-* and anthropic-ratelimit-tokens-* (its
	// input-tokens-* when no combined tokens-* is sent).
	Requests, Tokens Dim
	// RetryAfter is the wait the answer asked for: retry-after-ms, or
	// retry-after in seconds or as an HTTP date (HasRetryAfter).
	RetryAfter    time.Duration
	HasRetryAfter bool
}

// maxWait bounds every duration read from a header: a provider's reset or
// retry-after is never longer than a day; a longer one is not believed.
const maxWait = 24 * time.Hour

// ParseHeaders reads the rate-limit headers of one answer, received at
// now (Anthropic's resets and an HTTP-date retry-after are times). A header
// that is absent or unreadable is not Has*; nothing panics on any input.
func ParseHeaders(h http.Header, now time.Time) Signal {
	var s Signal
	s.Requests = openAIDim(h, "requests")
	s.Tokens = openAIDim(h, "tokens")
	if !s.Requests.Known() {
		s.Requests = anthropicDim(h, "requests", now)
	}
	if !s.Tokens.Known() {
		s.Tokens = anthropicDim(h, "tokens", now)
	}
	if !s.Tokens.Known() {
		s.Tokens = anthropicDim(h, "input-tokens", now)
	}
	s.RetryAfter, s.HasRetryAfter = RetryAfter(h, now)
	return s
}

func openAIDim(h http.Header, what string) Dim {
	var d Dim
	d.Limit, d.HasLimit = count(h.Get("X-Ratelimit-Limit-" + what))
	d.Remaining, d.HasRemaining = count(h.Get("X-Ratelimit-Remaining-" + what))
	d.Reset, d.HasReset = ParseDuration(h.Get("X-Ratelimit-Reset-" + what))
	return d
}

func anthropicDim(h http.Header, what string, now time.Time) Dim {
	var d Dim
	p := "Anthropic-Ratelimit-" + what
	d.Limit, d.HasLimit = count(h.Get(p + "-Limit"))
	d.Remaining, d.HasRemaining = count(h.Get(p + "-Remaining"))
	if v := strings.TrimSpace(h.Get(p + "-Reset")); v != "" {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			if w := t.Sub(now); w <= maxWait {
				d.Reset, d.HasReset = max(w, 0), true
			}
		}
	}
	return d
}

// count reads a non-negative integer header value.
func count(v string) (int64, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// ParseDuration reads an OpenAI reset header: a Go-style duration ("1s",
// "6m0s", "20ms", "1h2m3.5s") or a bare number of seconds ("1", "0.5"),
// as some compatible gateways send. A negative, unreadable or
// longer-than-a-day value is not read.
func ParseDuration(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return seconds(f)
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > maxWait {
		return 0, false
	}
	return d, true
}

func seconds(f float64) (time.Duration, bool) {
	if math.IsNaN(f) || f < 0 || f > maxWait.Seconds() {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}

// RetryAfter reads the wait an answer asks for: retry-after-ms
// (milliseconds, OpenAI's and Azure's), else retry-after in seconds or as
// an HTTP date (RFC 9110). A date in the past is no wait.
func RetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil {
			if d, ok := seconds(ms / 1000); ok {
				return d, true
			}
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return seconds(f)
	}
	if t, err := http.ParseTime(v); err == nil {
		if w := t.Sub(now); w <= maxWait {
			return max(w, 0), true
		}
	}
	return 0, false
}
