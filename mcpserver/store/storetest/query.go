package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
)

// invoice is the document the query tests store: fields of every type,
// some absent on some records.
type invoice struct {
	ID       string    `json:"id"`
	Customer string    `json:"customer_id"`
	Number   string    `json:"number"`
	Amount   *float64  `json:"amount_cents,omitempty"`
	Due      string    `json:"due_date,omitempty"`
	PaidAt   time.Time `json:"paid_at,omitzero"`
	Name     string    `json:"name,omitempty"`
	Address  *struct {
		City string `json:"city"`
	} `json:"address,omitempty"`
	Status string `json:"status"`
}

func amount(v float64) *float64 { return &v }

// invoices stores a fixed set of invoices in w1 (and one in w2, and one of
// another kind) and returns them in creation order.
func seedInvoices(t *testing.T, s store.Records) []invoice {
	t.Helper()
	ctx := context.Background()
	at := func(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }
	city := func(c string) *struct {
		City string `json:"city"`
	} {
		return &struct {
			City string `json:"city"`
		}{c}
	}
	invs := []invoice{
		{ID: "inv_01", Customer: "cus_a", Number: "FAT-0010", Amount: amount(1500), Due: "2026-03-10", PaidAt: at(60), Name: "Água Viva", Address: city("Recife"), Status: "paid"},
		{ID: "inv_02", Customer: "cus_b", Number: "FAT-0002", Amount: amount(99.5), Due: "2026-03-01", Name: "ÁGUA fria", Status: "open"},
		{ID: "inv_03", Customer: "cus_a", Number: "FAT-0003", Amount: amount(-20), Due: "2026-04-01", PaidAt: at(30).In(time.FixedZone("BRT", -3*3600)), Name: "Beta", Address: city("São Paulo"), Status: "paid"},
		{ID: "inv_04", Customer: "cus_c", Number: "fat-0004", Due: "2026-02-15", Name: "gamma 50%_off", Status: "open"},
		{ID: "inv_05", Customer: "cus_b", Number: "FAT-0005", Amount: amount(1500), Name: "Delta", Status: "cancelled"},
		{ID: "inv_06", Customer: "cus_a", Number: "FAT-0006", Amount: amount(250), Due: "2026-03-10", Status: "open"},
	}
	for i, inv := range invs {
		b, _ := json.Marshal(inv)
		// inv_05 and inv_06 share a creation time: ties go by id.
		created := at(i)
		if i == 5 {
			created = at(4)
		}
		must(t, s.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "invoice", ID: inv.ID, Parent: inv.Customer, Status: inv.Status, Created: created, Data: b}))
	}
	// Odd data: a number where text is expected, text where a number is,
	// and a time that is not one.
	must(t, s.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "invoice", ID: "inv_07", Created: at(10),
		Data: json.RawMessage(`{"id":"inv_07","customer_id":7,"number":"FAT-0007","amount_cents":"1500","paid_at":"yesterday","name":null}`)}))
	must(t, s.PutRecord(ctx, store.Record{Workspace: "w2", Kind: "invoice", ID: "inv_91", Created: at(0), Data: json.RawMessage(`{"customer_id":"cus_a","amount_cents":1500}`)}))
	must(t, s.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "other", ID: "inv_92", Created: at(0), Data: json.RawMessage(`{"customer_id":"cus_a","amount_cents":1500}`)}))
	return invs
}

func listIDs(t *testing.T, s store.Records, q store.Query) string {
	t.Helper()
	recs, err := s.ListRecords(context.Background(), "w1", "invoice", q)
	if err != nil {
		t.Fatalf("list %+v: %v", q, err)
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = strings.TrimPrefix(r.ID, "inv_")
	}
	return strings.Join(ids, " ")
}

var (
	customer = store.TextField("customer_id")
	number   = store.TextField("number")
	amt      = store.NumberField("amount_cents")
	due      = store.TextField("due_date")
	paidAt   = store.TimeField("paid_at")
	name     = store.TextField("name")
	cityF    = store.TextField("address.city")
)

