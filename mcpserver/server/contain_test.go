package server_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/server"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// panickyStore is the embedded store with a bug injected: the calls named
// in panics panic, each once.
type panickyStore struct {
	*sqlite.Store
	readiness atomic.Int32 // panics left in the readiness probe
	purge     atomic.Int32 // panics left in PurgeOAuth
	purges    atomic.Int32 // PurgeOAuth calls that did not panic
}

func (s *panickyStore) GetWorkspace(ctx context.Context, id string) (store.Workspace, error) {
	if id == "_readiness_probe" && s.readiness.Add(-1) >= 0 {
		var m map[string]int
		//lint:ignore SA5000 the panic is the point of this test
		m["injected"]++ // a bug: assignment to a nil map
	}
	return s.Store.GetWorkspace(ctx, id)
}

func (s *panickyStore) PurgeOAuth(ctx context.Context, before time.Time) (int, error) {
	if s.purge.Add(-1) >= 0 {
		panic("injected: purging")
	}
	s.purges.Add(1)
	return s.Store.PurgeOAuth(ctx, before)
}

func openPanickyStore(t *testing.T) (*panickyStore, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kobana.db")
	st, err := sqlite.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &panickyStore{Store: st}, path
}

// scrape returns the monitor's /metrics text.
func scrape(t *testing.T, monitor string) string {
	t.Helper()
	resp, err := http.Get("http://" + monitor + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A handler that panics answers 500 — net/http alone recovers it but
// closes the connection without a word — the connection stays open for
// the next request, and the panic is logged with its stack and counted by
// surface. Before, the client's request failed with EOF.
func TestHTTPHandlerPanicAnswers500(t *testing.T) {
	st, path := openPanickyStore(t)
	var logs syncbuf.Buffer
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		HTTP: &server.HTTP{Addr: "127.0.0.1:0"}, Monitor: &server.Monitor{Addr: "127.0.0.1:0"}})
	defer stop()
	monitor := addrs["monitor"].String()
	if m := scrape(t, monitor); !strings.Contains(m, `kobana_panics_total{surface="http"} 0`) {
		t.Fatalf("before any panic, /metrics lacks kobana_panics_total{surface=\"http\"} 0:\n%s", grepLines(m, "panics"))
	}

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	get := func(url string) (int, string, bool) {
		t.Helper()
		var reused bool
		req, _ := http.NewRequest("GET", url, nil)
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), reused
	}
	for _, addr := range []string{addrs["http"].String(), monitor} {
		st.readiness.Store(1)
		code, body, _ := get("http://" + addr + "/readyz")
		if code != http.StatusInternalServerError || body != "Internal Server Error\n" {
			t.Fatalf("%s: a panicking /readyz answered %d %q, want 500 and a short body", addr, code, body)
		}
		code, _, reused := get("http://" + addr + "/readyz")
		if code != http.StatusOK || !reused {
			t.Fatalf("%s: the next /readyz answered %d (connection reused: %v), want 200 on the same connection", addr, code, reused)
		}
	}
	if m := scrape(t, monitor); !strings.Contains(m, `kobana_panics_total{surface="http"} 2`) {
		t.Errorf("after two panics, /metrics says:\n%s", grepLines(m, "panics"))
	}
	log := logs.String()
	for _, want := range []string{`"level":"ERROR","msg":"panic contained","surface":"http","where":"GET /readyz"`, `assignment to entry in nil map`, `panickyStore).GetWorkspace`} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %s:\n%s", want, log)
		}
	}
}

// The hourly purge of expired OAuth codes and tokens runs again after a
// panic, which is logged and counted on the loop surface.
func TestOAuthPurgeLoopRestartsAfterAPanic(t *testing.T) {
	st, path := openPanickyStore(t)
	st.purge.Store(1)
	var logs syncbuf.Buffer
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		HTTP: &server.HTTP{Addr: "127.0.0.1:0"}, Monitor: &server.Monitor{Addr: "127.0.0.1:0"}})
	defer stop()
	if err := testwait.Until(30*time.Second, func() error {
		if st.purges.Load() == 0 {
			return errNotYet
		}
		return nil
	}); err != nil {
		t.Fatalf("the purge did not run again after its panic: %v\n%s", err, logs.String())
	}
	if m := scrape(t, addrs["monitor"].String()); !strings.Contains(m, `kobana_panics_total{surface="loop"} 1`) {
		t.Errorf("/metrics says:\n%s", grepLines(m, "panics"))
	}
	if log := logs.String(); !strings.Contains(log, `"surface":"loop","where":"oauth purge","panic":"injected: purging"`) {
		t.Errorf("the log lacks the loop's panic:\n%s", log)
	}
}

var errNotYet = errors.New("not yet")

// grepLines are the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
