package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/valyala/fastjson"
)

// Tool schemas are inferred from Go types, then made portable and
// truthful:
//
//   - Every node has one "type". A slice is an "array" (a nil slice is sent
//     as []), a map an "object" (nil is sent as {}), and an optional
//     (omitempty) pointer the type it points to. Only a value that can
//     really be null becomes {"anyOf": [{…}, {"type": "null"}]}. Clients
//     that map tool schemas onto single-type dialects (OpenAPI 3.0, Gemini
//     function declarations) refuse type arrays; MCP Inspector's --strict
//     mode reports them.
//   - A node that constrains nothing (json.RawMessage, any) says so
//     explicitly: an anyOf of the six JSON types.
//   - Struct tags add the constraints Go types cannot express, on inputs
//     and outputs alike (the names follow JSON Schema and huma):
//     enum:"a,b,c" (strings, or integers on integer fields),
//     pattern:"^inv_[a-z0-9]+$", minLength:"15", maxLength:"255",
//     minimum:"1", maximum:"100", minItems:"1", maxItems:"20",
//     format:"date". On a slice or map field, enum, pattern, lengths and
//     format apply to its elements; minItems and maxItems to the slice.

// schemaOptions describes types whose Go shape is not their JSON shape: a
// json.RawMessage is any JSON value, not an array of bytes.
var schemaOptions = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage](): {Description: "any JSON value"},
}}

// schemaFor infers the schema of T, applies its struct tags and makes it
// portable.
func schemaFor[T any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](schemaOptions)
	if err != nil {
		return nil, err
	}
	if err := applyTags(reflect.TypeFor[T](), s, ""); err != nil {
		return nil, err
	}
	portable(s, false)
	return s, nil
}

// constraintTags are the struct tags applyTags reads.
var constraintTags = []string{"enum", "pattern", "minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems", "format"}

// applyTags walks t beside its inferred schema s and adds the constraints
// its fields' tags declare. path names the field for errors.
func applyTags(t reflect.Type, s *jsonschema.Schema, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // []byte and json.RawMessage are not arrays here
		}
		return applyTags(t.Elem(), s.Items, path+"[]")
	case reflect.Map:
		return applyTags(t.Elem(), s.AdditionalProperties, path+"{}")
	case reflect.Struct:
	default:
		return nil
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			// Embedded (exported or not, as encoding/json): its fields
			// are the parent's properties.
			if err := applyTags(f.Type, s, path); err != nil {
				return err
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		prop := s.Properties[name]
		if prop == nil {
			continue
		}
		where := strings.TrimPrefix(path+"."+name, ".")
		if err := applyFieldTags(f, prop, where); err != nil {
			return err
		}
		if err := applyTags(f.Type, prop, where); err != nil {
			return err
		}
	}
	return nil
}

// applyFieldTags sets the constraints one field's tags declare on its
// schema.
func applyFieldTags(f reflect.StructField, s *jsonschema.Schema, where string) error {
	ft := f.Type
	for ft.Kind() == reflect.Pointer {
		ft = ft.Elem()
	}
	// Element constraints go to the items of a slice (values of a map).
	elem, elemType := s, ft
	switch {
	case (ft.Kind() == reflect.Slice || ft.Kind() == reflect.Array) && ft.Elem().Kind() != reflect.Uint8:
		elem, elemType = s.Items, ft.Elem()
	case ft.Kind() == reflect.Map:
		elem, elemType = s.AdditionalProperties, ft.Elem()
	}
	for elemType.Kind() == reflect.Pointer {
		elemType = elemType.Elem()
	}
	for _, tag := range constraintTags {
		v, ok := f.Tag.Lookup(tag)
		if !ok {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("field %s: tag %s:%q: %s", where, tag, v, fmt.Sprintf(format, args...))
		}
		switch tag {
		case "enum":
			vals, err := enumValues(v, elemType)
			if err != nil {
				return bad("%v", err)
			}
			elem.Enum = vals
		case "pattern":
			if _, err := regexp.Compile(v); err != nil {
				return bad("not a regular expression: %v", err)
			}
			elem.Pattern = v
		case "format":
			elem.Format = v
		case "minLength", "maxLength":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return bad("want a length (0 or more)")
			}
			if tag == "minLength" {
				elem.MinLength = &n
			} else {
				elem.MaxLength = &n
			}
		case "minItems", "maxItems":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return bad("want a count (0 or more)")
			}
			if tag == "minItems" {
				s.MinItems = &n
			} else {
				s.MaxItems = &n
			}
		case "minimum", "maximum":
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return bad("want a number")
			}
			if tag == "minimum" {
				elem.Minimum = &x
			} else {
				elem.Maximum = &x
			}
		}
	}
	return nil
}