// testQueryFilters: every comparison on every field type runs in the
// database, over every record of the kind.
func testQueryFilters(t *testing.T, e *env) {
	s := e.fresh(t, store.Options{})
	seedInvoices(t, s)
	at := func(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }
	W := func(fs ...store.Filter) store.Query { return store.Query{Where: fs} }
	for _, c := range []struct {
		name string
		q    store.Query
		want string
	}{
		{"all, most recent first, ties by id", store.Query{}, "07 06 05 04 03 02 01"},
		{"text eq", W(store.Eq(customer, "cus_a")), "06 03 01"},
		{"text eq ignores other JSON types", W(store.Eq(customer, "7")), ""},
		{"text in", W(store.In(customer, "cus_b", "cus_c", "cus_z")), "05 04 02"},
		{"text prefix is bytewise", W(store.HasPrefix(number, "FAT-000")), "07 06 05 03 02"},
		{"prefix metacharacters are literal", W(store.HasPrefix(name, "gamma 50%_")), "04"},
		{"prefix with %", W(store.HasPrefix(name, "gamma 5%")), ""},
		{"text range", W(store.GreaterOrEqual(due, "2026-03-01"), store.LessOrEqual(due, "2026-03-10")), "06 02 01"},
		{"text less", W(store.Less(due, "2026-03-01")), "04"},
		{"contains ignores case, also beyond ASCII", W(store.Contains(name, "água")), "02 01"},
		{"contains with metacharacters", W(store.Contains(name, "50%_o")), "04"},
		{"nested path", W(store.Eq(cityF, "São Paulo")), "03"},
		{"number eq", W(store.Eq(amt, 1500)), "05 01"},
		{"number eq float", W(store.Eq(amt, 99.5)), "02"},
		{"number range", W(store.Greater(amt, 0), store.Less(amt, 1000)), "06 02"},
		{"number negative", W(store.Less(amt, 0)), "03"},
		{"number in", W(store.In(amt, int64(250), -20.0)), "06 03"},
		{"time compares instants across zones", W(store.Less(paidAt, at(45))), "03"},
		{"time range", W(store.GreaterOrEqual(paidAt, at(30)), store.LessOrEqual(paidAt, at(60))), "03 01"},
		{"exists", W(store.Exists(paidAt)), "03 01"},
		{"missing: absent, null, or another type", W(store.Missing(amt)), "07 04"},
		{"missing name", W(store.Missing(name)), "07 06"},
		{"any", W(store.Any(store.Eq(customer, "cus_c"), store.Eq(amt, 99.5))), "04 02"},
		{"not keeps records without the field", W(store.Not(store.Eq(customer, "cus_a"))), "07 05 04 02"},
		{"not in", W(store.Not(store.In(store.IDField, "inv_01", "inv_02"))), "07 06 05 04 03"},
		{"not any", W(store.Not(store.Any(store.Exists(paidAt), store.Eq(store.StatusField, "open")))), "07 05"},
		{"columns", W(store.Eq(store.StatusField, "open"), store.Eq(store.ParentField, "cus_a")), "06"},
		{"created column", W(store.Less(store.CreatedField, at(2))), "02 01"},
		{"filters and column queries together", store.Query{Parent: "cus_a", Where: []store.Filter{store.Exists(paidAt)}}, "03 01"},
		{"limit applies after filtering", store.Query{Limit: 1, Where: []store.Filter{store.Eq(customer, "cus_b")}}, "05"},
	} {
		if got := listIDs(t, s, c.q); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// testQueryCounts: CountByStatus counts by status what a listing's
// filters keep, whatever its paging, limit and order, in one workspace and
// kind.
func testQueryCounts(t *testing.T, e *env) {
	s := e.fresh(t, store.Options{})
	seedInvoices(t, s)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		q    store.Query
		want string
	}{
		{"all", store.Query{}, ":1 cancelled:1 open:3 paid:2"},
		{"parent", store.Query{Parent: "cus_a"}, "open:1 paid:2"},
		{"status", store.Query{Status: "open"}, "open:3"},
		{"where", store.Query{Where: []store.Filter{store.Contains(name, "água")}}, "open:1 paid:1"},
		{"limit and order do not count", store.Query{Limit: 1, Order: store.Order{By: amt}}, ":1 cancelled:1 open:3 paid:2"},
		{"nothing kept", store.Query{Parent: "cus_z"}, ""},
	} {
		got, err := s.CountByStatus(ctx, "w1", "invoice", c.q)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var parts []string
		for st, n := range got {
			parts = append(parts, fmt.Sprintf("%s:%d", st, n))
		}
		slices.Sort(parts)
		if g := strings.Join(parts, " "); g != c.want {
			t.Errorf("%s: %q, want %q", c.name, g, c.want)
		}
	}
	if _, err := s.CountByStatus(ctx, "w1", "invoice", store.Query{Where: []store.Filter{store.Contains(amt, "1")}}); !errors.Is(err, store.ErrInvalidQuery) {
		t.Errorf("an invalid filter: %v, want ErrInvalidQuery", err)
	}
}

// testQueryOrder: ordering by a field of every type, both directions, ties
// by creation time and id, records without a value last.
func testQueryOrder(t *testing.T, e *env) {
	s := e.fresh(t, store.Options{})
	seedInvoices(t, s)
	for _, c := range []struct {
		order store.Order
		want  string
	}{
		{store.Order{}, "07 06 05 04 03 02 01"},
		{store.Order{Asc: true}, "01 02 03 04 05 06 07"},
		{store.Order{By: store.CreatedField, Asc: true}, "01 02 03 04 05 06 07"},
		{store.Order{By: number, Asc: true}, "02 03 05 06 07 01 04"},
		{store.Order{By: number}, "04 01 07 06 05 03 02"},
		// 1500 twice: inv_05 (created later) before inv_01 descending.
		{store.Order{By: amt}, "05 01 06 02 03 07 04"},
		{store.Order{By: amt, Asc: true}, "03 02 06 01 05 04 07"},
		{store.Order{By: paidAt, Asc: true}, "03 01 02 04 05 06 07"},
		{store.Order{By: paidAt}, "01 03 07 06 05 04 02"},
		{store.Order{By: store.IDField, Asc: true}, "01 02 03 04 05 06 07"},
		{store.Order{By: due, Asc: true}, "04 02 01 06 03 05 07"},
	} {
		if got := listIDs(t, s, store.Query{Order: c.order}); got != c.want {
			t.Errorf("order %v asc=%v: %q, want %q", c.order.Field(), c.order.Asc, got, c.want)
		}
	}
}

// pageAll lists every record q describes, limit at a time, following the
// cursors, and checks each page's size.
func pageAll(t *testing.T, s store.Records, q store.Query) string {
	t.Helper()
	var ids []string
	for pages := 0; ; pages++ {
		if pages > 50 {
			t.Fatal("paging does not end")
		}
		p, err := s.ListPage(context.Background(), "w1", "invoice", q)
		if err != nil {
			t.Fatalf("page %d of %+v: %v", pages, q, err)
		}
		if p.Next != "" && len(p.Records) != q.EffectiveLimit() {
			t.Errorf("page %d has %d records and a next cursor, want %d", pages, len(p.Records), q.EffectiveLimit())
		}
		for _, r := range p.Records {
			ids = append(ids, strings.TrimPrefix(r.ID, "inv_"))
		}
		if p.Next == "" {
			return strings.Join(ids, " ")
		}
		q.After = p.Next
	}
}

// testQueryCursors: paging with cursors returns every record once in the
// listing's order, whatever the page size, order and filters, also across
// ties and records without a sort value; a last page has no cursor.
func testQueryCursors(t *testing.T, e *env) {
	s := e.fresh(t, store.Options{})
	seedInvoices(t, s)
	for _, q := range []store.Query{
		{},
		{Order: store.Order{Asc: true}},
		{Order: store.Order{By: amt}},
		{Order: store.Order{By: amt, Asc: true}},
		{Order: store.Order{By: paidAt}},
		{Order: store.Order{By: paidAt, Asc: true}},
		{Order: store.Order{By: number, Asc: true}},
		{Order: store.Order{By: due}},
		{Order: store.Order{By: store.IDField}},
		{Where: []store.Filter{store.Not(store.Eq(customer, "cus_b"))}, Order: store.Order{By: amt}},
	} {
		want := listIDs(t, s, q)
		for _, limit := range []int{1, 2, 3, 7, 8} {
			q.Limit = limit
			if got := pageAll(t, s, q); got != want {
				t.Errorf("order %v asc=%v where %v, pages of %d: %q, want %q", q.Order.Field(), q.Order.Asc, q.Where, limit, got, want)
			}
		}
	}
	// Records created, changed or deleted between pages do not shift the
	// later pages.
	ctx := context.Background()
	q := store.Query{Limit: 3, Order: store.Order{By: amt}}
	p1, err := s.ListPage(ctx, "w1", "invoice", q)
	must(t, err)
	must(t, s.DeleteRecord(ctx, "w1", "invoice", "inv_05"))
	must(t, s.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "invoice", ID: "inv_00", Data: json.RawMessage(`{"amount_cents":999999}`)}))
	q.After = p1.Next
	p2, err := s.ListPage(ctx, "w1", "invoice", q)
	must(t, err)
	var got []string
	for _, r := range append(p1.Records, p2.Records...) {
		got = append(got, strings.TrimPrefix(r.ID, "inv_"))
	}
	if strings.Join(got, " ") != "05 01 06 02 03 07" {
		t.Errorf("pages around changes: %v, want 05 01 06 | 02 03 07", got)
	}
}

