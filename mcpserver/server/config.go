package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/kobana/workflow/executor/guard"
	"github.com/kobana/workflow/mcpserver/agent"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/store"
)

// Config is everything a Kobana server takes: the store, the products, the
// services that take work (HTTP, stdio, the mail intake, the pipeline), the
// agents' model and where the server tells its operator what it does.
// kobana serve is its flags parsed into a Config.
type Config struct {
	// Store is where everything is kept (store/sqlite or store/pg; the
	// Inbox needs one of the two). Run does not close it.
	Store store.Store
	// StorePath is the embedded store's file. The Inbox's raw messages
	// default to kobana-messages beside it, and the lock file that lets one
	// process at a time work its queue is PATH.queue-lock. Empty with
	// PostgreSQL.
	StorePath string
	// Messages is the directory of the Inbox's raw messages with the
	// embedded store (default: kobana-messages beside StorePath); with
	// PostgreSQL, where incoming messages are spooled before they become
	// large objects (default: the system's temporary directory).
	Messages string

	// Products names the MCP products to serve (ProductNames lists them);
	// each is served once, in the registry's order. nil serves them all.
	Products []string
	// Demo seeds the demo organization (and each product's demo records)
	// when missing, and prints a read-write and a read-only demo token to
	// Output.
	Demo bool
	// Guard is the SSRF guard of the workflows' requests, the webhook
	// deliveries and the dry runs; nil is a guard with no exception.
	Guard *guard.Guard
	// Agents is the model configuration the Inbox's agents run on
	// (agent.Load); without an endpoint an agent run replays the agent's
	// recorded answer.
	Agents agent.Config
	// AgentRunner, when set, runs the Inbox's agents instead of the runner
	// Agents configures.
	AgentRunner inbox.AgentRunner
	// MailDomain is the domain inboxes receive under,
	// LOCAL@WORKSPACE.DOMAIN, where WORKSPACE is the workspace's slug (or
	// id): the addresses inboxes_create gives and the intake accepts
	// (default inbox.DefaultMailDomain). A workspace with a mail domain of
	// its own (inbox.ClaimMailDomain) receives at LOCAL@ITS_DOMAIN as well.
	MailDomain string
	// AgentRetrySchedule is the delay before each new run of an e-mail's
	// agent after a run that failed for a cause that may pass (the model
	// unavailable, rate-limited, not answering in time): nil means
	// pipeline.DefaultAgentRetrySchedule, an empty one fails such an
	// e-mail at once.
	AgentRetrySchedule []time.Duration
	// Outbound is how the workflows' requests and the webhook deliveries
	// reach the network (a dialer and TLS settings); the guard checks every
	// connection it opens. The zero value dials each host as named.
	Outbound guard.Network

	// HTTP serves MCP over Streamable HTTP (nil: no HTTP listener).
	HTTP *HTTP
	// Stdio serves MCP on a pair of streams for one token (nil: none).
	Stdio *Stdio
	// Intake receives the inboxes' mail (nil: no mail is received here).
	Intake *Intake
	// Monitor serves /metrics, /healthz and /readyz on a listener of its
	// own (nil: none; /healthz and /readyz are on the HTTP listener
	// anyway).
	Monitor *Monitor
	// Process says this process works the Inbox's queue: agent runs,
	// workflows, webhook deliveries, retention. Without it the process only
	// inserts jobs, for others to work.
	Process bool
	// Workers sizes the stages when Process is set.
	Workers Workers
	// QueueLease bounds how long the jobs of a PostgreSQL replica that
	// stopped answering stay with it before the others take them over
	// (queue.Config.Lease; zero: queue.DefaultLease, negative: River's
	// own rescue, after twice the job timeout).
	QueueLease time.Duration
	// StopGrace is how long, once Run's context ends, the work in flight
	// may take to finish: the jobs being worked, the requests and mail
	// transactions being answered (default DefaultStopGrace). Work still
	// running near its end is cut and recorded as a crash would leave it (a
	// workflow run interrupted, the step being sent unknown; a cut job runs
	// again at the next start), so that Run returns within StopGrace.
	StopGrace time.Duration

	// Logger receives the server's activity (nil: discarded).
	Logger *slog.Logger
	// Output receives the demo tokens (nil: discarded); when Stdio is
	// served they go to Notices instead.
	Output io.Writer
	// Notices receives what the server tells the person running it: where
	// each service takes work, which model agents use (nil: discarded).
	Notices io.Writer
	// Ready, when set, is called once every service takes work, with the
	// address of each network listener by service name ("http", "smtp").
	Ready func(addrs map[string]net.Addr)
}

