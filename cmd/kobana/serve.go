package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/inbox/pipeline"
	"github.com/kobana/workflow/internal/demo"
	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/store"
)

func init() {
	register("serve", "serve the MCP products over stdio or HTTP", runServe)
}

const serveUsage = `usage: kobana serve [-http ADDR] [-stdio] [-smtp ADDR] [-db PATH|URL] [-demo] [-products inbox,billing] [flags]

Serves the Kobana MCP products on one endpoint for both protocol eras:
Streamable HTTP at http://ADDR/mcp (Authorization: Bearer <token>) and/or
stdio (token from KOBANA_TOKEN). -smtp receives the inboxes' mail (and
-intake-http raw messages posted over HTTP) into the store, see
docs/pipeline.md. -demo seeds a demo organization on first
use and prints a read-write and a read-only token. KOBANA_SECRET_KEY (64 hex
digits) is the key that encrypts workspace secrets at rest; without it the
store generates one and keeps it in its own file.

flags:
`

// serveFlags are the parsed flags of kobana serve.
type serveFlags struct {
	db       string
	messages string
	demo     bool
	allow    allowFlag
	verbose  bool
	products []productSetup
	services []serviceSetup
}

// parseServe parses serve's flags: its own, then each product's and each
// service's. With ok false, serve returns code.
func parseServe(c *Command, args []string) (f *serveFlags, code int, ok bool) {
	f = &serveFlags{}
	fs := flag.NewFlagSet("kobana serve", flag.ContinueOnError)
	fs.StringVar(&f.db, "db", "kobana.db", "the store: a SQLite file (created if missing), or a postgres:// URL shared by replicas")
	fs.StringVar(&f.messages, "messages", "", "directory for the Inbox's raw messages with the embedded store (default: kobana-messages beside the database file); with PostgreSQL, where incoming messages are spooled")
	fs.BoolVar(&f.demo, "demo", false, "seed the demo organization if missing and print demo tokens")
	fs.Var(&f.allow, "allow", allowHelp)
	fs.BoolVar(&f.verbose, "v", false, "log server activity to standard error")
	names := productNames()
	selected := fs.String("products", strings.Join(names, ","), "comma-separated products to serve: "+strings.Join(names, ", "))
	setups := make(map[string]productSetup, len(products))
	for _, p := range products {
		setups[p.name] = p.setup(fs)
	}
	svcs := make([]func() (serviceSetup, error), len(services))
	for i, s := range services {
		svcs[i] = s.setup(fs)
	}
	if code, ok := c.parseFlags(fs, serveUsage, args); !ok {
		return nil, code, false
	}
	fail := func(format string, a ...any) (*serveFlags, int, bool) {
		fmt.Fprintf(c.Stderr, "kobana serve: "+format+"\n", a...)
		return nil, exitUsage, false
	}
	if fs.NArg() > 0 {
		return fail("unexpected argument %q", fs.Arg(0))
	}
	var err error
	if f.products, err = selectProducts(*selected, setups); err != nil {
		return fail("%v", err)
	}
	for _, p := range f.products {
		if p.check == nil {
			continue
		}
		if err := p.check(c); err != nil {
			return fail("%v", err)
		}
	}
	if f.services, err = selectServices(svcs); err != nil {
		return fail("%v", err)
	}
	return f, exitOK, true
}

// selectServices reads the services' flags: the services they ask for, in
// the registry's order; at least one.
func selectServices(read []func() (serviceSetup, error)) ([]serviceSetup, error) {
	var out []serviceSetup
	var asked []string
	served := 0
	for i, s := range services {
		setup, err := read[i]()
		if err != nil {
			return nil, err
		}
		if setup.service != nil {
			out = append(out, setup)
			if !s.companion {
				served++
			}
		}
		if !s.companion {
			asked = append(asked, s.enable)
		}
	}
	if served == 0 {
		return nil, fmt.Errorf("nothing to serve: pass %s (or several)", strings.Join(asked, ", "))
	}
	return out, nil
}

// selectProducts reads -products: names from the registry, comma-separated,
// each served once, in the registry's order.
func selectProducts(list string, setups map[string]productSetup) ([]productSetup, error) {
	chosen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if _, known := setups[name]; !known {
			return nil, fmt.Errorf("unknown product %q (available: %s)", name, strings.Join(productNames(), ", "))
		}
		chosen[name] = true
	}
	var out []productSetup
	for _, p := range products {
		if chosen[p.name] {
			out = append(out, setups[p.name])
		}
	}
	return out, nil
}

// runServe is kobana serve: parse the flags, open the store, assemble the
// products, serve until interrupted.
func runServe(c *Command, args []string) int { return serveWith(c, args, nil) }

