package metrics

import (
	"context"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/riverqueue/river"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/inbox/queue"
	"github.com/kobana/workflow/mcpserver/internal/panics"
	"github.com/kobana/workflow/mcpserver/internal/version"
)

// Sources are what the gauges read when Prometheus scrapes.
type Sources struct {
	// Sessions counts the 2025-era MCP sessions open (nil: none served).
	Sessions func() int
	// Queue counts the jobs of each queue (nil: no queue).
	Queue func(ctx context.Context) (map[string]queue.Depth, error)
	// Logger hears of a gauge that could not be read.
	Logger *slog.Logger
}

// Metrics are one server's metrics, in a registry of their own.
type Metrics struct {
	reg *prometheus.Registry

	smtp          *prometheus.CounterVec
	messages      *prometheus.CounterVec
	intakeBytes   *prometheus.HistogramVec
	intakeSeconds *prometheus.HistogramVec
	jobSeconds    *prometheus.HistogramVec
	jobWait       *prometheus.HistogramVec
	agentRuns     *prometheus.CounterVec
	modelTokens   *prometheus.CounterVec
	modelCost     *prometheus.CounterVec
	workflowRuns  *prometheus.CounterVec
	steps         *prometheus.CounterVec
	webhooks      *prometheus.CounterVec
	purged        prometheus.Counter
	mcpRequests   *prometheus.CounterVec
	mcpSeconds    *prometheus.HistogramVec
	panics        *prometheus.CounterVec
}

const namespace = "kobana"

// New makes the metrics, with the Go runtime's and the process's beside
// them.
func New(src Sources) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, labels)
		m.reg.MustRegister(c)
		return c
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: namespace, Name: name, Help: help, Buckets: buckets}, labels)
		m.reg.MustRegister(h)
		return h
	}
	seconds := []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}
	m.smtp = counter("smtp_transactions_total", "SMTP transactions by how they ended (result: stored, refused, too_large, try_later, timeout, error) and the refusal's reason.", "result", "reason")
	m.messages = counter("messages_total", "Messages recorded for an inbox, by way in (smtp, http) and outcome (received, rejected by the inbox's rules, duplicate) with the rejection's reason.", "via", "outcome", "reason")
	m.intakeBytes = histogram("intake_message_bytes", "Size of the messages read by the intake.", prometheus.ExponentialBuckets(1024, 4, 10), "via")
	m.intakeSeconds = histogram("intake_seconds", "Time from the start of a message's data to the intake's answer.", seconds, "via", "result")
	m.jobSeconds = histogram("job_seconds", "Time a pipeline job ran, by stage (agent, workflow, webhook, retention) and result (completed, retried, discarded, cancelled, snoozed).", seconds, "stage", "result")
	m.jobWait = histogram("job_wait_seconds", "Time a pipeline job waited in its queue before it ran.", seconds, "stage")
	m.agentRuns = counter("agent_runs_total", "Agent runs by status and the cause of a failure.", "status", "cause")
	m.modelTokens = counter("model_tokens_total", "Model tokens of the agent runs, by model and direction (input, output).", "model", "direction")
	m.modelCost = counter("model_cost_usd_total", "What the agent runs' tokens cost, in USD, by model.", "model")
	m.workflowRuns = counter("workflow_runs_total", "Workflow runs by status (succeeded, failed, interrupted).", "status")
	m.steps = counter("workflow_steps_total", "Workflow steps by outcome (succeeded, failed, skipped, unknown) and reason.", "outcome", "reason")
	m.webhooks = counter("webhook_attempts_total", "Webhook delivery attempts by result (delivered, failed).", "result")
	m.purged = prometheus.NewCounter(prometheus.CounterOpts{Namespace: namespace, Name: "retention_purged_messages_total", Help: "Raw messages purged past their workspace's retention."})
	m.reg.MustRegister(m.purged)
	m.mcpRequests = counter("mcp_requests_total", "MCP requests answered, by method, tool (tools/call) and result (ok, tool_error, input_required, error).", "method", "tool", "result")
	m.mcpSeconds = histogram("mcp_request_seconds", "Time to answer an MCP request, by method.", seconds, "method")

	// Every family exists from the first scrape, its known label values at
	// zero, so that rate() and alerts work before the first event. A
	// reason, a cause, a tool or a model appears once it is seen.
	for _, via := range []string{"smtp", "http"} {
		m.messages.WithLabelValues(via, "received", "")
		m.intakeBytes.WithLabelValues(via)
	}
	for _, r := range []string{"stored", "refused", "too_large", "try_later", "timeout", "error"} {
		m.smtp.WithLabelValues(r, "")
		m.intakeSeconds.WithLabelValues("smtp", r)
	}
	for _, stage := range queue.Stages {
		m.jobWait.WithLabelValues(stage)
		for _, r := range []string{"completed", "retried", "discarded", "cancelled", "snoozed"} {
			m.jobSeconds.WithLabelValues(stage, r)
		}
	}
	for _, st := range []string{"succeeded", "failed"} {
		m.agentRuns.WithLabelValues(st, "")
	}
	for _, d := range []string{"input", "output"} {
		m.modelTokens.WithLabelValues("", d)
	}
	m.modelCost.WithLabelValues("")
	for _, st := range []string{"succeeded", "failed", "interrupted"} {
		m.workflowRuns.WithLabelValues(st)
	}
	for _, o := range []string{"succeeded", "failed", "skipped", "unknown"} {
		m.steps.WithLabelValues(o, "")
	}
	for _, r := range []string{"delivered", "failed"} {
		m.webhooks.WithLabelValues(r)
	}
	for _, r := range []string{"ok", "error"} {
		m.mcpRequests.WithLabelValues("tools/call", "", r)
	}
	m.mcpSeconds.WithLabelValues("tools/call")
	m.panics = counter("panics_total", "Panics contained, by surface (mcp, smtp, http, job, loop): each one request, session, job or loop run that failed on a bug while the process went on serving.", "surface")
	for _, s := range panics.Surfaces {
		m.panics.WithLabelValues(string(s))
	}

	info := version.Read()
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: "build_info", Help: "The running kobana: 1, labelled with its version, commit and Go version."}, []string{"version", "commit", "goversion"})
	build.WithLabelValues(info.Version, info.Commit, info.Go).Set(1)
	m.reg.MustRegister(build, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if src.Sessions != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Name: "mcp_sessions_open", Help: "2025-era MCP sessions open over HTTP."},
			func() float64 { return float64(src.Sessions()) }))
	}
	if src.Queue != nil {
		m.reg.MustRegister(&queueCollector{depths: src.Queue, log: src.Logger})
	}
	return m
}

