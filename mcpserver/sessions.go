package mcpserver

import (
	"encoding/json"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/store"
)

// Default caps of the 2025-era sessions over HTTP (HTTPOptions): each
// session holds its own state in memory until it is closed or idle past
// SessionTimeout, so a client that opens sessions and never closes them
// would otherwise grow the server without bound.
const (
	DefaultMaxSessionsPerToken = 32
	DefaultMaxSessions         = 4096
)

// sessionLimits caps the stateful (2025-era) sessions opened over HTTP: per
// token (a static token's or an OAuth grant's id), where a new session
// closes the token's oldest one, and in all, where a new session is
// refused with 503 until others end.
type sessionLimits struct {
	perToken, total int
	srv             *mcp.Server

	mu   sync.Mutex
	open map[string]openSession // session id → whose, since when
}

// openSession is a session the limits count.
type openSession struct {
	token   string
	created time.Time
}

func newSessionLimits(srv *mcp.Server, perToken, total int) *sessionLimits {
	if perToken <= 0 {
		perToken = DefaultMaxSessionsPerToken
	}
	if total <= 0 {
		total = DefaultMaxSessions
	}
	return &sessionLimits{perToken: perToken, total: total, srv: srv, open: map[string]openSession{}}
}

// count is the number of sessions open, after forgetting those that ended.
func (l *sessionLimits) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prune()
	return len(l.open)
}

// prune forgets the sessions the server no longer has. l.mu is held.
func (l *sessionLimits) prune() map[string]*mcp.ServerSession {
	live := map[string]*mcp.ServerSession{}
	for ss := range l.srv.Sessions() {
		live[ss.ID()] = ss
	}
	for id := range l.open {
		if live[id] == nil {
			delete(l.open, id)
		}
	}
	return live
}

// admit lets an initialize request open a session, or answers it (503
// when the server has its sessions' worth) and returns nil. The writer it
// returns records the session the answer opens.
func (l *sessionLimits) admit(w http.ResponseWriter, r *http.Request) http.ResponseWriter {
	token := ""
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		if p, ok := ti.Extra[principalExtra].(store.Principal); ok {
			token = p.TokenID
		}
	}
	l.mu.Lock()
	live := l.prune()
	if len(l.open) >= l.total {
		l.mu.Unlock()
		tooManySessions(w, l.total)
		return nil
	}
	var mine []string
	for id, s := range l.open {
		if s.token == token {
			mine = append(mine, id)
		}
	}
	var evict []*mcp.ServerSession
	if len(mine) >= l.perToken {
		sort.Slice(mine, func(i, j int) bool { return l.open[mine[i]].created.Before(l.open[mine[j]].created) })
		for _, id := range mine[:len(mine)-l.perToken+1] {
			evict = append(evict, live[id])
			delete(l.open, id)
		}
	}
	l.mu.Unlock()
	for _, ss := range evict {
		if ss != nil {
			ss.Close() // the token's oldest session: its client sees it gone (404) and starts over
		}
	}
	return &sessionRecorder{ResponseWriter: w, record: func(id string) {
		l.mu.Lock()
		l.open[id] = openSession{token: token, created: time.Now()}
		l.mu.Unlock()
	}}
}

// tooManySessions answers an initialize the server has no room for.
func tooManySessions(w http.ResponseWriter, total int) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
		"code":    -32000,
		"message": "Service Unavailable: the server has its maximum of open sessions; retry later, close sessions you no longer use, or use protocol 2026-07-28, which needs none",
		"data":    map[string]any{"max_sessions": total},
	}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "30")
	w.WriteHeader(http.StatusServiceUnavailable)
	w.Write(b)
}

// sessionRecorder notes the session id an initialize answer carries.
type sessionRecorder struct {
	http.ResponseWriter
	record func(id string)
	done   bool
}

func (s *sessionRecorder) WriteHeader(code int) {
	if !s.done {
		s.done = true
		if id := s.Header().Get("Mcp-Session-Id"); id != "" && code < 300 {
			s.record(id)
		}
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *sessionRecorder) Write(p []byte) (int, error) {
	if !s.done {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(p)
}

// Unwrap gives http.ResponseController the underlying writer.
func (s *sessionRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush passes on to the underlying writer.
func (s *sessionRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
