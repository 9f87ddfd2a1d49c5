package resolve

import (
	"cmp"
	"slices"
	"strings"
	"sync"
)

// longestFirst orders values so that a secret containing another is
// replaced whole; equal lengths go in byte order.
func longestFirst(a, b string) int {
	if c := cmp.Compare(len(b), len(a)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// Redactor replaces secret values with "[redacted secrets.KEY]" — and the
// bytes of attachments a run sent with their description — in anything that
// is persisted or logged. It is safe for concurrent use.
type Redactor struct {
	mu       sync.Mutex
	keys     map[string]string // value → its replacement
	values   []string          // the keys of keys, longest first
	replacer *strings.Replacer
}

// NewRedactor returns a Redactor that already knows every secret of src when
// src can list them (SecretLister).
func NewRedactor(src Secrets) *Redactor {
	r := &Redactor{}
	if l, ok := src.(SecretLister); ok {
		for k, v := range l.AllSecrets() {
			r.Add(k, v)
		}
	}
	return r
}

// Placeholder returns the redacted form of the secret key.
func Placeholder(key string) string { return "[redacted secrets." + key + "]" }

// Add makes value redacted as the secret key from now on. Empty values are
// ignored.
func (r *Redactor) Add(key, value string) {
	r.set(value, Placeholder(key))
}

// MinReplaced is the shortest content Replace accepts: shorter text (a
// three-byte attachment) is too likely to occur by chance to be removed
// from everything recorded.
const MinReplaced = 16

// Replace makes value replaced by replacement from now on, for content that
// must not be persisted but is not a secret, such as the bytes of an
// attachment the run sent, should a receiver echo them. Values shorter than
// MinReplaced are ignored.
func (r *Redactor) Replace(value, replacement string) {
	if len(value) < MinReplaced {
		return
	}
	r.set(value, replacement)
}

func (r *Redactor) set(value, replacement string) {
	if value == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keys == nil {
		r.keys = map[string]string{}
	}
	if old, ok := r.keys[value]; ok && old <= replacement {
		return
	}
	if _, ok := r.keys[value]; !ok {
		r.values = append(r.values, value)
		slices.SortFunc(r.values, longestFirst)
	}
	r.keys[value] = replacement
	r.replacer = nil
}

// String returns s with every known secret value redacted.
func (r *Redactor) String(s string) string {
	if r == nil || s == "" || !r.Contains(s) {
		return s
	}
	rep := r.get()
	if rep == nil {
		return s
	}
	return rep.Replace(s)
}

func (r *Redactor) get() *strings.Replacer {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.keys) == 0 {
		return nil
	}
	if r.replacer == nil {
		// Longer values first, so a secret that contains another is
		// redacted whole.
		pairs := make([]string, 0, 2*len(r.values))
		for _, v := range r.values {
			pairs = append(pairs, v, r.keys[v])
		}
		r.replacer = strings.NewReplacer(pairs...)
	}
	return r.replacer
}

// Contains reports whether s holds any known secret value.
func (r *Redactor) Contains(s string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.values {
		if strings.Contains(s, v) {
			return true
		}
	}
	return false
}
