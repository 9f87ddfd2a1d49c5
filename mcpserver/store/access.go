package store

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// AccessKind tells the two ways into a workspace apart.
type AccessKind string

const (
	// StaticToken is a kbn_ token minted by CreateToken.
	StaticToken AccessKind = "token"
	// OAuthGrant is what a person allowed an OAuth client on the
	// authorization server's consent page: the grant its access and
	// refresh tokens belong to.
	OAuthGrant AccessKind = "oauth"
)

// GrantIDPrefix starts the id of every OAuth grant (static tokens' ids start
// with "tok_"), so that RevokeToken knows which one an id names.
const GrantIDPrefix = "grt_"

// NewGrantID returns the id of a new OAuth grant.
func NewGrantID() string { return GrantIDPrefix + RandomHex(8) }

// Access describes one way into a workspace — a static token or an OAuth
// grant — never its value.
type Access struct {
	ID         string
	Kind       AccessKind
	Person     string
	PersonName string
	Workspace  string
	Scopes     []string
	// Client and ClientName are the OAuth client of a grant; empty for a
	// static token.
	Client     string
	ClientName string
	// Label is a static token's note.
	Label   string
	Created time.Time
	// LastUsed is when a request last presented it (or one of the grant's
	// tokens), to the minute; zero when never.
	LastUsed time.Time
	Expires  time.Time // zero: never
	Revoked  time.Time // zero: not revoked
}

// AccessQuery narrows ListAccess. Zero fields do not filter.
type AccessQuery struct {
	Person    string
	Workspace string
	// All includes revoked and expired accesses.
	All bool
}

// Membership is a person's role in one workspace.
type Membership struct {
	Workspace     string
	WorkspaceName string
	Organization  string
	Role          Role
}

// Grant is an OAuth grant: a client may act for a person in a workspace
// with scopes, on one resource (the MCP endpoint's URL), until it expires
// or is revoked.
type Grant struct {
	ID        string
	Client    string
	Person    string
	Workspace string
	Scopes    []string
	Resource  string
	Created   time.Time
	Expires   time.Time // zero: never
	Revoked   time.Time
}

// OAuthClient is a client the authorization server knows: registered
// through Dynamic Client Registration, or read from its Client ID Metadata
// Document (then ID is that document's URL and Expires when to read it
// again).
type OAuthClient struct {
	ID   string
	Name string
	// Kind is how it became known: "registered" or "metadata".
	Kind string
	// Metadata is the client's metadata (RFC 7591) as the server keeps it.
	Metadata json.RawMessage
	Created  time.Time
	Expires  time.Time
}

// OAuth token kinds, as OAuthToken.Kind.
const (
	OAuthCode    = "code"
	OAuthPKCE    = "pkce"
	OAuthAccess  = "access"
	OAuthRefresh = "refresh"
)

// OAuthToken is the authorization server's record of one code or token of
// a grant, keyed by the hash of its signature: the value itself is never
// stored.
type OAuthToken struct {
	Kind  string
	Hash  string
	Grant string
	// Data is the request the code or token was issued for, as the
	// authorization server serialises it (no token values in it).
	Data    json.RawMessage
	Expires time.Time
	// Used is when it was used up (a code exchanged, a refresh token
	// rotated, a token revoked); zero while it is active.
	Used time.Time
}

// SignInCode is a one-time code that signs a person in to the
// authorization server's consent page for one workspace. Only its hash is
// stored.
type SignInCode struct {
	Hash      string
	Person    string
	Workspace string
	Created   time.Time
	Expires   time.Time
}

// SignInCodePrefix starts every sign-in code.
const SignInCodePrefix = "kbs_"

// NewSignInCode returns a new sign-in code (its HashToken is what a store
// keeps).
func NewSignInCode() string { return SignInCodePrefix + RandomHex(16) }

// IsGrantID reports whether id names an OAuth grant.
func IsGrantID(id string) bool { return strings.HasPrefix(id, GrantIDPrefix) }

