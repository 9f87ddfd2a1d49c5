package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/internal/version"
	"github.com/kobana/workflow/mcpserver/server/metrics"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/runrecord"
)

// Monitor is the listener of the monitoring endpoints, for Prometheus and
// health checks: /metrics, /healthz and /readyz, without authentication.
// (/healthz and /readyz are also on the HTTP listener.) Bind it where only
// the monitoring reaches, e.g. 127.0.0.1:9090 or an internal address.
type Monitor struct {
	Addr string
}

// newMetrics makes the server's metrics over what it runs.
func (a *assembly) newMetrics() *metrics.Metrics {
	m := metrics.New(metrics.Sources{
		Sessions: func() int {
			if srv := a.serverReady(); srv != nil {
				return srv.OpenSessions()
			}
			return 0
		},
		Queue: func(ctx context.Context) (map[string]queue.Depth, error) {
			if a.inbox == nil {
				return nil, nil
			}
			return a.inbox.queue.Depths(ctx)
		},
		Logger: a.log,
	})
	if ww, ok := a.store.(store.WriteWatcher); ok {
		name := "postgres"
		if _, ok := a.store.(store.SQLDB); ok {
			name = "sqlite"
		}
		m.WatchStore(name, ww.WriteHealth())
	}
	return m
}

// intakeObserver is what the intake tells of each transaction: a log
// line, as a mail server's log has one per message (the e-mail's id where
// Postfix shows its queue id), and the metrics.
func (a *assembly) intakeObserver(via string) func(intake.Transaction) {
	return func(t intake.Transaction) {
		a.metrics.Intake(via, t)
		level := slog.LevelInfo
		if t.Result == "error" {
			level = slog.LevelWarn
		}
		attrs := []slog.Attr{
			slog.String("id", strings.Join(t.EmailIDs, ",")),
			slog.String("client", t.Remote),
			slog.String("from", "<"+t.MailFrom+">"),
			slog.String("to", "<"+strings.Join(t.RcptTo, ">,<")+">"),
			slog.Int64("size", t.Size),
			slog.Int("code", t.Code),
			slog.String("result", t.Result),
		}
		if t.Helo != "" {
			attrs = append(attrs, slog.String("helo", t.Helo))
		}
		if t.TLS {
			attrs = append(attrs, slog.Bool("tls", true))
		}
		if t.Reason != "" {
			attrs = append(attrs, slog.String("reason", t.Reason))
		}
		for _, r := range t.Receipts {
			if r.Rejected {
				attrs = append(attrs, slog.String("rejected", r.EmailID+": "+r.Reason))
			}
		}
		if t.Duration > 0 {
			attrs = append(attrs, slog.Int64("duration_ms", t.Duration.Milliseconds()))
		}
		a.log.LogAttrs(context.Background(), level, via, attrs...)
	}
}

// serverReady is the MCP server once built (read by the metrics while
// others build it).
func (a *assembly) serverReady() interface{ OpenSessions() int } {
	if p := a.mcp.Load(); p != nil {
		return p
	}
	return nil
}

// healthHandler answers /healthz: the process is alive, and which kobana
// it is. It reads nothing.
func (a *assembly) healthHandler() http.Handler {
	info := version.Read()
	started := time.Now()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeHealth(w, http.StatusOK, map[string]any{"status": "ok", "version": info.Short(), "commit": info.Commit, "go": info.Go,
			"uptime_seconds": int64(time.Since(started).Seconds())})
	})
}

// readyHandler answers /readyz: 200 when this process can take work — the
// store answers, the queue is worked here if it should be (or another
// process works the embedded store's queue: standby), SMTP listens if it
// should — and 503 otherwise (and while stopping), naming the checks
// that failed and never why (the details go to the log).
func (a *assembly) readyHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		checks := a.readiness(r.Context())
		status, code := "ready", http.StatusOK
		for _, v := range checks {
			if v != "ok" && v != "standby" {
				status, code = "not_ready", http.StatusServiceUnavailable
			}
		}
		writeHealth(w, code, map[string]any{"status": status, "checks": checks})
	})
}

