package intake

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox/mailstore"
	"github.com/kobana/workflow/mcpserver/inbox/senderauth"
)

// ErrUnknownToken reports a bearer token that is unknown, revoked or expired.
var ErrUnknownToken = errors.New("intake: unknown token")

// Principal is who a bearer token speaks for.
type Principal struct {
	TokenID   string
	Workspace string
	Role      string
	Scopes    []string
}

// Tokens resolves bearer tokens (the store's identity lookup, adapted).
type Tokens interface {
	// Authenticate returns the token's principal; an error wrapping
	// ErrUnknownToken when the token is not valid.
	Authenticate(ctx context.Context, token string) (Principal, error)
}

// HTTPConfig configures the HTTP intake. Zero fields take the defaults.
type HTTPConfig struct {
	// Domain is this server's name, in the trace fields prepended to posted
	// messages (default: the host's name).
	Domain string
	// MaxMessageBytes limits a posted message (default
	// DefaultMaxMessageBytes); larger ones get 413.
	MaxMessageBytes int64
	// WriteRoles are the workspace roles allowed to post (default owner and
	// operator, the roles that may write); the token needs the "write" scope
	// too.
	WriteRoles []string
	// Logger receives internal failures (default: discard).
	Logger *slog.Logger
	// Observe, when set, is told how each message posted ended, as an
	// SMTP transaction's (Config.Observe): stored, too_large, try_later.
	Observe func(Transaction)
}

// Handler is the HTTP intake: POST /inboxes/{inbox_id}/messages.
type Handler struct {
	cfg     HTTPConfig
	tokens  Tokens
	dir     Directory
	rec     Recorder
	spool   Spooler
	checker *senderauth.Checker
	mux     *http.ServeMux
	now     func() time.Time
}

// NewHandler returns the HTTP intake over the same parts as the SMTP server,
// authorising callers with tokens.
func NewHandler(cfg HTTPConfig, tokens Tokens, dir Directory, rec Recorder, sp Spooler, checker *senderauth.Checker) *Handler {
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.WriteRoles == nil {
		cfg.WriteRoles = []string{"owner", "operator"}
	}
	if cfg.Domain == "" {
		cfg.Domain = Config{}.withDefaults().Domain
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if checker == nil {
		checker = &senderauth.Checker{}
	}
	h := &Handler{cfg: cfg, tokens: tokens, dir: dir, rec: rec, spool: sp, checker: checker, mux: http.NewServeMux(), now: time.Now}
	h.mux.HandleFunc("POST /inboxes/{inbox_id}/messages", h.post)
	h.mux.HandleFunc("/inboxes/{inbox_id}/messages", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use POST with a message/rfc822 body")
	})
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "the intake endpoint is POST /inboxes/{inbox_id}/messages")
	})
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// PostedEmail is one recorded e-mail in the answer.
type PostedEmail struct {
	ID      string `json:"id"`
	InboxID string `json:"inbox_id"`
	// Status is "received" (its agent will run), "duplicate" (another copy
	// of DuplicateOf, not processed) or "rejected".
	Status      string `json:"status"`
	Reason      string `json:"reason,omitempty"`
	DuplicateOf string `json:"duplicate_of,omitempty"`
}

// PostResult is the 202 answer.
type PostResult struct {
	Emails []PostedEmail `json:"emails"`
}