// testQueryCursorValidation: a cursor is opaque, and anything but the Next
// of the same listing is a clear error.
func testQueryCursorValidation(t *testing.T, e *env) {
	s := e.fresh(t, store.Options{})
	seedInvoices(t, s)
	ctx := context.Background()
	q := store.Query{Limit: 2, Order: store.Order{By: amt}, Where: []store.Filter{store.Exists(amt)}}
	p, err := s.ListPage(ctx, "w1", "invoice", q)
	must(t, err)
	if p.Next == "" || strings.Contains(p.Next, "inv_") || strings.Contains(p.Next, "1500") {
		t.Fatalf("cursor %q: want an opaque, non-empty cursor", p.Next)
	}
	flip := []byte(p.Next)
	flip[len(flip)/2] ^= 0x01
	other := q
	other.Order.Asc = true
	otherWhere := q
	otherWhere.Where = []store.Filter{store.Exists(paidAt)}
	for name, c := range map[string]struct {
		ws    string
		kind  string
		q     store.Query
		after string
	}{
		"garbage":           {"w1", "invoice", q, "yesterday"},
		"empty parts":       {"w1", "invoice", q, "c1.."},
		"altered":           {"w1", "invoice", q, string(flip)},
		"truncated":         {"w1", "invoice", q, p.Next[:len(p.Next)-3]},
		"another order":     {"w1", "invoice", other, p.Next},
		"another filter":    {"w1", "invoice", otherWhere, p.Next},
		"another workspace": {"w2", "invoice", q, p.Next},
		"another kind":      {"w1", "other", q, p.Next},
	} {
		c.q.After = c.after
		_, err := s.ListPage(ctx, c.ws, c.kind, c.q)
		if !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("%s: %v, want ErrInvalidCursor", name, err)
		}
		if _, err := s.ListRecords(ctx, c.ws, c.kind, c.q); !errors.Is(err, store.ErrInvalidCursor) {
			t.Errorf("%s (ListRecords): %v, want ErrInvalidCursor", name, err)
		}
	}
	// Another page size is the same listing.
	q.After, q.Limit = p.Next, 10
	if p2, err := s.ListPage(ctx, "w1", "invoice", q); err != nil || len(p2.Records) != 3 || p2.Next != "" {
		t.Errorf("next page with another limit: %d records, next %q, %v; want the last 3", len(p2.Records), p2.Next, err)
	}
}

