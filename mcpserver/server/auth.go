package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/authserver"
	"github.com/kobana/workflow/mcpserver/internal/panics"
	"github.com/kobana/workflow/mcpserver/issuer"
)

// OAuth says how /mcp accepts OAuth access tokens, beside static kbn_
// tokens (which always work).
type OAuth struct {
	// Off accepts static tokens only: no protected-resource metadata, no
	// authorization server.
	Off bool
	// Issuer, when set, trusts that external authorization server (an
	// OpenID Connect provider) instead of the embedded one.
	Issuer string
	// Audience is what an external issuer's tokens must be issued for
	// (default: the resource, PUBLIC-URL/mcp).
	Audience string
	// PersonClaim, WorkspaceClaim and ScopePrefix map an external token to
	// a person, a workspace and scopes (see issuer.Options).
	PersonClaim, WorkspaceClaim, ScopePrefix string
	// AccessTokenLifespan and RefreshTokenLifespan bound the embedded
	// server's tokens (defaults: 15 minutes, 30 days).
	AccessTokenLifespan, RefreshTokenLifespan time.Duration
	// Registration limits its Dynamic Client Registration.
	Registration authserver.RegistrationLimits
}

// TLS serves HTTPS: a certificate from files, or from an ACME CA (Let's
// Encrypt by default) for the named domains.
type TLS struct {
	// CertFile and KeyFile are a PEM certificate chain and its key.
	CertFile, KeyFile string
	// Certificate, when set, gives the certificate of CertFile and KeyFile
	// instead of reading them once (kobana serve reads them again on
	// SIGHUP, so a renewed certificate is served without a restart).
	Certificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	// ACMEDomains are the host names to get certificates for with ACME's
	// TLS-ALPN-01 challenge (the listener must be reachable on port 443
	// under those names).
	ACMEDomains []string
	// ACMEDirectory is the CA's directory URL (default Let's Encrypt's).
	ACMEDirectory string
	// ACMECache is the directory certificates and the account key are
	// kept in (default: kobana-acme beside the store, or the working
	// directory).
	ACMECache string
	// ACMEEmail is the contact address given to the CA (optional).
	ACMEEmail string
	// ACMERoots verifies the ACME directory's own certificate (tests with
	// a private CA); nil uses the system's roots.
	ACMERoots *x509.CertPool
}

// tlsConfig builds the listener's TLS configuration.
func (t *TLS) tlsConfig(storePath string) (*tls.Config, error) {
	switch {
	case t.CertFile != "" || t.KeyFile != "":
		if t.CertFile == "" || t.KeyFile == "" || len(t.ACMEDomains) > 0 {
			return nil, &ConfigError{errors.New("a TLS certificate needs both its certificate and its key file, and no ACME domain")}
		}
		if t.Certificate != nil {
			return &tls.Config{GetCertificate: t.Certificate, MinVersion: tls.VersionTLS12}, nil
		}
		cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, &ConfigError{fmt.Errorf("TLS certificate: %w", err)}
		}
		return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
	case len(t.ACMEDomains) > 0:
		cache := t.ACMECache
		if cache == "" {
			cache = "kobana-acme"
			if storePath != "" {
				cache = storePath + ".acme"
			}
		}
		m := &autocert.Manager{
			Prompt:     autocert.AcceptTOS,
			HostPolicy: autocert.HostWhitelist(t.ACMEDomains...),
			Cache:      autocert.DirCache(cache),
			Email:      t.ACMEEmail,
		}
		if t.ACMEDirectory != "" || t.ACMERoots != nil {
			c := &acme.Client{DirectoryURL: t.ACMEDirectory}
			if t.ACMERoots != nil {
				c.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: t.ACMERoots}}}
			}
			m.Client = c
		}
		cfg := m.TLSConfig()
		cfg.MinVersion = tls.VersionTLS12
		return cfg, nil
	}
	return nil, &ConfigError{errors.New("TLS needs a certificate and key, or ACME domains")}
}

