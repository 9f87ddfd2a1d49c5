package sqlq

import (
	"fmt"
	"strings"

	"github.com/kobana/workflow/mcpserver/store"
)

// Dialect writes the expressions that differ between databases.
type Dialect interface {
	// From is the FROM clause over the table records; doc says whether the
	// query reads fields of Data (PostgreSQL parses it once per row there).
	From(doc bool) string
	// Field is the expression of a typed path of Data: its value when the
	// record's Data holds the field's JSON type there (text compared
	// bytewise, numbers as floats, times as Unix milliseconds), NULL
	// otherwise.
	Field(path string, typ store.FieldType) string
	// Prefix is the condition that the text expression starts with the
	// string p; arg adds a parameter and returns its placeholder.
	Prefix(expr, p string, arg func(any) string) string
	// Contains is the condition that the lower-cased text expression
	// contains the placeholder's (already lower-cased) string.
	Contains(expr, placeholder string) string
	// Greatest is the greater of two numeric expressions.
	Greatest(a, b string) string
}

// Columns is what a listing selects, in order; a Statement with Key also
// selects the order's sort value last.
const Columns = "records.id, records.parent_id, records.status, records.created_at, records.data"

// Statement is a listing's SQL and its parameters.
type Statement struct {
	SQL  string
	Args []any
	// Key says that a sixth column holds the order's sort value.
	Key bool
}

type builder struct {
	d     Dialect
	args  []any
	where []string
	doc   bool
}

func (b *builder) arg(v any) string {
	b.args = append(b.args, v)
	return fmt.Sprintf("$%d", len(b.args))
}

func (b *builder) field(f store.Field) string {
	switch f.Column() {
	case store.IDColumn:
		return "records.id"
	case store.ParentColumn:
		return "records.parent_id"
	case store.StatusColumn:
		return "records.status"
	case store.CreatedColumn:
		return "records.created_at"
	}
	b.doc = true
	return "(" + b.d.Field(f.Path(), f.Type()) + ")"
}

var comparisons = map[store.Op]string{store.OpEq: "=", store.OpLess: "<", store.OpLessOrEqual: "<=", store.OpGreater: ">", store.OpGreaterOrEqual: ">="}

func (b *builder) filter(f store.Filter) string {
	switch f.Op() {
	case store.OpAny:
		parts := make([]string, len(f.Sub()))
		for i, s := range f.Sub() {
			parts[i] = b.filter(s)
		}
		return "(" + strings.Join(parts, " OR ") + ")"
	case store.OpNot:
		return "NOT COALESCE(" + b.filter(f.Sub()[0]) + ", FALSE)"
	case store.OpExists:
		return b.field(f.Field()) + " IS NOT NULL"
	case store.OpMissing:
		return b.field(f.Field()) + " IS NULL"
	case store.OpIn:
		expr := b.field(f.Field())
		ph := make([]string, len(f.Values()))
		for i, v := range f.Values() {
			ph[i] = b.arg(v)
		}
		return expr + " IN (" + strings.Join(ph, ", ") + ")"
	case store.OpPrefix:
		return b.d.Prefix(b.field(f.Field()), f.Values()[0].(string), b.arg)
	case store.OpContains:
		return b.d.Contains(b.field(f.Field()), b.arg(f.Values()[0]))
	}
	return b.field(f.Field()) + " " + comparisons[f.Op()] + " " + b.arg(f.Values()[0])
}

// conditions starts a statement over a workspace's kind with the
// conditions of q's filters (Parent, Status, Prefix, Since and Where), not
// its paging.
func conditions(d Dialect, workspace, kind string, q store.Query) *builder {
	b := &builder{d: d}
	b.where = append(b.where, "records.workspace_id = "+b.arg(workspace), "records.kind = "+b.arg(kind))
	if q.Parent != "" {
		b.where = append(b.where, "records.parent_id = "+b.arg(q.Parent))
	}
	if q.Status != "" {
		b.where = append(b.where, "records.status = "+b.arg(q.Status))
	}
	if q.Prefix != "" {
		b.where = append(b.where, d.Prefix("records.id", q.Prefix, b.arg))
	}
	if !q.Since.IsZero() {
		b.where = append(b.where, "records.created_at >= "+b.arg(store.Millis(q.Since)))
	}
	for _, f := range q.Where {
		b.where = append(b.where, b.filter(f))
	}
	return b
}

