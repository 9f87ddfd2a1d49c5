package store

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// FieldType says what a field holds and so how it compares.
type FieldType uint8

const (
	// Text fields hold JSON strings, compared bytewise (case matters).
	Text FieldType = iota + 1
	// Number fields hold JSON numbers, compared as float64 (integers are
	// exact up to 2^53).
	Number
	// Time fields hold RFC 3339 date-times (Go's time.Time in JSON),
	// compared by instant at millisecond precision, whatever their zone.
	Time
)

func (t FieldType) String() string {
	switch t {
	case Text:
		return "text"
	case Number:
		return "number"
	case Time:
		return "time"
	}
	return fmt.Sprintf("FieldType(%d)", t)
}

// Column names a record column a Field may stand for instead of a path
// into Data.
type Column uint8

// The record columns a query can filter or order on.
const (
	NoColumn Column = iota
	IDColumn
	ParentColumn
	StatusColumn
	CreatedColumn
)

// Field is a typed value of a record that a query filters or orders on: a
// path into the record's JSON Data (TextField, NumberField, TimeField) or
// one of its columns (IDField, ParentField, StatusField, CreatedField). A
// record whose Data lacks the path, or holds another JSON type there, has no
// value for the field: it matches no comparison, matches Missing, and sorts
// after every record that has one, in either direction.
type Field struct {
	path   string
	column Column
	typ    FieldType
}

// TextField is the JSON string at a dotted path of Data ("customer_id",
// "address.city"); segments are letters, digits and underscores, not
// starting with a digit.
func TextField(path string) Field { return Field{path: path, typ: Text} }

// NumberField is the JSON number at a dotted path of Data.
func NumberField(path string) Field { return Field{path: path, typ: Number} }

// TimeField is the RFC 3339 date-time at a dotted path of Data.
func TimeField(path string) Field { return Field{path: path, typ: Time} }

// The record's own columns as fields.
var (
	IDField      = Field{column: IDColumn, typ: Text}
	ParentField  = Field{column: ParentColumn, typ: Text}
	StatusField  = Field{column: StatusColumn, typ: Text}
	CreatedField = Field{column: CreatedColumn, typ: Time}
)

// Path is the dotted path into Data, empty for a column.
func (f Field) Path() string { return f.path }

// Column is the record column the field stands for, NoColumn for a path.
func (f Field) Column() Column { return f.column }

// Type is how the field compares.
func (f Field) Type() FieldType { return f.typ }

// IsZero reports the zero Field (which Order reads as CreatedField).
func (f Field) IsZero() bool { return f == Field{} }

// String names the field in errors: "data.due_date (text)", "id".
func (f Field) String() string {
	switch f.column {
	case IDColumn:
		return "id"
	case ParentColumn:
		return "parent"
	case StatusColumn:
		return "status"
	case CreatedColumn:
		return "created"
	}
	return "data." + f.path + " (" + f.typ.String() + ")"
}

var pathSyntax = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

func (f Field) check() error {
	if f.column != NoColumn {
		return nil
	}
	if f.typ < Text || f.typ > Time {
		return fmt.Errorf("field %q has no type (use TextField, NumberField or TimeField)", f.path)
	}
	if len(f.path) > 200 || !pathSyntax.MatchString(f.path) {
		return fmt.Errorf("field path %q: want names of letters, digits and underscores joined by dots, such as address.city", f.path)
	}
	return nil
}

// Op is the comparison a Filter makes.
type Op uint8

// The comparisons of a Filter.
const (
	OpEq Op = iota + 1
	OpIn
	OpPrefix
	OpContains
	OpLess
	OpLessOrEqual
	OpGreater
	OpGreaterOrEqual
	OpExists
	OpMissing
	OpAny
	OpNot
)