// Handler serves the metrics in Prometheus's text format (or
// OpenMetrics, when asked).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// Registry is where the metrics are registered (tests gather it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// reasonCode is the stable code at the start of a reason ("quota_exceeded:
// the plan allows…" → quota_exceeded), or "other"; "" stays "".
var reasonCode = regexp.MustCompile(`^[a-z][a-z0-9_.]{0,47}`)

func code(reason string) string {
	if reason == "" {
		return ""
	}
	c := reasonCode.FindString(reason)
	if c == "" || len(c) < len(reason) && reason[len(c)] != ':' {
		return "other"
	}
	return c
}

// Intake observes a transaction of the intake (intake.Config.Observe,
// via "smtp"; intake.HTTPConfig.Observe, via "http").
func (m *Metrics) Intake(via string, t intake.Transaction) {
	if via == "smtp" {
		m.smtp.WithLabelValues(t.Result, code(t.Reason)).Inc()
		if t.Result == "refused" && t.Size == 0 {
			return // refused at RCPT: no message was read
		}
	}
	m.intakeBytes.WithLabelValues(via).Observe(float64(t.Size))
	m.intakeSeconds.WithLabelValues(via, t.Result).Observe(t.Duration.Seconds())
	for _, r := range t.Receipts {
		switch {
		case r.Rejected:
			m.messages.WithLabelValues(via, "rejected", code(r.Reason)).Inc()
		default:
			m.messages.WithLabelValues(via, "received", "").Inc()
		}
	}
}

// jobResults name River's events.
var jobResults = map[river.EventKind]string{
	river.EventKindJobCompleted: "completed",
	river.EventKindJobFailed:    "failed",
	river.EventKindJobCancelled: "cancelled",
	river.EventKindJobSnoozed:   "snoozed",
}

