package metrics_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kobana/workflow/mcpserver/server/metrics"
	"github.com/kobana/workflow/mcpserver/store"
)

// The store's families exist from the first scrape, every reason at zero;
// a refused transaction makes the store unwritable and is counted by
// reason, and one that commits makes it writable again.
func TestStoreWritability(t *testing.T) {
	m := metrics.New(metrics.Sources{})
	var h store.WriteHealth
	m.WatchStore("sqlite", &h)
	want := func(body string) {
		t.Helper()
		if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(body), "kobana_store_writable", "kobana_store_write_errors_total"); err != nil {
			t.Error(err)
		}
	}
	const head = `# HELP kobana_store_writable 1 while the store takes writes, 0 while it refuses them (disk full or read-only, database unreachable): the pipeline is paused.
# TYPE kobana_store_writable gauge
# HELP kobana_store_write_errors_total Store transactions refused by the database, by reason (full, read_only, io, unreachable).
# TYPE kobana_store_write_errors_total counter
`
	want(head + `kobana_store_writable{store="sqlite"} 1
kobana_store_write_errors_total{reason="full",store="sqlite"} 0
kobana_store_write_errors_total{reason="io",store="sqlite"} 0
kobana_store_write_errors_total{reason="read_only",store="sqlite"} 0
kobana_store_write_errors_total{reason="unreachable",store="sqlite"} 0
`)
	h.Observe(store.Refused(store.RefusedFull, errors.New("database or disk is full")))
	h.Observe(store.Refused(store.RefusedFull, errors.New("database or disk is full")))
	h.Observe(errors.New("a constraint failed")) // says nothing of the store
	want(head + `kobana_store_writable{store="sqlite"} 0
kobana_store_write_errors_total{reason="full",store="sqlite"} 2
kobana_store_write_errors_total{reason="io",store="sqlite"} 0
kobana_store_write_errors_total{reason="read_only",store="sqlite"} 0
kobana_store_write_errors_total{reason="unreachable",store="sqlite"} 0
`)
	h.Observe(nil)
	want(head + `kobana_store_writable{store="sqlite"} 1
kobana_store_write_errors_total{reason="full",store="sqlite"} 2
kobana_store_write_errors_total{reason="io",store="sqlite"} 0
kobana_store_write_errors_total{reason="read_only",store="sqlite"} 0
kobana_store_write_errors_total{reason="unreachable",store="sqlite"} 0
`)
}
