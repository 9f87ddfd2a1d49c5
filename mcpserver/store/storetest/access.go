package storetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/store"
)

// testAccessList: static tokens and OAuth grants in one list (never a
// value), last use to the minute, revocation by id of either kind, and of
// everything a person holds.
func testAccessList(t *testing.T, e *env) {
	clk := &clock{t: base}
	s := e.fresh(t, store.Options{Now: clk.Now})
	ctx := context.Background()
	SeedIdentity(t, s)
	must(t, s.PutWorkspace(ctx, store.Workspace{ID: "w2", Organization: "o1", Name: "Sandbox"}))
	must(t, s.SetMembership(ctx, "w2", "p1", "owner"))
	tok, err := s.CreateToken(ctx, store.NewToken{Person: "p1", Workspace: "w1", Scopes: []string{"read"}, Label: "laptop", Expires: base.Add(48 * time.Hour)})
	must(t, err)
	p, err := s.Authenticate(ctx, tok)
	must(t, err)
	clk.Add(time.Second)
	must(t, s.CreateOAuthClient(ctx, store.OAuthClient{ID: "cli_1", Name: "Claude", Kind: "registered", Metadata: []byte(`{"client_name":"Claude"}`)}))
	must(t, s.CreateGrant(ctx, store.Grant{ID: "grt_1", Client: "cli_1", Person: "p1", Workspace: "w1", Scopes: []string{"read", "write"},
		Resource: "https://mcp.example/mcp", Expires: base.Add(30 * 24 * time.Hour)}))
	clk.Add(time.Second)
	must(t, s.CreateGrant(ctx, store.Grant{ID: "grt_2", Client: "cli_gone", Person: "p1", Workspace: "w2", Scopes: []string{"read"}}))

	list, err := s.ListAccess(ctx, store.AccessQuery{})
	must(t, err)
	var ids []string
	for _, a := range list {
		ids = append(ids, a.ID)
	}
	if want := []string{"grt_2", "grt_1", p.TokenID}; !slices.Equal(ids, want) {
		t.Fatalf("ListAccess ids = %v, want %v (most recent first)", ids, want)
	}
	g := list[1]
	if g.Kind != store.OAuthGrant || g.Person != "p1" || g.PersonName != "Ana" || g.Workspace != "w1" || g.Client != "cli_1" || g.ClientName != "Claude" ||
		!slices.Equal(g.Scopes, []string{"read", "write"}) || !g.Created.Equal(base.Add(time.Second)) || !g.Expires.Equal(base.Add(30*24*time.Hour)) {
		t.Errorf("grant = %+v", g)
	}
	if list[0].ClientName != "" {
		t.Errorf("a grant whose client is unknown names %q", list[0].ClientName)
	}
	st := list[2]
	if st.Kind != store.StaticToken || st.Label != "laptop" || !st.Created.Equal(base) || !st.Expires.Equal(base.Add(48*time.Hour)) ||
		!st.LastUsed.Equal(base.Truncate(time.Minute)) {
		t.Errorf("token = %+v (last used should be the minute of the Authenticate above)", st)
	}
	// Filters.
	if l, _ := s.ListAccess(ctx, store.AccessQuery{Workspace: "w2"}); len(l) != 1 || l[0].ID != "grt_2" {
		t.Errorf("workspace filter = %+v", l)
	}
	if l, _ := s.ListAccess(ctx, store.AccessQuery{Person: "p2"}); len(l) != 0 {
		t.Errorf("person filter = %+v", l)
	}
	// A grant's use is recorded when it authenticates.
	clk.Add(5 * time.Minute)
	gp, err := s.AuthenticateGrant(ctx, "grt_1")
	must(t, err)
	if gp.TokenID != "grt_1" || gp.Person != "p1" || gp.Organization != "o1" || gp.Workspace != "w1" || gp.Role != "operator" || !slices.Equal(gp.Scopes, []string{"read", "write"}) {
		t.Errorf("grant principal = %+v", gp)
	}
	if l, _ := s.ListAccess(ctx, store.AccessQuery{Workspace: "w1"}); len(l) != 2 || !l[0].LastUsed.Equal(clk.Now().Truncate(time.Minute)) {
		t.Errorf("grant after use = %+v", l)
	}
	// Revocation by id, of either kind.
	must(t, s.RevokeToken(ctx, "grt_1"))
	if _, err := s.AuthenticateGrant(ctx, "grt_1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoked grant authenticates: %v", err)
	}
	if err := s.RevokeToken(ctx, "grt_1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoke a grant twice: %v", err)
	}
	if err := s.RevokeToken(ctx, "grt_nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoke an unknown grant: %v", err)
	}
	if l, _ := s.ListAccess(ctx, store.AccessQuery{}); len(l) != 2 {
		t.Errorf("live list after revoking = %+v", l)
	}
	all, _ := s.ListAccess(ctx, store.AccessQuery{All: true})
	if len(all) != 3 || all[1].Revoked.IsZero() {
		t.Errorf("full list = %+v", all)
	}
	// Revoking a person's access revokes both kinds, in one workspace or
	// all.
	n, err := s.RevokePersonAccess(ctx, "p1", "w1")
	must(t, err)
	if n != 1 {
		t.Errorf("RevokePersonAccess(p1, w1) = %d, want 1 (the token; the grant was revoked already)", n)
	}
	if _, err := s.Authenticate(ctx, tok); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("token after revoking the person: %v", err)
	}
	if _, err := s.AuthenticateGrant(ctx, "grt_2"); err != nil {
		t.Errorf("the grant in another workspace: %v", err)
	}
	if n, _ := s.RevokePersonAccess(ctx, "p1", ""); n != 1 {
		t.Errorf("RevokePersonAccess(p1, all) = %d, want 1", n)
	}
	if l, _ := s.ListAccess(ctx, store.AccessQuery{}); len(l) != 0 {
		t.Errorf("live list after revoking everything = %+v", l)
	}
	// Memberships and e-mail lookups.
	ms, err := s.Memberships(ctx, "p1")
	must(t, err)
	if len(ms) != 2 || ms[0] != (store.Membership{Workspace: "w1", WorkspaceName: "Finance", Organization: "o1", Role: "operator"}) || ms[1].Role != "owner" {
		t.Errorf("memberships = %+v", ms)
	}
	if p, err := s.PersonByEmail(ctx, "ANA@example.com"); err != nil || p.ID != "p1" {
		t.Errorf("person by e-mail = %+v %v", p, err)
	}
	if _, err := s.PersonByEmail(ctx, "nobody@example.com"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown e-mail: %v", err)
	}
	must(t, s.PutPerson(ctx, store.Person{ID: "p3", Organization: "o1", Name: "Ana Two", Email: "ana@example.com"}))
	if _, err := s.PersonByEmail(ctx, "ana@example.com"); !errors.Is(err, store.ErrConflict) {
		t.Errorf("shared e-mail: %v", err)
	}
}

