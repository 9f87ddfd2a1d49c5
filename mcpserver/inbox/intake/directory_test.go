package intake_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/inbox/intake"
	"github.com/kobana/workflow/mcpserver/inbox/senderauth"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/mcpserver/store/sqlite"
)

// idsOnly hides the store's slug lookup.
type idsOnly struct{ intake.Workspaces }

func TestStoreDirectory(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "k.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.PutOrganization(ctx, store.Organization{ID: "org", Name: "Org"})
	st.PutWorkspace(ctx, store.Workspace{ID: "ws_plain", Organization: "org", Name: "Plain"})
	st.PutWorkspace(ctx, store.Workspace{ID: "ws_named", Organization: "org", Name: "Named", Slug: "finance"})
	repo := inbox.NewRepo(st).Inboxes
	now := time.Now()
	repo.Put(ctx, "ws_plain", inbox.Inbox{ID: "ibx_1", Address: "bills@ws_plain.in.kobana.email", Status: inbox.StatusActive, CreatedAt: now})
	repo.Put(ctx, "ws_named", inbox.Inbox{ID: "ibx_2", Address: "invoices@finance.in.kobana.email", Status: inbox.StatusActive, CreatedAt: now})

	st.PutWorkspace(ctx, store.Workspace{ID: "ws_twin1", Organization: "org", Name: "Twin 1", Slug: "twin"})
	st.PutWorkspace(ctx, store.Workspace{ID: "ws_twin2", Organization: "org", Name: "Twin 2", Slug: "twin"})
	repo.Put(ctx, "ws_twin1", inbox.Inbox{ID: "ibx_3", Address: "a@twin.in.kobana.email", Status: inbox.StatusActive, CreatedAt: now})
	plain := intake.StoreDirectory{Records: st, Workspaces: idsOnly{st}}
	r, err := plain.ByAddress(ctx, "Bills@WS_PLAIN.in.kobana.email")
	if err != nil || r.Workspace != "ws_plain" || r.InboxID != "ibx_1" {
		t.Fatalf("id-labelled address: %+v, %v", r, err)
	}
	for _, a := range []string{"other@ws_plain.in.kobana.email", "bills@ws_plain.in.kobana.email.evil.test", "bills@ws_plain.example.com",
		"bills@x.ws_plain.in.kobana.email", "bills@nobody.in.kobana.email", "invoices@ws_named.in.kobana.email", "no-at-sign",
		"invoices@finance.in.kobana.email"} { // a slug, without the store's slug lookup
		if _, err := plain.ByAddress(ctx, a); !errors.Is(err, intake.ErrUnknownAddress) {
			t.Errorf("%s: %v, want ErrUnknownAddress", a, err)
		}
	}
	named := intake.StoreDirectory{Records: st, Workspaces: st}
	if r, err := named.ByAddress(ctx, "invoices@finance.in.kobana.email"); err != nil || r.InboxID != "ibx_2" {
		t.Fatalf("slug-labelled address: %+v, %v", r, err)
	}
	if r, err := named.ByAddress(ctx, "bills@ws_plain.in.kobana.email"); err != nil || r.InboxID != "ibx_1" {
		t.Fatalf("id-labelled address with the slug lookup: %+v, %v", r, err)
	}
	if _, err := named.ByAddress(ctx, "a@twin.in.kobana.email"); !errors.Is(err, intake.ErrUnknownAddress) {
		t.Fatalf("a slug two workspaces share: %v, want ErrUnknownAddress (never a guess)", err)
	}
	if _, err := named.ByID(ctx, "ws_plain", "ibx_2"); !errors.Is(err, intake.ErrUnknownAddress) {
		t.Fatalf("another workspace's inbox by id: %v, want ErrUnknownAddress", err)
	}
}

// TestHTTPWithTheStoresTokens: the HTTP intake over real tokens, inboxes,
// records and queue.
func TestHTTPWithTheStoresTokens(t *testing.T) {
	ctx := context.Background()
	e := startStore(t)
	e.st.PutPerson(ctx, store.Person{ID: "p_ana", Organization: "org_acme", Name: "Ana"})
	e.st.PutPerson(ctx, store.Person{ID: "p_bia", Organization: "org_acme", Name: "Bia"})
	e.st.SetMembership(ctx, wsID, "p_ana", "operator")
	e.st.SetMembership(ctx, wsID, "p_bia", "viewer")
	writer, _ := e.st.CreateToken(ctx, store.NewToken{Person: "p_ana", Workspace: wsID, Scopes: []string{"read", "write"}})
	reader, _ := e.st.CreateToken(ctx, store.NewToken{Person: "p_ana", Workspace: wsID, Scopes: []string{"read"}})
	viewer, _ := e.st.CreateToken(ctx, store.NewToken{Person: "p_bia", Workspace: wsID, Scopes: []string{"read", "write"}})
	dir := intake.StoreDirectory{Records: e.st, Workspaces: e.st}
	h := intake.NewHandler(intake.HTTPConfig{}, intake.IdentityTokens{Identity: e.st}, dir, e.rec, e.dir, &senderauth.Checker{Resolver: e.dns})
	srv := httptest.NewServer(h)
	defer srv.Close()
	post := func(token string) int {
		req, _ := http.NewRequest("POST", srv.URL+"/inboxes/ibx_invoices/messages", strings.NewReader(message("via-http", 1000)))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "message/rfc822")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for tok, want := range map[string]int{writer: 202, reader: 403, viewer: 403, "kbn_nope": 401} {
		if got := post(tok); got != want {
			t.Errorf("token %.8s…: %d, want %d", tok, got, want)
		}
	}
	emails := e.emails()
	if len(emails) != 1 || emails[0].Auth.EnvelopeFrom != "" || len(e.jobs()) != 1 {
		t.Fatalf("e-mails %+v, jobs %d", emails, len(e.jobs()))
	}
}
