package confirm

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// Canonical returns the canonical JSON of a tool call's arguments: object
// keys sorted, no insignificant whitespace, numbers in their shortest form
// (1.0 and 1e0 are both 1), and absent, null or empty arguments all "{}".
// Two argument documents that mean the same thing have the same canonical
// form. Duplicate object keys are an error (their meaning is ambiguous).
func Canonical(args []byte) ([]byte, error) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return []byte("{}"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	var buf bytes.Buffer
	if err := canon(dec, &buf); err != nil {
		return nil, err
	}
	if rest := bytes.TrimSpace(trimmed[dec.InputOffset():]); len(rest) > 0 {
		return nil, fmt.Errorf("canonical: trailing data after the arguments")
	}
	return buf.Bytes(), nil
}

// Digest is the base64url SHA-256 of the canonical arguments.
func Digest(args []byte) (string, error) {
	c, err := Canonical(args)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

func canon(dec *json.Decoder, buf *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("canonical: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			type member struct {
				key string
				val []byte
			}
			var members []member
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return fmt.Errorf("canonical: %w", err)
				}
				k := kt.(string)
				if seen[k] {
					return fmt.Errorf("canonical: duplicate key %q", k)
				}
				seen[k] = true
				var vb bytes.Buffer
				if err := canon(dec, &vb); err != nil {
					return err
				}
				members = append(members, member{k, vb.Bytes()})
			}
			if _, err := dec.Token(); err != nil {
				return fmt.Errorf("canonical: %w", err)
			}
			sort.Slice(members, func(i, j int) bool { return members[i].key < members[j].key })
			buf.WriteByte('{')
			for i, m := range members {
				if i > 0 {
					buf.WriteByte(',')
				}
				writeString(buf, m.key)
				buf.WriteByte(':')
				buf.Write(m.val)
			}
			buf.WriteByte('}')
		case '[':
			buf.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					buf.WriteByte(',')
				}
				if err := canon(dec, buf); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return fmt.Errorf("canonical: %w", err)
			}
			buf.WriteByte(']')
		}
	case string:
		writeString(buf, t)
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil || math.IsInf(f, 0) {
			return fmt.Errorf("canonical: number %s out of range", t)
		}
		if f == 0 {
			f = 0 // -0 → 0
		}
		buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	case bool:
		buf.WriteString(strconv.FormatBool(t))
	case nil:
		buf.WriteString("null")
	}
	return nil
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a Go string always marshals
	buf.Write(b)
}