func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, ok := h.authorize(w, r)
	if !ok {
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "message/rfc822" {
		writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type",
			"the body must be a raw message with Content-Type: message/rfc822, got "+quoteOrNone(r.Header.Get("Content-Type")))
		return
	}
	if r.ContentLength > h.cfg.MaxMessageBytes {
		writeError(w, http.StatusRequestEntityTooLarge, "message_too_large", tooLarge(h.cfg.MaxMessageBytes))
		return
	}
	rcpt, err := h.dir.ByID(ctx, p.Workspace, r.PathValue("inbox_id"))
	if errors.Is(err, ErrUnknownAddress) {
		writeError(w, http.StatusNotFound, "inbox_not_found", "no inbox "+r.PathValue("inbox_id")+" in the token's workspace")
		return
	}
	if err != nil {
		h.internal(w, "looking up the inbox", err)
		return
	}
	sp, err := h.spool.NewSpool(h.cfg.MaxMessageBytes)
	if err != nil {
		h.internal(w, "creating a spool", err)
		return
	}
	defer sp.Remove()
	start := time.Now()
	if _, err := sp.ReadFrom(r.Body); err != nil {
		if errors.Is(err, mailstore.ErrTooLarge) {
			h.observe(r, start, sp.Size(), nil, err)
			writeError(w, http.StatusRequestEntityTooLarge, "message_too_large", tooLarge(h.cfg.MaxMessageBytes))
			return
		}
		writeError(w, http.StatusBadRequest, "body_unreadable", "the message body could not be read: "+err.Error())
		return
	}
	if sp.Size() == 0 {
		writeError(w, http.StatusBadRequest, "empty_message", "the body is empty: post the raw message")
		return
	}
	env := Envelope{Via: "http", RcptTo: []string{rcpt.Address}, TLS: r.TLS != nil, Principal: "token:" + p.TokenID, Protocol: "HTTP"}
	if env.TLS {
		env.Protocol = "HTTPS"
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		env.RemoteIP = net.ParseIP(host)
	}
	// SPF needs the SMTP client that handed the message over, which HTTP
	// does not have: only the message's own DKIM and DMARC are checked.
	auth, err := h.checker.Check(ctx, senderauth.Input{Message: func() io.Reader { return io.NewSectionReader(sp, 0, sp.Size()) }})
	if err != nil {
		writeError(w, http.StatusBadRequest, "message_unreadable", "the message header could not be read: "+err.Error())
		return
	}
	d := &Delivery{Recipients: []Recipient{rcpt}, Envelope: env, Host: h.cfg.Domain, Message: sp, Auth: auth, ReceivedAt: h.now().UTC()}
	receipts, err := h.rec.Record(ctx, d)
	h.observe(r, start, sp.Size(), receipts, err)
	if errors.Is(err, ErrTryLater) {
		w.Header().Set("Retry-After", "60")
		writeError(w, http.StatusServiceUnavailable, "try_later", "the sender could not be verified now (DNS failure); nothing was recorded: retry later")
		return
	}
	if err != nil {
		h.internal(w, "recording the message", err)
		return
	}
	out := PostResult{Emails: []PostedEmail{}}
	for _, rc := range receipts {
		e := PostedEmail{ID: rc.EmailID, InboxID: rc.Recipient.InboxID, Status: "received", Reason: rc.Reason, DuplicateOf: rc.DuplicateOf}
		switch {
		case rc.Rejected:
			e.Status = "rejected"
		case rc.DuplicateOf != "":
			e.Status = "duplicate"
		}
		out.Emails = append(out.Emails, e)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	json.NewEncoder(w).Encode(out)
}

// observe tells HTTPConfig.Observe how a post ended.
func (h *Handler) observe(r *http.Request, start time.Time, size int64, receipts []Receipt, err error) {
	if h.cfg.Observe == nil {
		return
	}
	t := Transaction{Remote: r.RemoteAddr, TLS: r.TLS != nil, Size: size, Duration: time.Since(start), Receipts: receipts, Code: http.StatusAccepted, Result: "stored"}
	switch {
	case errors.Is(err, mailstore.ErrTooLarge):
		t.Code, t.Result = http.StatusRequestEntityTooLarge, "too_large"
	case errors.Is(err, ErrTryLater):
		t.Code, t.Result = http.StatusServiceUnavailable, "try_later"
	case err != nil:
		t.Code, t.Result = http.StatusInternalServerError, "error"
	}
	for _, rc := range receipts {
		t.RcptTo = append(t.RcptTo, rc.Recipient.Address)
		t.EmailIDs = append(t.EmailIDs, rc.EmailID)
	}
	h.cfg.Observe(t)
}

// authorize checks the bearer token: 401 without a valid one, 403 when it
// may not write.
func (h *Handler) authorize(w http.ResponseWriter, r *http.Request) (Principal, bool) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	token = strings.TrimSpace(token)
	if !ok || token == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="kobana-intake"`)
		writeError(w, http.StatusUnauthorized, "unauthorized", "an Authorization: Bearer token with the write scope is required")
		return Principal{}, false
	}
	p, err := h.tokens.Authenticate(r.Context(), token)
	if errors.Is(err, ErrUnknownToken) {
		h.cfg.Logger.Info("http intake: token refused", "remote", r.RemoteAddr, "reason", "unknown, expired or revoked") // never the token
		w.Header().Set("WWW-Authenticate", `Bearer realm="kobana-intake", error="invalid_token"`)
		writeError(w, http.StatusUnauthorized, "unauthorized", "the token is unknown, revoked or expired")
		return Principal{}, false
	}
	if err != nil {
		h.internal(w, "checking a token", err)
		return Principal{}, false
	}
	if !slices.Contains(p.Scopes, "write") || !slices.Contains(h.cfg.WriteRoles, p.Role) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="kobana-intake", error="insufficient_scope", scope="write"`)
		writeError(w, http.StatusForbidden, "forbidden", "posting messages needs a token with the write scope held by an owner or operator of the workspace")
		return Principal{}, false
	}
	return p, true
}

func (h *Handler) internal(w http.ResponseWriter, doing string, err error) {
	h.cfg.Logger.Error("http intake: "+doing, "err", err)
	w.Header().Set("Retry-After", "30")
	writeError(w, http.StatusServiceUnavailable, "unavailable", "the message could not be recorded ("+doing+" failed); nothing was kept: retry later")
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
}

func tooLarge(limit int64) string {
	return "the message is larger than the limit of " + formatBytes(limit)
}

func formatBytes(n int64) string {
	if n%(1<<20) == 0 {
		return itoa(n>>20) + " MiB"
	}
	return itoa(n) + " bytes"
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func quoteOrNone(s string) string {
	if s == "" {
		return "none"
	}
	b, _ := json.Marshal(s)
	return string(b)
}
