package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/agent/budget"
	"github.com/kobana/workflow/mcpserver/inbox/pipeline"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/internal/version"
	"github.com/kobana/workflow/mcpserver/server/metrics"
	"github.com/kobana/workflow/mcpserver/store"
)

// ConfigError reports a Config that asks for something that cannot be
// served (a stdio server with no token, the HTTP intake without an HTTP
// listener). Callers branch on it: kobana serve exits with its usage status.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ConfigError) Unwrap() error { return e.Err }

// ErrStdioToken reports a stdio server without a token to speak for (and
// no demo token to fall back on); it comes wrapped in a *ConfigError.
var ErrStdioToken = errors.New("serving on stdio needs a token")

// Run serves cfg until ctx ends or a service stops on its own (the stdio
// client closing its input is a normal end): it seeds the demo when asked,
// binds every listener, builds the products and the MCP server over them,
// calls cfg.Ready, serves, and on the way out stops every service and
// waits for it. A store whose sealed secrets its key does not open is
// refused (an error matching store.ErrNoSecretKey). The store stays the
// caller's to close.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.check(); err != nil {
		return err
	}
	if keys, ok := cfg.Store.(store.SecretKeys); ok {
		// A store restored without its key would start and fail every job
		// that opens a secret later: refuse now.
		if err := keys.CheckSecretKey(ctx); err != nil {
			return err
		}
	}
	a := newAssembly(ctx, cfg)
	defer a.close()
	defer a.listenPanics()()
	if cfg.StorePath != "" {
		release, err := InUse(cfg.StorePath)
		if err != nil {
			return err
		}
		defer release()
	}
	if err := a.assemble(); err != nil {
		return err
	}
	return a.serve()
}

// assembly is what the products and services are built from and share.
type assembly struct {
	cfg   Config
	ctx   context.Context
	store store.Store
	guard *guard.Guard
	log   *slog.Logger
	now   func() time.Time
	// info is where notices for the person running the server go that are
	// not about the services (the demo tokens): cfg.Output, or
	// cfg.Notices when a service speaks on standard output (stdio).
	info io.Writer
	// notices is cfg.Notices (or a discard).
	notices io.Writer
	// publicURL is the base URL clients reach the HTTP endpoint at; empty
	// without one.
	publicURL string
	// tokens are the demo tokens, with cfg.Demo.
	tokens []demo.Token
	// handlers are routes products serve beside /mcp, by ServeMux pattern.
	handlers map[string]http.Handler
	// server is the MCP server, once the products are built.
	server *mcpserver.Server
	// services are the services cfg asks for, in the order they listen.
	services []service
	// closers release what services bound, in reverse order.
	closers []func()
	// inbox is the Inbox's queue and raw messages, once opened
	// (openInboxStorage); pipeline its processing stages, once the Inbox
	// product is built.
	inbox    *inboxStorage
	pipeline *pipeline.Pipeline
	// budget admits the model calls of every agent run of the process,
	// once made (modelBudget).
	budget *budget.Budget
	// metrics are the server's metrics; mcp the MCP server once built
	// (for the metrics' gauges); stopping says Run's context ended.
	metrics  *metrics.Metrics
	mcp      atomic.Pointer[mcpserver.Server]
	stopping atomic.Bool
}

