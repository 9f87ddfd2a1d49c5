package authserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/ory/fosite"

	"github.com/kobana/workflow/mcpserver/store"
)

// Client kinds, as store.OAuthClient.Kind.
const (
	kindRegistered = "registered" // Dynamic Client Registration (RFC 7591)
	kindMetadata   = "metadata"   // a Client ID Metadata Document
)

// clientMeta is the client metadata this server keeps and answers with
// (RFC 7591 §2, and the Client ID Metadata Document, which uses the same
// names).
type clientMeta struct {
	ClientID                string   `json:"client_id,omitempty"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at,omitempty"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types,omitempty"`
	ResponseTypes           []string `json:"response_types,omitempty"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method,omitempty"`
	Scope                   string   `json:"scope,omitempty"`
	ApplicationType         string   `json:"application_type,omitempty"`
	SoftwareID              string   `json:"software_id,omitempty"`
	SoftwareVersion         string   `json:"software_version,omitempty"`
}

// client is a fosite client with what the consent page shows.
type client struct {
	*fosite.DefaultClient
	name string
	uri  string
	kind string
}

// Limits of what a client may declare.
const (
	maxRedirectURIs = 10
	maxURILength    = 2000
	maxClientName   = 100
	maxMetadataSize = 16 << 10
)

// errMetadata is an invalid_client_metadata or invalid_redirect_uri
// (RFC 7591 §3.2.2) with its description.
type errMetadata struct {
	code, desc string
}

func (e *errMetadata) Error() string { return e.code + ": " + e.desc }

func badMeta(format string, a ...any) error {
	return &errMetadata{"invalid_client_metadata", fmt.Sprintf(format, a...)}
}

func badRedirect(format string, a ...any) error {
	return &errMetadata{"invalid_redirect_uri", fmt.Sprintf(format, a...)}
}

// check validates client metadata and fills in the defaults: public
// clients only (token_endpoint_auth_method none, replacing any other, as
// RFC 7591 §3.2.1 allows), the authorization code and refresh token
// grants, the code response type, redirect URIs that are absolute, carry
// no fragment and are https, http on a loopback address (RFC 8252 §7.3),
// or a private-use scheme with a dot in it (RFC 8252 §7.1).
func (m *clientMeta) check() error {
	if len(m.RedirectURIs) == 0 {
		return badRedirect("redirect_uris is required")
	}
	if len(m.RedirectURIs) > maxRedirectURIs {
		return badRedirect("at most %d redirect_uris", maxRedirectURIs)
	}
	for _, u := range m.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return err
		}
	}
	if len(m.GrantTypes) == 0 {
		m.GrantTypes = []string{"authorization_code", "refresh_token"}
	}
	for _, g := range m.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return badMeta("grant type %q is not supported (authorization_code, refresh_token)", g)
		}
	}
	if !slices.Contains(m.GrantTypes, "authorization_code") {
		return badMeta("grant_types must include authorization_code")
	}
	if len(m.ResponseTypes) == 0 {
		m.ResponseTypes = []string{"code"}
	}
	if len(m.ResponseTypes) != 1 || m.ResponseTypes[0] != "code" {
		return badMeta("response_types must be [\"code\"]")
	}
	m.TokenEndpointAuthMethod = "none"
	if len(m.ClientName) > maxClientName || strings.IndexFunc(m.ClientName, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return badMeta("client_name must be at most %d printable characters", maxClientName)
	}
	if m.ClientURI != "" {
		if u, err := url.Parse(m.ClientURI); err != nil || u.Scheme != "https" || u.Host == "" || len(m.ClientURI) > maxURILength {
			return badMeta("client_uri must be an https URL")
		}
	}
	for _, sc := range strings.Fields(m.Scope) {
		if !slices.Contains(scopes, sc) {
			return badMeta("scope %q is not offered (%s)", sc, strings.Join(scopes, " "))
		}
	}
	return nil
}

