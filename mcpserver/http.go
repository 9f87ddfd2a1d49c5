package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/store"
)

// principalExtra is the TokenInfo.Extra key of the authenticated principal.
const principalExtra = "kobana.principal"

// HTTPOptions configures HTTPHandler.
type HTTPOptions struct {
	// AllowedHosts are the Host header values accepted (host or host:port,
	// case-insensitive). Empty means only loopback names (localhost,
	// 127.0.0.1, [::1]) on any port — the safe default for a local server.
	AllowedHosts []string
	// AllowedOrigins are the Origin header values accepted from browsers
	// (scheme://host[:port]). Requests without an Origin header (non-browser
	// clients) are always accepted; a request whose Origin is not listed is
	// refused with 403, which stops DNS-rebinding pages.
	AllowedOrigins []string
	// Extra routes served beside /mcp on the same server (e.g. signed
	// download URLs), keyed by ServeMux pattern. They do their own auth.
	Extra map[string]http.Handler
	// SessionTimeout closes 2025-era sessions idle for this long; zero
	// means 30 minutes. (2026-07-28 requests hold no session.)
	SessionTimeout time.Duration
	// MaxSessionsPerToken caps the 2025-era sessions one token (or OAuth
	// grant) has open: a new one closes its oldest. MaxSessions caps them
	// in all: beyond, initialize is answered 503 until some end. Zero means
	// DefaultMaxSessionsPerToken and DefaultMaxSessions.
	MaxSessionsPerToken, MaxSessions int
	// Auth, when set, makes /mcp an OAuth protected resource (see
	// ResourceAuth); without it only static tokens are accepted.
	Auth *ResourceAuth
	// OpenRoutes are routes beside /mcp that a page of any origin may call
	// (an authorization server's metadata, token, registration and
	// revocation endpoints, which rely on no cookie): their Host is
	// checked, their Origin is not.
	OpenRoutes map[string]http.Handler
}

// HTTPHandler serves Streamable HTTP at /mcp for both eras: requests whose
// Mcp-Protocol-Version is 2026-07-28 or later go to a stateless handler,
// everything else (initialize, 2025 sessions) to a stateful one; both wrap
// the same server. Every /mcp request needs a bearer token.
func (s *Server) HTTPHandler(o HTTPOptions) http.Handler {
	stateless := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: true, PropagateRequestCancellation: true})
	idle := o.SessionTimeout
	if idle <= 0 {
		idle = 30 * time.Minute
	}
	stateful := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{DisableLocalhostProtection: true, SessionTimeout: idle})
	limits := newSessionLimits(s.mcp, o.MaxSessionsPerToken, o.MaxSessions)
	s.sessions.Store(limits)
	router := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !checkBody(w, r) {
			return
		}
		if r.Header.Get("Mcp-Protocol-Version") >= ProtocolModern {
			stateless.ServeHTTP(w, r)
			return
		}
		ok, initialize := sessionOrInitialize(w, r)
		if !ok {
			return
		}
		if initialize {
			if w = limits.admit(w, r); w == nil {
				return
			}
		}
		stateful.ServeHTTP(w, r)
	})
	var inner http.Handler = router
	opts := &auth.RequireBearerTokenOptions{
		// Every token has the read scope; naming it makes 401 answers carry
		// a WWW-Authenticate challenge.
		Scopes:                 []string{"read"},
		AllowMissingExpiration: true,
	}
	mux := http.NewServeMux()
	if o.Auth != nil {
		opts.ResourceMetadataURL = o.Auth.metadataURL()
		inner = s.scopeChallenge(o.Auth, router)
	}
	verify := func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		return s.verifyToken(ctx, o.Auth, token, r)
	}
	mux.Handle("/mcp", invalidTokenChallenge(o.Auth, auth.RequireBearerToken(verify, opts)(inner)))
	for pattern, h := range o.Extra {
		mux.Handle(pattern, h)
	}
	open := http.NewServeMux()
	for pattern, h := range o.OpenRoutes {
		open.Handle(pattern, h)
	}
	if o.Auth != nil {
		o.Auth.routes(open)
	}
	return jsonrpcErrors(guardOrigin(o, mux, open))
}