// testQueryInvalid: queries a store cannot run are errors that say why.
func testQueryInvalid(t *testing.T, e *env) {
	s := e.fresh(t, store.Options{})
	ctx := context.Background()
	for name, q := range map[string]store.Query{
		"bad path":             {Where: []store.Filter{store.Eq(store.TextField("a'b"), "x")}},
		"empty path":           {Where: []store.Filter{store.Eq(store.TextField(""), "x")}},
		"path with brackets":   {Where: []store.Filter{store.Eq(store.TextField("a[0]"), "x")}},
		"wrong value type":     {Where: []store.Filter{store.Eq(amt, "1500")}},
		"time value not time":  {Where: []store.Filter{store.Less(paidAt, "2026-01-01")}},
		"prefix on a number":   {Where: []store.Filter{{}}},
		"empty in":             {Where: []store.Filter{store.In(customer)}},
		"empty any":            {Where: []store.Filter{store.Any()}},
		"untyped field":        {Where: []store.Filter{store.Exists(store.Field{})}},
		"order by a bad path":  {Order: store.Order{By: store.NumberField("1a")}},
		"before with an order": {Before: base, Order: store.Order{By: amt}},
		"before with after":    {Before: base, After: "c1.x.y"},
		"before id alone":      {BeforeID: "x"},
	} {
		_, err := s.ListPage(ctx, "w1", "invoice", q)
		if !errors.Is(err, store.ErrInvalidQuery) {
			t.Errorf("%s: %v, want ErrInvalidQuery", name, err)
		}
	}
	if _, err := s.ListPage(ctx, "w1", "invoice", store.Query{Where: []store.Filter{store.Eq(amt, "x")}}); err == nil || !strings.Contains(err.Error(), "amount_cents") {
		t.Errorf("the error does not name the field: %v", err)
	}
}