// DefaultStopGrace is Config.StopGrace's default.
const DefaultStopGrace = 30 * time.Second

// stopBudget splits g, the time a stop may take, into the time the jobs
// being worked get to finish (River's soft stop) and the reserve in which
// the jobs cut then record what they were doing: a fifth of g, at most 5 s.
func stopBudget(g time.Duration) (soft, reserve time.Duration) {
	reserve = min(g/5, 5*time.Second)
	return g - reserve, reserve
}

// HTTP is the Streamable HTTP listener: MCP at /mcp, with the products'
// routes (downloads, the HTTP intake) and the playground beside it.
type HTTP struct {
	// Addr is the address to listen on, e.g. 127.0.0.1:8080.
	Addr string
	// PublicURL is the base URL clients reach this server at, for signed
	// download links (default http://ADDR, with the address bound).
	PublicURL string
	// AllowedHosts are the Host header values accepted (default: loopback
	// names only); AllowedOrigins the browser Origins (default: pages of
	// an allowed host).
	AllowedHosts, AllowedOrigins []string
	// TLS, when set, serves HTTPS (and the default public URL is
	// https://ADDR).
	TLS *TLS
	// OAuth says how /mcp accepts OAuth tokens (nil: the embedded
	// authorization server, when the public URL is https or loopback).
	OAuth *OAuth
	// ReadTimeout bounds the time a client takes to send a request, its
	// body included (default DefaultHTTPReadTimeout); once it is read the
	// answer may take as long as it needs (net/http lifts the deadline: an
	// event stream or a slow tool call is not cut). IdleTimeout closes a connection that finished its
	// requests and sends no other (default DefaultHTTPIdleTimeout).
	// Request headers must arrive within 10 seconds.
	ReadTimeout, IdleTimeout time.Duration
	// MaxSessionsPerToken and MaxSessions cap the 2025-era sessions (see
	// mcpserver.HTTPOptions; zero means its defaults).
	MaxSessionsPerToken, MaxSessions int
	// Console tunes the back office at /console/.
	Console ConsoleOptions
}

// Defaults of HTTP.ReadTimeout and HTTP.IdleTimeout. A message of the
// intake's largest default size arrives within the read timeout at about
// 1.5 Mbit/s.
const (
	DefaultHTTPReadTimeout = 5 * time.Minute
	DefaultHTTPIdleTimeout = 2 * time.Minute
)

// Stdio serves MCP on In and Out (standard input and output) for one
// token.
type Stdio struct {
	// Token is the token the stdio client speaks for; empty falls back on
	// the first demo token with Config.Demo, and is ErrStdioToken without.
	Token string
	// In and Out are the protocol's streams; a nil In is at its end.
	In  io.Reader
	Out io.Writer
}

