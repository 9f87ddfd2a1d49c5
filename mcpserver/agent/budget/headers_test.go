package budget

import (
	"net/http"
	"testing"
	"time"
)

var at = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// The providers' documented examples, each read as they mean.
func TestParseHeaders(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.Header
		want Signal
	}{
		{"openai documentation example", hdr(
			"x-ratelimit-limit-requests", "60", "x-ratelimit-limit-tokens", "150000",
			"x-ratelimit-remaining-requests", "59", "x-ratelimit-remaining-tokens", "149984",
			"x-ratelimit-reset-requests", "1s", "x-ratelimit-reset-tokens", "6m0s"),
			Signal{Requests: Dim{Limit: 60, Remaining: 59, Reset: time.Second, HasLimit: true, HasRemaining: true, HasReset: true},
				Tokens: Dim{Limit: 150000, Remaining: 149984, Reset: 6 * time.Minute, HasLimit: true, HasRemaining: true, HasReset: true}}},
		{"openai milliseconds and fractions", hdr("x-ratelimit-reset-requests", "20ms", "x-ratelimit-reset-tokens", "7.66s"),
			Signal{Requests: Dim{Reset: 20 * time.Millisecond, HasReset: true}, Tokens: Dim{Reset: 7660 * time.Millisecond, HasReset: true}}},
		{"a gateway's bare seconds", hdr("x-ratelimit-reset-requests", "2"),
			Signal{Requests: Dim{Reset: 2 * time.Second, HasReset: true}}},
		{"azure 429 with retry-after-ms", hdr("x-ratelimit-remaining-requests", "0", "x-ratelimit-remaining-tokens", "0", "retry-after-ms", "1500", "retry-after", "2"),
			Signal{Requests: Dim{HasRemaining: true}, Tokens: Dim{HasRemaining: true}, RetryAfter: 1500 * time.Millisecond, HasRetryAfter: true}},
		{"anthropic documentation example", hdr(
			"anthropic-ratelimit-requests-limit", "50", "anthropic-ratelimit-requests-remaining", "49", "anthropic-ratelimit-requests-reset", "2026-12-05T12:00:01Z",
			"anthropic-ratelimit-tokens-limit", "90000", "anthropic-ratelimit-tokens-remaining", "89000", "anthropic-ratelimit-tokens-reset", "2026-12-05T12:00:02Z",
			"anthropic-ratelimit-input-tokens-limit", "80000", "anthropic-ratelimit-output-tokens-limit", "16000"),
			Signal{Requests: Dim{Limit: 50, Remaining: 49, Reset: time.Second, HasLimit: true, HasRemaining: true, HasReset: true},
				Tokens: Dim{Limit: 90000, Remaining: 89000, Reset: 2 * time.Second, HasLimit: true, HasRemaining: true, HasReset: true}}},
		{"anthropic without combined tokens: input tokens", hdr(
			"anthropic-ratelimit-input-tokens-limit", "80000", "anthropic-ratelimit-input-tokens-remaining", "0", "anthropic-ratelimit-input-tokens-reset", "2026-12-05T12:00:30Z", "retry-after", "30"),
			Signal{Tokens: Dim{Limit: 80000, Reset: 30 * time.Second, HasLimit: true, HasRemaining: true, HasReset: true}, RetryAfter: 30 * time.Second, HasRetryAfter: true}},
		{"anthropic reset in the past is no wait", hdr("anthropic-ratelimit-requests-reset", "2026-12-05T11:59:00Z"),
			Signal{Requests: Dim{HasReset: true}}},
		{"retry-after as an HTTP date", hdr("retry-after", "Sat, 05 Dec 2026 12:00:09 GMT"),
			Signal{RetryAfter: 9 * time.Second, HasRetryAfter: true}},
		{"unreadable values are not read", hdr("x-ratelimit-limit-requests", "-5", "x-ratelimit-remaining-requests", "many",
			"x-ratelimit-reset-requests", "-1s", "retry-after", "soon", "x-ratelimit-reset-tokens", "9999h"), Signal{}},
		{"a reset past a day is not believed", hdr("retry-after", "1e12"), Signal{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseHeaders(tc.h, at); got != tc.want {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func FuzzParseHeaders(f *testing.F) {
	f.Add("60", "59", "1s", "6m0s", "2026-12-05T12:00:01Z", "30", "1500")
	f.Add("", "", "20ms", "1h2m3.5s", "Sat, 05 Dec 2026 12:00:09 GMT", "Sat, 05 Dec 2026 12:00:09 GMT", "NaN")
	f.Add("9223372036854775807", "-1", "1e308", "+Inf", "0001-01-01T00:00:00Z", "1e-300", "-0")
	f.Fuzz(func(t *testing.T, limit, remaining, reset, reset2, anthropicReset, retryAfter, retryAfterMs string) {
		h := hdr("x-ratelimit-limit-requests", limit, "x-ratelimit-remaining-requests", remaining, "x-ratelimit-reset-requests", reset,
			"x-ratelimit-reset-tokens", reset2, "anthropic-ratelimit-tokens-reset", anthropicReset, "anthropic-ratelimit-tokens-limit", limit,
			"retry-after", retryAfter, "retry-after-ms", retryAfterMs)
		s := ParseHeaders(h, at)
		for _, d := range []Dim{s.Requests, s.Tokens} {
			if d.Limit < 0 || d.Remaining < 0 || d.Reset < 0 || d.Reset > maxWait {
				t.Errorf("out of range: %+v", d)
			}
			if !d.HasReset && d.Reset != 0 || !d.HasLimit && d.Limit != 0 {
				t.Errorf("a value without its flag: %+v", d)
			}
		}
		if s.RetryAfter < 0 || s.RetryAfter > maxWait || !s.HasRetryAfter && s.RetryAfter != 0 {
			t.Errorf("retry-after out of range: %v %v", s.RetryAfter, s.HasRetryAfter)
		}
	})
}