// Filter keeps the records for which a condition on one field holds. Build
// one with Eq, In, HasPrefix, Contains, Less, LessOrEqual, Greater,
// GreaterOrEqual, Exists, Missing, Any or Not; Query.Where keeps the
// records every filter keeps. Filters run in the database, so a listing sees
// every record, not only a recent window.
type Filter struct {
	field  Field
	op     Op
	values []any
	sub    []Filter
}

// Eq keeps records whose field equals v (a string for Text, a number for
// Number, a time.Time for Time).
func Eq(f Field, v any) Filter { return Filter{field: f, op: OpEq, values: []any{v}} }

// In keeps records whose field equals one of vs (at least one).
func In(f Field, vs ...any) Filter { return Filter{field: f, op: OpIn, values: vs} }

// HasPrefix keeps records whose Text field starts with p (bytewise).
func HasPrefix(f Field, p string) Filter { return Filter{field: f, op: OpPrefix, values: []any{p}} }

// Contains keeps records whose Text field contains s, ignoring case (Go's
// strings.ToLower on the SQLite store, the database's lower() on
// PostgreSQL: the same for every letter under a UTF-8 locale).
func Contains(f Field, s string) Filter { return Filter{field: f, op: OpContains, values: []any{s}} }

// Less keeps records whose field is below v.
func Less(f Field, v any) Filter { return Filter{field: f, op: OpLess, values: []any{v}} }

// LessOrEqual keeps records whose field is at most v.
func LessOrEqual(f Field, v any) Filter { return Filter{field: f, op: OpLessOrEqual, values: []any{v}} }

// Greater keeps records whose field is above v.
func Greater(f Field, v any) Filter { return Filter{field: f, op: OpGreater, values: []any{v}} }

// GreaterOrEqual keeps records whose field is at least v.
func GreaterOrEqual(f Field, v any) Filter {
	return Filter{field: f, op: OpGreaterOrEqual, values: []any{v}}
}

// Exists keeps records that have a value for the field.
func Exists(f Field) Filter { return Filter{field: f, op: OpExists} }

// Missing keeps records that have no value for the field (absent, null, or
// another JSON type).
func Missing(f Field) Filter { return Filter{field: f, op: OpMissing} }

// Any keeps records that at least one of fs keeps.
func Any(fs ...Filter) Filter { return Filter{op: OpAny, sub: fs} }

// Not keeps the records f does not keep (including those with no value for
// f's field).
func Not(f Filter) Filter { return Filter{op: OpNot, sub: []Filter{f}} }

// Field is the field a comparison reads (zero for Any and Not).
func (f Filter) Field() Field { return f.field }

// Op is the comparison.
func (f Filter) Op() Op { return f.op }

// Values are the comparison's operands as the database compares them
// (string for Text, float64 for Number, Unix milliseconds for Time) once
// Query.Check has accepted the filter; Contains's operand is lower-cased.
func (f Filter) Values() []any { return f.values }

// Sub are the filters of Any, or the one filter of Not.
func (f Filter) Sub() []Filter { return f.sub }

func (f Filter) String() string {
	switch f.op {
	case OpAny, OpNot:
		parts := make([]string, len(f.sub))
		for i, s := range f.sub {
			parts[i] = s.String()
		}
		name := map[Op]string{OpAny: "any", OpNot: "not"}[f.op]
		return name + "(" + strings.Join(parts, ", ") + ")"
	}
	name := map[Op]string{OpEq: "=", OpIn: "in", OpPrefix: "prefix", OpContains: "contains", OpLess: "<",
		OpLessOrEqual: "<=", OpGreater: ">", OpGreaterOrEqual: ">=", OpExists: "exists", OpMissing: "missing"}[f.op]
	return fmt.Sprintf("%s %s %v", f.field, name, f.values)
}