// readiness runs the readiness checks.
func (a *assembly) readiness(ctx context.Context) map[string]string {
	checks := map[string]string{}
	if a.stopping.Load() {
		checks["server"] = "stopping"
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := a.store.GetWorkspace(ctx, "_readiness_probe"); err != nil && !errors.Is(err, store.ErrNotFound) {
		a.log.Warn("readiness: the store does not answer", "err", err)
		checks["store"] = "unreachable"
	} else {
		checks["store"] = "ok"
	}
	if ww, ok := a.store.(store.WriteWatcher); ok {
		if reason, since := ww.WriteHealth().Refusing(); reason != "" {
			// The pipeline waits, the intake answers 452: nothing is lost,
			// but nothing new should be sent here.
			a.log.Warn("readiness: the store refuses writes; the pipeline is paused until it takes them", "reason", reason, "since", since)
			checks["store_writes"] = "refused"
		}
	}
	for _, s := range a.services {
		if r, ok := s.(interface{ ready() string }); ok {
			checks[s.name()] = r.ready()
		}
	}
	return checks
}

func writeHealth(w http.ResponseWriter, code int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// withHealth serves /healthz and /readyz beside next, before its Host and
// Origin checks: a load balancer's probe names the address it dials.
func (a *assembly) withHealth(next http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", a.healthHandler())
	mux.Handle("GET /readyz", a.readyHandler())
	mux.Handle("/", next)
	return mux
}

// monitorServer serves Monitor's endpoints.
type monitorServer struct {
	cfg Monitor
	ln  net.Listener
}

func (m *monitorServer) name() string { return "monitor" }

func (m *monitorServer) listen(a *assembly) error {
	ln, err := net.Listen("tcp", m.cfg.Addr)
	if err != nil {
		return err
	}
	m.ln = ln
	a.closers = append(a.closers, func() { ln.Close() })
	return nil
}

func (m *monitorServer) addr() net.Addr { return m.ln.Addr() }

func (m *monitorServer) announce(w io.Writer) {
	fmt.Fprintf(w, "metrics on http://%s/metrics (health at /healthz, readiness at /readyz)\n", m.ln.Addr())
}

func (m *monitorServer) serve(ctx context.Context, a *assembly) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", a.metrics.Handler())
	hs := &http.Server{Handler: recoverHTTP(a.withHealth(mux)), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: DefaultHTTPIdleTimeout}
	return serveUntilDone(ctx, hs, m.ln, min(5*time.Second, a.cfg.StopGrace), http.ErrServerClosed)
}

// state is a service's readiness, set as it starts and stops.
type state struct{ v atomic.Value }

func (s *state) set(v string) { s.v.Store(v) }

func (s *state) get() string {
	if v, ok := s.v.Load().(string); ok {
		return v
	}
	return "starting"
}

// pipelineObserver hears what the stages recorded: a log line for each
// agent run, workflow run and delivery attempt, and the metrics.
type pipelineObserver struct{ a *assembly }

func (o pipelineObserver) AgentRun(ws string, run inbox.AgentRun) {
	o.a.metrics.AgentRun(run)
	attrs := []slog.Attr{slog.String("id", run.ID), slog.String("workspace", ws), slog.String("email", run.EmailID), slog.String("agent", run.AgentID),
		slog.String("status", run.Status), slog.String("model", run.Model), slog.Int("tokens_in", run.Tokens.Input), slog.Int("tokens_out", run.Tokens.Output),
		slog.Float64("cost_usd", run.CostUSD)}
	if run.Cause != "" {
		attrs = append(attrs, slog.String("cause", string(run.Cause)))
	}
	if !run.FinishedAt.IsZero() {
		attrs = append(attrs, slog.Int64("duration_ms", run.FinishedAt.Sub(run.StartedAt).Milliseconds()))
	}
	o.a.log.LogAttrs(context.Background(), slog.LevelInfo, "agent run", attrs...)
}

func (o pipelineObserver) WorkflowRun(ws string, run inbox.WorkflowRun) {
	o.a.metrics.WorkflowRun(run)
	level := slog.LevelInfo
	if run.Status != runrecord.RunSucceeded {
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{slog.String("id", run.ID), slog.String("workspace", ws), slog.String("email", run.EmailID), slog.String("agent_run", run.AgentRunID),
		slog.String("status", string(run.Status)), slog.String("steps", stepOutcomes(run))}
	if !run.FinishedAt.IsZero() {
		attrs = append(attrs, slog.Int64("duration_ms", run.FinishedAt.Sub(run.StartedAt).Milliseconds()))
	}
	o.a.log.LogAttrs(context.Background(), level, "workflow run", attrs...)
}

// stepOutcomes says a run's steps in one token: "succeeded,failed:status".
func stepOutcomes(run inbox.WorkflowRun) string {
	out := make([]string, len(run.Steps))
	for i, s := range run.Steps {
		out[i] = string(s.State)
		if s.Reason != "" {
			out[i] += ":" + string(s.Reason)
		}
	}
	return strings.Join(out, ",")
}

func (o pipelineObserver) DeliveryAttempt(ws string, d inbox.Delivery, at inbox.DeliveryAttempt) {
	o.a.metrics.DeliveryAttempt(at)
	level := slog.LevelInfo
	attrs := []slog.Attr{slog.String("id", d.ID), slog.String("workspace", ws), slog.String("webhook", d.WebhookID), slog.String("event", d.Event),
		slog.Int("attempt", at.Attempt), slog.String("status", at.Status), slog.Int64("duration_ms", at.DurationMS)}
	if at.HTTPStatus != 0 {
		attrs = append(attrs, slog.Int("http_status", at.HTTPStatus))
	}
	if at.Error != "" {
		level = slog.LevelWarn
		attrs = append(attrs, slog.String("error", at.Error))
	}
	if d.ReplayOf != "" {
		attrs = append(attrs, slog.String("replay_of", d.ReplayOf))
	}
	if !d.NextAttemptAt.IsZero() {
		attrs = append(attrs, slog.Time("next_attempt_at", d.NextAttemptAt))
	}
	o.a.log.LogAttrs(context.Background(), level, "webhook delivery", attrs...)
}

func (o pipelineObserver) Purged(ws, emailID string) {
	o.a.metrics.Purged(1)
	o.a.log.Info("purged", "workspace", ws, "email", emailID)
}