// JobKinds are the River events Job observes.
var JobKinds = []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled, river.EventKindJobSnoozed}

// Job observes a job that ran (an event of queue.Subscribe(JobKinds...)).
func (m *Metrics) Job(ev *river.Event) {
	if ev == nil || ev.Job == nil {
		return
	}
	stage, ok := queue.Stages[ev.Job.Kind]
	if !ok {
		stage = "other"
	}
	result := jobResults[ev.Kind]
	if result == "failed" {
		result = "retried"
		if ev.Job.State == "discarded" {
			result = "discarded"
		}
	}
	if ev.JobStats != nil {
		m.jobSeconds.WithLabelValues(stage, result).Observe(ev.JobStats.RunDuration.Seconds())
		m.jobWait.WithLabelValues(stage).Observe(ev.JobStats.QueueWaitDuration.Seconds())
	}
}

// AgentRun observes an agent run once recorded.
func (m *Metrics) AgentRun(run inbox.AgentRun) {
	m.agentRuns.WithLabelValues(run.Status, code(string(run.Cause))).Inc()
	model := modelLabel(run.Model)
	m.modelTokens.WithLabelValues(model, "input").Add(float64(run.Tokens.Input))
	m.modelTokens.WithLabelValues(model, "output").Add(float64(run.Tokens.Output))
	m.modelCost.WithLabelValues(model).Add(run.CostUSD)
}

// modelLabel bounds a model's name to the catalogue's (inbox.Models) and
// "other".
func modelLabel(id string) string {
	for _, m := range inbox.Models() {
		if m.ID == id {
			return id
		}
	}
	if id == "" {
		return ""
	}
	return "other"
}

// WorkflowRun observes a workflow run once recorded: the run and each of
// its steps.
func (m *Metrics) WorkflowRun(run inbox.WorkflowRun) {
	m.workflowRuns.WithLabelValues(code(string(run.Status))).Inc()
	for _, s := range run.Steps {
		m.steps.WithLabelValues(code(string(s.State)), code(string(s.Reason))).Inc()
	}
}

// DeliveryAttempt observes one attempt of a webhook delivery.
func (m *Metrics) DeliveryAttempt(a inbox.DeliveryAttempt) {
	m.webhooks.WithLabelValues(code(a.Status)).Inc()
}

// Purged observes raw messages purged past retention.
func (m *Metrics) Purged(n int) { m.purged.Add(float64(n)) }

// mcpMethods are the methods counted by name; any other is "other".
var mcpMethods = map[string]bool{}

func init() {
	for _, name := range strings.Fields(`initialize ping server/discover tools/list tools/call resources/list resources/templates/list
		resources/read resources/subscribe resources/unsubscribe prompts/list prompts/get completion/complete logging/setLevel
		notifications/initialized notifications/cancelled notifications/roots/list_changed notifications/progress`) {
		mcpMethods[name] = true
	}
}

// MCP observes an MCP request answered (mcpserver.Options.Observe).
func (m *Metrics) MCP(o mcpserver.RequestObserved) {
	method := o.Method
	if !mcpMethods[method] {
		method = "other"
	}
	m.mcpRequests.WithLabelValues(method, o.Tool, o.Result).Inc()
	m.mcpSeconds.WithLabelValues(method).Observe(o.Duration.Seconds())
}

// Panic counts a panic contained on surface s (a panics.Listen listener).
func (m *Metrics) Panic(s panics.Surface) { m.panics.WithLabelValues(string(s)).Inc() }

// queueCollector reads the queue's depth at scrape time.
type queueCollector struct {
	depths func(ctx context.Context) (map[string]queue.Depth, error)
	log    *slog.Logger
}

var queueDesc = prometheus.NewDesc(namespace+"_queue_jobs", "Jobs of each pipeline queue, available (waiting to run) and running, in every process working the database.", []string{"queue", "state"}, nil)

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- queueDesc }

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := c.depths(ctx)
	if err != nil {
		if c.log != nil {
			c.log.Warn("metrics: the queue's depth could not be read", "err", err)
		}
		ch <- prometheus.NewInvalidMetric(queueDesc, err)
		return
	}
	for _, name := range queue.Queues {
		ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(d[name].Available), name, "available")
		ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(d[name].Running), name, "running")
	}
}
