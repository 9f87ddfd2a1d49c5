package issuer_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/kobana/workflow/mcpserver/issuer"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// idp is an OpenID provider on loopback: discovery, its JWKS, and a key
// to sign access tokens with.
type idp struct {
	url string
	key *rsa.PrivateKey
}

func newIDP(t *testing.T) *idp {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &idp{key: key}
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	p.url = hs.URL
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": p.url, "jwks_uri": p.url + "/keys", "authorization_endpoint": p.url + "/auth",
			"token_endpoint": p.url + "/token", "id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	mux.HandleFunc("/keys", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	return p
}

func (p *idp) sign(t *testing.T, key *rsa.PrivateKey, claims map[string]any) string {
	t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestVerify: OpenID discovery and JWKS, the audience check, the e-mail
// (or id) claim to a person and the workspace claim (or the only
// membership), scopes from scope or scp; every refusal wraps
// store.ErrNotFound.
func TestVerify(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "k.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, err := range []error{
		st.PutOrganization(ctx, store.Organization{ID: "o1", Name: "Org"}),
		st.PutWorkspace(ctx, store.Workspace{ID: "w1", Organization: "o1", Name: "Finance"}),
		st.PutWorkspace(ctx, store.Workspace{ID: "w2", Organization: "o1", Name: "Sandbox"}),
		st.PutPerson(ctx, store.Person{ID: "ana", Organization: "o1", Name: "Ana", Email: "ana@example.com"}),
		st.PutPerson(ctx, store.Person{ID: "bo", Organization: "o1", Name: "Bo", Email: "bo@example.com"}),
		st.SetMembership(ctx, "w1", "ana", "owner"),
		st.SetMembership(ctx, "w1", "bo", "viewer"),
		st.SetMembership(ctx, "w2", "bo", "operator"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	p := newIDP(t)
	const aud = "https://kobana.example/mcp"
	v, err := issuer.New(ctx, issuer.Options{Issuer: p.url, Audience: aud, Store: st, WorkspaceClaim: "kobana_workspace"})
	if err != nil {
		t.Fatal(err)
	}
	base := func(extra map[string]any) map[string]any {
		c := map[string]any{"iss": p.url, "sub": "u-1", "aud": []string{aud, "other"}, "exp": time.Now().Add(time.Hour).Unix(),
			"iat": time.Now().Unix(), "email": "ana@example.com", "scope": "read write"}
		for k, val := range extra {
			if val == nil {
				delete(c, k)
			} else {
				c[k] = val
			}
		}
		return c
	}
	pr, err := v.Verify(ctx, p.sign(t, p.key, base(nil)))
	if err != nil {
		t.Fatal(err)
	}
	if pr.Person != "ana" || pr.Workspace != "w1" || pr.Organization != "o1" || pr.Role != "owner" || !slices.Equal(pr.Scopes, []string{"read", "write"}) || pr.Expires.IsZero() {
		t.Errorf("principal = %+v", pr)
	}
	if pr, err := v.Verify(ctx, p.sign(t, p.key, base(map[string]any{"email": "bo@example.com", "kobana_workspace": "w2", "scope": nil, "scp": []string{"read"}}))); err != nil || pr.Workspace != "w2" || pr.Role != "operator" || !slices.Equal(pr.Scopes, []string{"read"}) {
		t.Errorf("bo in w2 by claim = %+v %v", pr, err)
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	for name, tok := range map[string]string{
		"another audience":   p.sign(t, p.key, base(map[string]any{"aud": "https://elsewhere.example/mcp"})),
		"another issuer":     p.sign(t, p.key, base(map[string]any{"iss": "https://evil.example"})),
		"expired":            p.sign(t, p.key, base(map[string]any{"exp": time.Now().Add(-time.Minute).Unix()})),
		"another key":        p.sign(t, other, base(nil)),
		"unknown person":     p.sign(t, p.key, base(map[string]any{"email": "zed@example.com"})),
		"unverified e-mail":  p.sign(t, p.key, base(map[string]any{"email_verified": false})),
		"no scope":           p.sign(t, p.key, base(map[string]any{"scope": "openid profile"})),
		"two workspaces":     p.sign(t, p.key, base(map[string]any{"email": "bo@example.com"})),
		"not a member there": p.sign(t, p.key, base(map[string]any{"kobana_workspace": "w2"})),
		"not a JWT":          "kbo_at_abc.def",
	} {
		if _, err := v.Verify(ctx, tok); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: %v, want a refusal", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	// An id claim instead of the e-mail address.
	byID, err := issuer.New(ctx, issuer.Options{Issuer: p.url, Audience: aud, Store: st, PersonClaim: "kobana_person"})
	if err != nil {
		t.Fatal(err)
	}
	if pr, err := byID.Verify(ctx, p.sign(t, p.key, base(map[string]any{"kobana_person": "ana", "email": nil}))); err != nil || pr.Person != "ana" {
		t.Errorf("by id claim = %+v %v", pr, err)
	}
	// Discovery of an issuer that names another is refused.
	if _, err := issuer.New(ctx, issuer.Options{Issuer: p.url + "/", Audience: aud, Store: st}); err == nil {
		t.Error("an issuer whose discovery names another was accepted")
	}
}
