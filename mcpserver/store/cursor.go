package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrInvalidCursor reports a Query.After that is not the Next of a page of
// the same listing: malformed, altered, or made for another workspace,
// kind, filter or order. Errors wrap it; products answer it as a bad
// argument.
var ErrInvalidCursor = errors.New("invalid cursor")

// Position is where a keyset page starts: after the record with this sort
// value, creation time and id, in listing order.
type Position struct {
	// Key is the record's value of the order's field (string for Text,
	// float64 for Number, Unix milliseconds for Time), nil when it had
	// none; unused when the order is by creation time.
	Key     any
	Created int64 // Unix milliseconds
	ID      string
}

// cursorVersion starts every cursor, so that a later format can tell old
// cursors apart.
const cursorVersion = "c1"

type cursorPayload struct {
	Fingerprint string `json:"f"`
	Key         any    `json:"k,omitempty"`
	NoKey       bool   `json:"n,omitempty"`
	Created     int64  `json:"t"`
	ID          string `json:"i"`
}

// fingerprint names the listing a cursor belongs to: everything of q but
// its paging (After, Limit). q must have passed Check.
func (q Query) fingerprint(workspace, kind string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q|%q|%q|%q|%q|%d|", workspace, kind, q.Parent, q.Status, q.Prefix, Millis(q.Since))
	for _, f := range q.Where {
		fmt.Fprintf(&b, "%q|", f.String())
	}
	fmt.Fprintf(&b, "%s|%v", q.Order.Field(), q.Order.Asc)
	sum := sha256.Sum256([]byte(b.String()))
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

// EncodeCursor returns the opaque cursor of the position p in the listing of
// a workspace's kind that q describes (q as returned by Check). Stores call
// it for Page.Next.
func EncodeCursor(workspace, kind string, q Query, p Position) string {
	payload := cursorPayload{Fingerprint: q.fingerprint(workspace, kind), Created: p.Created, ID: p.ID}
	if q.Order.Field() != CreatedField {
		payload.Key, payload.NoKey = p.Key, p.Key == nil
	}
	raw, _ := json.Marshal(payload)
	sum := sha256.Sum256(raw)
	return cursorVersion + "." + base64.RawURLEncoding.EncodeToString(raw) + "." + base64.RawURLEncoding.EncodeToString(sum[:6])
}

// DecodeCursor returns the position q.After names in the listing of a
// workspace's kind that q describes (q as returned by Check). Errors wrap
// ErrInvalidCursor and say what is wrong, never echoing more than the
// cursor's first characters.
func DecodeCursor(workspace, kind string, q Query) (Position, error) {
	bad := func(why string) (Position, error) {
		shown := q.After
		if len(shown) > 16 {
			shown = shown[:16] + "…"
		}
		return Position{}, fmt.Errorf("%w %q: %s (pass the next cursor of the previous page, unchanged, with the same filters and order)", ErrInvalidCursor, shown, why)
	}
	version, rest, ok := strings.Cut(q.After, ".")
	if !ok || version != cursorVersion {
		return bad("not a cursor of this store")
	}
	body, sumText, ok := strings.Cut(rest, ".")
	raw, err1 := base64.RawURLEncoding.DecodeString(body)
	sumGot, err2 := base64.RawURLEncoding.DecodeString(sumText)
	if !ok || err1 != nil || err2 != nil {
		return bad("malformed")
	}
	if sum := sha256.Sum256(raw); !bytes.Equal(sum[:6], sumGot) {
		return bad("altered or truncated")
	}
	var p cursorPayload
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil || p.ID == "" {
		return bad("malformed")
	}
	if p.Fingerprint != q.fingerprint(workspace, kind) {
		return bad("made for another listing (workspace, kind, filters or order differ)")
	}
	pos := Position{Created: p.Created, ID: p.ID}
	f := q.Order.Field()
	if f == CreatedField {
		return pos, nil
	}
	if p.NoKey {
		if p.Key != nil {
			return bad("malformed")
		}
		return pos, nil
	}
	switch k := p.Key.(type) {
	case string:
		if f.typ == Text {
			pos.Key = k
			return pos, nil
		}
	case json.Number:
		if f.typ == Number {
			if v, err := k.Float64(); err == nil {
				pos.Key = v
				return pos, nil
			}
		}
		if f.typ == Time {
			if v, err := k.Int64(); err == nil {
				pos.Key = v
				return pos, nil
			}
		}
	}
	return bad("its sort value does not fit the order's field")
}

// SortKey converts the sort value a database returned for a record to the
// form Position.Key holds for the field's type (nil for no value).
func SortKey(f Field, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch f.typ {
	case Text:
		switch s := v.(type) {
		case string:
			return s, nil
		case []byte:
			return string(s), nil
		}
	case Number:
		switch n := v.(type) {
		case int64:
			return float64(n), nil
		case float64:
			return n, nil
		}
	case Time:
		switch n := v.(type) {
		case int64:
			return n, nil
		case float64:
			return int64(n), nil
		}
	}
	return nil, fmt.Errorf("sort value %v (%T) of %s", v, v, f)
}
