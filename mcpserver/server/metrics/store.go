package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kobana/workflow/mcpserver/store"
)

// WatchStore exports whether the store named name (sqlite, postgres) takes
// writes: kobana_store_writable{store} is 1 while its transactions commit
// and 0 while it refuses them, and kobana_store_write_errors_total{store,
// reason} counts the transactions it refused, by reason (full, read_only,
// io, unreachable), every reason from zero.
func (m *Metrics) WatchStore(name string, h *store.WriteHealth) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: namespace, Name: "store_writable",
		Help: "1 while the store takes writes, 0 while it refuses them (disk full or read-only, database unreachable): the pipeline is paused.", ConstLabels: prometheus.Labels{"store": name}},
		func() float64 {
			if reason, _ := h.Refusing(); reason != "" {
				return 0
			}
			return 1
		}))
	for _, reason := range store.RefusedReasons() {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: namespace, Name: "store_write_errors_total",
			Help: "Store transactions refused by the database, by reason (full, read_only, io, unreachable).", ConstLabels: prometheus.Labels{"store": name, "reason": reason}},
			func() float64 { return float64(h.Errors(reason)) }))
	}
}