// testQueryScale: filters and order see every record, not a recent window,
// and paging walks them all.
func testQueryScale(t *testing.T, e *env) {
	s := e.fresh(t, store.Options{})
	ctx := context.Background()
	const n = 2500
	must(t, s.WithTx(ctx, func(tx store.Tx) error {
		for i := range n {
			data := fmt.Sprintf(`{"n":%d,"even":%v,"tag":"t%d"}`, i, i%2 == 0, i%10)
			if err := tx.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "row", ID: fmt.Sprintf("r%05d", i), Created: base.Add(time.Duration(i) * time.Second), Data: json.RawMessage(data)}); err != nil {
				return err
			}
		}
		return nil
	}))
	// The oldest record is found, although more than MaxLimit are newer.
	recs, err := s.ListRecords(ctx, "w1", "row", store.Query{Where: []store.Filter{store.Eq(store.NumberField("n"), 0)}})
	if err != nil || len(recs) != 1 || recs[0].ID != "r00000" {
		t.Errorf("the oldest record by a filter: %v %v", recs, err)
	}
	// The smallest values first, across every record.
	recs, err = s.ListRecords(ctx, "w1", "row", store.Query{Limit: 3, Order: store.Order{By: store.NumberField("n"), Asc: true}})
	if err != nil || len(recs) != 3 || recs[0].ID != "r00000" || recs[2].ID != "r00002" {
		t.Errorf("ascending by n: %v %v", recs, err)
	}
	seen := map[string]bool{}
	q := store.Query{Limit: store.MaxLimit, Where: []store.Filter{store.Eq(store.TextField("tag"), "t3")}, Order: store.Order{By: store.NumberField("n")}}
	for {
		p, err := s.ListPage(ctx, "w1", "row", q)
		must(t, err)
		for _, r := range p.Records {
			if seen[r.ID] {
				t.Fatalf("%s listed twice", r.ID)
			}
			seen[r.ID] = true
		}
		if p.Next == "" {
			break
		}
		q.After = p.Next
	}
	if len(seen) != n/10 {
		t.Errorf("paged %d records tagged t3, want %d", len(seen), n/10)
	}
}

