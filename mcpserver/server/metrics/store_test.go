package metrics_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/server/metrics"
	"github.com/kobana/workflow/mcpserver/store"
)

// The store's families exist from the first scrape, every reason at zero;
// a refused transaction makes the store unwritable and is counted by
// reason, and one that commits makes it writable again once no other was
// refused for store.WritableAgain.
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
	// A commit right after a refusal does not make it writable at once
	// (store.WritableAgain): the gauge does not flicker.
	h.Observe(nil)
	want(head + `kobana_store_writable{store="sqlite"} 0
kobana_store_write_errors_total{reason="full",store="sqlite"} 2
kobana_store_write_errors_total{reason="io",store="sqlite"} 0
kobana_store_write_errors_total{reason="read_only",store="sqlite"} 0
kobana_store_write_errors_total{reason="unreachable",store="sqlite"} 0
`)
	if err := testwait.Until(store.WritableAgain+10*time.Second, func() error {
		if reason, _ := h.Refusing(); reason != "" {
			return errors.New("the store still says it refuses writes")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want(head + `kobana_store_writable{store="sqlite"} 1
kobana_store_write_errors_total{reason="full",store="sqlite"} 2
kobana_store_write_errors_total{reason="io",store="sqlite"} 0
kobana_store_write_errors_total{reason="read_only",store="sqlite"} 0
kobana_store_write_errors_total{reason="unreachable",store="sqlite"} 0
`)
}
