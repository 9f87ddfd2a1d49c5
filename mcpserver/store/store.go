package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrNotFound reports that a record, token or key does not exist in the
// caller's workspace (or at all: callers must not be able to tell).
var ErrNotFound = errors.New("store: not found")

// ErrReplayed reports that a nonce was already consumed in the ledger.
var ErrReplayed = errors.New("store: nonce already consumed")

// ErrConflict reports that a record with the same unique key already exists.
var ErrConflict = errors.New("store: conflict")

// Options configures a store's Open (store/sqlite, store/pg).
type Options struct {
	// SecretKey, SecretKeySize bytes, seals secret values (AES-256-GCM, see
	// Sealer). When nil the store generates one on first use and keeps it in
	// the database (the signing key of SecretsKeyPurpose), which protects a
	// secrets export but not a copy of the whole database: production
	// deployments pass a key from outside. Every handle on one database
	// must be given the same key (or none).
	SecretKey []byte
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Store is everything the MCP server and the Inbox pipeline persist.
type Store interface {
	Transactor
	Records
	Blobs
	Identity
	AccessList
	OAuth
	Secrets
	Keys
	Ledger
	Counters
	Passkeys
	Close() error
}

// Record is one product document, scoped to a workspace. Kind names the
// document type ("inbox", "email", …), Parent an optional owning record (the
// inbox of an e-mail, the agent of a run), Status an optional state used for
// filtering. Data holds the product's JSON.
type Record struct {
	Workspace string
	Kind      string
	ID        string
	Parent    string
	Status    string
	Created   time.Time
	Data      json.RawMessage
}

// Query narrows and orders a listing. Zero fields do not filter; the zero
// Query lists a kind's records most recent first.
type Query struct {
	Parent string
	Status string
	// Prefix keeps records whose id starts with it (bytewise).
	Prefix string
	// Since keeps records created at or after it.
	Since time.Time
	// Where keeps the records every filter keeps (see Filter): comparisons
	// on fields of the records' JSON Data or on their columns, run by the
	// database over every record of the kind.
	Where []Filter
	// Order is the listing's order (see Order); by default most recent
	// first.
	Order Order
	// After continues a listing: the Next of the page before, made by
	// ListPage for the same workspace, kind, filters and order (Limit may
	// differ). Any other string is an error wrapping ErrInvalidCursor.
	After string
	// Before keeps records created strictly before it; with BeforeID, the
	// records that come after (Before, BeforeID) in listing order, i.e.
	// created before Before, or at Before with an id below BeforeID
	// (keyset pagination that never skips records sharing a timestamp).
	// Only with the default order and without After; prefer After.
	Before   time.Time
	BeforeID string
	// Limit caps the number of records (default DefaultLimit, at most
	// MaxLimit).
	Limit int
}

// Records stores product documents.
type Records interface {
	GetRecord(ctx context.Context, workspace, kind, id string) (Record, error)
	// ListRecords returns the first q.Limit records of the listing q
	// describes (by default the most recent first).
	ListRecords(ctx context.Context, workspace, kind string, q Query) ([]Record, error)
	// ListPage returns one page of the listing q describes and the cursor
	// of the next (Page.Next, empty after the last page). Pages are keyset
	// pages: records created, changed or deleted between two calls neither
	// shift nor repeat the records of later pages, and records sharing a
	// sort value are never skipped.
	ListPage(ctx context.Context, workspace, kind string, q Query) (Page, error)
	// CountByStatus counts the records q's filters keep (its paging, order
	// and limit do not count), by status: what a listing's status facets
	// show beside each status.
	CountByStatus(ctx context.Context, workspace, kind string, q Query) (map[string]int, error)
	// PutRecord inserts the record or replaces the one with the same
	// workspace, kind and id (keeping its creation time when Created is zero).
	PutRecord(ctx context.Context, r Record) error
	// CreateRecord inserts the record only if none has the same workspace,
	// kind and id; ErrConflict otherwise. It is one atomic statement, so
	// replicas racing to create the same record get one winner.
	CreateRecord(ctx context.Context, r Record) error
	// DeleteRecord removes a record; ErrNotFound when there was none.
	DeleteRecord(ctx context.Context, workspace, kind, id string) error
}

// Blobs stores raw bytes (an e-mail's .eml) by workspace and id.
type Blobs interface {
	PutBlob(ctx context.Context, workspace, id string, content []byte) error
	GetBlob(ctx context.Context, workspace, id string) ([]byte, error)
	DeleteBlob(ctx context.Context, workspace, id string) error
}

// Role is a person's role in a workspace (e.g. "owner", "operator", "viewer").
type Role string

// Principal is who a token speaks for.
type Principal struct {
	TokenID      string
	Person       string
	PersonName   string
	Organization string
	Workspace    string
	Role         Role
	Scopes       []string
	Expires      time.Time // zero: never
}

// Organization is a customer account.
type Organization struct {
	ID   string
	Name string
}

// Person belongs to one organization.
type Person struct {
	ID           string
	Organization string
	Name         string
	Email        string
}

// Workspace belongs to one organization.
type Workspace struct {
	ID           string
	Organization string
	Name         string
	Slug         string
}

// NewToken describes a token to mint.
type NewToken struct {
	Person    string
	Workspace string
	Scopes    []string
	Expires   time.Time // zero: never
	Label     string
}

// Identity resolves tokens to principals and manages the people behind them.
type Identity interface {
	PutOrganization(ctx context.Context, o Organization) error
	PutPerson(ctx context.Context, p Person) error
	PutWorkspace(ctx context.Context, w Workspace) error
	GetWorkspace(ctx context.Context, id string) (Workspace, error)
	GetPerson(ctx context.Context, id string) (Person, error)
	// SetMembership gives a person a role in a workspace of its organization.
	SetMembership(ctx context.Context, workspace, person string, role Role) error
	// CreateToken stores the SHA-256 of a new random token and returns the
	// token itself, which is never stored and cannot be read back.
	CreateToken(ctx context.Context, t NewToken) (token string, err error)
	// Authenticate returns the principal of a token, with the person's current
	// role in the workspace. ErrNotFound for an unknown, revoked or expired
	// token, or a person who is no longer a member.
	Authenticate(ctx context.Context, token string) (Principal, error)
	// RevokeToken revokes a static token (id "tok_…") or an OAuth grant
	// (id "grt_…", with every code and token issued for it); ErrNotFound
	// when the id names nothing live.
	RevokeToken(ctx context.Context, tokenID string) error
}

// SecretInfo describes a secret without its value.
type SecretInfo struct {
	Name    string
	Updated time.Time
}

// Secrets stores workspace secrets encrypted at rest.
type Secrets interface {
	SetSecret(ctx context.Context, workspace, name, value string) error
	ListSecrets(ctx context.Context, workspace string) ([]SecretInfo, error)
	DeleteSecret(ctx context.Context, workspace, name string) error
	// RevealSecrets returns every secret of a workspace by name, for the
	// executor only: never return these values to a client or a log.
	RevealSecrets(ctx context.Context, workspace string) (map[string]string, error)
}

// Key is one HMAC signing key. Purpose separates key families
// ("confirm", "download").
type Key struct {
	ID      string
	Purpose string
	Secret  []byte
	Created time.Time
	// Retired, when set, is when the key stopped signing; it still verifies.
	Retired time.Time
}

// Keys stores signing keys. The newest unretired key of a purpose signs; every
// key of the purpose verifies until it is deleted.
type Keys interface {
	// SigningKey returns the active key for a purpose, creating one if none.
	SigningKey(ctx context.Context, purpose string) (Key, error)
	// VerifyingKey returns a key by id within a purpose.
	VerifyingKey(ctx context.Context, purpose, id string) (Key, error)
	// RotateKey creates a new active key and retires the previous one.
	RotateKey(ctx context.Context, purpose string) (Key, error)
	// PruneKeys deletes keys of a purpose retired before the given time.
	PruneKeys(ctx context.Context, purpose string, retiredBefore time.Time) error
}

// Ledger records single-use nonces.
type Ledger interface {
	// Consume records the nonce atomically. ErrReplayed when it was already
	// recorded; any other error means the ledger could not be written.
	Consume(ctx context.Context, nonce string, expires time.Time) error
	// ConsumedNonce reports whether a nonce was recorded (for audits and tests).
	ConsumedNonce(ctx context.Context, nonce string) (bool, error)
}

// Counters hands out numbers (invoice numbers, NF-e numbers) that are unique
// across every handle on the same database, as replicas are.
type Counters interface {
	// NextNumber returns the next number of a workspace's named counter:
	// start the first time (or whenever start is above the last number
	// handed out), one more than the last number otherwise. Concurrent
	// callers never get the same number.
	NextNumber(ctx context.Context, workspace, name string, start int64) (int64, error)
}

// CheckMembership reports why a person may not be given a role in a
// workspace: either does not exist (wrapping ErrNotFound), or they belong to
// different organizations.
func CheckMembership(ctx context.Context, id interface {
	GetWorkspace(ctx context.Context, id string) (Workspace, error)
	GetPerson(ctx context.Context, id string) (Person, error)
}, workspace, person string) error {
	w, err := id.GetWorkspace(ctx, workspace)
	if err != nil {
		return fmt.Errorf("membership: workspace %s: %w", workspace, err)
	}
	p, err := id.GetPerson(ctx, person)
	if err != nil {
		return fmt.Errorf("membership: person %s: %w", person, err)
	}
	if w.Organization != p.Organization {
		return fmt.Errorf("membership: person %s is not in organization %s", person, w.Organization)
	}
	return nil
}
