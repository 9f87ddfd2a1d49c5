package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/inbox/senderauth"
)

// intakeService receives the Inbox's mail: SMTP on Intake.SMTPAddr and,
// with Intake.HTTP, POST /intake/inboxes/{id}/messages on the HTTP
// listener. Messages are kept as files under Config.Messages (the embedded
// store) or as large objects (PostgreSQL), with their records and their
// agent job committed together before the sender is answered
// (docs/pipeline.md).
type intakeService struct {
	cfg        Intake
	domain     string
	ln         net.Listener
	smtp       *intake.Server
	queue      *queue.Queue
	sweepAfter time.Duration
	state      state
}

// ready is the intake's readiness: SMTP listening.
func (s *intakeService) ready() string { return s.state.get() }

func newIntakeService(cfg Intake, domain string) *intakeService {
	if cfg.MaxMessageBytes == 0 {
		cfg.MaxMessageBytes = intake.DefaultMaxMessageBytes
	}
	if domain == "" {
		domain = intake.DefaultMailDomain
	}
	return &intakeService{cfg: cfg, domain: domain, sweepAfter: time.Hour}
}

func (s *intakeService) name() string { return "smtp" }

// listen opens the Inbox's storage (the queue and the raw messages,
// shared with the pipeline and the product), sweeps what a crash left in
// it, builds the intake and binds the SMTP listener.
func (s *intakeService) listen(a *assembly) error {
	st, err := a.openInboxStorage()
	if err != nil {
		return err
	}
	now := time.Now()
	if n, err := intake.Sweep(a.ctx, st.raw, a.store, now.Add(-14*24*time.Hour), now.Add(-s.sweepAfter)); err != nil {
		return fmt.Errorf("sweeping the raw messages: %w", err)
	} else if n > 0 {
		a.log.Info("intake: removed what an earlier crash left", "files", n)
	}
	s.queue = st.queue
	var resolver senderauth.Resolver = net.DefaultResolver
	if s.cfg.DNSServer != "" {
		resolver = senderauth.NewResolver(s.cfg.DNSServer)
	}
	// The same sender's records are asked for at every message.
	checker := &senderauth.Checker{Resolver: senderauth.NewCachingResolver(resolver, time.Minute),
		TrustedRelays: s.cfg.TrustedRelays, TrustedAuthservIDs: s.cfg.TrustedAuthservIDs, CheckTimeout: s.cfg.SenderAuthTimeout}
	dir := intake.StoreDirectory{Records: a.store, Workspaces: a.store, Domain: s.domain}
	rec := &intake.StoreRecorder{Store: a.store, Raw: st.raw, Queue: s.queue, Logger: a.log, Events: a.notify, DedupWindow: s.cfg.DedupWindow}
	if !st.embedded {
		// PostgreSQL commits concurrent transactions in parallel (the
		// embedded store has one writer).
		rec.Batches = 2
	}
	if s.cfg.HTTP {
		h := intake.NewHandler(intake.HTTPConfig{Domain: s.cfg.Hostname, MaxMessageBytes: s.cfg.MaxMessageBytes, Logger: a.log, Observe: a.intakeObserver("http")}, intake.IdentityTokens{Identity: a.store}, dir, rec, st.raw, checker)
		a.handlers["/intake/"] = http.StripPrefix("/intake", h)
	}
	if s.cfg.SMTPAddr == "" {
		return nil
	}
	s.smtp = intake.NewServer(intake.Config{Domain: s.cfg.Hostname, MaxMessageBytes: s.cfg.MaxMessageBytes, TLS: s.cfg.TLS, Logger: a.log, Observe: a.intakeObserver("smtp"),
		MaxConnections: s.cfg.MaxConnections, DataIdleTimeout: s.cfg.DataIdleTimeout, DataTimeout: s.cfg.DataTimeout}, dir, rec, st.raw, checker)
	if s.ln, err = net.Listen("tcp", s.cfg.SMTPAddr); err != nil {
		return err
	}
	a.closers = append(a.closers, func() { s.ln.Close() })
	return nil
}

func (s *intakeService) addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

func (s *intakeService) announce(w io.Writer) {
	if s.ln != nil {
		tls := ""
		if s.cfg.TLS != nil {
			tls = " (STARTTLS offered)"
		}
		fmt.Fprintf(w, "receiving mail for *.%s over SMTP on %s%s\n", s.domain, s.ln.Addr(), tls)
	}
	if s.cfg.HTTP {
		fmt.Fprintln(w, "receiving raw messages at POST /intake/inboxes/{id}/messages on the HTTP listener")
	}
}

func (s *intakeService) serve(ctx context.Context, a *assembly) error {
	s.state.set("ok")
	defer s.state.set("stopped")
	if s.smtp == nil {
		<-ctx.Done()
		return nil
	}
	return serveUntilDone(ctx, s.smtp, s.ln, min(10*time.Second, a.cfg.StopGrace), smtp.ErrServerClosed)
}