// serveWith is kobana serve with configure, when not nil, called on the
// assembly before it is assembled (the demo points the agents and the
// outgoing requests at its own stand-ins there).
func serveWith(c *Command, args []string, configure func(*assembly)) int {
	f, code, ok := parseServe(c, args)
	if !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(c.context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, code := c.openStore(ctx, "kobana serve", f.db)
	if st == nil {
		return code
	}
	defer st.Close()
	a := f.assembly(c, ctx, st)
	defer a.close()
	if configure != nil {
		configure(a)
	}
	if err := a.assemble(f); err != nil {
		fmt.Fprintf(c.Stderr, "kobana serve: %v\n", err)
		if errors.As(err, new(usageError)) {
			return exitUsage
		}
		return exitFailure
	}
	if err := a.serve(f.services); err != nil {
		fmt.Fprintf(c.Stderr, "kobana serve: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// usageError is an error in how serve was asked to run (exit status 2).
type usageError struct{ error }

// assembly is what serve's products and services are built from and share.
type assembly struct {
	cmd   *Command
	ctx   context.Context
	store store.Store
	guard *guard.Guard
	log   *slog.Logger
	now   func() time.Time
	// info is where notices for the person running serve go: standard
	// output, or standard error when a service speaks on standard output.
	info io.Writer
	// publicURL is the base URL clients reach the HTTP endpoint at; empty
	// without one.
	publicURL string
	// tokens are the demo tokens, with -demo.
	tokens []demo.Token
	// handlers are routes products serve beside /mcp, by ServeMux pattern.
	handlers map[string]http.Handler
	// server is the MCP server, once the products are built.
	server *mcpserver.Server
	// closers release what services bound, in reverse order.
	closers []func()
	// db is -db (the intake keeps raw messages beside the SQLite file);
	// hasHTTP says -http is served.
	db      string
	hasHTTP bool
	// messagesDir is -messages; process says this process works the
	// Inbox's queue (-process).
	messagesDir string
	process     bool
	// inbox is the Inbox's queue and raw messages, once opened
	// (openInboxStorage); pipeline its processing stages, once the Inbox
	// product is built.
	inbox    *inboxStorage
	pipeline *pipeline.Pipeline
	// outbound is how the workflows' requests and the webhook deliveries
	// reach the network; the guard checks every connection it opens (the
	// demo sends them to its local receiver this way). The zero value dials
	// each host as named.
	outbound guard.Network
	// agents, when set, runs the Inbox's agents instead of the runner the
	// model flags configure (the demo's).
	agents inbox.AgentRunner
}

func (f *serveFlags) assembly(c *Command, ctx context.Context, st store.Store) *assembly {
	a := &assembly{cmd: c, ctx: ctx, store: st, guard: &guard.Guard{Allow: f.allow},
		log: slog.New(slog.DiscardHandler), now: time.Now, info: c.Stdout, handlers: map[string]http.Handler{}, db: f.db, messagesDir: f.messages}
	if f.verbose {
		a.log = slog.New(slog.NewTextHandler(c.Stderr, nil))
	}
	for _, s := range f.services {
		if s.stdout {
			a.info = c.Stderr
		}
		a.hasHTTP = a.hasHTTP || s.name == "http"
		a.process = a.process || s.name == "pipeline"
	}
	return a
}

// assemble seeds the demo (with -demo), binds the services' listeners,
// builds the products and the MCP server over them.
func (a *assembly) assemble(f *serveFlags) error {
	if f.demo {
		if err := a.seedDemo(f.products); err != nil {
			return err
		}
	}
	for _, s := range f.services {
		if err := s.service.listen(a); err != nil {
			return err
		}
	}
	var served []*mcpserver.Product
	var instructions []string
	for _, p := range f.products {
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
		Instructions: strings.Join(append(instructions, "Destructive tools ask the user to confirm."), " "),
		Logger:       a.log,
	})
	if err != nil {
		return err
	}
	a.server = srv
	return nil
}

// seedDemo seeds the demo organization and each product's demo records,
// and prints the demo tokens.
func (a *assembly) seedDemo(products []productSetup) error {
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
func (a *assembly) serve(services []serviceSetup) error {
	ctx, cancel := context.WithCancel(a.ctx)
	defer cancel()
	type stopped struct {
		name string
		err  error
	}
	done := make(chan stopped, len(services))
	addrs := map[string]net.Addr{}
	for _, s := range services {
		s.service.announce(a.cmd.Stderr)
		go func() { done <- stopped{s.name, s.service.serve(ctx, a)} }()
		if addr := s.service.addr(); addr != nil {
			addrs[s.name] = addr
		}
	}
	if a.cmd.Ready != nil {
		a.cmd.Ready(addrs)
	}
	var errs []error
	for range services {
		s := <-done
		cancel() // the first to stop stops the others
		if s.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.name, s.err))
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