// invalidTokenChallenge makes the 401 answered to a request that presented
// a bearer token say why, as RFC 6750 §3.1 asks:
// WWW-Authenticate: Bearer error="invalid_token", …. (A request without a
// token gets the bare challenge: the RFC wants no error code then.)
func invalidTokenChallenge(a *ResourceAuth, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, _, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		next.ServeHTTP(&challengeWriter{ResponseWriter: w, challenge: challenge(a, strings.EqualFold(scheme, "bearer"))}, r)
	})
}

// challengeWriter rewrites the WWW-Authenticate header of a 401.
type challengeWriter struct {
	http.ResponseWriter
	challenge string
}

func (c *challengeWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized {
		c.Header().Set("WWW-Authenticate", c.challenge)
	}
	c.ResponseWriter.WriteHeader(code)
}

// Unwrap gives http.ResponseController the underlying writer (flushing the
// event streams of the SDK).
func (c *challengeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// Flush passes on to the underlying writer.
func (c *challengeWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// maxPeek bounds the body sessionOrInitialize reads of a POST without a
// session: initialize requests are small.
const maxPeek = 1 << 20

// sessionOrInitialize answers, and returns false for, a handshake-era POST
// that carries no Mcp-Session-Id and is not initialize: such a request
// belongs to no session. The transport specification wants HTTP 400; the
// body is a JSON-RPC error (-32600, Invalid Request) saying what to do. The
// go-sdk would open a session for it and answer HTTP 200 with error code 0.
//
// initialize says the request opens a session (initialize).
func sessionOrInitialize(w http.ResponseWriter, r *http.Request) (ok, initialize bool) {
	if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" || r.Body == nil {
		return true, false
	}
	orig := r.Body
	body, err := io.ReadAll(io.LimitReader(orig, maxPeek))
	if err != nil {
		http.Error(w, "Bad Request: reading the body: "+err.Error(), http.StatusBadRequest)
		return false, false
	}
	// The handler reads the whole body again: what was peeked, then the rest.
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), orig), orig}
	// Member names match exactly (encoding/json's struct fields ignore
	// case: {"id":795,"ID":1} would be answered as id 1).
	var msgs []map[string]json.RawMessage
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' {
		if json.Unmarshal(trimmed, &msgs) != nil {
			return true, false // not JSON-RPC (or too long to tell): the SDK answers
		}
	} else {
		var one map[string]json.RawMessage
		if json.Unmarshal(trimmed, &one) != nil {
			return true, false
		}
		msgs = append(msgs, one)
	}
	var id json.RawMessage
	for _, m := range msgs {
		var method string
		json.Unmarshal(m["method"], &method)
		if method == "initialize" {
			return true, true
		}
		if method == "server/discover" {
			return true, false
		}
		if echo, _, _ := checkID(m["id"]); id == nil && echo != nil {
			id = echo
		}
	}
	answer := map[string]any{
		"jsonrpc": "2.0",
		"error": map[string]any{
			"code": -32600,
			"message": "Bad Request: no Mcp-Session-Id header. On protocol 2025-11-25 and earlier, send initialize first and then every request with the " +
				"Mcp-Session-Id it answers; on 2026-07-28, send Mcp-Protocol-Version: 2026-07-28 and no session is needed.",
		},
	}
	answer["id"] = id // null when there is none: JSON-RPC 2.0 §5
	b, _ := json.Marshal(answer)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	w.Write(b)
	return false, false
}

// errTokenCheck is what a client is told when its token could not be
// checked (the store failed): the go-sdk writes it into the HTTP 500 body,
// which anyone can read, token or not.
var errTokenCheck = errors.New("cannot check tokens right now")