// testOAuth: clients, grants, single-use codes and tokens, sign-in codes
// and the purge, following the store's clock.
func testOAuth(t *testing.T, e *env) {
	clk := &clock{t: base}
	s := e.fresh(t, store.Options{Now: clk.Now})
	ctx := context.Background()
	SeedIdentity(t, s)

	c := store.OAuthClient{ID: "cli_a", Name: "Inspector", Kind: "registered", Metadata: []byte(`{"redirect_uris":["http://127.0.0.1/cb"]}`)}
	must(t, s.CreateOAuthClient(ctx, c))
	if err := s.CreateOAuthClient(ctx, c); !errors.Is(err, store.ErrConflict) {
		t.Errorf("client twice: %v", err)
	}
	got, err := s.GetOAuthClient(ctx, "cli_a")
	must(t, err)
	if got.Name != "Inspector" || got.Kind != "registered" || string(got.Metadata) != string(c.Metadata) || !got.Created.Equal(base) {
		t.Errorf("client = %+v", got)
	}
	clk.Add(time.Minute)
	must(t, s.PutOAuthClient(ctx, store.OAuthClient{ID: "https://app.example/client.json", Name: "App", Kind: "metadata", Expires: clk.Now().Add(time.Hour)}))
	must(t, s.PutOAuthClient(ctx, store.OAuthClient{ID: "https://app.example/client.json", Name: "App 2", Kind: "metadata", Expires: clk.Now().Add(2 * time.Hour)}))
	if got, _ := s.GetOAuthClient(ctx, "https://app.example/client.json"); got.Name != "App 2" || !got.Created.Equal(base.Add(time.Minute)) || !got.Expires.Equal(base.Add(time.Minute+2*time.Hour)) {
		t.Errorf("replaced client = %+v (keeps its creation time)", got)
	}
	if _, err := s.GetOAuthClient(ctx, "cli_nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown client: %v", err)
	}
	if n, _ := s.CountOAuthClients(ctx, "registered", base); n != 1 {
		t.Errorf("registered since base = %d", n)
	}
	if n, _ := s.CountOAuthClients(ctx, "registered", base.Add(time.Second)); n != 0 {
		t.Errorf("registered since later = %d", n)
	}

	// Grants.
	for name, g := range map[string]store.Grant{
		"non-member":    {ID: "grt_x", Client: "cli_a", Person: "p2", Workspace: "w1", Scopes: []string{"read"}},
		"unknown scope": {ID: "grt_x", Client: "cli_a", Person: "p1", Workspace: "w1", Scopes: []string{"admin"}},
		"bad id":        {ID: "tok_x", Client: "cli_a", Person: "p1", Workspace: "w1", Scopes: []string{"read"}},
	} {
		if err := s.CreateGrant(ctx, g); err == nil {
			t.Errorf("grant for %s", name)
		}
	}
	must(t, s.CreateGrant(ctx, store.Grant{ID: "grt_a", Client: "cli_a", Person: "p1", Workspace: "w1", Scopes: []string{"write"}, Resource: "https://mcp.example/mcp", Expires: clk.Now().Add(time.Hour)}))
	g, err := s.GetGrant(ctx, "grt_a")
	must(t, err)
	if g.Client != "cli_a" || !slices.Equal(g.Scopes, []string{"read", "write"}) || g.Resource != "https://mcp.example/mcp" || !g.Revoked.IsZero() {
		t.Errorf("grant = %+v", g)
	}
	must(t, s.ExtendGrant(ctx, "grt_a", clk.Now().Add(3*time.Hour)))
	clk.Add(2 * time.Hour)
	if _, err := s.AuthenticateGrant(ctx, "grt_a"); err != nil {
		t.Errorf("extended grant: %v", err)
	}
	clk.Add(time.Hour)
	if _, err := s.AuthenticateGrant(ctx, "grt_a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("expired grant: %v", err)
	}
	must(t, s.ExtendGrant(ctx, "grt_a", clk.Now().Add(time.Hour)))
	must(t, s.SetMembership(ctx, "w1", "p1", "viewer"))
	if p, _ := s.AuthenticateGrant(ctx, "grt_a"); p.Role != "viewer" {
		t.Errorf("grant's role after the person's changed = %q", p.Role)
	}

	// Tokens: single use, one winner among racers.
	tk := store.OAuthToken{Kind: store.OAuthRefresh, Hash: "h1", Grant: "grt_a", Data: []byte(`{"scopes":["read"]}`), Expires: clk.Now().Add(time.Hour)}
	must(t, s.PutOAuthToken(ctx, tk))
	if err := s.PutOAuthToken(ctx, tk); !errors.Is(err, store.ErrConflict) {
		t.Errorf("token twice: %v", err)
	}
	must(t, s.PutOAuthToken(ctx, store.OAuthToken{Kind: store.OAuthAccess, Hash: "h1", Grant: "grt_a", Data: []byte(`{}`), Expires: clk.Now().Add(time.Minute)}))
	if got, err := s.GetOAuthToken(ctx, store.OAuthRefresh, "h1"); err != nil || got.Grant != "grt_a" || string(got.Data) != string(tk.Data) || !got.Used.IsZero() {
		t.Errorf("token = %+v %v", got, err)
	}
	var wins, losses int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.UseOAuthToken(ctx, store.OAuthRefresh, "h1")
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				wins++
			} else if errors.Is(err, store.ErrNotFound) {
				losses++
			} else {
				t.Errorf("use: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 || losses != 3 {
		t.Errorf("four racers used a token: %d won, %d lost", wins, losses)
	}
	if got, _ := s.GetOAuthToken(ctx, store.OAuthRefresh, "h1"); !got.Used.Equal(clk.Now()) {
		t.Errorf("used token = %+v", got)
	}
	if got, _ := s.GetOAuthToken(ctx, store.OAuthAccess, "h1"); !got.Used.IsZero() {
		t.Errorf("the access token of the same hash was used too: %+v", got)
	}
	must(t, s.PutOAuthToken(ctx, store.OAuthToken{Kind: store.OAuthAccess, Hash: "h2", Grant: "grt_a", Data: []byte(`{}`), Expires: clk.Now().Add(time.Minute)}))
	must(t, s.UseGrantTokens(ctx, "grt_a", store.OAuthAccess))
	for _, h := range []string{"h1", "h2"} {
		if err := s.UseOAuthToken(ctx, store.OAuthAccess, h); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("access %s after UseGrantTokens: %v", h, err)
		}
	}
	must(t, s.DeleteOAuthToken(ctx, store.OAuthAccess, "h2"))
	if err := s.DeleteOAuthToken(ctx, store.OAuthAccess, "h2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete twice: %v", err)
	}
	// Revoking the grant uses up its tokens.
	must(t, s.PutOAuthToken(ctx, store.OAuthToken{Kind: store.OAuthCode, Hash: "h3", Grant: "grt_a", Data: []byte(`{}`), Expires: clk.Now().Add(time.Minute)}))
	must(t, s.RevokeToken(ctx, "grt_a"))
	if err := s.UseOAuthToken(ctx, store.OAuthCode, "h3"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("code of a revoked grant: %v", err)
	}
	if err := s.ExtendGrant(ctx, "grt_a", clk.Now().Add(time.Hour)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("extend a revoked grant: %v", err)
	}

	// Sign-in codes: members only, once, until they expire.
	if err := s.CreateSignInCode(ctx, store.SignInCode{Hash: "s0", Person: "p2", Workspace: "w1", Expires: clk.Now().Add(time.Minute)}); err == nil {
		t.Error("sign-in code for a non-member")
	}
	must(t, s.CreateSignInCode(ctx, store.SignInCode{Hash: "s1", Person: "p1", Workspace: "w1", Expires: clk.Now().Add(10 * time.Minute)}))
	must(t, s.CreateSignInCode(ctx, store.SignInCode{Hash: "s2", Person: "p1", Workspace: "w1", Expires: clk.Now().Add(10 * time.Minute)}))
	sc, err := s.UseSignInCode(ctx, "s1")
	must(t, err)
	if sc.Person != "p1" || sc.Workspace != "w1" || !sc.Expires.Equal(clk.Now().Add(10*time.Minute)) {
		t.Errorf("sign-in code = %+v", sc)
	}
	if _, err := s.UseSignInCode(ctx, "s1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("sign-in code twice: %v", err)
	}
	clk.Add(10 * time.Minute)
	if _, err := s.UseSignInCode(ctx, "s2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("expired sign-in code: %v", err)
	}
	if _, err := s.UseSignInCode(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown sign-in code: %v", err)
	}

	// The purge removes what expired before the given time.
	must(t, s.PutOAuthToken(ctx, store.OAuthToken{Kind: store.OAuthRefresh, Hash: "h4", Grant: "grt_b", Data: []byte(`{}`), Expires: clk.Now().Add(3 * time.Hour)}))
	n, err := s.PurgeOAuth(ctx, clk.Now().Add(2*time.Hour))
	must(t, err)
	if n != 5 { // h1 access and refresh, h3 code, sign-in codes s1 and s2
		t.Errorf("purged %d, want 5", n)
	}
	if _, err := s.GetOAuthToken(ctx, store.OAuthRefresh, "h4"); err != nil {
		t.Errorf("a token that expires later was purged: %v", err)
	}
	if _, err := s.GetOAuthToken(ctx, store.OAuthRefresh, "h1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("purged token: %v", err)
	}
}
