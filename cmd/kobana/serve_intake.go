package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/kobana/workflow/inbox/intake"
	"github.com/kobana/workflow/inbox/queue"
	"github.com/kobana/workflow/inbox/senderauth"
)

// intakeService receives the Inbox's mail: SMTP on -smtp ADDR and, with
// -intake-http, POST /intake/inboxes/{id}/messages on the HTTP listener.
// Messages are kept as files under -messages (the embedded store) or as
// large objects (PostgreSQL), with their records and their agent job
// committed together before the sender is answered (docs/pipeline.md).
type intakeService struct {
	smtpAddr   string
	httpOn     bool
	domain     string
	hostname   string
	certFile   string
	keyFile    string
	maxBytes   int64
	dnsServer  string
	ln         net.Listener
	smtp       *intake.Server
	queue      *queue.Queue
	tlsConfig  *tls.Config
	sweepAfter time.Duration
}

func intakeSetup(fs *flag.FlagSet) func() (serviceSetup, error) {
	s := &intakeService{sweepAfter: time.Hour}
	fs.StringVar(&s.smtpAddr, "smtp", "", "receive the inboxes' mail over SMTP on this address, e.g. 0.0.0.0:25")
	fs.BoolVar(&s.httpOn, "intake-http", false, "receive raw messages at POST /intake/inboxes/{id}/messages on the HTTP listener (needs -http)")
	fs.StringVar(&s.domain, "mail-domain", intake.DefaultMailDomain, "the domain inboxes receive under: LOCAL@WORKSPACE.DOMAIN")
	fs.StringVar(&s.hostname, "smtp-hostname", "", "the name the SMTP server greets with (default: this host's name)")
	fs.StringVar(&s.certFile, "smtp-tls-cert", "", "PEM certificate offered with STARTTLS (with -smtp-tls-key)")
	fs.StringVar(&s.keyFile, "smtp-tls-key", "", "PEM private key of -smtp-tls-cert")
	fs.Int64Var(&s.maxBytes, "max-message-bytes", intake.DefaultMaxMessageBytes, "largest message accepted, in bytes (SMTP 552, HTTP 413 beyond)")
	fs.StringVar(&s.dnsServer, "dns", "", "DNS server (HOST:PORT) for the SPF, DKIM and DMARC checks (default: the system's resolver)")
	return func() (serviceSetup, error) {
		if s.smtpAddr == "" && !s.httpOn {
			if s.certFile != "" || s.keyFile != "" {
				return serviceSetup{}, errors.New("-smtp-tls-cert and -smtp-tls-key need -smtp ADDR")
			}
			return serviceSetup{}, nil
		}
		if (s.certFile == "") != (s.keyFile == "") {
			return serviceSetup{}, errors.New("-smtp-tls-cert and -smtp-tls-key go together")
		}
		if s.certFile != "" {
			cert, err := tls.LoadX509KeyPair(s.certFile, s.keyFile)
			if err != nil {
				return serviceSetup{}, fmt.Errorf("-smtp-tls-cert/-smtp-tls-key: %v", err)
			}
			s.tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		}
		if s.maxBytes <= 0 {
			return serviceSetup{}, fmt.Errorf("-max-message-bytes must be positive, got %d", s.maxBytes)
		}
		if strings.Trim(s.domain, ".") == "" {
			return serviceSetup{}, errors.New("-mail-domain must name a domain")
		}
		return serviceSetup{name: "smtp", service: s}, nil
	}
}

// listen opens the Inbox's storage (the queue and the raw messages,
// shared with the pipeline and the product), sweeps what a crash left in
// it, builds the intake and binds the SMTP listener.
func (s *intakeService) listen(a *assembly) error {
	if s.httpOn && !a.hasHTTP {
		return usageError{errors.New("-intake-http needs -http ADDR")}
	}
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
	checker := &senderauth.Checker{}
	if s.dnsServer != "" {
		checker.Resolver = senderauth.NewResolver(s.dnsServer)
	}
	dir := intake.StoreDirectory{Records: a.store, Workspaces: a.store, Domain: s.domain}
	rec := &intake.StoreRecorder{Store: a.store, Raw: st.raw, Queue: s.queue, Logger: a.log, Events: a.notify}
	if s.httpOn {
		h := intake.NewHandler(intake.HTTPConfig{MaxMessageBytes: s.maxBytes, Logger: a.log}, intake.IdentityTokens{Identity: a.store}, dir, rec, st.raw, checker)
		a.handlers["/intake/"] = http.StripPrefix("/intake", h)
	}
	if s.smtpAddr == "" {
		return nil
	}
	s.smtp = intake.NewServer(intake.Config{Domain: s.hostname, MaxMessageBytes: s.maxBytes, TLS: s.tlsConfig, Logger: a.log}, dir, rec, st.raw, checker)
	if s.ln, err = net.Listen("tcp", s.smtpAddr); err != nil {
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
		if s.tlsConfig != nil {
			tls = " (STARTTLS offered)"
		}
		fmt.Fprintf(w, "receiving mail for *.%s over SMTP on %s%s\n", s.domain, s.ln.Addr(), tls)
	}
	if s.httpOn {
		fmt.Fprintln(w, "receiving raw messages at POST /intake/inboxes/{id}/messages on the HTTP listener")
	}
}

func (s *intakeService) serve(ctx context.Context, a *assembly) error {
	if s.smtp == nil {
		<-ctx.Done()
		return nil
	}
	return serveUntilDone(ctx, s.smtp, s.ln, 10*time.Second, smtp.ErrServerClosed)
}