// verifyToken resolves a bearer token to its principal: a static kbn_
// token through the store, any other through a's Verify (an OAuth access
// token). A failure to check is logged and answered with errTokenCheck: its
// text (host names, addresses, SQL) is for the operator, not for an
// unauthenticated client.
func (s *Server) verifyToken(ctx context.Context, a *ResourceAuth, token string, r *http.Request) (*auth.TokenInfo, error) {
	var p store.Principal
	var err error
	oauth := !strings.HasPrefix(token, store.TokenPrefix)
	switch {
	case !oauth:
		p, err = s.opts.Store.Authenticate(ctx, token)
	case a == nil || a.Verify == nil:
		return nil, auth.ErrInvalidToken
	default:
		p, err = a.Verify(ctx, token)
	}
	if err != nil {
		if authFailure(err) == http.StatusUnauthorized || errors.Is(err, auth.ErrInvalidToken) {
			// Logged without the token, or any part of it.
			if oauth {
				s.log.InfoContext(ctx, "oauth token refused", "remote", remoteOf(r), "reason", err)
			} else {
				s.log.InfoContext(ctx, "token refused", "remote", remoteOf(r), "reason", "unknown, expired or revoked")
			}
			return nil, auth.ErrInvalidToken
		}
		s.log.ErrorContext(ctx, "token check failed", "remote", remoteOf(r), "error", err)
		return nil, errTokenCheck
	}
	return &auth.TokenInfo{
		Scopes:     p.Scopes,
		UserID:     p.Person + "@" + p.Workspace,
		Expiration: p.Expires,
		Extra:      map[string]any{principalExtra: p, oauthExtra: oauth},
	}, nil
}

// remoteOf is the client address of r, for logs.
func remoteOf(r *http.Request) string {
	if r == nil {
		return ""
	}
	return r.RemoteAddr
}