// AccessList lists and revokes every way into a workspace, and finds the
// people and memberships an authorization server signs in.
type AccessList interface {
	// ListAccess returns static tokens and OAuth grants, most recently
	// created first (ties by id). By default only live ones: neither
	// revoked nor expired by the store's clock.
	ListAccess(ctx context.Context, q AccessQuery) ([]Access, error)
	// RevokePersonAccess revokes every live static token and OAuth grant
	// of a person, in one workspace or (workspace "") in all, and returns
	// how many it revoked.
	RevokePersonAccess(ctx context.Context, person, workspace string) (int, error)
	// Memberships returns the workspaces a person is a member of, by
	// workspace id.
	Memberships(ctx context.Context, person string) ([]Membership, error)
	// PersonByEmail returns the person with an e-mail address (compared
	// case-insensitively); ErrNotFound when none has it, ErrConflict when
	// several do.
	PersonByEmail(ctx context.Context, email string) (Person, error)
}

// OAuth is what the embedded OAuth authorization server persists.
type OAuth interface {
	// CreateOAuthClient stores a new client; ErrConflict when its id is
	// taken.
	CreateOAuthClient(ctx context.Context, c OAuthClient) error
	// PutOAuthClient stores a client or replaces the one with its id (a
	// metadata document read again), keeping its creation time.
	PutOAuthClient(ctx context.Context, c OAuthClient) error
	// GetOAuthClient returns a client; ErrNotFound when unknown.
	GetOAuthClient(ctx context.Context, id string) (OAuthClient, error)
	// CountOAuthClients counts the clients of a kind created at or after
	// since (the registration limits).
	CountOAuthClients(ctx context.Context, kind string, since time.Time) (int, error)

	// CreateGrant stores a new grant (the person must be a member of the
	// workspace). Its scopes are normalised as a token's.
	CreateGrant(ctx context.Context, g Grant) error
	// GetGrant returns a grant, revoked or not; ErrNotFound when unknown.
	GetGrant(ctx context.Context, id string) (Grant, error)
	// ExtendGrant moves a live grant's expiry (a refresh); ErrNotFound when
	// it is unknown or revoked.
	ExtendGrant(ctx context.Context, id string, expires time.Time) error
	// AuthenticateGrant returns the principal of a live grant, with the
	// person's current role, and records its use. ErrNotFound for an
	// unknown, revoked or expired grant, or a person no longer a member.
	AuthenticateGrant(ctx context.Context, id string) (Principal, error)

	// PutOAuthToken stores a code or token; ErrConflict when its kind and
	// hash exist.
	PutOAuthToken(ctx context.Context, t OAuthToken) error
	// GetOAuthToken returns a code or token, used or not; ErrNotFound when
	// unknown.
	GetOAuthToken(ctx context.Context, kind, hash string) (OAuthToken, error)
	// UseOAuthToken marks an active code or token used, atomically: of two
	// callers racing, one gets nil and the other ErrNotFound, as does a
	// caller for a token already used or unknown.
	UseOAuthToken(ctx context.Context, kind, hash string) error
	// DeleteOAuthToken removes a code or token; ErrNotFound when unknown.
	DeleteOAuthToken(ctx context.Context, kind, hash string) error
	// UseGrantTokens marks every active token of a kind of a grant used.
	UseGrantTokens(ctx context.Context, grant, kind string) error

	// CreateSignInCode stores a sign-in code (the person must be a member
	// of the workspace).
	CreateSignInCode(ctx context.Context, c SignInCode) error
	// UseSignInCode spends a sign-in code, atomically, and returns it;
	// ErrNotFound for an unknown, used or expired one.
	UseSignInCode(ctx context.Context, hash string) (SignInCode, error)

	// PurgeOAuth deletes codes, tokens and sign-in codes that expired
	// before the given time, and returns how many.
	PurgeOAuth(ctx context.Context, expiredBefore time.Time) (int, error)
}
