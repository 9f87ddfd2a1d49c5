package inbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/kobana/workflow/store"
)

// NotFoundError reports that a record does not exist in the workspace (or
// at all: callers cannot tell). It matches store.ErrNotFound with errors.Is.
type NotFoundError struct {
	Kind string
	ID   string
}

func (e *NotFoundError) Error() string { return fmt.Sprintf("%s %q not found", e.Kind, e.ID) }

// Unwrap makes the error match store.ErrNotFound.
func (e *NotFoundError) Unwrap() error { return store.ErrNotFound }

// NewID returns a fresh random id with a kind prefix, e.g. "eml_3f2a…".
func NewID(prefix string) string {
	b := make([]byte, 8)
	rand.Read(b)
	return prefix + "_" + hex.EncodeToString(b)
}

// Repo reads and writes the domain's records (Documents) in a store, each
// scoped to one workspace: a record of another workspace is not found.
type Repo struct {
	Store store.Records
}

// Put inserts the document or replaces the one with the same kind and id.
func (r Repo) Put(ctx context.Context, workspace string, d Document) error {
	rec, err := record(workspace, d)
	if err != nil {
		return err
	}
	return r.Store.PutRecord(ctx, rec)
}

// Create inserts the document only if none has its kind and id; an error
// matching store.ErrConflict otherwise.
func (r Repo) Create(ctx context.Context, workspace string, d Document) error {
	rec, err := record(workspace, d)
	if err != nil {
		return err
	}
	if err := r.Store.CreateRecord(ctx, rec); err != nil {
		return fmt.Errorf("creating %s %s: %w", rec.Kind, rec.ID, err)
	}
	return nil
}

func record(workspace string, d Document) (store.Record, error) {
	k := d.Key()
	b, err := json.Marshal(d)
	if err != nil {
		return store.Record{}, fmt.Errorf("encoding %s %s: %w", k.Kind, k.ID, err)
	}
	return store.Record{Workspace: workspace, Kind: k.Kind, ID: k.ID, Parent: k.Parent, Status: k.Status, Created: k.Created, Data: b}, nil
}

// kindOf is the kind of a Document type.
func kindOf[T Document]() string {
	var zero T
	return zero.Key().Kind
}

// Get reads one record of type T; a *NotFoundError when there is none.
func Get[T Document](ctx context.Context, r Repo, workspace, id string) (T, error) {
	var v T
	kind := kindOf[T]()
	rec, err := r.Store.GetRecord(ctx, workspace, kind, id)
	if errors.Is(err, store.ErrNotFound) {
		return v, &NotFoundError{Kind: kind, ID: id}
	}
	if err != nil {
		return v, fmt.Errorf("reading %s %s: %w", kind, id, err)
	}
	if err := json.Unmarshal(rec.Data, &v); err != nil {
		return v, fmt.Errorf("decoding %s %s: %w", kind, id, err)
	}
	return v, nil
}

// Delete removes one record of type T; a *NotFoundError when there was none.
func Delete[T Document](ctx context.Context, r Repo, workspace, id string) error {
	kind := kindOf[T]()
	err := r.Store.DeleteRecord(ctx, workspace, kind, id)
	if errors.Is(err, store.ErrNotFound) {
		return &NotFoundError{Kind: kind, ID: id}
	}
	if err != nil {
		return fmt.Errorf("deleting %s %s: %w", kind, id, err)
	}
	return nil
}

// List returns one page of records of type T matching q, most recent first,
// and the cursor of the next page ("" when this page was the last).
func List[T Document](ctx context.Context, r Repo, workspace string, q store.Query) ([]T, string, error) {
	kind := kindOf[T]()
	recs, err := r.Store.ListRecords(ctx, workspace, kind, q)
	if err != nil {
		return nil, "", fmt.Errorf("listing %s: %w", kind, err)
	}
	out := make([]T, 0, len(recs))
	for _, rec := range recs {
		var v T
		if err := json.Unmarshal(rec.Data, &v); err != nil {
			return nil, "", fmt.Errorf("decoding %s %s: %w", kind, rec.ID, err)
		}
		out = append(out, v)
	}
	next := ""
	if n := len(recs); n > 0 && n == q.Limit {
		next = Cursor(recs[n-1])
	}
	return out, next, nil
}

// Each calls fn with every record of type T matching q (q.Limit is ignored),
// most recent first, reading the store a page at a time. It stops at the
// first error fn returns.
func Each[T Document](ctx context.Context, r Repo, workspace string, q store.Query, fn func(T) error) error {
	q.Limit = 500
	for {
		page, _, err := List[T](ctx, r, workspace, q)
		if err != nil {
			return err
		}
		for _, v := range page {
			if err := fn(v); err != nil {
				return err
			}
		}
		if len(page) < q.Limit {
			return nil
		}
		k := page[len(page)-1].Key()
		q.Before, q.BeforeID = k.Created, k.ID
	}
}

// Cursor names the position after a record in listing order, "<created
// RFC 3339>|<id>": what List returns as the next page's cursor, read back
// into store.Query's Before and BeforeID.
func Cursor(r store.Record) string {
	return r.Created.UTC().Format(time.RFC3339Nano) + "|" + r.ID
}
