package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/kobana/workflow/mcpserver/store"
)

// ResourceAuth makes /mcp an OAuth 2.1 protected resource (RFC 9728): its
// metadata is served at /.well-known/oauth-protected-resource/mcp (and at
// the bare /.well-known/oauth-protected-resource), every 401 names it in
// WWW-Authenticate, and bearer tokens that are not static kbn_ tokens go
// to Verify. Static tokens keep working beside OAuth.
type ResourceAuth struct {
	// Resource is the canonical URL of /mcp as clients reach it
	// (https://host/mcp): the audience tokens must be issued for.
	Resource string
	// AuthorizationServers are the issuer identifiers whose tokens Verify
	// accepts, as the metadata lists them.
	AuthorizationServers []string
	// Verify resolves an OAuth access token to its principal. It must
	// refuse, with an error wrapping ErrInvalidToken, a token that is
	// unknown, expired, revoked or issued for another resource; any other
	// error is a failure to check (logged, answered 500).
	Verify func(ctx context.Context, token string) (store.Principal, error)
	// ResourceName and Documentation are shown by clients (optional).
	ResourceName  string
	Documentation string
}

// ErrInvalidToken is what a ResourceAuth.Verify wraps for a token it does
// not accept.
var ErrInvalidToken = auth.ErrInvalidToken

// Scopes are the OAuth scopes the server knows: read, and write (which
// implies read). A caller's tools are its role's, bounded by them.
var Scopes = []string{"read", "write"}

// oauthExtra marks, in TokenInfo.Extra, a principal authenticated by an
// OAuth access token (which a client can replace with a wider one).
const oauthExtra = "kobana.oauth"

// wellKnownResource is where RFC 9728 puts the metadata of a resource at
// the origin's root; the metadata of /mcp is at this path + "/mcp".
const wellKnownResource = "/.well-known/oauth-protected-resource"

// metadataURL is the URL of the resource's metadata (RFC 9728 §3.1: the
// well-known path inserted before the resource's path).
func (a *ResourceAuth) metadataURL() string {
	origin, path := splitOrigin(a.Resource)
	return origin + wellKnownResource + path
}

// splitOrigin splits an absolute URL into its origin and its path.
func splitOrigin(u string) (origin, path string) {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u, ""
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		return scheme + "://" + rest[:i], strings.TrimRight(rest[i:], "/")
	}
	return u, ""
}

// metadata is the resource's RFC 9728 document.
func (a *ResourceAuth) metadata() *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               a.Resource,
		AuthorizationServers:   a.AuthorizationServers,
		ScopesSupported:        Scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           a.ResourceName,
		ResourceDocumentation:  a.Documentation,
	}
}

// routes adds the metadata routes to mux.
func (a *ResourceAuth) routes(mux *http.ServeMux) {
	h := metadataMethods(auth.ProtectedResourceMetadataHandler(a.metadata()))
	_, path := splitOrigin(a.Resource)
	mux.Handle(wellKnownResource+path, h)
	if path != "" {
		mux.Handle(wellKnownResource, h)
	}
}

// metadataMethods serves the metadata for HEAD as for GET (the SDK's
// handler answers GET only, and every server must serve HEAD where it
// serves GET, RFC 9110 §9.1), and names the methods served in the Allow
// field of a 405 (which RFC 9110 §15.5.6 requires).
func metadataMethods(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodOptions:
		case http.MethodHead:
			// net/http leaves out the body of an answer to a HEAD request.
			get := *r
			get.Method = http.MethodGet
			r = &get
		default:
			w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		}
		next.ServeHTTP(w, r)
	})
}

