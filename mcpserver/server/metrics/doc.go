// Package metrics is the Prometheus metrics of a running Kobana server
// (github.com/prometheus/client_golang), served at /metrics: mail received
// and refused and by which reason, the intake's sizes and latencies, the
// queue's depth and each stage's job latency, agent runs by status and
// cause with their tokens and cost, workflow runs and their steps by
// outcome and reason, webhook attempts, retention purges, MCP requests by
// method and result, the sessions open, and the build.
//
// Entry points: New makes the metrics of one server over its Sources (the
// gauges read at scrape time); its methods Intake, Job, AgentRun,
// WorkflowRun, DeliveryAttempt, Purged and MCP are the observers the
// server hangs on its parts; Handler serves them.
//
// Labels take values from small fixed sets — stable reason codes, never an
// address, a subject or an id — so that what a sender or a client sends
// cannot multiply the series.
package metrics