// Intake receives the inboxes' mail: over SMTP and, with HTTP, at POST
// /intake/inboxes/{id}/messages on the HTTP listener.
type Intake struct {
	// SMTPAddr is the SMTP listener's address (empty: no SMTP).
	SMTPAddr string
	// HTTP receives raw messages over the HTTP listener (needs
	// Config.HTTP).
	HTTP bool
	// Hostname is the name the SMTP server greets with (default: this
	// host's name).
	Hostname string
	// TLS, when set, is offered with STARTTLS.
	TLS *tls.Config
	// MaxMessageBytes is the largest message accepted (default
	// intake.DefaultMaxMessageBytes).
	MaxMessageBytes int64
	// DNSServer (HOST:PORT) answers the SPF, DKIM and DMARC checks'
	// queries (default: the system's resolver).
	DNSServer string
	// TrustedRelays are the networks of gateways that hand the server mail
	// they received; TrustedAuthservIDs the authserv-ids of their
	// Authentication-Results to take SPF from (senderauth.Checker).
	TrustedRelays      []netip.Prefix
	TrustedAuthservIDs []string
	// DedupWindow is how long an inbox takes another copy of a message it
	// received for a duplicate (0: intake.DefaultDedupWindow; negative:
	// never).
	DedupWindow time.Duration
	// MaxConnections, DataIdleTimeout and DataTimeout bound the SMTP
	// sessions (intake.Config; zero: its defaults, 200 connections, 1
	// minute without a byte and 10 minutes in all for a DATA).
	MaxConnections               int
	DataIdleTimeout, DataTimeout time.Duration
	// SenderAuthTimeout bounds the SPF, DKIM and DMARC check of one
	// message (zero: senderauth.Checker's default, 20 s); what DNS has not
	// answered by then is a temperror.
	SenderAuthTimeout time.Duration
}

// ProductNames are the names of the products a server can serve, in the
// order they are served.
func ProductNames() []string {
	names := make([]string, len(products))
	for i, p := range products {
		names[i] = p.name
	}
	return names
}

// check reports what in the Config cannot be served.
func (c *Config) check() error {
	switch {
	case c.Store == nil:
		return &ConfigError{errors.New("no store")}
	case c.HTTP == nil && c.Stdio == nil && (c.Intake == nil || c.Intake.SMTPAddr == "" && !c.Intake.HTTP):
		return &ConfigError{errors.New("nothing to serve: no HTTP, stdio or SMTP listener")}
	case c.Intake != nil && c.Intake.HTTP && c.HTTP == nil:
		return &ConfigError{errors.New("the HTTP intake needs the HTTP listener")}
	case c.StopGrace < 0:
		return &ConfigError{fmt.Errorf("the stop's grace period must be positive, got %v", c.StopGrace)}
	case c.Intake != nil && c.Intake.MaxMessageBytes < 0:
		return &ConfigError{fmt.Errorf("the largest message must be positive, got %d bytes", c.Intake.MaxMessageBytes)}
	case c.MailDomain != "":
		if _, err := inbox.NormalizeMailDomain(c.MailDomain); err != nil {
			return &ConfigError{err}
		}
	}
	if err := c.Workers.check(); err != nil {
		return err
	}
	_, err := c.products()
	return err
}

// products are the products c names, in the registry's order.
func (c *Config) products() ([]product, error) {
	if c.Products == nil {
		return products, nil
	}
	for _, name := range c.Products {
		if !slices.ContainsFunc(products, func(p product) bool { return p.name == name }) {
			return nil, &ConfigError{fmt.Errorf("unknown product %q (available: %s)", name, strings.Join(ProductNames(), ", "))}
		}
	}
	var out []product
	for _, p := range products {
		if slices.Contains(c.Products, p.name) {
			out = append(out, p)
		}
	}
	return out, nil
}

// services are the services c asks for, in the order they listen: HTTP
// first (its address is the default public URL), then stdio, the intake,
// the pipeline.
func (c *Config) services() []service {
	var out []service
	if c.HTTP != nil {
		out = append(out, &httpServer{cfg: *c.HTTP})
	}
	if c.Stdio != nil {
		out = append(out, &stdioServer{cfg: *c.Stdio})
	}
	if c.Intake != nil && (c.Intake.SMTPAddr != "" || c.Intake.HTTP) {
		out = append(out, newIntakeService(*c.Intake, c.MailDomain))
	}
	if c.Process {
		out = append(out, &pipelineService{})
	}
	if c.Monitor != nil {
		out = append(out, &monitorServer{cfg: *c.Monitor})
	}
	return out
}
