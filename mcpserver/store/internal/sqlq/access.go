package sqlq

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
)

const (
	// The live filter of a listing: $3 is now; All lifts it ($4).
	accessListSQL = `SELECT id, kind, person_id, person_name, workspace_id, scopes, client_id, client_name, label, created_at, last_used_at, expires_at, revoked_at FROM (
		SELECT t.id AS id, 'token' AS kind, t.person_id AS person_id, p.name AS person_name, t.workspace_id AS workspace_id, t.scopes AS scopes,
			'' AS client_id, '' AS client_name, t.label AS label, t.created_at AS created_at, COALESCE(u.last_used_at, 0) AS last_used_at,
			t.expires_at AS expires_at, t.revoked_at AS revoked_at
		FROM tokens t JOIN people p ON p.id = t.person_id LEFT JOIN access_use u ON u.id = t.id
		UNION ALL
		SELECT g.id, 'oauth', g.person_id, p.name, g.workspace_id, g.scopes, g.client_id, COALESCE(c.name, ''), '', g.created_at,
			COALESCE(u.last_used_at, 0), g.expires_at, g.revoked_at
		FROM oauth_grants g JOIN people p ON p.id = g.person_id LEFT JOIN oauth_clients c ON c.id = g.client_id LEFT JOIN access_use u ON u.id = g.id
	) a
	WHERE (CAST($1 AS TEXT) = '' OR person_id = $1) AND (CAST($2 AS TEXT) = '' OR workspace_id = $2)
		AND ($4 = 1 OR (revoked_at = 0 AND (expires_at = 0 OR expires_at > $3)))
	ORDER BY created_at DESC, id DESC`
	touchAccessSQL = `INSERT INTO access_use (id, last_used_at) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET last_used_at = excluded.last_used_at`
	revokePersonTokensSQL = `UPDATE tokens SET revoked_at = $1 WHERE person_id = $2 AND (CAST($3 AS TEXT) = '' OR workspace_id = $3)
		AND revoked_at = 0 AND (expires_at = 0 OR expires_at > $1)`
	revokePersonGrantsSQL = `UPDATE oauth_grants SET revoked_at = $1 WHERE person_id = $2 AND (CAST($3 AS TEXT) = '' OR workspace_id = $3)
		AND revoked_at = 0 AND (expires_at = 0 OR expires_at > $1)`
	usePersonGrantTokensSQL = `UPDATE oauth_tokens SET used_at = $1 WHERE used_at = 0 AND grant_id IN (
		SELECT id FROM oauth_grants WHERE person_id = $2 AND (CAST($3 AS TEXT) = '' OR workspace_id = $3))`
	membershipsSQL = `SELECT m.workspace_id, w.name, w.organization_id, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
		WHERE m.person_id = $1 ORDER BY m.workspace_id`
	personByEmailSQL = `SELECT id, organization_id, name, email FROM people WHERE LOWER(email) = LOWER($1) ORDER BY id LIMIT 2`

	createOAuthClientSQL = `INSERT INTO oauth_clients (id, name, kind, metadata, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO NOTHING`
	putOAuthClientSQL = `INSERT INTO oauth_clients (id, name, kind, metadata, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, kind = excluded.kind, metadata = excluded.metadata, expires_at = excluded.expires_at`
	getOAuthClientSQL    = `SELECT name, kind, metadata, created_at, expires_at FROM oauth_clients WHERE id = $1`
	countOAuthClientsSQL = `SELECT COUNT(*) FROM oauth_clients WHERE kind = $1 AND created_at >= $2`

	createGrantSQL = `INSERT INTO oauth_grants (id, client_id, person_id, workspace_id, scopes, resource, created_at, expires_at, revoked_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0)`
	getGrantSQL    = `SELECT client_id, person_id, workspace_id, scopes, resource, created_at, expires_at, revoked_at FROM oauth_grants WHERE id = $1`
	extendGrantSQL = `UPDATE oauth_grants SET expires_at = $1 WHERE id = $2 AND revoked_at = 0`
	revokeGrantSQL = `UPDATE oauth_grants SET revoked_at = $1 WHERE id = $2 AND revoked_at = 0`
	grantAuthSQL   = `SELECT g.person_id, p.name, w.organization_id, g.workspace_id, m.role, g.scopes, g.expires_at, g.revoked_at
		FROM oauth_grants g
		JOIN people p ON p.id = g.person_id
		JOIN workspaces w ON w.id = g.workspace_id
		JOIN memberships m ON m.workspace_id = g.workspace_id AND m.person_id = g.person_id
		WHERE g.id = $1`

	putOAuthTokenSQL = `INSERT INTO oauth_tokens (kind, hash, grant_id, data, expires_at, used_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (kind, hash) DO NOTHING`
	getOAuthTokenSQL    = `SELECT grant_id, data, expires_at, used_at FROM oauth_tokens WHERE kind = $1 AND hash = $2`
	useOAuthTokenSQL    = `UPDATE oauth_tokens SET used_at = $1 WHERE kind = $2 AND hash = $3 AND used_at = 0`
	deleteOAuthTokenSQL = `DELETE FROM oauth_tokens WHERE kind = $1 AND hash = $2`
	useGrantTokensSQL   = `UPDATE oauth_tokens SET used_at = $1 WHERE grant_id = $2 AND kind = $3 AND used_at = 0`
	useAllGrantTokenSQL = `UPDATE oauth_tokens SET used_at = $1 WHERE grant_id = $2 AND used_at = 0`

	createSignInCodeSQL = `INSERT INTO signin_codes (hash, person_id, workspace_id, created_at, expires_at, used_at) VALUES ($1, $2, $3, $4, $5, 0)`
	useSignInCodeSQL    = `UPDATE signin_codes SET used_at = $1 WHERE hash = $2 AND used_at = 0 AND expires_at > $1
		RETURNING person_id, workspace_id, created_at, expires_at`

	purgeOAuthTokensSQL = `DELETE FROM oauth_tokens WHERE expires_at <> 0 AND expires_at < $1`
	purgeSignInCodesSQL = `DELETE FROM signin_codes WHERE expires_at < $1`
)