// enumValues parses an enum tag for values of type t.
func enumValues(tag string, t reflect.Type) ([]any, error) {
	var out []any
	for _, v := range strings.Split(tag, ",") {
		switch t.Kind() {
		case reflect.String:
			out = append(out, v)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not an integer", v)
			}
			out = append(out, n)
		default:
			return nil, fmt.Errorf("enum needs string or integer values, not %s", t)
		}
	}
	return out, nil
}

// portable rewrites s (and its children) so that every node has a single
// type and none is an unconstrained {}. optional says that s is a property
// its object does not require (so absent, never null, when empty).
func portable(s *jsonschema.Schema, optional bool) {
	if s == nil {
		return
	}
	for name, p := range s.Properties {
		portable(p, !slices.Contains(s.Required, name))
	}
	portable(s.Items, false)
	portable(s.AdditionalProperties, false)
	for _, list := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf, s.AllOf, s.PrefixItems} {
		for _, x := range list {
			portable(x, false)
		}
	}
	for _, x := range s.Defs {
		portable(x, false)
	}
	if len(s.Types) > 0 {
		var nonNull []string
		for _, t := range s.Types {
			if t != "null" {
				nonNull = append(nonNull, t)
			}
		}
		nullable := len(nonNull) < len(s.Types)
		switch {
		case len(nonNull) == 1 && (!nullable || optional || nonNull[0] == "array"):
			// An optional pointer is omitted when nil; a nil slice is sent
			// as [] (see fillNulls).
			s.Types, s.Type = nil, nonNull[0]
		default:
			branches := make([]*jsonschema.Schema, 0, len(s.Types))
			for _, t := range nonNull {
				b := s.CloneSchemas()
				b.Types, b.Type, b.Description, b.Title = nil, t, "", ""
				branches = append(branches, b)
			}
			if nullable {
				branches = append(branches, &jsonschema.Schema{Type: "null"})
			}
			*s = jsonschema.Schema{Title: s.Title, Description: s.Description, AnyOf: branches}
		}
	}
	if !constrains(s) {
		s.AnyOf = anyJSON()
	}
}

// constrains reports whether s has a keyword that restricts its instances.
func constrains(s *jsonschema.Schema) bool {
	return s.Type != "" || len(s.Types) > 0 || s.Enum != nil || s.Const != nil || s.Ref != "" ||
		len(s.AnyOf) > 0 || len(s.OneOf) > 0 || len(s.AllOf) > 0 || s.Not != nil ||
		s.Properties != nil || s.Items != nil || s.AdditionalProperties != nil || s.PrefixItems != nil ||
		s.Pattern != "" || s.Format != "" || s.Required != nil
}

// constrained reports whether s or a schema in it has a keyword that a Go
// type's encoding does not guarantee by itself: the constraint tags.
func constrained(s *jsonschema.Schema) bool {
	if s == nil {
		return false
	}
	if s.Enum != nil || s.Const != nil || s.Pattern != "" || s.Format != "" || s.MinLength != nil || s.MaxLength != nil ||
		s.Minimum != nil || s.Maximum != nil || s.ExclusiveMinimum != nil || s.ExclusiveMaximum != nil || s.MultipleOf != nil ||
		s.MinItems != nil || s.MaxItems != nil || s.UniqueItems || s.MinProperties != nil || s.MaxProperties != nil {
		return true
	}
	for _, p := range s.Properties {
		if constrained(p) {
			return true
		}
	}
	for _, list := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf, s.AllOf, s.PrefixItems} {
		for _, x := range list {
			if constrained(x) {
				return true
			}
		}
	}
	return constrained(s.Items) || constrained(s.AdditionalProperties)
}

// anyJSON is an explicit "any JSON value".
func anyJSON() []*jsonschema.Schema {
	var out []*jsonschema.Schema
	for _, t := range []string{"object", "array", "string", "number", "boolean", "null"} {
		out = append(out, &jsonschema.Schema{Type: t})
	}
	return out
}

