package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"

	"github.com/kobana/workflow/mcpserver/server"
)

// authFlags are kobana serve's HTTPS and OAuth flags.
type authFlags struct {
	tls   server.TLS
	acme  listFlag
	mode  string
	oauth server.OAuth
}

// register adds the flags to fs.
func (f *authFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.tls.CertFile, "http-tls-cert", "", "serve HTTPS with this PEM certificate chain (with -http-tls-key)")
	fs.StringVar(&f.tls.KeyFile, "http-tls-key", "", "PEM private key of -http-tls-cert")
	fs.Var(&f.acme, "acme-domain", "get the HTTPS certificate for this host name from an ACME CA (repeatable; TLS-ALPN-01: the listener must be reachable on port 443 under it)")
	fs.StringVar(&f.tls.ACMEDirectory, "acme-directory", "", "the ACME CA's directory URL (default Let's Encrypt's)")
	fs.StringVar(&f.tls.ACMECache, "acme-cache", "", "directory for ACME certificates and the account key (default: the store's file + .acme)")
	fs.StringVar(&f.tls.ACMEEmail, "acme-email", "", "contact address given to the ACME CA")
	fs.StringVar(&f.mode, "oauth", "embedded", "OAuth for /mcp beside static tokens: embedded (this server is the authorization server; needs an https public URL or loopback), or off")
	fs.StringVar(&f.oauth.Issuer, "oauth-issuer", "", "trust this external OpenID Connect issuer's access tokens instead of the embedded server")
	fs.StringVar(&f.oauth.Audience, "oauth-audience", "", "the audience an external issuer's tokens must carry (default PUBLIC-URL/mcp)")
	fs.StringVar(&f.oauth.PersonClaim, "oauth-person-claim", "email", "the external token's claim that names the person: email (matched to people's addresses) or a claim holding the person's id")
	fs.StringVar(&f.oauth.WorkspaceClaim, "oauth-workspace-claim", "", "the external token's claim holding the workspace id (default: the person's only workspace)")
	fs.StringVar(&f.oauth.ScopePrefix, "oauth-scope-prefix", "", "prefix of the external token's read and write scopes, e.g. kobana: for kobana:read")
	fs.DurationVar(&f.oauth.AccessTokenLifespan, "oauth-access-ttl", 0, "lifetime of the embedded server's access tokens (default 15m)")
	fs.DurationVar(&f.oauth.RefreshTokenLifespan, "oauth-refresh-ttl", 0, "lifetime of its refresh tokens, renewed at each refresh (default 720h)")
}

// apply checks the flags and sets them on h; without -http they must be
// unset.
func (f *authFlags) apply(h *server.HTTP) error {
	f.tls.ACMEDomains = f.acme
	tlsSet := f.tls.CertFile != "" || f.tls.KeyFile != "" || len(f.acme) > 0
	external := f.oauth.Issuer != "" || f.oauth.Audience != "" || f.oauth.WorkspaceClaim != "" || f.oauth.ScopePrefix != ""
	if h == nil {
		if tlsSet || external || f.mode != "embedded" {
			return errors.New("-http-tls-*, -acme-* and -oauth* need -http ADDR")
		}
		return nil
	}
	if tlsSet {
		if (f.tls.CertFile == "") != (f.tls.KeyFile == "") {
			return errors.New("-http-tls-cert and -http-tls-key go together")
		}
		if f.tls.CertFile != "" && len(f.acme) > 0 {
			return errors.New("-http-tls-cert and -acme-domain exclude each other")
		}
		h.TLS = &f.tls
	} else if f.tls.ACMEDirectory != "" || f.tls.ACMECache != "" || f.tls.ACMEEmail != "" {
		return errors.New("-acme-directory, -acme-cache and -acme-email need -acme-domain")
	}
	switch f.mode {
	case "embedded":
	case "off":
		if external {
			return errors.New("-oauth off and -oauth-issuer exclude each other")
		}
		f.oauth.Off = true
	default:
		return fmt.Errorf("-oauth %q: want embedded or off (an external issuer is -oauth-issuer URL)", f.mode)
	}
	if f.oauth.Issuer != "" {
		if u, err := url.Parse(f.oauth.Issuer); err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
			return fmt.Errorf("-oauth-issuer %q is not an http(s) URL", f.oauth.Issuer)
		}
	} else if external {
		return errors.New("-oauth-audience, -oauth-workspace-claim and -oauth-scope-prefix need -oauth-issuer")
	}
	if f.oauth.AccessTokenLifespan < 0 || f.oauth.RefreshTokenLifespan < 0 {
		return errors.New("-oauth-access-ttl and -oauth-refresh-ttl must be positive")
	}
	h.OAuth = &f.oauth
	return nil
}