// CountByStatus returns the statement that counts, by status, the records
// of a workspace's kind q's filters keep (q checked by store.Query.Check;
// its paging and order do not count). Its rows are (status, count).
func CountByStatus(d Dialect, workspace, kind string, q store.Query) Statement {
	b := conditions(d, workspace, kind, q)
	sql := fmt.Sprintf("SELECT records.status, COUNT(*) FROM %s WHERE %s GROUP BY records.status", d.From(b.doc), strings.Join(b.where, " AND "))
	return Statement{SQL: sql, Args: b.args}
}

// List returns the statement that lists up to limit records of a
// workspace's kind as q (checked by store.Query.Check) describes, after the
// position when it is not nil.
func List(d Dialect, workspace, kind string, q store.Query, after *store.Position, limit int) Statement {
	b := conditions(d, workspace, kind, q)
	switch {
	case !q.Before.IsZero() && q.BeforeID != "":
		b.where = append(b.where, fmt.Sprintf("(records.created_at, records.id) < (%s, %s)", b.arg(store.Millis(q.Before)), b.arg(q.BeforeID)))
	case !q.Before.IsZero():
		b.where = append(b.where, "records.created_at < "+b.arg(store.Millis(q.Before)))
	}
	dir, cmp := "DESC", "<"
	if q.Order.Asc {
		dir, cmp = "ASC", ">"
	}
	of := q.Order.Field()
	var key string
	var order []string
	if of != store.CreatedField {
		key = b.field(of)
		order = append(order, "("+key+" IS NULL)", key+" "+dir)
	}
	order = append(order, "records.created_at "+dir, "records.id "+dir)
	if after != nil {
		tail := fmt.Sprintf("(records.created_at, records.id) %s (%s, %s)", cmp, b.arg(after.Created), b.arg(after.ID))
		switch {
		case key == "":
			b.where = append(b.where, tail)
		case after.Key == nil:
			// Past the records with a value: among those without one.
			b.where = append(b.where, fmt.Sprintf("(%s IS NULL AND %s)", key, tail))
		default:
			k := b.arg(after.Key)
			b.where = append(b.where, fmt.Sprintf("(%s IS NULL OR %s %s %s OR (%s = %s AND %s))", key, key, cmp, k, key, k, tail))
		}
	}
	sel := Columns
	if key != "" {
		sel += ", " + key
	}
	sql := fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY %s LIMIT %s",
		sel, d.From(b.doc), strings.Join(b.where, " AND "), strings.Join(order, ", "), b.arg(limit))
	return Statement{SQL: sql, Args: b.args, Key: key != ""}
}

// Plan is a checked listing ready to run: its statement, and what turns the
// rows into a page.
type Plan struct {
	Statement
	workspace, kind string
	q               store.Query
	limit           int
	page            bool
}

// Row is one row a Plan's statement returned: the record, and its sort
// value when the statement selects one.
type Row struct {
	Record store.Record
	Key    any
}

// NewPlan checks q (errors wrap store.ErrInvalidQuery or
// store.ErrInvalidCursor), decodes its cursor and writes the statement. A
// page plan asks for one record more than the limit, to know whether
// another page follows.
func NewPlan(d Dialect, workspace, kind string, q store.Query, page bool) (*Plan, error) {
	q, err := q.Check()
	if err != nil {
		return nil, err
	}
	var after *store.Position
	if q.After != "" {
		p, err := store.DecodeCursor(workspace, kind, q)
		if err != nil {
			return nil, err
		}
		after = &p
	}
	limit := q.EffectiveLimit()
	n := limit
	if page {
		n++
	}
	return &Plan{Statement: List(d, workspace, kind, q, after, n), workspace: workspace, kind: kind, q: q, limit: limit, page: page}, nil
}

// Page turns the statement's rows into a page: at most the limit's records,
// and the cursor after the last one when more follow.
func (p *Plan) Page(rows []Row) (store.Page, error) {
	out := store.Page{Records: make([]store.Record, 0, min(len(rows), p.limit))}
	for i, r := range rows {
		if i == p.limit {
			last := rows[i-1]
			key, err := store.SortKey(p.q.Order.Field(), last.Key)
			if err != nil {
				return store.Page{}, err
			}
			out.Next = store.EncodeCursor(p.workspace, p.kind, p.q, store.Position{Key: key, Created: store.Millis(last.Record.Created), ID: last.Record.ID})
			break
		}
		out.Records = append(out.Records, r.Record)
	}
	return out, nil
}