// testTransactions: WithTx commits everything fn wrote, or nothing.
func testTransactions(t *testing.T, e *env) {
	ctx := context.Background()
	name := e.db(t)
	s := e.handle(t, name, store.Options{})
	other := e.handle(t, name, store.Options{})
	rec := func(id string) store.Record {
		return store.Record{Workspace: "w1", Kind: "email", ID: id, Data: json.RawMessage(`{"id":"` + id + `"}`)}
	}
	// Committed: records, blobs and a counter, seen inside fn and by
	// every handle afterwards.
	err := s.WithTx(ctx, func(tx store.Tx) error {
		if err := tx.CreateRecord(ctx, rec("eml_1")); err != nil {
			return err
		}
		if err := tx.PutBlob(ctx, "w1", "eml_1", []byte("raw")); err != nil {
			return err
		}
		if n, err := tx.NextNumber(ctx, "w1", "email", 1); err != nil || n != 1 {
			return fmt.Errorf("number %d %v", n, err)
		}
		if r, err := tx.GetRecord(ctx, "w1", "email", "eml_1"); err != nil || r.ID != "eml_1" {
			return fmt.Errorf("read inside the transaction: %v", err)
		}
		if recs, err := tx.ListRecords(ctx, "w1", "email", store.Query{}); err != nil || len(recs) != 1 {
			return fmt.Errorf("list inside the transaction: %d %v", len(recs), err)
		}
		return nil
	})
	must(t, err)
	for i, h := range []store.Store{s, other} {
		if _, err := h.GetRecord(ctx, "w1", "email", "eml_1"); err != nil {
			t.Errorf("handle %d: committed record: %v", i, err)
		}
		if b, err := h.GetBlob(ctx, "w1", "eml_1"); err != nil || string(b) != "raw" {
			t.Errorf("handle %d: committed blob: %q %v", i, b, err)
		}
	}
	// Rolled back on error: nothing of fn stays, the error comes back as is.
	boom := errors.New("boom")
	err = s.WithTx(ctx, func(tx store.Tx) error {
		must(t, tx.PutRecord(ctx, rec("eml_2")))
		must(t, tx.DeleteRecord(ctx, "w1", "email", "eml_1"))
		must(t, tx.PutBlob(ctx, "w1", "eml_2", []byte("raw2")))
		if n, err := tx.NextNumber(ctx, "w1", "email", 1); err != nil || n != 2 {
			t.Errorf("number in the second transaction: %d %v", n, err)
		}
		// Not visible outside before commit.
		if _, err := other.GetRecord(ctx, "w1", "email", "eml_2"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("uncommitted record seen by another handle: %v", err)
		}
		return boom
	})
	if err != boom {
		t.Errorf("WithTx returned %v, want fn's error", err)
	}
	checkRolledBack := func(when string) {
		t.Helper()
		if _, err := s.GetRecord(ctx, "w1", "email", "eml_2"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: record written in a rolled-back transaction: %v", when, err)
		}
		if _, err := s.GetBlob(ctx, "w1", "eml_2"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: blob written in a rolled-back transaction: %v", when, err)
		}
		if _, err := s.GetRecord(ctx, "w1", "email", "eml_1"); err != nil {
			t.Errorf("%s: record deleted in a rolled-back transaction: %v", when, err)
		}
	}
	checkRolledBack("after an error")
	// A counter number taken in a rolled-back transaction is handed out again.
	if n, err := s.NextNumber(ctx, "w1", "email", 1); err != nil || n != 2 {
		t.Errorf("number after a rollback: %d %v, want 2 again", n, err)
	}
	// Rolled back on panic, and the panic goes on.
	func() {
		defer func() {
			if r := recover(); r != "panic in fn" {
				t.Errorf("recovered %v, want fn's panic", r)
			}
		}()
		s.WithTx(ctx, func(tx store.Tx) error {
			must(t, tx.PutRecord(ctx, rec("eml_2")))
			panic("panic in fn")
		})
	}()
	checkRolledBack("after a panic")
	// A conflict inside a transaction is ErrConflict, and the store keeps
	// working after it.
	err = s.WithTx(ctx, func(tx store.Tx) error { return tx.CreateRecord(ctx, rec("eml_1")) })
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("create of an existing record in a transaction: %v", err)
	}
	must(t, s.PutRecord(ctx, rec("eml_3")))
	// A cancelled context rolls back.
	cctx, cancel := context.WithCancel(ctx)
	err = s.WithTx(cctx, func(tx store.Tx) error {
		must(t, tx.PutRecord(cctx, rec("eml_4")))
		cancel()
		return nil
	})
	if err == nil {
		t.Error("a transaction whose context was cancelled before commit committed")
	}
	if _, err := s.GetRecord(ctx, "w1", "email", "eml_4"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("record of a cancelled transaction: %v", err)
	}
}

// testTransactionsConcurrent: transactions from several goroutines and
// handles each commit whole; counters taken in them stay unique.
func testTransactionsConcurrent(t *testing.T, e *env) {
	ctx := context.Background()
	name := e.db(t)
	handles := []store.Store{e.handle(t, name, store.Options{}), e.handle(t, name, store.Options{})}
	const n = 40
	errs := make(chan error, n)
	for i := range n {
		go func() {
			errs <- handles[i%2].WithTx(ctx, func(tx store.Tx) error {
				num, err := tx.NextNumber(ctx, "w1", "email", 1)
				if err != nil {
					return err
				}
				id := fmt.Sprintf("eml_%03d", num)
				if err := tx.CreateRecord(ctx, store.Record{Workspace: "w1", Kind: "email", ID: id, Data: json.RawMessage(`{}`)}); err != nil {
					return err
				}
				return tx.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "event", ID: "evt_" + id, Parent: id, Data: json.RawMessage(`{}`)})
			})
		}()
	}
	for range n {
		must(t, <-errs)
	}
	emails, err := handles[0].ListRecords(ctx, "w1", "email", store.Query{Limit: 100, Order: store.Order{By: store.IDField, Asc: true}})
	must(t, err)
	events, err := handles[1].ListRecords(ctx, "w1", "event", store.Query{Limit: 100})
	must(t, err)
	if len(emails) != n || len(events) != n || emails[0].ID != "eml_001" || emails[n-1].ID != fmt.Sprintf("eml_%03d", n) {
		t.Errorf("%d e-mails (%v…), %d events; want %d each, numbered 1…%d", len(emails), emails[0].ID, len(events), n, n)
	}
}

