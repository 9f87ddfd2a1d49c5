package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
)

// Member is a person's role in a workspace, as a workspace's list of
// members shows it.
type Member struct {
	Workspace string
	Person    string
	Role      Role
}

// Directory lists the organizations, workspaces and people of a store and
// their memberships, for an operator's tools (kobana admin); both stores
// implement it. The MCP products never list across workspaces.
type Directory interface {
	ListOrganizations(ctx context.Context) ([]Organization, error)
	// ListWorkspaces and ListPeople list an organization's, or every
	// organization's with org "".
	ListWorkspaces(ctx context.Context, org string) ([]Workspace, error)
	ListPeople(ctx context.Context, org string) ([]Person, error)
	// ListMemberships lists a workspace's members, or every membership
	// with workspace "".
	ListMemberships(ctx context.Context, workspace string) ([]Member, error)
	// RemoveMembership takes a person's role in a workspace away: the
	// person's tokens for it stop authenticating. ErrNotFound when the
	// person had none.
	RemoveMembership(ctx context.Context, workspace, person string) error
}

// ErrNoSecretKey reports a store whose sealed secrets the secret key given
// to it (or, without one, the key it keeps itself) does not open: the
// store was sealed with another key (a restore without its
// KOBANA_SECRET_KEY, a wrong one). It wraps ErrUnsealable.
var ErrNoSecretKey = errors.New("the secret key does not open this store's sealed secrets")

// SecretKeys checks and changes the key a store seals secrets with; both
// stores implement it.
type SecretKeys interface {
	// CheckSecretKey opens one sealed secret of the store (any
	// workspace's), and reports ErrNoSecretKey when it cannot; nil when it
	// can, or when the store holds none.
	CheckSecretKey(ctx context.Context) error
	// ResealSecrets opens every sealed secret with the store's key and
	// seals it again with key (SecretKeySize bytes), in one transaction,
	// and returns how many it resealed. Every handle on the database must
	// then be opened with key: the handle it ran on keeps the old one.
	ResealSecrets(ctx context.Context, key []byte) (int, error)
}

// KeyFingerprint names a secret key without revealing it: the first 8
// bytes of an HMAC-SHA-256 under the key, in hex. Two keys with the same
// fingerprint are the same key (to a negligible chance); the fingerprint
// tells nothing of the key.
func KeyFingerprint(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("kobana secret key fingerprint"))
	return hex.EncodeToString(m.Sum(nil)[:8])
}
