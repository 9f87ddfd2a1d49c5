package billing

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/store"
)

// newID returns a fresh id with a kind prefix.
func newID(prefix string) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("billing: reading random bytes: %v", err))
	}
	return prefix + "_" + hex.EncodeToString(b)
}

// repo reads and writes typed records of one organization. The
// organization id is the partition key of store.Records.
type repo struct {
	st store.Records
}

// names of the kinds in errors the model sees.
var kindNames = map[string]string{
	KindOrganization: "organization",
	KindCustomer:     "customer",
	KindSubscription: "subscription",
	KindInvoice:      "invoice",
	KindNFe:          "NF-e",
	KindReminder:     "reminder",
	KindCounter:      "counter",
}

func (r repo) get(ctx context.Context, org, kind, id string, v any) (store.Record, error) {
	rec, err := r.st.GetRecord(ctx, org, kind, id)
	if errors.Is(err, store.ErrNotFound) {
		return rec, fmt.Errorf("%s %q: %w", kindNames[kind], id, mcpserver.ErrNotFound)
	}
	if err != nil {
		return rec, fmt.Errorf("reading %s %s: %w", kindNames[kind], id, err)
	}
	if err := json.Unmarshal(rec.Data, v); err != nil {
		return rec, fmt.Errorf("decoding %s %s: %w", kindNames[kind], id, err)
	}
	return rec, nil
}

func (r repo) put(ctx context.Context, org, kind, id, parent, status string, created time.Time, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %s %s: %w", kindNames[kind], id, err)
	}
	if err := r.st.PutRecord(ctx, store.Record{Workspace: org, Kind: kind, ID: id, Parent: parent, Status: status, Created: created, Data: b}); err != nil {
		return fmt.Errorf("storing %s %s: %w", kindNames[kind], id, err)
	}
	return nil
}

// create stores a new record and fails with store.ErrConflict when one with
// the same id exists: the claim concurrent callers (and replicas) race on.
func (r repo) create(ctx context.Context, org, kind, id, parent, status string, created time.Time, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %s %s: %w", kindNames[kind], id, err)
	}
	if err := r.st.CreateRecord(ctx, store.Record{Workspace: org, Kind: kind, ID: id, Parent: parent, Status: status, Created: created, Data: b}); err != nil {
		return fmt.Errorf("storing %s %s: %w", kindNames[kind], id, err)
	}
	return nil
}

func (r repo) delete(ctx context.Context, org, kind, id string) error {
	err := r.st.DeleteRecord(ctx, org, kind, id)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%s %q: %w", kindNames[kind], id, mcpserver.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("deleting %s %s: %w", kindNames[kind], id, err)
	}
	return nil
}

// scanLimit caps how many records of one kind a listing considers.
const scanLimit = 1000

// all decodes every record of a kind matching q (most recent first, at
// most scanLimit).
func all[T any](ctx context.Context, r repo, org, kind string, q store.Query) ([]T, error) {
	q.Limit = scanLimit
	recs, err := r.st.ListRecords(ctx, org, kind, q)
	if err != nil {
		return nil, fmt.Errorf("listing %s records: %w", kindNames[kind], err)
	}
	out := make([]T, 0, len(recs))
	for _, rec := range recs {
		var v T
		if err := json.Unmarshal(rec.Data, &v); err != nil {
			return nil, fmt.Errorf("decoding %s %s: %w", kindNames[kind], rec.ID, err)
		}
		out = append(out, v)
	}
	return out, nil
}