// setupAuth makes /mcp a protected resource for the public URL: the
// embedded authorization server (its routes added to the assembly's), or
// the trusted external issuer. The embedded one needs https (or a loopback
// http URL); without it OAuth is left off, and the notices say why.
func (h *httpServer) setupAuth(a *assembly) error {
	o := h.cfg.OAuth
	if o == nil {
		o = &OAuth{}
	}
	if o.Off {
		return nil
	}
	u, err := url.Parse(a.publicURL)
	if err != nil || u.Host == "" {
		return &ConfigError{fmt.Errorf("public URL %q is not an absolute URL", a.publicURL)}
	}
	base := strings.TrimRight(a.publicURL, "/")
	resource := base + "/mcp"
	ra := &mcpserver.ResourceAuth{Resource: resource, ResourceName: "Kobana (" + strings.Join(a.productNames(), ", ") + ")"}
	if o.Issuer != "" {
		aud := o.Audience
		if aud == "" {
			aud = resource
		}
		v, err := issuer.New(a.ctx, issuer.Options{Issuer: o.Issuer, Audience: aud, PersonClaim: o.PersonClaim, WorkspaceClaim: o.WorkspaceClaim,
			ScopePrefix: o.ScopePrefix, Store: a.store})
		if err != nil {
			return err
		}
		ra.AuthorizationServers, ra.Verify = []string{v.Issuer()}, v.Verify
		h.auth = ra
		return nil
	}
	host := u.Hostname()
	if u.Scheme != "https" && !isLoopbackHost(host) {
		h.authNote = "note: OAuth (for Claude.ai, ChatGPT and other remote hosts) needs HTTPS: pass -http-tls-cert/-http-tls-key or -acme-domain, or -public-url https://… behind a TLS proxy; static tokens work meanwhile"
		return nil
	}
	if u.Path != "" && u.Path != "/" {
		return &ConfigError{fmt.Errorf("public URL %q: the embedded authorization server needs a URL without a path (it is the issuer)", a.publicURL)}
	}
	as, err := authserver.New(a.ctx, authserver.Options{
		Store: a.store, Issuer: base, Resource: resource, ResourceName: ra.ResourceName,
		HTTPClient:           a.guard.Client(),
		AccessTokenLifespan:  o.AccessTokenLifespan,
		RefreshTokenLifespan: o.RefreshTokenLifespan,
		Registration:         o.Registration,
		Logger:               a.log,
	})
	if err != nil {
		return &ConfigError{err}
	}
	ra.AuthorizationServers, ra.Verify = []string{as.Issuer()}, as.Verify
	h.auth = ra
	h.open = as.OpenRoutes()
	for p, hd := range as.PageRoutes() {
		a.handlers[p] = hd
	}
	a.closers = append(a.closers, purgeOAuth(a))
	return nil
}

// purgeOAuth removes expired codes, tokens and sign-in codes hourly (and
// once now), starting again after a panic (panics.Loop); it returns the
// function that stops it and waits for it.
func purgeOAuth(a *assembly) func() {
	ctx, cancel := context.WithCancel(a.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		panics.Loop(ctx, "oauth purge", panics.DefaultRestart, func(ctx context.Context) error {
			t := time.NewTicker(time.Hour)
			defer t.Stop()
			for {
				if n, err := a.store.PurgeOAuth(ctx, time.Now().Add(-time.Hour)); err != nil && ctx.Err() == nil {
					a.log.Warn("purging expired oauth tokens", "error", err)
				} else if n > 0 {
					a.log.Info("purged expired oauth tokens", "count", n)
				}
				select {
				case <-ctx.Done():
					return nil
				case <-t.C:
				}
			}
		})
	}()
	return func() { cancel(); <-done }
}

// defaultHosts are the Host values accepted when none are configured: the
// loopback names, plus the public URL's host and the ACME domains (the
// names the server is reached by once it has them).
func defaultHosts(cfg HTTP, publicURL string) []string {
	if len(cfg.AllowedHosts) > 0 {
		return cfg.AllowedHosts
	}
	var names []string
	if u, err := url.Parse(publicURL); err == nil && u.Hostname() != "" && !isLoopbackHost(u.Hostname()) {
		names = append(names, u.Hostname())
	}
	if cfg.TLS != nil {
		names = append(names, cfg.TLS.ACMEDomains...)
	}
	if len(names) == 0 {
		return nil // loopback only, the framework's default
	}
	return append(names, "localhost", "127.0.0.1", "::1")
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// productNames are the names of the products the assembly serves.
func (a *assembly) productNames() []string {
	ps, _ := a.cfg.products()
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.name
	}
	return names
}