// normalize checks the filter and returns it with its operands in the form
// the database compares.
func (f Filter) normalize(depth int) (Filter, error) {
	if depth > 8 {
		return f, errors.New("filters nested more than 8 deep")
	}
	switch f.op {
	case OpAny, OpNot:
		if len(f.sub) == 0 {
			return f, errors.New("Any needs at least one filter")
		}
		out := Filter{op: f.op, sub: make([]Filter, len(f.sub))}
		for i, s := range f.sub {
			n, err := s.normalize(depth + 1)
			if err != nil {
				return f, err
			}
			out.sub[i] = n
		}
		return out, nil
	case OpExists, OpMissing:
		return f, f.field.check()
	case OpEq, OpIn, OpPrefix, OpContains, OpLess, OpLessOrEqual, OpGreater, OpGreaterOrEqual:
	default:
		return f, fmt.Errorf("filter with unknown comparison %d", f.op)
	}
	if err := f.field.check(); err != nil {
		return f, err
	}
	if len(f.values) == 0 {
		return f, fmt.Errorf("filter %s: no value to compare with", f.field)
	}
	if (f.op == OpPrefix || f.op == OpContains) && f.field.typ != Text {
		return f, fmt.Errorf("filter %s: prefix and contains compare text only", f.field)
	}
	out := Filter{field: f.field, op: f.op, values: make([]any, len(f.values))}
	for i, v := range f.values {
		n, err := dbValue(f.field, v)
		if err != nil {
			return f, fmt.Errorf("filter %s: %w", f.field, err)
		}
		if f.op == OpContains {
			n = strings.ToLower(n.(string))
		}
		out.values[i] = n
	}
	return out, nil
}

// dbValue converts a Go value to the form the database compares a field of
// its type with.
func dbValue(f Field, v any) (any, error) {
	switch f.typ {
	case Text:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case Number:
		switch n := v.(type) {
		case int:
			return float64(n), nil
		case int32:
			return float64(n), nil
		case int64:
			return float64(n), nil
		case float64:
			return n, nil
		}
	case Time:
		if t, ok := v.(time.Time); ok && !t.IsZero() {
			return t.UnixMilli(), nil
		}
	}
	return nil, fmt.Errorf("value %v (%T) is not a %s value", v, v, f.typ)
}

// Order is the order of a listing: by a field, descending unless Asc, ties
// broken by creation time and then id in the same direction. The zero Order
// is by creation time, most recent first. Records with no value for the
// field come last.
type Order struct {
	By  Field
	Asc bool
}

// Field is the field the order sorts on (CreatedField for the zero Order).
func (o Order) Field() Field {
	if o.By.IsZero() {
		return CreatedField
	}
	return o.By
}

// ErrInvalidQuery reports a Query a store cannot run: a malformed field
// path, a value of the wrong type, contradictory paging. Errors wrap it.
var ErrInvalidQuery = errors.New("invalid query")

// Check validates q and returns it with its filters' operands in the form
// the database compares (see Filter.Values). Stores call it; its errors wrap
// ErrInvalidQuery, or ErrInvalidCursor for a bad After.
func (q Query) Check() (Query, error) {
	where := make([]Filter, len(q.Where))
	for i, f := range q.Where {
		n, err := f.normalize(0)
		if err != nil {
			return q, fmt.Errorf("%w: %w", ErrInvalidQuery, err)
		}
		where[i] = n
	}
	q.Where = where
	if err := q.Order.Field().check(); err != nil {
		return q, fmt.Errorf("%w: order: %w", ErrInvalidQuery, err)
	}
	if (!q.Before.IsZero() || q.BeforeID != "") && (q.After != "" || q.Order.Field() != CreatedField || q.Order.Asc) {
		return q, fmt.Errorf("%w: Before pages only the default order and not together with After", ErrInvalidQuery)
	}
	if q.BeforeID != "" && q.Before.IsZero() {
		return q, fmt.Errorf("%w: BeforeID without Before", ErrInvalidQuery)
	}
	return q, nil
}

// Page is one page of a listing: its records and the cursor of the page
// after it, empty when there is none.
type Page struct {
	Records []Record
	Next    string
}
