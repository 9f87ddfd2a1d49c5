package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/executor"
	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/inbox"
	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/billing"
	"github.com/kobana/workflow/mcpserver/inboxmcp"
	"github.com/kobana/workflow/resolve"
	"github.com/kobana/workflow/resolve/eml"
	"github.com/kobana/workflow/store"
	"github.com/kobana/workflow/store/pg"
	"github.com/kobana/workflow/store/sqlite"
)

func init() {
	register("serve", "serve the MCP products over stdio or HTTP", runServe)
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

const serveUsage = `usage: kobana serve [-http ADDR] [-stdio] [-db PATH] [-demo] [-products inbox,billing] [flags]

Serves the Kobana MCP products on one endpoint for both protocol eras:
Streamable HTTP at http://ADDR/mcp (Authorization: Bearer <token>) and/or
stdio (token from KOBANA_TOKEN). -demo seeds a demo organization on first
use and prints a read-write and a read-only token. KOBANA_SECRET_KEY (64 hex
digits) is the key that encrypts workspace secrets at rest; without it the
store generates one and keeps it in its own file.

flags:
`

func runServe(c *Command, args []string) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	fs.Usage = func() { fmt.Fprint(c.Stderr, serveUsage); fs.PrintDefaults() }
	httpAddr := fs.String("http", "", "serve Streamable HTTP on this address, e.g. 127.0.0.1:8080")
	stdio := fs.Bool("stdio", false, "serve on standard input and output (token from KOBANA_TOKEN)")
	dbPath := fs.String("db", "kobana.db", "the store: a SQLite file (created if missing), or a postgres:// URL shared by replicas")
	demo := fs.Bool("demo", false, "seed the demo organization if missing and print demo tokens")
	products := fs.String("products", "inbox,billing", "comma-separated products to serve: inbox, billing")
	publicURL := fs.String("public-url", "", "base URL clients reach this server at, for signed download links (default http://ADDR)")
	var allow, hosts, origins listFlag
	fs.Var(&allow, "allow", "CIDR the outbound guard allows despite its deny-list, e.g. 127.0.0.0/8 (repeatable; for local receivers)")
	fs.Var(&hosts, "allowed-host", "Host header value accepted on HTTP (repeatable; default: loopback names only)")
	fs.Var(&origins, "allowed-origin", "browser Origin accepted on HTTP (repeatable; default: pages of an allowed host)")
	verbose := fs.Bool("v", false, "log server activity to standard error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.Stderr, "kobana serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *httpAddr == "" && !*stdio {
		fmt.Fprintln(c.Stderr, "kobana serve: pass -http ADDR, -stdio, or both")
		return exitUsage
	}
	var g guard.Guard
	for _, a := range allow {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			fmt.Fprintf(c.Stderr, "kobana serve: -allow %q: %v\n", a, err)
			return exitUsage
		}
		g.Allow = append(g.Allow, p)
	}
	serveProducts := map[string]bool{}
	for _, p := range strings.Split(*products, ",") {
		p = strings.TrimSpace(p)
		if p != "inbox" && p != "billing" {
			fmt.Fprintf(c.Stderr, "kobana serve: unknown product %q (available: inbox, billing)\n", p)
			return exitUsage
		}
		serveProducts[p] = true
	}

	ctx, stop := signal.NotifyContext(c.context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, code := c.openStore(ctx, "kobana serve", *dbPath)
	if st == nil {
		return code
	}
	defer st.Close()

	// With stdio, standard output is the protocol: everything else goes to
	// standard error.
	info := c.Stdout
	if *stdio {
		info = c.Stderr
	}
	stdioToken := c.getenv("KOBANA_TOKEN")
	if *demo {
		// The demo organization, its people and tokens come with Inbox's
		// seed; Billing adds its records to the same organization.
		now := time.Now()
		tokens, err := inbox.Seed(ctx, st, now)
		if err == nil && serveProducts["billing"] {
			err = billing.SeedDemo(ctx, st, now)
		}
		if err != nil {
			fmt.Fprintf(c.Stderr, "kobana serve: %v\n", err)
			return exitFailure
		}
		for _, t := range tokens {
			fmt.Fprintln(info, t.Line())
		}
		if *stdio && stdioToken == "" {
			stdioToken = tokens[0].Token
			fmt.Fprintf(c.Stderr, "stdio speaks for %s (KOBANA_TOKEN is not set)\n", tokens[0].Name)
		}
	}

	var ln net.Listener
	base := *publicURL
	if *httpAddr != "" {
		var err error
		ln, err = net.Listen("tcp", *httpAddr)
		if err != nil {
			fmt.Fprintf(c.Stderr, "kobana serve: %v\n", err)
			return exitFailure
		}
		defer ln.Close()
		if base == "" {
			base = "http://" + ln.Addr().String()
		}
	}
	logger := slog.New(slog.DiscardHandler)
	if *verbose {
		logger = slog.New(slog.NewTextHandler(c.Stderr, nil))
	}
	var served []*mcpserver.Product
	var instructions []string
	extra := map[string]http.Handler{}
	if serveProducts["inbox"] {
		ibx, ip, err := inboxmcp.New(inboxmcp.Options{
			Store:      st,
			Lint:       lintWorkflow,
			Runner:     workflowRunner{ex: executor.New(executor.Options{Guard: &g}), now: time.Now},
			HTTPClient: g.Client(),
			PublicURL:  base,
		})
		if err != nil {
			fmt.Fprintf(c.Stderr, "kobana serve: %v\n", err)
			return exitFailure
		}
		served = append(served, ibx)
		extra[inboxmcp.DownloadPath] = ip.DownloadHandler()
		instructions = append(instructions, "Kobana Inbox: e-mail inboxes whose AI agent turns each message into a workflow; resources under kobana://inbox/.")
	}
	if serveProducts["billing"] {
		bp, _, err := billing.New(billing.Options{Store: st})
		if err != nil {
			fmt.Fprintf(c.Stderr, "kobana serve: %v\n", err)
			return exitFailure
		}
		served = append(served, bp)
		instructions = append(instructions, "Kobana Billing: customers, subscriptions, invoices and NF-e of the organization; resources under kobana://billing/.")
	}
	srv, err := mcpserver.New(mcpserver.Options{
		Store:        st,
		Products:     served,
		Name:         "kobana",
		Instructions: strings.Join(append(instructions, "Destructive tools ask the user to confirm."), " "),
		Logger:       logger,
	})
	if err != nil {
		fmt.Fprintf(c.Stderr, "kobana serve: %v\n", err)
		return exitFailure
	}

	errc := make(chan error, 2)
	running := 0
	var hs *http.Server
	if ln != nil {
		handler := srv.HTTPHandler(mcpserver.HTTPOptions{
			AllowedHosts:   hosts,
			AllowedOrigins: origins,
			Extra:          extra,
		})
		hs = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
		running++
		go func() { errc <- hs.Serve(ln) }()
		fmt.Fprintf(c.Stderr, "serving MCP on %s/mcp\n", "http://"+ln.Addr().String())
		if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() && len(hosts) == 0 {
			fmt.Fprintln(c.Stderr, "note: only loopback Host names are accepted; pass -allowed-host NAME for the names clients use to reach this address")
		}
	}
	if *stdio {
		if stdioToken == "" {
			fmt.Fprintln(c.Stderr, "kobana serve: -stdio needs a token in KOBANA_TOKEN (see kobana token create)")
			return exitUsage
		}
		running++
		go func() {
			errc <- srv.ServeStdio(ctx, stdioToken, io.NopCloser(c.Stdin), nopWriteCloser{c.Stdout})
		}()
	}
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
		// stdio ends when the client closes its input: a normal end.
		if runErr != nil && (errors.Is(runErr, io.EOF) || errors.Is(runErr, context.Canceled)) {
			runErr = nil
		}
	}
	if hs != nil {
		shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		hs.Shutdown(shutCtx)
		cancel()
	}
	if runErr != nil && !errors.Is(runErr, http.ErrServerClosed) {
		fmt.Fprintf(c.Stderr, "kobana serve: %v\n", runErr)
		return exitFailure
	}
	return exitOK
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// lintWorkflow is workflows_validate's linter: the compiler's diagnostics.
func lintWorkflow(doc []byte) (json.RawMessage, bool) {
	ds := compile.Lint(doc)
	b, err := json.Marshal(ds)
	if err != nil {
		return json.RawMessage("[]"), false
	}
	return b, !ds.HasErrors()
}

// workflowRunner runs an agent's workflow for emails_reprocess: compile,
// then the executor behind the SSRF guard, returning the redacted record.
type workflowRunner struct {
	ex  *executor.Executor
	now func() time.Time
}

// invalidRecord is the record of a workflow that did not validate: nothing
// was sent, and the diagnostics say why.
type invalidRecord struct {
	Status      string                `json:"status"`
	StartedAt   time.Time             `json:"started_at"`
	FinishedAt  time.Time             `json:"finished_at"`
	Steps       []executor.StepRecord `json:"steps"`
	Error       string                `json:"error"`
	Diagnostics compile.Diagnostics   `json:"diagnostics"`
}

// RunWorkflow implements inbox.WorkflowRunner.
func (w workflowRunner) RunWorkflow(ctx context.Context, in inbox.WorkflowInput) (json.RawMessage, error) {
	plan, ds := compile.Compile(in.Document)
	now := w.now().UTC()
	if ds.HasErrors() {
		return json.Marshal(invalidRecord{Status: executor.RunFailed, StartedAt: now, FinishedAt: now, Steps: []executor.StepRecord{},
			Error: "the workflow did not validate; nothing was sent", Diagnostics: ds.Errors()})
	}
	if plan == nil || len(plan.Steps) == 0 {
		return json.Marshal(executor.RunRecord{Status: executor.RunSucceeded, StartedAt: now, FinishedAt: now, Steps: []executor.StepRecord{}})
	}
	// Attachments are streamed from the run's snapshot of the raw message;
	// without one (purged), a step that uses an attachment fails before
	// sending.
	attachments := func() (resolve.Attachments, error) {
		return nil, fmt.Errorf("%w: %w", eml.ErrUnreadable, inbox.ErrPurged)
	}
	if m := in.Message; m != nil {
		attachments = func() (resolve.Attachments, error) {
			msg, err := eml.New(m, m.Size())
			if err != nil {
				return nil, fmt.Errorf("reading the e-mail: %w", err)
			}
			return msg, nil
		}
	}
	rec := w.ex.Run(ctx, plan, executor.Env{Secrets: resolve.SecretMap(in.Secrets), Facts: resolve.FactMap(in.Facts), Attachments: resolve.AttachmentsFunc(attachments)})
	return json.Marshal(rec)
}

// openStore opens the store named by -db: a postgres:// or postgresql://
// URL selects PostgreSQL (replicas share it), anything else is the path of
// the embedded SQLite file. KOBANA_SECRET_KEY (64 hex digits), when set, is
// the key that encrypts workspace secrets. On failure it reports to
// standard error and returns the exit code.
func (c *Command) openStore(ctx context.Context, who, db string) (store.Store, int) {
	var opts store.Options
	if k := c.getenv("KOBANA_SECRET_KEY"); k != "" {
		key, err := hex.DecodeString(k)
		if err != nil || len(key) != 32 {
			fmt.Fprintf(c.Stderr, "%s: KOBANA_SECRET_KEY must be 64 hex digits (32 bytes)\n", who)
			return nil, exitUsage
		}
		opts.SecretKey = key
	}
	var st store.Store
	var err error
	if strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://") {
		st, err = pg.Open(ctx, db, pg.Options{Options: opts})
	} else {
		st, err = sqlite.Open(ctx, db, opts)
	}
	if err != nil {
		fmt.Fprintf(c.Stderr, "%s: %v\n", who, err)
		return nil, exitFailure
	}
	return st, exitOK
}