// checkRedirectURI refuses a redirect URI a code must never be sent to.
func checkRedirectURI(raw string) error {
	if len(raw) > maxURILength {
		return badRedirect("redirect URI longer than %d bytes", maxURILength)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return badRedirect("redirect URI %q is not an absolute URL", raw)
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return badRedirect("redirect URI %q has a fragment", raw)
	}
	switch u.Scheme {
	case "https":
		if u.Host == "" {
			return badRedirect("redirect URI %q has no host", raw)
		}
	case "http":
		if !isLoopback(u.Hostname()) {
			return badRedirect("redirect URI %q: http is allowed only on a loopback address (127.0.0.1, [::1], localhost)", raw)
		}
	case "javascript", "data", "file", "vbscript", "blob", "about", "ftp", "ws", "wss":
		return badRedirect("redirect URI %q: scheme %s is not allowed", raw, u.Scheme)
	default:
		if !strings.Contains(u.Scheme, ".") {
			return badRedirect("redirect URI %q: a private-use scheme must be a reverse domain name (com.example.app:/callback)", raw)
		}
	}
	if u.User != nil {
		return badRedirect("redirect URI %q carries user information", raw)
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// fositeClient is the fosite view of a client's metadata.
func (s *Server) fositeClient(id string, m clientMeta, kind string) *client {
	granted := scopes
	if m.Scope != "" {
		granted = strings.Fields(m.Scope)
	}
	return &client{
		DefaultClient: &fosite.DefaultClient{
			ID:            id,
			RedirectURIs:  m.RedirectURIs,
			GrantTypes:    m.GrantTypes,
			ResponseTypes: m.ResponseTypes,
			Scopes:        granted,
			Audience:      []string{s.opts.Resource},
			Public:        true,
		},
		name: m.ClientName,
		uri:  m.ClientURI,
		kind: kind,
	}
}

// client returns a known client: a registered one from the store, or
// the one whose Client ID Metadata Document its id names (read again
// when fetch allows and the kept copy expired).
func (s *Server) client(ctx context.Context, id string, fetch bool) (*client, error) {
	if isMetadataURL(id) {
		return s.metadataClient(ctx, id, fetch)
	}
	c, err := s.store.GetOAuthClient(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fosite.ErrInvalidClient.WithHint("The client is not registered here: register it (RFC 7591) or use a Client ID Metadata Document URL.")
	}
	if err != nil {
		return nil, err
	}
	var m clientMeta
	if err := json.Unmarshal(c.Metadata, &m); err != nil {
		return nil, fmt.Errorf("client %s: reading its metadata: %w", id, err)
	}
	return s.fositeClient(id, m, c.Kind), nil
}

// ---- Dynamic Client Registration (RFC 7591) ----

// registrar limits registrations: per client address within a sliding hour
// (this process's count), and across every replica in the store (per
// hour, and in all).
type registrar struct {
	mu    sync.Mutex
	seen  map[string][]time.Time
	reset time.Time
}

// allow reports whether addr may register at now; record counts a
// registration.
func (g *registrar) allow(addr string, now time.Time, perHour int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen == nil || now.Sub(g.reset) > time.Hour {
		g.seen, g.reset = map[string][]time.Time{}, now
	}
	recent := g.seen[addr][:0]
	for _, t := range g.seen[addr] {
		if now.Sub(t) < time.Hour {
			recent = append(recent, t)
		}
	}
	g.seen[addr] = recent
	return len(recent) < perHour
}

func (g *registrar) record(addr string, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen == nil {
		g.seen, g.reset = map[string][]time.Time{}, now
	}
	g.seen[addr] = append(g.seen[addr], now)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func writeOAuthError(w http.ResponseWriter, code int, errCode, desc string) {
	writeJSON(w, code, map[string]string{"error": errCode, "error_description": desc})
}

// register is the registration endpoint: an unauthenticated POST of client
// metadata, answered 201 with the client's id.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeOAuthError(w, http.StatusMethodNotAllowed, "invalid_request", "register with a POST of client metadata (RFC 7591)")
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client_metadata", "the metadata must be sent as application/json")
		return
	}
	ctx := r.Context()
	now := s.now()
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	lim := s.opts.Registration
	if !s.reg.allow(host, now, lim.PerAddressPerHour) {
		w.Header().Set("Retry-After", "3600")
		writeOAuthError(w, http.StatusTooManyRequests, "invalid_request", fmt.Sprintf("too many registrations from this address (at most %d an hour)", lim.PerAddressPerHour))
		return
	}
	if n, err := s.store.CountOAuthClients(ctx, kindRegistered, now.Add(-time.Hour)); err != nil {
		s.serverError(w, r, "counting registrations", err)
		return
	} else if n >= lim.PerHour {
		w.Header().Set("Retry-After", "600")
		writeOAuthError(w, http.StatusTooManyRequests, "invalid_request", "too many registrations on this server in the last hour; try again later")
		return
	}
	if n, err := s.store.CountOAuthClients(ctx, kindRegistered, time.Time{}); err != nil {
		s.serverError(w, r, "counting registrations", err)
		return
	} else if n >= lim.Max {
		writeOAuthError(w, http.StatusForbidden, "invalid_request", "this server registers no more clients; ask its operator")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxMetadataSize+1))
	if err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client_metadata", "reading the metadata: "+err.Error())
		return
	}
	if len(body) > maxMetadataSize {
		writeOAuthError(w, http.StatusRequestEntityTooLarge, "invalid_client_metadata", fmt.Sprintf("the metadata is longer than %d bytes", maxMetadataSize))
		return
	}
	var m clientMeta
	if err := json.Unmarshal(body, &m); err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client_metadata", "the metadata is not a JSON object of client metadata: "+err.Error())
		return
	}
	if err := m.check(); err != nil {
		var em *errMetadata
		errors.As(err, &em)
		writeOAuthError(w, http.StatusBadRequest, em.code, em.desc)
		return
	}
	m.ClientID = "cli_" + store.RandomHex(12)
	m.ClientIDIssuedAt = now.Unix()
	data, _ := json.Marshal(m)
	if err := s.store.CreateOAuthClient(ctx, store.OAuthClient{ID: m.ClientID, Name: m.ClientName, Kind: kindRegistered, Metadata: data, Created: now}); err != nil {
		s.serverError(w, r, "storing a client", err)
		return
	}
	s.reg.record(host, now)
	s.log.InfoContext(ctx, "oauth client registered", "client", m.ClientID, "name", m.ClientName, "remote", r.RemoteAddr)
	writeJSON(w, http.StatusCreated, m)
}