// useEvery is how often a store records that an access was used: its
// last-used time is kept to the minute, so that a busy token costs one write
// a minute, not one per request.
const useEvery = time.Minute

// uses remembers when this handle last recorded each access's use.
type uses struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// due reports whether the use of id at now is to be recorded, and notes it.
func (u *uses) due(id string, now time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.last == nil || len(u.last) > 10000 {
		u.last = map[string]time.Time{}
	}
	if t, ok := u.last[id]; ok && now.Sub(t) < useEvery && !now.Before(t) {
		return false
	}
	u.last[id] = now
	return true
}

// touch records that an access was used now, at most once a minute per
// handle. Recording is best effort: an authentication never fails because
// its use could not be written.
func (s *Store) touch(ctx context.Context, id string) {
	now := s.now()
	if !s.uses.due(id, now) {
		return
	}
	s.conn.Exec(ctx, Upsert, touchAccessSQL, id, store.Millis(now.Truncate(useEvery)))
}

// ListAccess implements store.AccessList.
func (s *Store) ListAccess(ctx context.Context, q store.AccessQuery) ([]store.Access, error) {
	all := 0
	if q.All {
		all = 1
	}
	var out []store.Access
	err := s.conn.Query(ctx, accessListSQL, []any{q.Person, q.Workspace, store.Millis(s.now()), all}, func(rows Rows) error {
		out = out[:0]
		for rows.Next() {
			var a store.Access
			var kind, scopes string
			var created, used, expires, revoked int64
			if err := rows.Scan(&a.ID, &kind, &a.Person, &a.PersonName, &a.Workspace, &scopes, &a.Client, &a.ClientName, &a.Label,
				&created, &used, &expires, &revoked); err != nil {
				return err
			}
			a.Kind = store.AccessKind(kind)
			a.Scopes = store.ParseScopes(scopes)
			a.Created, a.LastUsed, a.Expires, a.Revoked = store.FromMillis(created), store.FromMillis(used), store.FromMillis(expires), store.FromMillis(revoked)
			out = append(out, a)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.errorf("list access: %w", err)
	}
	return out, nil
}

// RevokePersonAccess implements store.AccessList: the grants first, then
// their codes and tokens, then the static tokens.
func (s *Store) RevokePersonAccess(ctx context.Context, person, workspace string) (int, error) {
	now := store.Millis(s.now())
	grants, err := s.conn.Exec(ctx, Write, revokePersonGrantsSQL, now, person, workspace)
	if err != nil {
		return 0, s.errorf("revoke access of %s: %w", person, err)
	}
	if _, err := s.conn.Exec(ctx, Upsert, usePersonGrantTokensSQL, now, person, workspace); err != nil {
		return 0, s.errorf("revoke access of %s: %w", person, err)
	}
	tokens, err := s.conn.Exec(ctx, Write, revokePersonTokensSQL, now, person, workspace)
	if err != nil {
		return 0, s.errorf("revoke access of %s: %w", person, err)
	}
	return int(grants + tokens), nil
}

// Memberships implements store.AccessList.
func (s *Store) Memberships(ctx context.Context, person string) ([]store.Membership, error) {
	var out []store.Membership
	err := s.conn.Query(ctx, membershipsSQL, []any{person}, func(rows Rows) error {
		out = out[:0]
		for rows.Next() {
			var m store.Membership
			if err := rows.Scan(&m.Workspace, &m.WorkspaceName, &m.Organization, &m.Role); err != nil {
				return err
			}
			out = append(out, m)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.errorf("memberships of %s: %w", person, err)
	}
	return out, nil
}

// PersonByEmail implements store.AccessList.
func (s *Store) PersonByEmail(ctx context.Context, email string) (store.Person, error) {
	var found []store.Person
	err := s.conn.Query(ctx, personByEmailSQL, []any{email}, func(rows Rows) error {
		found = found[:0]
		for rows.Next() {
			var p store.Person
			if err := rows.Scan(&p.ID, &p.Organization, &p.Name, &p.Email); err != nil {
				return err
			}
			found = append(found, p)
		}
		return rows.Err()
	})
	if err != nil {
		return store.Person{}, s.errorf("person by e-mail: %w", err)
	}
	switch len(found) {
	case 0:
		return store.Person{}, store.ErrNotFound
	case 1:
		return found[0], nil
	}
	return store.Person{}, s.errorf("people %s and %s share the e-mail address %q: %w", found[0].ID, found[1].ID, email, store.ErrConflict)
}

// ---- OAuth ----

// CreateOAuthClient implements store.OAuth.
func (s *Store) CreateOAuthClient(ctx context.Context, c store.OAuthClient) error {
	return s.putClient(ctx, Write, createOAuthClientSQL, c, true)
}

// PutOAuthClient implements store.OAuth.
func (s *Store) PutOAuthClient(ctx context.Context, c store.OAuthClient) error {
	return s.putClient(ctx, Upsert, putOAuthClientSQL, c, false)
}

func (s *Store) putClient(ctx context.Context, m Mode, sql string, c store.OAuthClient, create bool) error {
	if c.ID == "" || c.Kind == "" {
		return s.errorf("oauth client %q: id and kind are required", c.ID)
	}
	if c.Created.IsZero() {
		c.Created = s.now()
	}
	meta := string(c.Metadata)
	if meta == "" {
		meta = "{}"
	}
	n, err := s.conn.Exec(ctx, m, sql, c.ID, c.Name, c.Kind, meta, store.Millis(c.Created), store.Millis(c.Expires))
	if err != nil {
		return s.errorf("oauth client %s: %w", c.ID, err)
	}
	if create && n == 0 {
		return s.errorf("oauth client %s: %w", c.ID, store.ErrConflict)
	}
	return nil
}

// GetOAuthClient implements store.OAuth.
func (s *Store) GetOAuthClient(ctx context.Context, id string) (store.OAuthClient, error) {
	c := store.OAuthClient{ID: id}
	var meta string
	var created, expires int64
	if err := s.conn.QueryRow(ctx, Read, getOAuthClientSQL, []any{id}, &c.Name, &c.Kind, &meta, &created, &expires); err != nil {
		return store.OAuthClient{}, s.found(err, "oauth client "+id)
	}
	c.Metadata = []byte(meta)
	c.Created, c.Expires = store.FromMillis(created), store.FromMillis(expires)
	return c, nil
}

// CountOAuthClients implements store.OAuth.
func (s *Store) CountOAuthClients(ctx context.Context, kind string, since time.Time) (int, error) {
	var n int
	if err := s.conn.QueryRow(ctx, Read, countOAuthClientsSQL, []any{kind, store.Millis(since)}, &n); err != nil {
		return 0, s.errorf("count oauth clients: %w", err)
	}
	return n, nil
}

// CreateGrant implements store.OAuth.
func (s *Store) CreateGrant(ctx context.Context, g store.Grant) error {
	scopes, err := store.NormalizeScopes(g.Scopes)
	if err != nil {
		return s.errorf("create grant: %w", err)
	}
	if !store.IsGrantID(g.ID) {
		return s.errorf("create grant: id %q does not start with %s", g.ID, store.GrantIDPrefix)
	}
	var role string
	err = s.conn.QueryRow(ctx, Read, memberRoleSQL, []any{g.Workspace, g.Person}, &role)
	if errors.Is(err, store.ErrNotFound) {
		return s.errorf("create grant: person %q is not a member of workspace %q", g.Person, g.Workspace)
	}
	if err != nil {
		return s.errorf("create grant: %w", err)
	}
	if g.Created.IsZero() {
		g.Created = s.now()
	}
	return s.exec(ctx, Write, "create grant "+g.ID, createGrantSQL, g.ID, g.Client, g.Person, g.Workspace, scopes, g.Resource,
		store.Millis(g.Created), store.Millis(g.Expires))
}

// GetGrant implements store.OAuth.
func (s *Store) GetGrant(ctx context.Context, id string) (store.Grant, error) {
	g := store.Grant{ID: id}
	var scopes string
	var created, expires, revoked int64
	if err := s.conn.QueryRow(ctx, Read, getGrantSQL, []any{id}, &g.Client, &g.Person, &g.Workspace, &scopes, &g.Resource, &created, &expires, &revoked); err != nil {
		return store.Grant{}, s.found(err, "grant "+id)
	}
	g.Scopes = store.ParseScopes(scopes)
	g.Created, g.Expires, g.Revoked = store.FromMillis(created), store.FromMillis(expires), store.FromMillis(revoked)
	return g, nil
}

// ExtendGrant implements store.OAuth.
func (s *Store) ExtendGrant(ctx context.Context, id string, expires time.Time) error {
	return s.affect(ctx, "extend grant "+id, extendGrantSQL, store.Millis(expires), id)
}

// AuthenticateGrant implements store.OAuth.
func (s *Store) AuthenticateGrant(ctx context.Context, id string) (store.Principal, error) {
	p := store.Principal{TokenID: id}
	var scopes string
	var expires, revoked int64
	err := s.conn.QueryRow(ctx, Read, grantAuthSQL, []any{id}, &p.Person, &p.PersonName, &p.Organization, &p.Workspace, &p.Role, &scopes, &expires, &revoked)
	if err != nil {
		return store.Principal{}, s.found(err, "authenticate grant")
	}
	if revoked != 0 || (expires != 0 && s.now().UnixMilli() >= expires) {
		return store.Principal{}, store.ErrNotFound
	}
	p.Scopes = store.ParseScopes(scopes)
	p.Expires = store.FromMillis(expires)
	s.touch(ctx, id)
	return p, nil
}

// revokeGrant revokes a live grant and uses up its codes and tokens.
func (s *Store) revokeGrant(ctx context.Context, id string) error {
	now := store.Millis(s.now())
	if err := s.affect(ctx, "revoke grant "+id, revokeGrantSQL, now, id); err != nil {
		return err
	}
	return s.exec(ctx, Upsert, "revoke grant "+id, useAllGrantTokenSQL, now, id)
}

// PutOAuthToken implements store.OAuth.
func (s *Store) PutOAuthToken(ctx context.Context, t store.OAuthToken) error {
	if t.Kind == "" || t.Hash == "" {
		return s.errorf("oauth token: kind and hash are required")
	}
	n, err := s.conn.Exec(ctx, Write, putOAuthTokenSQL, t.Kind, t.Hash, t.Grant, string(t.Data), store.Millis(t.Expires), store.Millis(t.Used))
	if err != nil {
		return s.errorf("put oauth %s: %w", t.Kind, err)
	}
	if n == 0 {
		return s.errorf("put oauth %s: %w", t.Kind, store.ErrConflict)
	}
	return nil
}

// GetOAuthToken implements store.OAuth.
func (s *Store) GetOAuthToken(ctx context.Context, kind, hash string) (store.OAuthToken, error) {
	t := store.OAuthToken{Kind: kind, Hash: hash}
	var data string
	var expires, used int64
	if err := s.conn.QueryRow(ctx, Read, getOAuthTokenSQL, []any{kind, hash}, &t.Grant, &data, &expires, &used); err != nil {
		return store.OAuthToken{}, s.found(err, "oauth "+kind)
	}
	t.Data = []byte(data)
	t.Expires, t.Used = store.FromMillis(expires), store.FromMillis(used)
	return t, nil
}

// UseOAuthToken implements store.OAuth.
func (s *Store) UseOAuthToken(ctx context.Context, kind, hash string) error {
	return s.affect(ctx, "use oauth "+kind, useOAuthTokenSQL, store.Millis(s.now()), kind, hash)
}

// DeleteOAuthToken implements store.OAuth.
func (s *Store) DeleteOAuthToken(ctx context.Context, kind, hash string) error {
	return s.affect(ctx, "delete oauth "+kind, deleteOAuthTokenSQL, kind, hash)
}

// UseGrantTokens implements store.OAuth.
func (s *Store) UseGrantTokens(ctx context.Context, grant, kind string) error {
	return s.exec(ctx, Upsert, "use oauth "+kind+"s of "+grant, useGrantTokensSQL, store.Millis(s.now()), grant, kind)
}

// CreateSignInCode implements store.OAuth.
func (s *Store) CreateSignInCode(ctx context.Context, c store.SignInCode) error {
	var role string
	err := s.conn.QueryRow(ctx, Read, memberRoleSQL, []any{c.Workspace, c.Person}, &role)
	if errors.Is(err, store.ErrNotFound) {
		return s.errorf("sign-in code: person %q is not a member of workspace %q", c.Person, c.Workspace)
	}
	if err != nil {
		return s.errorf("sign-in code: %w", err)
	}
	if c.Hash == "" || c.Expires.IsZero() {
		return s.errorf("sign-in code: hash and expiry are required")
	}
	if c.Created.IsZero() {
		c.Created = s.now()
	}
	return s.exec(ctx, Write, "sign-in code", createSignInCodeSQL, c.Hash, c.Person, c.Workspace, store.Millis(c.Created), store.Millis(c.Expires))
}

// UseSignInCode implements store.OAuth: one UPDATE … RETURNING, so two
// handles racing spend a code once.
func (s *Store) UseSignInCode(ctx context.Context, hash string) (store.SignInCode, error) {
	c := store.SignInCode{Hash: hash}
	var created, expires int64
	if err := s.conn.QueryRow(ctx, Write, useSignInCodeSQL, []any{store.Millis(s.now()), hash}, &c.Person, &c.Workspace, &created, &expires); err != nil {
		return store.SignInCode{}, s.found(err, "sign-in code")
	}
	c.Created, c.Expires = store.FromMillis(created), store.FromMillis(expires)
	return c, nil
}

// PurgeOAuth implements store.OAuth.
func (s *Store) PurgeOAuth(ctx context.Context, expiredBefore time.Time) (int, error) {
	t, err := s.conn.Exec(ctx, Upsert, purgeOAuthTokensSQL, store.Millis(expiredBefore))
	if err != nil {
		return 0, s.errorf("purge oauth tokens: %w", err)
	}
	c, err := s.conn.Exec(ctx, Upsert, purgeSignInCodesSQL, store.Millis(expiredBefore))
	if err != nil {
		return 0, s.errorf("purge sign-in codes: %w", err)
	}
	return int(t + c), nil
}

// revokeAny is RevokeToken: a grant by its prefix, a static token
// otherwise.
func (s *Store) revokeAny(ctx context.Context, id string) error {
	if strings.HasPrefix(id, store.GrantIDPrefix) {
		return s.revokeGrant(ctx, id)
	}
	return s.affect(ctx, "revoke token "+id, revokeTokenSQL, store.Millis(s.now()), id)
}
