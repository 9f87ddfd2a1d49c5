package mcpserver

import (
	"errors"

	"github.com/kobana/workflow/mcpserver/store"
)

// Page sizes of list tools.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// Page is the pagination input of every list tool, the one contract of all
// products: ask for up to Limit records; when the answer carries a
// next_cursor, pass it back as Cursor, with the same filters, for the page
// after. A cursor is opaque: clients neither read nor build one. Pages are
// keyset pages, so records created or deleted meanwhile never shift or
// repeat the records of later pages.
type Page struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"how many records to return, 1-100 (default 20)" minimum:"1" maximum:"100"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next_cursor of the previous page, to get the page after it (with the same filters); opaque" maxLength:"2048"`
}

// Query is the store query of the page: its limit (DefaultPageSize when
// zero) and its cursor. A limit out of range is an invalid_arguments error.
func (p Page) Query() (store.Query, error) {
	q := store.Query{Limit: p.Limit, After: p.Cursor}
	if q.Limit == 0 {
		q.Limit = DefaultPageSize
	}
	if q.Limit < 1 || q.Limit > MaxPageSize {
		return q, Errorf("invalid_arguments", "limit must be between 1 and %d, got %d", MaxPageSize, p.Limit)
	}
	return q, nil
}

// PageError is the answer to a listing error: a cursor that is not a
// next_cursor of the same listing (other filters, altered, made by another
// tool) is the caller's mistake, invalid_arguments; other errors pass.
func PageError(err error) error {
	if errors.Is(err, store.ErrInvalidCursor) {
		return Errorf("invalid_arguments", "cursor is not a next_cursor this tool returned for the same filters; start again without cursor")
	}
	return err
}
