package store

import (
	"errors"
	"testing"
	"time"
)

// cursorQueries are the listings the cursor tests page: the default order
// and an order by a field of each type.
var cursorQueries = []Query{
	{},
	{Order: Order{By: TextField("number"), Asc: true}},
	{Order: Order{By: NumberField("amount_cents")}, Where: []Filter{Exists(NumberField("amount_cents"))}},
	{Order: Order{By: TimeField("paid_at")}, Parent: "cus_1"},
}

func TestCursorRoundTrip(t *testing.T) {
	for i, q := range cursorQueries {
		q, err := q.Check()
		if err != nil {
			t.Fatal(err)
		}
		keys := []any{nil, "FAT-0001", 1500.5, int64(1793534400123)}
		for _, p := range []Position{{Key: keys[i], Created: 1793534400000, ID: "inv_1"}, {Created: -5, ID: "é\x00"}} {
			if i == 0 {
				p.Key = nil
			}
			q.After = EncodeCursor("w1", "invoice", q, p)
			got, err := DecodeCursor("w1", "invoice", q)
			if err != nil || got != p {
				t.Errorf("query %d: %+v round-trips to %+v %v", i, p, got, err)
			}
		}
	}
}

func TestCursorNamesItsListing(t *testing.T) {
	q, _ := Query{Where: []Filter{Eq(TextField("a"), "x")}}.Check()
	q.After = EncodeCursor("w1", "k", q, Position{Created: 1, ID: "r"})
	other, _ := Query{Where: []Filter{Eq(TextField("a"), "y")}, After: q.After}.Check()
	since := q
	since.Since = time.Unix(100, 0)
	for name, c := range map[string]struct {
		ws, kind string
		q        Query
	}{"workspace": {"w2", "k", q}, "kind": {"w1", "j", q}, "filter value": {"w1", "k", other}, "since": {"w1", "k", since}} {
		if _, err := DecodeCursor(c.ws, c.kind, c.q); !errors.Is(err, ErrInvalidCursor) {
			t.Errorf("another %s: %v, want ErrInvalidCursor", name, err)
		}
	}
}

// FuzzDecodeCursor: a cursor comes from the client. Decoding never panics,
// never accepts a value that does not fit the order, and whatever it
// accepts encodes back to a cursor naming the same position.
func FuzzDecodeCursor(f *testing.F) {
	for i, q := range cursorQueries {
		q, _ := q.Check()
		f.Add(i, EncodeCursor("w1", "invoice", q, Position{Key: []any{nil, "b", 2.5, int64(7)}[i], Created: 9, ID: "inv_9"}))
	}
	f.Add(0, "c1..")
	f.Add(1, "c1.e30.AAAAAAAA")
	f.Fuzz(func(t *testing.T, qi int, after string) {
		if qi < 0 {
			qi = -qi
		}
		q, err := cursorQueries[qi%len(cursorQueries)].Check()
		if err != nil {
			t.Fatal(err)
		}
		q.After = after
		p, err := DecodeCursor("w1", "invoice", q)
		if err != nil {
			if !errors.Is(err, ErrInvalidCursor) {
				t.Fatalf("error %v does not wrap ErrInvalidCursor", err)
			}
			return
		}
		if p.ID == "" {
			t.Fatal("accepted a cursor without an id")
		}
		if p.Key != nil {
			if _, err := SortKey(q.Order.Field(), p.Key); err != nil {
				t.Fatalf("accepted a key that does not fit: %v", err)
			}
		}
		q.After = EncodeCursor("w1", "invoice", q, p)
		again, err := DecodeCursor("w1", "invoice", q)
		if err != nil || again != p {
			t.Fatalf("re-encoded %+v decodes to %+v %v", p, again, err)
		}
	})
}
