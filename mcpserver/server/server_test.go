package server_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/internal/version"
	"github.com/kobana/workflow/mcpserver/mcptest"
	"github.com/kobana/workflow/mcpserver/server"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// openStore opens a fresh embedded store; its file is returned beside it.
func openStore(t testing.TB) (store.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kobana.db")
	st, err := sqlite.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

// start runs cfg in the background and returns once it serves, with the
// addresses it reported and a function that stops it and returns Run's
// error.
func start(t testing.TB, cfg server.Config) (map[string]net.Addr, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	ready := make(chan map[string]net.Addr, 1)
	cfg.Ready = func(a map[string]net.Addr) { ready <- a }
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, cfg) }()
	select {
	case addrs := <-ready:
		return addrs, func() error { cancel(); return <-done }
	case err := <-done:
		cancel()
		t.Fatalf("Run ended before serving: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("Run did not serve within 30s")
	}
	cancel()
	return nil, nil
}

// A Go program runs the server from a Config, as kobana serve does: the
// demo's tokens printed, MCP on HTTP asking for a token, a clean stop.
func TestRunFromAConfig(t *testing.T) {
	st, path := openStore(t)
	var out, notices syncbuf.Buffer
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Demo: true, Process: true,
		HTTP: &server.HTTP{Addr: "127.0.0.1:0"}, Output: &out, Notices: &notices})
	resp, err := http.Get("http://" + addrs["http"].String() + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /mcp without a token: %s", resp.Status)
	}
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := strings.Count(out.String(), "token for "); n != 2 {
		t.Errorf("%d demo tokens printed, want 2: %q", n, out.String())
	}
	for _, want := range []string{"serving MCP on http://" + addrs["http"].String() + "/mcp", "processing the Inbox's queue"} {
		if !strings.Contains(notices.String(), want) {
			t.Errorf("notices lack %q: %s", want, notices.String())
		}
	}
}

// A Config that cannot be served is a *ConfigError, before anything is
// bound.
func TestRunRefusesWhatCannotBeServed(t *testing.T) {
	st, path := openStore(t)
	for _, tc := range []struct {
		name string
		cfg  server.Config
		want string
	}{
		{"no store", server.Config{HTTP: &server.HTTP{Addr: "127.0.0.1:0"}}, "no store"},
		{"nothing", server.Config{Store: st}, "nothing to serve"},
		{"intake over HTTP alone", server.Config{Store: st, Intake: &server.Intake{HTTP: true}}, "needs the HTTP listener"},
		{"unknown product", server.Config{Store: st, HTTP: &server.HTTP{Addr: "127.0.0.1:0"}, Products: []string{"payroll"}}, `unknown product "payroll"`},
		{"stdio without a token", server.Config{Store: st, StorePath: path, Stdio: &server.Stdio{In: &bytes.Buffer{}}}, server.ErrStdioToken.Error()},
	} {
		err := server.Run(t.Context(), tc.cfg)
		var ce *server.ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want a *ConfigError saying %q", tc.name, err, tc.want)
		}
	}
}

// The MCP serverInfo names kobana and its version (kobana version).
func TestServerInfoCarriesTheVersion(t *testing.T) {
	st, path := openStore(t)
	var out syncbuf.Buffer
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Demo: true, HTTP: &server.HTTP{Addr: "127.0.0.1:0"}, Output: &out})
	defer stop()
	token := demoToken(t, out.String())
	cs := mcptest.Connect(t, mcptest.HTTP("http://"+addrs["http"].String()+"/mcp", token), "2025-11-25", nil)
	info := cs.InitializeResult().ServerInfo
	if info.Name != "kobana" || info.Version != version.Read().Short() || info.Version == "" {
		t.Errorf("serverInfo %+v, want kobana %s", info, version.Read().Short())
	}
}

// demoToken is the first demo token among the lines the server printed.
func demoToken(t testing.TB, out string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if i := strings.LastIndex(l, ": kbn_"); i >= 0 && strings.HasPrefix(l, "token for ") {
			return l[i+2:]
		}
	}
	t.Fatalf("no demo token in %q", out)
	return ""
}
