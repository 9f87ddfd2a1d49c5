package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/kobana/workflow/mcpserver/internal/panics"
)

// listenPanics logs every panic contained while the server runs — its
// surface, where, value and stack, at ERROR — and counts it in the
// metrics (kobana_panics_total); stop ends it.
func (a *assembly) listenPanics() (stop func()) {
	return panics.Listen(func(p *panics.Panic) {
		a.metrics.Panic(p.Surface)
		a.log.LogAttrs(context.Background(), slog.LevelError, "panic contained",
			slog.String("surface", string(p.Surface)), slog.String("where", p.Where),
			slog.String("panic", panicValue(p.Value)), slog.String("stack", string(p.Stack)))
	})
}

// panicValue is a panic's value for the log, bounded.
func panicValue(v any) string {
	s := strings.ToValidUTF8(strings.TrimSpace(fmt.Sprint(v)), "?")
	if len(s) > 1000 {
		s = s[:1000] + "…"
	}
	return s
}

// recoverHTTP keeps a panic of one request inside it: net/http would
// recover it too, but close the connection without an answer. A panic
// before anything was written is answered 500 with a short body and no
// detail; once the response has begun it can only be cut short, so the
// handler is aborted (http.ErrAbortHandler: the connection is closed, or
// the HTTP/2 stream reset) rather than letting a truncated body look
// complete. Either way the panic is reported on panics.HTTP. A handler
// that aborts itself with http.ErrAbortHandler is not a bug and is passed
// on as it is.
func recoverHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackingWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			panics.Report(panics.HTTP, route(r), v, debug.Stack())
			if tw.started {
				panic(http.ErrAbortHandler)
			}
			h := w.Header()
			for k := range h {
				delete(h, k)
			}
			h.Set("Content-Type", "text/plain; charset=utf-8")
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte("Internal Server Error\n"))
		}()
		next.ServeHTTP(tw, r)
	})
}

// route names the request for a panic's report: its method and the
// pattern of the innermost ServeMux that routed it (ServeMux sets
// Request.Pattern on the request it was given), or its path when none did
// more than the catch-all.
func route(r *http.Request) string {
	pattern := r.Pattern
	if _, p, ok := strings.Cut(pattern, " "); ok {
		pattern = p // "GET /healthz": the method comes from the request
	}
	if pattern == "" || pattern == "/" {
		pattern = r.URL.Path
		if len(pattern) > 200 {
			pattern = pattern[:200] + "…"
		}
	}
	return r.Method + " " + strings.ToValidUTF8(pattern, "?")
}

// trackingWriter notes whether the response has begun (its header
// written, or a body write or flush that writes it).
type trackingWriter struct {
	http.ResponseWriter
	started bool
}

func (t *trackingWriter) WriteHeader(code int) {
	if code >= 200 || code == http.StatusSwitchingProtocols {
		t.started = true // a 1xx informational answer does not begin the response
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	t.started = true
	return t.ResponseWriter.Write(b)
}

// ReadFrom copies r's bytes to the response (the underlying writer's own
// ReadFrom, a sendfile on a plain connection).
func (t *trackingWriter) ReadFrom(r io.Reader) (int64, error) {
	t.started = true
	return io.Copy(t.ResponseWriter, r)
}

// Flush writes what was buffered, and the header with it.
func (t *trackingWriter) Flush() {
	t.started = true
	http.NewResponseController(t.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the underlying writer.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