// ---- Client ID Metadata Documents ----

// isMetadataURL reports whether a client id is a Client ID Metadata
// Document URL: https with a path.
func isMetadataURL(id string) bool {
	u, err := url.Parse(id)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.Path != "" && u.Path != "/"
}

// Bounds on how long a metadata document is kept before it is read again.
const (
	metadataMinAge     = 5 * time.Minute
	metadataDefaultAge = time.Hour
	metadataMaxAge     = 24 * time.Hour
)

// metadataClient returns the client a Client ID Metadata Document
// describes: the kept copy while it is fresh, else the document read again
// (through Options.HTTPClient: no redirects, a size limit), checked (its
// client_id is the URL exactly, its metadata valid) and kept for as long as
// its Cache-Control allows, within bounds.
func (s *Server) metadataClient(ctx context.Context, id string, fetch bool) (*client, error) {
	kept, err := s.store.GetOAuthClient(ctx, id)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if err == nil && (!fetch || s.now().Before(kept.Expires)) {
		var m clientMeta
		if err := json.Unmarshal(kept.Metadata, &m); err != nil {
			return nil, fmt.Errorf("client %s: reading its metadata: %w", id, err)
		}
		return s.fositeClient(id, m, kindMetadata), nil
	}
	if !fetch {
		return nil, fosite.ErrInvalidClient.WithHint("The client's metadata document was never read.")
	}
	if s.opts.HTTPClient == nil {
		return nil, fosite.ErrInvalidClient.WithHint("This server does not read Client ID Metadata Documents; register the client (RFC 7591).")
	}
	m, age, err := s.fetchMetadata(ctx, id)
	if err != nil {
		s.log.InfoContext(ctx, "client metadata document refused", "client", id, "error", err)
		return nil, fosite.ErrInvalidClient.WithHintf("The client's metadata document at %s cannot be used: %v", id, err)
	}
	data, _ := json.Marshal(m)
	if err := s.store.PutOAuthClient(ctx, store.OAuthClient{ID: id, Name: m.ClientName, Kind: kindMetadata, Metadata: data, Expires: s.now().Add(age)}); err != nil {
		return nil, err
	}
	return s.fositeClient(id, m, kindMetadata), nil
}

func (s *Server) fetchMetadata(ctx context.Context, id string) (clientMeta, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return clientMeta{}, 0, err
	}
	req.Header.Set("Accept", "application/json")
	hc := *s.opts.HTTPClient
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		return clientMeta{}, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return clientMeta{}, 0, fmt.Errorf("HTTP %d (redirects are not followed)", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataSize+1))
	if err != nil {
		return clientMeta{}, 0, err
	}
	if len(body) > maxMetadataSize {
		return clientMeta{}, 0, fmt.Errorf("the document is longer than %d bytes", maxMetadataSize)
	}
	var m clientMeta
	if err := json.Unmarshal(body, &m); err != nil {
		return clientMeta{}, 0, fmt.Errorf("not a JSON object of client metadata: %w", err)
	}
	if m.ClientID != id {
		return clientMeta{}, 0, fmt.Errorf("its client_id %q is not the document's URL", m.ClientID)
	}
	if m.ClientName == "" {
		return clientMeta{}, 0, errors.New("client_name is required")
	}
	method := m.TokenEndpointAuthMethod
	if err := m.check(); err != nil {
		return clientMeta{}, 0, err
	}
	if method != "" && method != "none" {
		return clientMeta{}, 0, fmt.Errorf("token_endpoint_auth_method %q: only public clients (none) are served", method)
	}
	return m, cacheAge(resp.Header.Get("Cache-Control")), nil
}

// cacheAge is how long a document may be kept by its Cache-Control
// header's max-age, within bounds (no-store and no-cache keep it the
// least time).
func cacheAge(cc string) time.Duration {
	age := metadataDefaultAge
	for _, d := range strings.Split(cc, ",") {
		d = strings.TrimSpace(strings.ToLower(d))
		switch {
		case d == "no-store" || d == "no-cache":
			return metadataMinAge
		case strings.HasPrefix(d, "max-age="):
			if n, err := strconv.Atoi(strings.TrimPrefix(d, "max-age=")); err == nil {
				age = time.Duration(n) * time.Second
			}
		}
	}
	return max(metadataMinAge, min(age, metadataMaxAge))
}