// testRepo: the typed repository over records and transactions.
func testRepo(t *testing.T, e *env) {
	s := e.fresh(t, store.Options{})
	ctx := context.Background()
	repo := store.Repo[invoice]{Records: s, Kind: "invoice", Name: "invoice", Meta: func(v *invoice) store.Meta {
		return store.Meta{ID: v.ID, Parent: v.Customer, Status: v.Status}
	}}
	if _, err := repo.Get(ctx, "w1", "inv_x"); !errors.Is(err, store.ErrNotFound) || err.Error() != `invoice "inv_x" not found` {
		t.Errorf("get missing: %v", err)
	}
	var re *store.RecordError
	if _, err := repo.Get(ctx, "w1", "inv_x"); !errors.As(err, &re) || re.Kind != "invoice" || re.ID != "inv_x" || re.Op != "get" {
		t.Errorf("error = %#v, want a RecordError naming the kind and id", re)
	}
	inv := invoice{ID: "inv_1", Customer: "cus_a", Number: "FAT-1", Amount: amount(10), Status: "open"}
	must(t, repo.Create(ctx, "w1", inv))
	if err := repo.Create(ctx, "w1", inv); !errors.Is(err, store.ErrConflict) || err.Error() != `invoice "inv_1" already exists` {
		t.Errorf("create twice: %v", err)
	}
	got, rec, err := repo.GetRecord(ctx, "w1", "inv_1")
	if err != nil || got.Number != "FAT-1" || rec.Parent != "cus_a" || rec.Status != "open" {
		t.Errorf("get = %+v %+v %v", got, rec, err)
	}
	inv.Status = "paid"
	must(t, repo.Put(ctx, "w1", inv))
	if got, _ := repo.Get(ctx, "w1", "inv_1"); got.Status != "paid" {
		t.Errorf("after put: %+v", got)
	}
	for i := 2; i <= 7; i++ {
		must(t, repo.Put(ctx, "w1", invoice{ID: fmt.Sprintf("inv_%d", i), Customer: "cus_b", Amount: amount(float64(i)), Status: "open"}))
	}
	page, err := repo.List(ctx, "w1", store.Query{Limit: 4, Where: []store.Filter{store.Eq(store.StatusField, "open")}, Order: store.Order{By: amt, Asc: true}})
	if err != nil || len(page.Items) != 4 || page.Items[0].ID != "inv_2" || page.Next == "" {
		t.Fatalf("list = %+v %v", page, err)
	}
	all, err := repo.All(ctx, "w1", store.Query{Limit: 2, Order: store.Order{By: amt}})
	if err != nil || len(all) != 7 || all[0].ID != "inv_1" || all[1].ID != "inv_7" || all[6].ID != "inv_2" {
		t.Errorf("all = %d values %v", len(all), err)
	}
	stop := errors.New("stop")
	seen := 0
	if err := repo.Each(ctx, "w1", store.Query{}, func(invoice) error { seen++; return stop }); err != stop || seen != 1 {
		t.Errorf("each stops at fn's error: %v after %d", err, seen)
	}
	// In a transaction.
	err = s.WithTx(ctx, func(tx store.Tx) error {
		r := repo.In(tx)
		if err := r.Delete(ctx, "w1", "inv_2"); err != nil {
			return err
		}
		return r.Put(ctx, "w1", invoice{ID: "inv_8", Status: "open"})
	})
	must(t, err)
	if _, err := repo.Get(ctx, "w1", "inv_2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("deleted in a transaction: %v", err)
	}
	if err := repo.Delete(ctx, "w1", "inv_2"); !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "inv_2") {
		t.Errorf("delete twice: %v", err)
	}
	// A record that is not the type's JSON is an error naming it.
	must(t, s.PutRecord(ctx, store.Record{Workspace: "w1", Kind: "invoice", ID: "inv_bad", Data: json.RawMessage(`{"amount_cents":"x"}`)}))
	if _, err := repo.Get(ctx, "w1", "inv_bad"); !errors.As(err, &re) || re.Op != "decode" || !strings.Contains(err.Error(), "inv_bad") {
		t.Errorf("decoding a bad record: %v", err)
	}
}