// fillNulls rewrites the JSON text b so that each null the schema does not
// allow, where it expects an array or an object (a nil slice or map), is an
// empty one. The text is parsed with fastjson (few allocations), filled in
// place and written again; numbers keep their text, strings are escaped as
// encoding/json escapes them.
func fillNulls(s *jsonschema.Schema, b []byte) ([]byte, error) {
	p := jsonParsers.Get()
	defer jsonParsers.Put(p)
	v, err := p.ParseBytes(b)
	if err != nil {
		return nil, err
	}
	a := jsonArenas.Get()
	defer jsonArenas.Put(a)
	if e := empty(s, v); e != "" {
		v = e.new(a)
	} else if err := fill(s, v, a); err != nil {
		return nil, err
	}
	return appendJSON(make([]byte, 0, len(b)+64), v), nil
}

var (
	jsonParsers fastjson.ParserPool
	jsonArenas  fastjson.ArenaPool
)

// errRepeatedKey: an object repeats a key whose null would be filled in (a
// text encoding/json never writes).
var errRepeatedKey = errors.New("an object repeats a key")

// fill fills in the nulls of s in v, in place. (A parse shares one null
// value: a null is replaced in its parent.)
func fill(s *jsonschema.Schema, v *fastjson.Value, a *fastjson.Arena) error {
	if s == nil {
		return nil
	}
	switch v.Type() {
	case fastjson.TypeObject:
		s = branchFor(s, "object")
		o, _ := v.Object()
		var (
			replace []string
			err     error
		)
		o.Visit(func(key []byte, x *fastjson.Value) {
			ps := s.Properties[string(key)]
			if ps == nil {
				ps = s.AdditionalProperties
			}
			if empty(ps, x) != "" {
				replace = append(replace, string(key))
			} else if e := fill(ps, x, a); e != nil {
				err = e
			}
		})
		if err != nil {
			return err
		}
		for _, key := range replace {
			n := 0
			o.Visit(func(k []byte, _ *fastjson.Value) {
				if string(k) == key {
					n++
				}
			})
			if n > 1 {
				return fmt.Errorf("%w: %q", errRepeatedKey, key)
			}
			ps := s.Properties[key]
			if ps == nil {
				ps = s.AdditionalProperties
			}
			o.Set(key, empty(ps, o.Get(key)).new(a))
		}
	case fastjson.TypeArray:
		s = branchFor(s, "array")
		items, _ := v.Array()
		for i, x := range items {
			if e := empty(s.Items, x); e != "" {
				v.SetArrayItem(i, e.new(a))
			} else if err := fill(s.Items, x, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// emptyKind is what a null becomes: an array or an object.
type emptyKind string

func (k emptyKind) new(a *fastjson.Arena) *fastjson.Value {
	if k == "array" {
		return a.NewArray()
	}
	return a.NewObject()
}

// empty says what the null x becomes under s; "" when x stays as it is.
func empty(s *jsonschema.Schema, x *fastjson.Value) emptyKind {
	if s == nil || x.Type() != fastjson.TypeNull || (s.Type != "array" && s.Type != "object") {
		return ""
	}
	return emptyKind(s.Type)
}

// appendJSON writes v. (fastjson's own writer quotes strings the way Go
// source does, which is not always JSON: a control character becomes \x01.)
func appendJSON(dst []byte, v *fastjson.Value) []byte {
	switch v.Type() {
	case fastjson.TypeObject:
		o, _ := v.Object()
		dst = append(dst, '{')
		first := true
		o.Visit(func(key []byte, x *fastjson.Value) {
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = appendString(dst, key)
			dst = append(dst, ':')
			dst = appendJSON(dst, x)
		})
		return append(dst, '}')
	case fastjson.TypeArray:
		items, _ := v.Array()
		dst = append(dst, '[')
		for i, x := range items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendJSON(dst, x)
		}
		return append(dst, ']')
	case fastjson.TypeString:
		return appendString(dst, v.GetStringBytes())
	}
	return v.MarshalTo(dst) // numbers (as written), true, false, null
}

// appendString writes s as a JSON string, as encoding/json would.
func appendString(dst, s []byte) []byte {
	plain := utf8.Valid(s)
	for i, c := range s {
		if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' ||
			c == 0xe2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xa8 || s[i+2] == 0xa9) { // U+2028, U+2029
			plain = false
			break
		}
	}
	if plain {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	q, _ := json.Marshal(string(s)) // a string always encodes
	return append(dst, q...)
}

// branchFor returns the anyOf branch of s of the given type, or s.
func branchFor(s *jsonschema.Schema, typ string) *jsonschema.Schema {
	if s.Type != "" {
		return s
	}
	for _, b := range s.AnyOf {
		if b.Type == typ && (b.Properties != nil || b.Items != nil || b.AdditionalProperties != nil) {
			return b
		}
	}
	return s
}
