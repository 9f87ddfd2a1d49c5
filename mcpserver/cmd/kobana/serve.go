package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/mcpserver/agent"
	"github.com/kobana/workflow/mcpserver/console"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/server"
	"github.com/kobana/workflow/mcpserver/store"
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
use and prints a read-write and a read-only token.

SIGTERM or SIGINT stops serve: it takes no new work, lets the work in
flight finish for up to -grace, and records what is cut then as a crash
would leave it. SIGHUP does not stop it: it reads its TLS certificates
again (a renewed -smtp-tls-cert or -http-tls-cert is used without a
restart). KOBANA_SECRET_KEY (64 hex
digits) is the key that encrypts workspace secrets at rest; without it the
store generates one and keeps it in its own file.

flags:
`

// serveFlags are the parsed flags of kobana serve: the store to open and
// the server's Config (without its store and streams, which runServe
// adds).
type serveFlags struct {
	db  string
	cfg server.Config
	// certs are the TLS certificates read from files, read again on
	// SIGHUP.
	certs []*certFile
}

// parseServe parses serve's flags into a server.Config. With ok false,
// serve returns code.
func parseServe(c *Command, args []string) (f *serveFlags, code int, ok bool) {
	f = &serveFlags{}
	fs := flag.NewFlagSet("kobana serve", flag.ContinueOnError)
	fs.StringVar(&f.db, "db", "kobana.db", "the store: a SQLite file (created if missing), or a postgres:// URL shared by replicas")
	fs.StringVar(&f.cfg.Messages, "messages", "", "directory for the Inbox's raw messages with the embedded store (default: kobana-messages beside the database file); with PostgreSQL, where incoming messages are spooled")
	fs.BoolVar(&f.cfg.Demo, "demo", false, "seed the demo organization if missing and print demo tokens")
	var allow allowFlag
	fs.Var(&allow, "allow", allowHelp)
	verbose := fs.Bool("v", false, "log at debug level (the same as -log-level debug)")
	logFormat := fs.String("log-format", "text", "the log's format on standard error: text (key=value) or json (one object a line)")
	logLevel := fs.String("log-level", "info", "the least severe log lines written: debug, info, warn or error")
	monitor := fs.String("metrics", "", "serve Prometheus metrics at http://ADDR/metrics, with /healthz and /readyz, on this address (e.g. 127.0.0.1:9464); bind it where only the monitoring reaches")
	names := server.ProductNames()
	selected := fs.String("products", strings.Join(names, ","), "comma-separated products to serve: "+strings.Join(names, ", "))
	var models agent.Flags
	models.Register(fs)
	var retries scheduleFlag
	fs.Var(&retries, "agent-retry-schedule", "delays before each new run of an e-mail whose agent failed because the model was unavailable, rate-limited or slow, comma-separated, e.g. 1m,5m,15m,30m,1h,2h,4h,8h (the default), or none to fail such e-mail at once")

	var h server.HTTP
	var hosts, origins listFlag
	fs.StringVar(&h.Addr, "http", "", "serve Streamable HTTP on this address, e.g. 127.0.0.1:8080")
	fs.StringVar(&h.PublicURL, "public-url", "", "base URL clients reach this server at (a TLS proxy's https://HOST): what signed download links and the OAuth metadata name (default http(s)://ADDR)")
	fs.Var(&hosts, "allowed-host", "Host header value accepted on HTTP (repeatable; default: loopback names only)")
	fs.Var(&origins, "allowed-origin", "browser Origin accepted on HTTP (repeatable; default: pages of an allowed host)")
	fs.BoolVar(&h.Console.Off, "no-console", false, "serve no console (the back office at /console/ of the HTTP listener)")
	fs.DurationVar(&h.Console.IdleTimeout, "console-idle", console.DefaultIdleTimeout, "end a console session nobody used for this long")
	fs.DurationVar(&h.Console.Lifetime, "console-lifetime", console.DefaultLifetime, "end a console session this long after sign-in, used or not")
	fs.StringVar(&h.Console.OIDCClientID, "console-oidc-client", "", "also sign people in to the console at -oauth-issuer, as this client (a confidential client whose secret is in $KOBANA_CONSOLE_OIDC_SECRET; redirect URI PUBLIC-URL/console/signin/oidc/callback)")
	fs.StringVar(&h.Console.OIDCName, "console-oidc-name", "", "the -oauth-issuer's name on the console's sign-in page (default its host)")
	var authf authFlags
	authf.register(fs)
	stdio := fs.Bool("stdio", false, "serve on standard input and output (token from KOBANA_TOKEN)")
	in := server.Intake{MaxMessageBytes: intake.DefaultMaxMessageBytes}
	var certFile, keyFile string
	fs.StringVar(&in.SMTPAddr, "smtp", "", "receive the inboxes' mail over SMTP on this address, e.g. 0.0.0.0:25")
	fs.BoolVar(&in.HTTP, "intake-http", false, "receive raw messages at POST /intake/inboxes/{id}/messages on the HTTP listener (needs -http)")
	fs.StringVar(&f.cfg.MailDomain, "mail-domain", intake.DefaultMailDomain, "the domain inboxes receive under: LOCAL@WORKSPACE.DOMAIN (point its wildcard MX record, *.DOMAIN, at this server; a workspace may also receive under a domain of its own, kobana admin workspace set -mail-domain)")
	fs.StringVar(&in.Hostname, "smtp-hostname", "", "the name the SMTP server greets with (default: this host's name)")
	fs.StringVar(&certFile, "smtp-tls-cert", "", "PEM certificate offered with STARTTLS (with -smtp-tls-key)")
	fs.StringVar(&keyFile, "smtp-tls-key", "", "PEM private key of -smtp-tls-cert")
	fs.Int64Var(&in.MaxMessageBytes, "max-message-bytes", intake.DefaultMaxMessageBytes, "largest message accepted, in bytes (SMTP 552, HTTP 413 beyond)")
	fs.StringVar(&in.DNSServer, "dns", "", "DNS server (HOST:PORT) for the SPF, DKIM and DMARC checks (default: the system's resolver)")
	var relays allowFlag
	var authservIDs listFlag
	fs.Var(&relays, "smtp-trusted-relay", "a network (CIDR) of gateways that hand this server mail they received, e.g. a Postfix in front: for their mail, SPF is judged for the client their Received field names (repeatable; nobody else's Received or Authentication-Results fields count)")
	fs.Var(&authservIDs, "smtp-trusted-authserv-id", "the authserv-id of a trusted relay's Authentication-Results: its SPF result is taken instead of checking SPF again (repeatable; needs -smtp-trusted-relay; DKIM is always verified here)")
	fs.DurationVar(&in.DedupWindow, "dedup-window", intake.DefaultDedupWindow, "how long an inbox takes a message with a Message-ID it received (or, without one, the same bytes) for another copy, recorded as a duplicate and not processed (0: never)")
	fs.BoolVar(&f.cfg.Process, "process", true, "work the Inbox's queue in this process: agent runs, workflows, webhook deliveries, retention (default: true with -http or -smtp, false for -stdio alone; false: a process that only serves and receives, beside others that process)")
	fs.DurationVar(&f.cfg.StopGrace, "grace", server.DefaultStopGrace, "on SIGTERM or SIGINT, how long the work in flight (jobs, requests, mail being received) may take to finish before serve exits; what is still running then is recorded as a crash would leave it, and resumes at the next start")
	registerWorkerFlags(fs, &f.cfg)

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
	if f.cfg.Products, err = selectProducts(*selected); err != nil {
		return fail("%v", err)
	}
	if slices.Contains(f.cfg.Products, "inbox") {
		if f.cfg.Agents, err = agent.Load(models, c.getenv, agent.CatalogProviders()); err != nil {
			return fail("%v", err)
		}
	}
	f.cfg.Guard = &guard.Guard{Allow: allow}
	f.cfg.AgentRetrySchedule = retries.schedule()
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fail("-log-level %q: debug, info, warn or error", *logLevel)
	}
	if *verbose {
		level = slog.LevelDebug
	}
	opts := &slog.HandlerOptions{Level: level}
	switch *logFormat {
	case "text":
		f.cfg.Logger = slog.New(slog.NewTextHandler(c.Stderr, opts))
	case "json":
		f.cfg.Logger = slog.New(slog.NewJSONHandler(c.Stderr, opts))
	default:
		return fail("-log-format %q: text or json", *logFormat)
	}
	if *monitor != "" {
		f.cfg.Monitor = &server.Monitor{Addr: *monitor}
	}

	if h.Addr != "" {
		h.AllowedHosts, h.AllowedOrigins = hosts, origins
		f.cfg.HTTP = &h
	} else if h.PublicURL != "" || len(hosts) > 0 || len(origins) > 0 {
		return fail("-public-url, -allowed-host and -allowed-origin need -http ADDR")
	}
	if err := authf.apply(f.cfg.HTTP); err != nil {
		return fail("%v", err)
	}
	if h.Console.OIDCClientID != "" {
		if authf.oauth.Issuer == "" {
			return fail("-console-oidc-client needs -oauth-issuer")
		}
		if h.Console.OIDCClientSecret = c.getenv("KOBANA_CONSOLE_OIDC_SECRET"); h.Console.OIDCClientSecret == "" {
			return fail("-console-oidc-client needs the client's secret in $KOBANA_CONSOLE_OIDC_SECRET")
		}
	} else if h.Console.OIDCName != "" {
		return fail("-console-oidc-name needs -console-oidc-client")
	}
	if t := f.cfg.HTTP; t != nil && t.TLS != nil && t.TLS.CertFile != "" {
		// Read now (a bad pair is a usage error) and again on SIGHUP.
		cert, err := loadCertFile("-http-tls-cert/-http-tls-key", t.TLS.CertFile, t.TLS.KeyFile)
		if err != nil {
			return fail("%v", err)
		}
		t.TLS.Certificate = cert.get
		f.certs = append(f.certs, cert)
	}
	if *stdio {
		f.cfg.Stdio = &server.Stdio{Token: c.getenv("KOBANA_TOKEN"), In: c.Stdin, Out: c.Stdout}
	}
	if in.SMTPAddr != "" || in.HTTP {
		if (certFile == "") != (keyFile == "") {
			return fail("-smtp-tls-cert and -smtp-tls-key go together")
		}
		if certFile != "" {
			cert, err := loadCertFile("-smtp-tls-cert/-smtp-tls-key", certFile, keyFile)
			if err != nil {
				return fail("%v", err)
			}
			in.TLS = cert.config()
			f.certs = append(f.certs, cert)
		}
		if in.MaxMessageBytes <= 0 {
			return fail("-max-message-bytes must be positive, got %d", in.MaxMessageBytes)
		}
		if len(authservIDs) > 0 && len(relays) == 0 {
			return fail("-smtp-trusted-authserv-id needs -smtp-trusted-relay: only a trusted relay's fields are read")
		}
		if in.DedupWindow < 0 {
			return fail("-dedup-window must not be negative, got %v", in.DedupWindow)
		}
		if in.DedupWindow == 0 {
			in.DedupWindow = -1 // never
		}
		in.TrustedRelays, in.TrustedAuthservIDs = relays, authservIDs
		f.cfg.Intake = &in
	} else if certFile != "" || keyFile != "" {
		return fail("-smtp-tls-cert and -smtp-tls-key need -smtp ADDR")
	}
	if strings.Trim(f.cfg.MailDomain, ".") == "" {
		return fail("-mail-domain must name a domain")
	}
	if f.cfg.MailDomain, err = inbox.NormalizeMailDomain(f.cfg.MailDomain); err != nil {
		return fail("-mail-domain: %v", err)
	}
	if f.cfg.HTTP == nil && f.cfg.Stdio == nil && f.cfg.Intake == nil {
		return fail("nothing to serve: pass -http ADDR, -stdio, -smtp ADDR (or several)")
	}
	if !flagSet(fs, "process") {
		// A long-running server works the queue; a process an MCP client
		// starts for itself on stdio does not, unless asked.
		f.cfg.Process = f.cfg.HTTP != nil || f.cfg.Intake != nil
	}
	if f.cfg.StopGrace <= 0 {
		return fail("-grace must be positive, got %v", f.cfg.StopGrace)
	}
	if in.HTTP && f.cfg.HTTP == nil {
		return fail("-intake-http needs -http ADDR")
	}
	if err := checkWorkers(f.cfg.Workers); err != nil {
		return fail("%v", err)
	}
	if isPostgres(f.db) && f.cfg.Process {
		f.db = sizePool(f.db, f.cfg.Workers)
	}
	return f, exitOK, true
}

// flagSet says the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// selectProducts reads -products: names from the registry, comma-separated,
// each served once.
func selectProducts(list string) ([]string, error) {
	names := server.ProductNames()
	var out []string
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(names, name) {
			return nil, fmt.Errorf("unknown product %q (available: %s)", name, strings.Join(names, ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// runServe is kobana serve: parse the flags, open the store, serve until
// interrupted.
func runServe(c *Command, args []string) int { return serveWith(c, args, nil) }

// serveWith is kobana serve with configure, when not nil, called on the
// Config before it is served (the demo points the agents and the outgoing
// requests at its own stand-ins there).
func serveWith(c *Command, args []string, configure func(*server.Config)) int {
	f, code, ok := parseServe(c, args)
	if !ok {
		return code
	}
	ctx, stop := signal.NotifyContext(c.context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	onHangup(ctx, c.Stderr, f.certs)
	st, code := c.openStore(ctx, "kobana serve", f.db)
	if st == nil {
		return code
	}
	defer st.Close()
	cfg := f.cfg
	cfg.Store = st
	if !isPostgres(f.db) {
		cfg.StorePath = f.db
	}
	cfg.Output, cfg.Notices, cfg.Ready = c.Stdout, c.Stderr, c.Ready
	if configure != nil {
		configure(&cfg)
	}
	err := server.Run(ctx, cfg)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, server.ErrStdioToken):
		fmt.Fprintln(c.Stderr, "kobana serve: -stdio needs a token in KOBANA_TOKEN (see kobana token create)")
		return exitUsage
	case errors.Is(err, store.ErrNoSecretKey):
		fmt.Fprintf(c.Stderr, "kobana serve: %v\n%s\n", err, secretKeyHelp(c))
		return exitFailure
	}
	fmt.Fprintf(c.Stderr, "kobana serve: %v\n", err)
	if errors.As(err, new(*server.ConfigError)) {
		return exitUsage
	}
	return exitFailure
}
