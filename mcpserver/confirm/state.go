package confirm

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// TTL is how long a confirmation question stays answerable.
const TTL = 5 * time.Minute

// Claims is what a requestState asserts. Every field must match the retried
// call for the confirmation to count.
type Claims struct {
	Tool         string `json:"tool"`
	ArgsDigest   string `json:"args"`
	Person       string `json:"person"`
	Organization string `json:"org"`
	Workspace    string `json:"ws"`
	Nonce        string `json:"nonce"`
	// Expires is in Unix milliseconds.
	Expires int64 `json:"exp"`
}

// ExpiresAt returns Expires as a time.
func (c Claims) ExpiresAt() time.Time { return time.UnixMilli(c.Expires) }

// Matches reports whether the claims are about the same tool, arguments and
// caller as want (nonce and expiry are not compared).
func (c Claims) Matches(want Claims) bool {
	return hmac.Equal([]byte(c.Tool), []byte(want.Tool)) &&
		hmac.Equal([]byte(c.ArgsDigest), []byte(want.ArgsDigest)) &&
		c.Person == want.Person && c.Organization == want.Organization && c.Workspace == want.Workspace
}

// NewNonce returns 128 random bits, base64url.
func NewNonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Errors returned by Open. Callers treat all of them as "does not match".
var (
	ErrMalformed  = errors.New("confirm: malformed request state")
	ErrUnknownKey = errors.New("confirm: request state signed with an unknown key")
	ErrBadMAC     = errors.New("confirm: request state signature mismatch")
	ErrExpired    = errors.New("confirm: request state expired")
)

// version prefixes every token so that the format can change later.
const version = "ks1"

// maxStateLen bounds what Open will even look at.
const maxStateLen = 2048

// Seal signs claims with the key (keyID, secret) and returns the opaque
// requestState: "ks1.<keyID>.<payload>.<mac>", payload and mac base64url.
func Seal(keyID string, secret []byte, c Claims) (string, error) {
	if keyID == "" || strings.ContainsAny(keyID, ".") {
		return "", fmt.Errorf("confirm: invalid key id %q", keyID)
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("confirm: %w", err)
	}
	head := version + "." + keyID + "." + base64.RawURLEncoding.EncodeToString(payload)
	return head + "." + base64.RawURLEncoding.EncodeToString(mac(secret, head)), nil
}

func mac(secret []byte, head string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(head))
	return m.Sum(nil)
}

// KeyID returns the key id a state claims to be signed with, for looking the
// key up before Open. It does not authenticate anything.
func KeyID(state string) (string, error) {
	parts, err := split(state)
	if err != nil {
		return "", err
	}
	return parts[1], nil
}

func split(state string) ([]string, error) {
	if len(state) > maxStateLen {
		return nil, ErrMalformed
	}
	parts := strings.Split(state, ".")
	if len(parts) != 4 || parts[0] != version || parts[1] == "" {
		return nil, ErrMalformed
	}
	return parts, nil
}

// Open verifies a state against the key it names (secret is that key's
// secret) and the clock, and returns its claims.
func Open(state string, secret []byte, now time.Time) (Claims, error) {
	parts, err := split(state)
	if err != nil {
		return Claims{}, err
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil {
		return Claims{}, ErrMalformed
	}
	head := parts[0] + "." + parts[1] + "." + parts[2]
	if !hmac.Equal(sig, mac(secret, head)) {
		return Claims{}, ErrBadMAC
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return Claims{}, ErrMalformed
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return Claims{}, ErrMalformed
	}
	if c.Nonce == "" || c.Tool == "" || c.Expires == 0 {
		return Claims{}, ErrMalformed
	}
	if now.UnixMilli() >= c.Expires {
		return Claims{}, ErrExpired
	}
	return c, nil
}
