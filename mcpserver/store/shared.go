package store

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// TokenPrefix starts every token minted by CreateToken, so that leaked
// tokens are easy to recognise by secret scanners.
const TokenPrefix = "kbn_"

// HashToken is the stored form of a token.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// RandomHex returns n random bytes, hex-encoded.
func RandomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// NewTokenValue returns a new access token and the id under which it is
// stored (the id is not secret; only HashToken(token) is stored with it).
func NewTokenValue() (token, id string) {
	return TokenPrefix + RandomHex(32), "tok_" + RandomHex(8)
}

// NewKey returns a new signing key of a purpose with a random 32-byte
// secret, created at now.
func NewKey(purpose string, now time.Time) Key {
	secret := make([]byte, 32)
	rand.Read(secret)
	return Key{ID: "key_" + RandomHex(6), Purpose: purpose, Secret: secret, Created: now}
}

// SecretsKeyPurpose is the purpose of the signing key a store keeps as its
// secret key when Options.SecretKey is nil.
const SecretsKeyPurpose = "secrets"

// NormalizeScopes checks a token's requested scopes and returns their stored
// form: "read" or "read,write" (a token reads, and may also write: write
// implies read).
func NormalizeScopes(scopes []string) (string, error) {
	if len(scopes) == 0 {
		return "", fmt.Errorf("no scopes")
	}
	write := false
	for _, sc := range scopes {
		if sc != "read" && sc != "write" {
			return "", fmt.Errorf("unknown scope %q (want read or write)", sc)
		}
		write = write || sc == "write"
	}
	if write {
		return "read,write", nil
	}
	return "read", nil
}

// ParseScopes returns the scopes of a stored form made by NormalizeScopes.
func ParseScopes(stored string) []string {
	return strings.Split(stored, ",")
}

// Millis is how a store keeps a time: Unix milliseconds, 0 for the zero time.
func Millis(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// FromMillis is the inverse of Millis, in UTC.
func FromMillis(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// Listing limits: a Query without Limit gets DefaultLimit records, and none
// gets more than MaxLimit.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// EffectiveLimit is the number of records a listing with q returns at most.
func (q Query) EffectiveLimit() int {
	switch {
	case q.Limit <= 0:
		return DefaultLimit
	case q.Limit > MaxLimit:
		return MaxLimit
	}
	return q.Limit
}

// Prepared returns the record as a store writes it: validated, and created
// now when Created is zero (a replace keeps the stored creation time).
func (r Record) Prepared(now func() time.Time) (Record, error) {
	if err := r.Validate(); err != nil {
		return r, err
	}
	if r.Created.IsZero() {
		r.Created = now()
	}
	return r, nil
}

// Validate reports a record that cannot be stored: workspace, kind and id
// are required.
func (r Record) Validate() error {
	if r.Workspace == "" || r.Kind == "" || r.ID == "" {
		return fmt.Errorf("record %s %q in workspace %q: workspace, kind and id are required", r.Kind, r.ID, r.Workspace)
	}
	return nil
}

// ResolveSecretKey returns the secret key a store seals with: opts.SecretKey
// when set (it must be SecretKeySize bytes), else the key the store keeps
// itself, the signing key of SecretsKeyPurpose (created on first use, shared
// by every handle on the database).
func ResolveSecretKey(opts Options, kept func() (Key, error)) (*Sealer, error) {
	if opts.SecretKey != nil {
		return NewSealer(opts.SecretKey)
	}
	k, err := kept()
	if err != nil {
		return nil, err
	}
	return NewSealer(k.Secret)
}
