package standin

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// A stand-in that enforces 2 requests a minute: the headers on every
// answer, then 429 with retry-after and retry-after-ms.
func TestServerEnforcesRateLimit(t *testing.T) {
	s := New(Always(Answer(`{"result": 1}`)))
	s.Limit(RateLimit{Requests: 2, Tokens: 1000})
	base, stop, err := s.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for i, want := range []string{"1", "0"} {
		code, h, v := post(t, base+"/chat/completions", "", chat)
		if code != 200 || h.Get("X-Ratelimit-Limit-Requests") != "2" || h.Get("X-Ratelimit-Remaining-Requests") != want ||
			h.Get("X-Ratelimit-Limit-Tokens") != "1000" || h.Get("X-Ratelimit-Remaining-Tokens") != strconv.Itoa(1000-12*(i+1)) {
			t.Fatalf("answer %d: %d %v %v", i, code, h, v)
		}
		if d, err := time.ParseDuration(h.Get("X-Ratelimit-Reset-Requests")); err != nil || d <= 0 || d > time.Duration(i+1)*30*time.Second {
			t.Fatalf("answer %d: reset %q", i, h.Get("X-Ratelimit-Reset-Requests"))
		}
	}
	code, h, v := post(t, base+"/chat/completions", "", chat)
	ra, _ := strconv.Atoi(h.Get("Retry-After"))
	ms, _ := strconv.Atoi(h.Get("Retry-After-Ms"))
	if code != http.StatusTooManyRequests || ra < 1 || ra > 30 || ms < 1 || ms > 30000 || h.Get("X-Ratelimit-Remaining-Requests") != "0" {
		t.Fatalf("past the limit: %d %v %v", code, h, v)
	}
	if s.Limited() != 1 || len(s.Requests()) != 3 {
		t.Fatalf("limited %d, requests %d", s.Limited(), len(s.Requests()))
	}
}
