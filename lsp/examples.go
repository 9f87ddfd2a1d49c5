package lsp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kobana/workflow/internal/sidecar"
)

// Example responses let completion offer the paths of a step's response body
// and hover show what a reference would read. For a document W.json they
// come from a sidecar file next to it:
//
//	W.responses.json   {"0": {"status": 201, "headers": {…}, "body": {…}}, …}
//	                   or an array of such responses, one per step (null for none)
//	W.run.json         a run record as `kobana run -record` writes it
//	                   ({"steps": [{"index": 0, "response": {…}}, …]})

// exampleResponse is an example of one step's response, as package plan
// reads it too (internal/sidecar).
type exampleResponse = sidecar.Response

// examples are the example responses of one document, by step index.
type examples struct {
	file  string
	steps map[int]*exampleResponse
}

// sidecarNames returns the files that may hold example responses for the
// document at path, in the order they are tried.
func sidecarNames(path string) []string {
	base, ok := strings.CutSuffix(path, ".json")
	if !ok || strings.HasSuffix(base, ".responses") || strings.HasSuffix(base, ".run") {
		return nil
	}
	return []string{base + ".responses.json", base + ".run.json"}
}

// fileCache keeps files read for documents (example responses, secret names)
// and reads them again when they change on disk.
type fileCache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	mod  time.Time
	size int64
	val  any
	err  error
}

// load returns parse(the content of path), cached while the file's
// modification time and size stay the same. A missing file is (nil,
// false, false, nil); changed reports whether this call read the file
// afresh; err is the reading's or parse's error.
func (c *fileCache) load(path string, parse func([]byte) (any, error)) (val any, found, changed bool, err error) {
	fi, statErr := os.Stat(path)
	if statErr != nil || fi.IsDir() {
		return nil, false, false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[path]; ok && e.mod.Equal(fi.ModTime()) && e.size == fi.Size() {
		return e.val, true, false, e.err
	}
	data, err := os.ReadFile(path)
	var v any
	if err == nil {
		v, err = parse(data)
	}
	if c.entries == nil {
		c.entries = map[string]*cacheEntry{}
	}
	c.entries[path] = &cacheEntry{mod: fi.ModTime(), size: fi.Size(), val: v, err: err}
	return v, true, true, err
}

// jsonAt follows path through the JSON value raw: object members by name
// (the last of duplicates, as JavaScript reads them), array elements by
// plain decimal index. It returns nil when the path does not exist.
func jsonAt(raw json.RawMessage, path []string) json.RawMessage {
	cur := raw
	for _, seg := range path {
		cur = bytes.TrimSpace(cur)
		if len(cur) == 0 {
			return nil
		}
		switch cur[0] {
		case '{':
			var m map[string]json.RawMessage
			if json.Unmarshal(cur, &m) != nil {
				return nil
			}
			next, ok := m[seg]
			if !ok {
				return nil
			}
			cur = next
		case '[':
			var a []json.RawMessage
			if json.Unmarshal(cur, &a) != nil {
				return nil
			}
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(a) || strconv.Itoa(i) != seg {
				return nil
			}
			cur = a[i]
		default:
			return nil
		}
	}
	return cur
}

// jsonChild is a member or element of a JSON value, for completion.
type jsonChild struct {
	name  string
	value json.RawMessage
}

// jsonChildren lists the members (sorted by name) or elements of raw; nil
// for a scalar.
func jsonChildren(raw json.RawMessage) []jsonChild {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	var out []jsonChild
	switch raw[0] {
	case '{':
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return nil
		}
		for k, v := range m {
			out = append(out, jsonChild{k, v})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	case '[':
		var a []json.RawMessage
		if json.Unmarshal(raw, &a) != nil {
			return nil
		}
		for i, v := range a {
			out = append(out, jsonChild{strconv.Itoa(i), v})
		}
	}
	return out
}

// describeJSON names the type of a JSON value with a short preview.
func describeJSON(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '{':
		return fmt.Sprintf("object (%d keys)", len(jsonChildren(raw)))
	case '[':
		return fmt.Sprintf("array (%d elements)", len(jsonChildren(raw)))
	case '"':
		return "string " + clip(string(raw), 60)
	case 'n':
		return "null: a step reading it fails"
	case 't', 'f':
		return "boolean " + string(raw)
	}
	return "number " + clip(string(raw), 40)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
