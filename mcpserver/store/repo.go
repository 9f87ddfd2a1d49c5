package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Meta is what a Repo keeps of a value in its record's columns.
type Meta struct {
	ID     string
	Parent string
	Status string
	// Created orders the listing; zero takes the store's clock when the
	// record is first stored (and keeps the stored time on replace).
	Created time.Time
}

// Repo reads and writes one kind of record as values of T, kept as T's JSON
// in Data. It is the one typed repository of the products: errors name the
// kind and the id, listings page with the store's cursors.
//
//	invoices := store.Repo[Invoice]{Records: st, Kind: "invoice", Meta: func(v *Invoice) store.Meta {
//		return store.Meta{ID: v.ID, Parent: v.CustomerID, Status: v.Status, Created: v.CreatedAt}
//	}}
//	inv, err := invoices.Get(ctx, org, "inv_1")           // errors.Is(err, store.ErrNotFound)
//	page, err := invoices.List(ctx, org, store.Query{Where: []store.Filter{…}, After: cursor})
//	err = st.WithTx(ctx, func(tx store.Tx) error { return invoices.In(tx).Put(ctx, org, inv) })
type Repo[T any] struct {
	// Records is where the records live: a Store, or a Tx (see In).
	Records Records
	// Kind is the records' kind.
	Kind string
	// Name names the kind in errors ("NF-e"); Kind when empty.
	Name string
	// Meta returns a value's id and other columns. Required.
	Meta func(v *T) Meta
}

// RecordError is the error of a Repo operation on one record. It wraps the
// cause, so errors.Is(err, ErrNotFound) and errors.Is(err, ErrConflict)
// hold as for the store's own errors.
type RecordError struct {
	Op   string // "get", "put", "create", "delete", "decode", "encode"
	Kind string // the repository's Name
	ID   string
	Err  error
}

func (e *RecordError) Error() string {
	switch {
	case errors.Is(e.Err, ErrNotFound):
		return fmt.Sprintf("%s %q not found", e.Kind, e.ID)
	case errors.Is(e.Err, ErrConflict):
		return fmt.Sprintf("%s %q already exists", e.Kind, e.ID)
	}
	return fmt.Sprintf("%s %s %q: %v", e.Op, e.Kind, e.ID, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

func (r Repo[T]) name() string {
	if r.Name != "" {
		return r.Name
	}
	return r.Kind
}

func (r Repo[T]) fail(op, id string, err error) error {
	return &RecordError{Op: op, Kind: r.name(), ID: id, Err: err}
}

// In returns the repository over other records of the same store, such as
// a transaction's.
func (r Repo[T]) In(records Records) Repo[T] {
	r.Records = records
	return r
}

func (r Repo[T]) decode(rec Record) (T, error) {
	var v T
	if err := json.Unmarshal(rec.Data, &v); err != nil {
		return v, r.fail("decode", rec.ID, err)
	}
	return v, nil
}

// Get returns the value of a workspace's record id.
func (r Repo[T]) Get(ctx context.Context, workspace, id string) (T, error) {
	v, _, err := r.GetRecord(ctx, workspace, id)
	return v, err
}

// GetRecord returns the value of a workspace's record id and the record.
func (r Repo[T]) GetRecord(ctx context.Context, workspace, id string) (T, Record, error) {
	var zero T
	rec, err := r.Records.GetRecord(ctx, workspace, r.Kind, id)
	if err != nil {
		return zero, rec, r.fail("get", id, err)
	}
	v, err := r.decode(rec)
	return v, rec, err
}

func (r Repo[T]) record(workspace string, v *T) (Record, error) {
	m := r.Meta(v)
	b, err := json.Marshal(v)
	if err != nil {
		return Record{}, r.fail("encode", m.ID, err)
	}
	return Record{Workspace: workspace, Kind: r.Kind, ID: m.ID, Parent: m.Parent, Status: m.Status, Created: m.Created, Data: b}, nil
}

// Put stores v, replacing the record with its id if there is one.
func (r Repo[T]) Put(ctx context.Context, workspace string, v T) error {
	rec, err := r.record(workspace, &v)
	if err != nil {
		return err
	}
	if err := r.Records.PutRecord(ctx, rec); err != nil {
		return r.fail("put", rec.ID, err)
	}
	return nil
}

// Create stores v only if no record has its id; the error wraps ErrConflict
// otherwise (the claim concurrent callers and replicas race on).
func (r Repo[T]) Create(ctx context.Context, workspace string, v T) error {
	rec, err := r.record(workspace, &v)
	if err != nil {
		return err
	}
	if err := r.Records.CreateRecord(ctx, rec); err != nil {
		return r.fail("create", rec.ID, err)
	}
	return nil
}

// Delete removes a workspace's record id; the error wraps ErrNotFound when
// there was none.
func (r Repo[T]) Delete(ctx context.Context, workspace, id string) error {
	if err := r.Records.DeleteRecord(ctx, workspace, r.Kind, id); err != nil {
		return r.fail("delete", id, err)
	}
	return nil
}

// Items is one page of values and the cursor of the next page (empty after
// the last), for Query.After.
type Items[T any] struct {
	Items []T
	Next  string
}

// List returns one page of the listing q describes (see Records.ListPage).
func (r Repo[T]) List(ctx context.Context, workspace string, q Query) (Items[T], error) {
	p, err := r.Records.ListPage(ctx, workspace, r.Kind, q)
	if err != nil {
		return Items[T]{}, err
	}
	out := Items[T]{Items: make([]T, 0, len(p.Records)), Next: p.Next}
	for _, rec := range p.Records {
		v, err := r.decode(rec)
		if err != nil {
			return Items[T]{}, err
		}
		out.Items = append(out.Items, v)
	}
	return out, nil
}

// Each calls fn with every value of the listing q describes, in order, page
// by page (q.Limit is the page size), from q.After on. It stops at fn's
// first error and returns it.
func (r Repo[T]) Each(ctx context.Context, workspace string, q Query, fn func(T) error) error {
	if q.Limit <= 0 {
		q.Limit = MaxLimit
	}
	for {
		page, err := r.List(ctx, workspace, q)
		if err != nil {
			return err
		}
		for _, v := range page.Items {
			if err := fn(v); err != nil {
				return err
			}
		}
		if page.Next == "" {
			return nil
		}
		q.After = page.Next
	}
}

// All returns every value of the listing q describes (see Each).
func (r Repo[T]) All(ctx context.Context, workspace string, q Query) ([]T, error) {
	var out []T
	err := r.Each(ctx, workspace, q, func(v T) error {
		out = append(out, v)
		return nil
	})
	return out, err
}