// guardOrigin validates Host and Origin against DNS rebinding and
// cross-site requests; the routes of open (when one matches) have their
// Host checked only.
func guardOrigin(o HTTPOptions, next http.Handler, open *http.ServeMux) http.Handler {
	hosts := make([]string, 0, len(o.AllowedHosts))
	for _, h := range o.AllowedHosts {
		hosts = append(hosts, strings.ToLower(h))
	}
	origins := make([]string, 0, len(o.AllowedOrigins))
	for _, h := range o.AllowedOrigins {
		origins = append(origins, strings.ToLower(strings.TrimRight(h, "/")))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(hosts, r.Host) {
			http.Error(w, fmt.Sprintf("Forbidden: host %q is not served here", r.Host), http.StatusForbidden)
			return
		}
		if h, pattern := open.Handler(r); pattern != "" {
			h.ServeHTTP(w, r)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			if !originAllowed(origins, hosts, origin) {
				http.Error(w, fmt.Sprintf("Forbidden: origin %q is not allowed", origin), http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func isLoopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func splitHost(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func hostAllowed(allowed []string, hostport string) bool {
	hostport = strings.ToLower(hostport)
	if len(allowed) == 0 {
		return isLoopbackName(splitHost(hostport))
	}
	return slices.Contains(allowed, hostport) || slices.Contains(allowed, splitHost(hostport))
}

func originAllowed(origins, hosts []string, origin string) bool {
	origin = strings.ToLower(strings.TrimRight(origin, "/"))
	if slices.Contains(origins, origin) {
		return true
	}
	if len(origins) > 0 {
		return false
	}
	// No explicit list: accept only pages served from an allowed host
	// itself (a loopback page when no hosts are configured).
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return hostAllowed(hosts, u.Host)
}

// ServeStdio serves one stdio connection (newline-delimited JSON-RPC on in
// and out) on behalf of the given token, until the client closes its input
// or ctx ends. The token is checked now and again on every request. When
// the input ends, the requests already read are answered first (unless the
// client cancelled them, ctx ends or 10 s pass): `printf 'REQ1\nREQ2\n' |
// kobana serve -stdio` prints both answers. The end of the input is not an
// error: ServeStdio then returns nil. Every message gets at most one
// answer, carrying its own id; what is no valid message is answered with a
// JSON-RPC error and the session goes on (see stdioInput).
func (s *Server) ServeStdio(ctx context.Context, token string, in io.ReadCloser, out io.WriteCloser) error {
	if _, err := s.opts.Store.Authenticate(ctx, token); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errors.New("the token is unknown, expired or revoked")
		}
		return err
	}
	ctx = context.WithValue(ctx, stdioTokenKey{}, token)
	f := newInflight(ctx)
	w := newStdioOutput(out, f)
	r := &stdioInput{in: in, f: f, out: w}
	err := s.mcp.Run(ctx, &mcp.IOTransport{Reader: r, Writer: w})
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// Connect serves one in-process connection on behalf of a token (tests,
// embedding). It returns once the session is established.
func (s *Server) Connect(ctx context.Context, token string, t mcp.Transport) (*mcp.ServerSession, error) {
	ctx = context.WithValue(ctx, stdioTokenKey{}, token)
	return s.mcp.Connect(ctx, t, nil)
}

// jsonrpcErrors makes every error /mcp answers a JSON-RPC error object a
// client can parse, keeping the HTTP status: the SDK, net/http and the
// guards answer some as plain text (http.Error: "malformed payload: …",
// "session not found", "Forbidden: host … is not served here"), and the
// SDK answers some with code 0 or a message echoing the input (fixAnswer).
// A plain-text error becomes -32700 for a body that is not JSON, -32603
// for a 5xx, and -32600 Invalid Request otherwise, with the request's id
// when checkBody read one. Other routes are served as they are.
func jsonrpcErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/mcp" && !strings.HasPrefix(r.URL.Path, "/mcp/") {
			next.ServeHTTP(w, r)
			return
		}
		aw := &answerWriter{ResponseWriter: w}
		next.ServeHTTP(aw, r.WithContext(context.WithValue(r.Context(), answerWriterKey{}, aw)))
		aw.finish()
	})
}

// answerWriterKey is the context key of a request's answerWriter.
type answerWriterKey struct{}

// answerWriter is the ResponseWriter of jsonrpcErrors.
type answerWriter struct {
	http.ResponseWriter
	// id is the id of the request the body holds (nil: none or unknown).
	id json.RawMessage
	// status is the status of a plain-text error held until its text is
	// written (0: none).
	status      int
	wroteHeader bool
}

func (a *answerWriter) WriteHeader(code int) {
	if a.wroteHeader {
		return
	}
	a.wroteHeader = true
	if code >= 400 && strings.HasPrefix(a.Header().Get("Content-Type"), "text/plain") {
		a.status = code
		a.Header().Set("Content-Type", "application/json")
		return
	}
	a.ResponseWriter.WriteHeader(code)
}

func (a *answerWriter) Write(p []byte) (int, error) {
	if !a.wroteHeader {
		a.WriteHeader(http.StatusOK)
	}
	if a.status != 0 {
		a.writeError(string(p))
		return len(p), nil
	}
	switch ct := a.Header().Get("Content-Type"); {
	case strings.HasPrefix(ct, "application/json"):
		if _, err := a.ResponseWriter.Write(fixAnswers(p)); err != nil {
			return 0, err
		}
		return len(p), nil
	case strings.HasPrefix(ct, "text/event-stream"):
		// The SDK writes one whole event per Write (mcp.writeEvent).
		if _, err := a.ResponseWriter.Write(fixEvent(p)); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return a.ResponseWriter.Write(p)
}

// writeError writes the held plain-text error, whose text is text, as a
// JSON-RPC error.
func (a *answerWriter) writeError(text string) {
	status := a.status
	a.status = 0
	a.Header().Del("Content-Length")
	a.ResponseWriter.WriteHeader(status)
	text = strings.TrimSpace(text)
	code := codeInvalidRequest
	switch {
	case status >= 500:
		code = codeInternalError
	case strings.HasPrefix(text, "malformed payload"):
		code, text = codeParseError, "Parse error: the body is not a JSON-RPC message"
	}
	if text == "" {
		text = http.StatusText(status)
	}
	a.ResponseWriter.Write(errorAnswer(a.id, code, clip(text, 200)))
}

// finish writes a plain-text error whose text never came.
func (a *answerWriter) finish() {
	if a.status != 0 {
		a.writeError("")
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (a *answerWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// Flush passes on to the underlying writer.
func (a *answerWriter) Flush() {
	if f, ok := a.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// fixAnswers is fixAnswer for a body of one answer or an array of them.
func fixAnswers(body []byte) []byte {
	t := bytes.TrimSpace(body)
	if len(t) == 0 || t[0] != '[' {
		return fixAnswer(body)
	}
	var all []json.RawMessage
	if json.Unmarshal(t, &all) != nil {
		return body
	}
	for i, m := range all {
		all[i] = fixAnswer(m)
	}
	out, err := json.Marshal(all)
	if err != nil {
		return body
	}
	return out
}

// fixEvent is fixAnswer for the data of one server-sent event.
func fixEvent(event []byte) []byte {
	i := bytes.Index(event, []byte("data: "))
	if i < 0 || (i > 0 && event[i-1] != '\n') {
		return event
	}
	start := i + len("data: ")
	end := bytes.IndexByte(event[start:], '\n')
	if end < 0 {
		return event
	}
	data := event[start : start+end]
	fixed := fixAnswer(data)
	if bytes.Equal(fixed, data) {
		return event
	}
	out := make([]byte, 0, len(event)+len(fixed)-len(data))
	out = append(out, event[:start]...)
	out = append(out, fixed...)
	return append(out, event[start+end:]...)
}

// checkBody answers, and returns false for, a POST to /mcp whose body is
// no JSON-RPC message the server can serve, before the SDK reads it: the
// SDK takes trailing bytes and invalid UTF-8, matches member names ignoring
// case in places, answers ids it cannot echo with another (see checkID) and
// answers the rest in plain text. A body that is not JSON (or not UTF-8, or
// has bytes after the JSON) is -32700 Parse error; a message checkMessage
// refuses is -32600 Invalid Request; both with HTTP 400. The id of a single
// request is noted for jsonrpcErrors.
func checkBody(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost || r.Body == nil {
		return true
	}
	orig := r.Body
	body, err := io.ReadAll(io.LimitReader(orig, mcp.DefaultMaxRequestBodyBytes+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), orig), orig}
	if err != nil || len(body) > mcp.DefaultMaxRequestBodyBytes || len(bytes.TrimSpace(body)) == 0 {
		return true // the SDK answers (413, 400), jsonrpcErrors makes it JSON-RPC
	}
	refuse := func(answer []byte) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(answer)
		return false
	}
	if !json.Valid(body) || !utf8.Valid(body) {
		return refuse(errorAnswer(nil, codeParseError, "Parse error: the body is not JSON (RFC 8259: UTF-8, one value)"))
	}
	var members []json.RawMessage
	if t := bytes.TrimSpace(body); t[0] == '[' {
		if json.Unmarshal(t, &members) != nil || len(members) == 0 {
			return refuse(errorAnswer(nil, codeInvalidRequest, "Invalid Request: an empty batch"))
		}
	} else {
		members = []json.RawMessage{t}
	}
	for _, raw := range members {
		m, err := checkMessage(raw)
		if err != nil {
			return refuse(err.(*invalid).answer())
		}
		if len(members) == 1 && m.kind == kindRequest {
			if aw, ok := r.Context().Value(answerWriterKey{}).(*answerWriter); ok {
				aw.id = m.id
			}
		}
	}
	return true
}