func newAssembly(ctx context.Context, cfg Config) *assembly {
	a := &assembly{cfg: cfg, ctx: ctx, store: cfg.Store, guard: cfg.Guard, log: cfg.Logger, now: time.Now,
		info: cfg.Output, notices: cfg.Notices, handlers: map[string]http.Handler{}}
	if a.guard == nil {
		a.guard = &guard.Guard{}
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.notices == nil {
		a.notices = io.Discard
	}
	if a.info == nil {
		a.info = io.Discard
	}
	if cfg.Stdio != nil {
		a.info = a.notices
	}
	if a.cfg.StopGrace == 0 {
		a.cfg.StopGrace = DefaultStopGrace
	}
	a.services = cfg.services()
	a.metrics = a.newMetrics()
	return a
}

// assemble seeds the demo (with cfg.Demo), binds the services' listeners,
// builds the products and the MCP server over them.
func (a *assembly) assemble() error {
	products, err := a.cfg.products()
	if err != nil {
		return err
	}
	if a.cfg.Demo {
		if err := a.seedDemo(products); err != nil {
			return err
		}
	}
	for _, s := range a.services {
		if err := s.listen(a); err != nil {
			return err
		}
	}
	a.closers = append(a.closers, probeWrites(a))
	var served []*mcpserver.Product
	var instructions []string
	for _, p := range products {
		mp, err := p.build(a)
		if err != nil {
			return err
		}
		served = append(served, mp)
		instructions = append(instructions, p.instructions)
	}
	srv, err := mcpserver.New(mcpserver.Options{
		Store:        a.store,
		Products:     served,
		Name:         "kobana",
		Version:      version.Read().Short(),
		Instructions: strings.Join(append(instructions, "Destructive tools ask the user to confirm."), " "),
		Logger:       a.log,
		Observe:      a.metrics.MCP,
	})
	if err != nil {
		return err
	}
	a.server = srv
	a.mcp.Store(srv)
	return a.addConsole()
}

// seedDemo seeds the demo organization and each product's demo records,
// and prints the demo tokens, unless the demo is seeded already.
func (a *assembly) seedDemo(products []product) error {
	if seeded, err := demoSeeded(a); err != nil {
		return err
	} else if seeded {
		// The tokens were printed when the demo was seeded; minting two
		// more on every start would leave a trail of live tokens.
		fmt.Fprintf(a.info, "demo: the demo organization is already seeded; its tokens were printed then (kobana token create -person %s -workspace %s -scopes read,write mints another)\n", demo.Owner, demo.Workspace)
		return nil
	}
	tokens, err := seedDemoOrganization(a)
	if err != nil {
		return err
	}
	for _, p := range products {
		if p.seed == nil {
			continue
		}
		if err := p.seed(a); err != nil {
			return err
		}
	}
	for _, t := range tokens {
		fmt.Fprintln(a.info, t.Line())
	}
	a.tokens = tokens
	return nil
}

// serve runs every service until the context ends or one of them stops
// (stdio's client closing its input is a normal end); then it stops the
// others and waits for them.
func (a *assembly) serve() error {
	ctx, cancel := context.WithCancel(a.ctx)
	defer cancel()
	type stopped struct {
		name string
		err  error
	}
	done := make(chan stopped, len(a.services))
	addrs := map[string]net.Addr{}
	for _, s := range a.services {
		s.announce(a.notices)
		go func() { done <- stopped{s.name(), s.serve(ctx, a)} }()
		if addr := s.addr(); addr != nil {
			addrs[s.name()] = addr
		}
	}
	if a.cfg.Ready != nil {
		a.cfg.Ready(addrs)
	}
	var errs []error
	asked := a.ctx.Done()
	for left := len(a.services); left > 0; {
		select {
		case <-asked:
			a.stopping.Store(true)
			fmt.Fprintf(a.notices, "stopping: taking no new work; the work in flight has %v to finish\n", a.cfg.StopGrace)
			asked = nil
		case s := <-done:
			left--
			cancel() // the first to stop stops the others
			if s.err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", s.name, s.err))
			}
		}
	}
	return errors.Join(errs...)
}

// close releases what the services bound.
func (a *assembly) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
}

// InUse marks the embedded store at path as served by this process, until
// release: a shared lock on PATH.serve-lock, which every server holds while
// it runs, so that a tool that must have the store to itself (kobana move)
// can tell (StoreServed).
func InUse(path string) (release func(), err error) {
	f, err := os.OpenFile(path+".serve-lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("marking %s in use: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil {
		f.Close()
		return nil, fmt.Errorf("marking %s in use: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// StoreServed says a server runs on the embedded store at path (InUse).
func StoreServed(path string) (bool, error) {
	f, err := os.OpenFile(path+".serve-lock", os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return true, nil
		}
		return false, err
	}
	return false, nil
}
