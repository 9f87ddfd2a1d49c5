package server

import (
	"errors"
	"fmt"
	"time"

	"github.com/kobana/workflow/mcpserver/console"
)

// ConsoleOptions tunes the back office served on the HTTP listener at
// /console/ (package console).
type ConsoleOptions struct {
	// Off serves no console.
	Off bool
	// IdleTimeout and Lifetime end a console session (defaults
	// console.DefaultIdleTimeout and console.DefaultLifetime).
	IdleTimeout, Lifetime time.Duration
	// OIDCClientID and OIDCClientSecret register the console at the
	// external issuer (HTTP.OAuth.Issuer) as a confidential client, with
	// the redirect URI PUBLIC-URL/console/signin/oidc/callback: people may
	// then sign in there too, mapped to a person and a workspace by the
	// issuer's PersonClaim and WorkspaceClaim. OIDCName names the issuer
	// on the sign-in page (default its host).
	OIDCClientID, OIDCClientSecret, OIDCName string
}

// addConsole mounts the console on the HTTP listener, over the products'
// tools; it runs once the MCP server is built.
func (a *assembly) addConsole() error {
	for _, s := range a.services {
		h, ok := s.(*httpServer)
		if !ok || h.cfg.Console.Off {
			continue
		}
		opts := console.Options{Store: a.store, Tools: a.server, PublicURL: a.publicURL,
			IdleTimeout: h.cfg.Console.IdleTimeout, Lifetime: h.cfg.Console.Lifetime, Logger: a.log}
		if a.inbox != nil {
			opts.Messages = a.inbox.raw
		}
		if cc := h.cfg.Console; cc.OIDCClientID != "" || cc.OIDCClientSecret != "" {
			o := h.cfg.OAuth
			if o == nil || o.Issuer == "" || cc.OIDCClientID == "" || cc.OIDCClientSecret == "" {
				return &ConfigError{errors.New("console: OIDC sign-in needs the external issuer (OAuth.Issuer), the console's client id and its secret")}
			}
			opts.OIDC = &console.OIDC{Issuer: o.Issuer, ClientID: cc.OIDCClientID, ClientSecret: cc.OIDCClientSecret, Name: cc.OIDCName,
				PersonClaim: o.PersonClaim, WorkspaceClaim: o.WorkspaceClaim}
		}
		c, err := console.New(a.ctx, opts)
		if err != nil {
			return fmt.Errorf("console: %w", err)
		}
		a.handlers[console.Prefix] = c.Handler()
		h.console = c.URL()
	}
	return nil
}