// challenge is the WWW-Authenticate value of a 401 (RFC 6750 §3): bare
// without a token, with error="invalid_token" for a refused one. With
// OAuth both name the metadata and every scope the server offers: hosts
// ask for what the challenge names (the MCP scope selection strategy), and
// the consent page and the person's role bound what is granted, so a host
// is not sent back for write on its first write. Without OAuth the scope
// is read, which every static token holds.
func challenge(a *ResourceAuth, invalid bool) string {
	var params []string
	if invalid {
		params = append(params, `error="invalid_token"`, `error_description="the token is unknown, expired or revoked, or was issued for another resource"`)
	}
	if a != nil {
		params = append(params, fmt.Sprintf("resource_metadata=%q", a.metadataURL()), `scope="read write"`)
	} else {
		params = append(params, `scope="read"`)
	}
	return "Bearer " + strings.Join(params, ", ")
}

// scopeChallenge answers 403 insufficient_scope (RFC 6750 §3.1) to an
// OAuth caller that calls a tool its role allows but its token's scopes do
// not: a client can then ask the person for a wider grant (the MCP
// specification's step-up). Static tokens, which cannot be widened, and
// tools the role forbids go on to the MCP answer they get today.
func (s *Server) scopeChallenge(a *ResourceAuth, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ti := auth.TokenInfoFromContext(r.Context())
		if ti == nil || ti.Extra[oauthExtra] != true || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		p, _ := ti.Extra[principalExtra].(store.Principal)
		tools, err := calledTools(r)
		if err != nil {
			next.ServeHTTP(w, r) // not JSON-RPC: the SDK answers
			return
		}
		need := ""
		for _, name := range tools {
			if scope := s.missingScope(p, name); scope != "" {
				need = scope
			}
		}
		if need == "" {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer error="insufficient_scope", scope=%q, resource_metadata=%q, error_description="the token's scopes do not allow this tool; ask for %s"`,
			need, a.metadataURL(), need))
		http.Error(w, "Forbidden: insufficient_scope: the token's scopes do not allow this tool; its role does", http.StatusForbidden)
	})
}

// missingScope returns the scopes a token needs to call the named tool
// when its role would let it and its scopes do not ("read write"), or ""
// (the tool is allowed, unknown, or beyond the role).
func (s *Server) missingScope(p store.Principal, name string) string {
	t, ok := s.tools[name]
	if !ok {
		return ""
	}
	max, ok := s.opts.Roles[p.Role]
	if !ok || t.tool.Access > max {
		return ""
	}
	if allowedTools(p, s.opts.Roles, map[string]*toolEntry{name: t})[name] {
		return ""
	}
	if t.tool.Access == Read {
		return "read"
	}
	return "read write"
}

// calledTools returns the names of the tools a POST calls: from the
// Mcp-Method and Mcp-Name headers of 2026-07-28, or from its JSON-RPC body
// (one message or a batch), which is put back for the handler to read.
func calledTools(r *http.Request) ([]string, error) {
	if r.Header.Get("Mcp-Protocol-Version") >= ProtocolModern && r.Header.Get("Mcp-Method") != "" {
		if r.Header.Get("Mcp-Method") == "tools/call" {
			return []string{r.Header.Get("Mcp-Name")}, nil
		}
		return nil, nil
	}
	body, err := peekBody(r)
	if err != nil {
		return nil, err
	}
	type message struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	var msgs []message
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "[") {
		if err := json.Unmarshal([]byte(trimmed), &msgs); err != nil {
			return nil, err
		}
	} else {
		var m message
		if err := json.Unmarshal([]byte(trimmed), &m); err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	var out []string
	for _, m := range msgs {
		if m.Method == "tools/call" {
			out = append(out, m.Params.Name)
		}
	}
	return out, nil
}

// errBodyTooLong says a body was too long to look into (the SDK reads and
// answers it).
var errBodyTooLong = errors.New("body too long to peek")

// peekBody reads up to maxPeek bytes of r's body and puts them back in
// front of the rest, for the handler to read the whole body again.
func peekBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	orig := r.Body
	body, err := io.ReadAll(io.LimitReader(orig, maxPeek))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(strings.NewReader(string(body)), orig), orig}
	if err != nil {
		return nil, err
	}
	if len(body) == maxPeek {
		return body, errBodyTooLong
	}
	return body, nil
}
