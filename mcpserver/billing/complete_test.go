package billing_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/billing"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/store"
)

func complete(t *testing.T, cs *mcp.ClientSession, ref *mcp.CompleteReference, arg, value string) []string {
	t.Helper()
	res, err := cs.Complete(context.Background(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}})
	if err != nil {
		t.Fatalf("complete %s %s=%q: %v", ref.Name+ref.URI, arg, value, err)
	}
	return res.Completion.Values
}

func resourceRef(uri string) *mcp.CompleteReference {
	return &mcp.CompleteReference{Type: "ref/resource", URI: uri}
}

func promptRef(name string) *mcp.CompleteReference {
	return &mcp.CompleteReference{Type: "ref/prompt", Name: name}
}

func TestCompletions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, era := range eras {
		cs := e.Connect("viewer", era, nil)
		cases := []struct {
			ref      *mcp.CompleteReference
			arg, val string
			want     string
		}{
			// Most recent first: Maria (80 days ago) before ACME (110).
			{promptRef("customer_overview"), "customer_id", "cus_", "cus_joao cus_maria cus_initech cus_globex cus_umbrella cus_acme"},
			{promptRef("customer_overview"), "customer_id", "cus_m", "cus_maria"},
			{resourceRef("kobana://billing/customers/{id}"), "id", "cus_g", "cus_globex"},
			{resourceRef("kobana://billing/invoices/{id}"), "id", "inv_100", "inv_1004 inv_1009 inv_1003 inv_1006 inv_1008 inv_1002 inv_1005 inv_1001 inv_1007"},
			{resourceRef("kobana://billing/invoices/{id}/pdf"), "id", "inv_101", "inv_1014 inv_1011 inv_1010 inv_1012 inv_1013"},
			{resourceRef("kobana://billing/subscriptions/{id}"), "id", "sub_", "sub_maria sub_umbrella sub_acme"},
			{resourceRef("kobana://billing/nfes/{id}/xml"), "id", "nfe_001", "nfe_0010"},
			{resourceRef("kobana://billing/schemas/{resource}"), "resource", "", "organization customers subscriptions invoices nfes"},
			{resourceRef("kobana://billing/schemas/{resource}"), "resource", "in", "invoices"},
			{promptRef("monthly_billing_summary"), "month", "", "2026-11 2026-10 2026-09 2026-08 2026-07 2026-06 2026-05 2026-04 2026-03 2026-02 2026-01 2025-12"},
			{promptRef("monthly_billing_summary"), "month", "2025", "2025-12"},
			// No source of suggestions: an empty list.
			{promptRef("customer_overview"), "other", "x", ""},
			{resourceRef("kobana://billing/organization"), "id", "", ""},
			{promptRef("no_such_prompt"), "customer_id", "cus_", ""},
			{promptRef("collect_overdue_invoices"), "customer_id", "cus_", ""}, // the viewer may not use this prompt
		}
		for _, c := range cases {
			if got := strings.Join(complete(t, cs, c.ref, c.arg, c.val), " "); got != c.want {
				t.Errorf("%s %s%s %s=%q:\n got %s\nwant %s", era, c.ref.Name, c.ref.URI, c.arg, c.val, got, c.want)
			}
		}
		// The owner may use collect_overdue_invoices: its customer_id completes.
		if got := complete(t, e.Connect("owner", era, nil), promptRef("collect_overdue_invoices"), "customer_id", "cus_a"); strings.Join(got, " ") != "cus_acme" {
			t.Errorf("%s owner collect_overdue_invoices: %v", era, got)
		}
		// Who may not list gets no suggestion.
		guest := e.Connect("guest", era, nil)
		for _, ref := range []*mcp.CompleteReference{promptRef("customer_overview"), resourceRef("kobana://billing/customers/{id}"), resourceRef("kobana://billing/schemas/{resource}")} {
			arg := "id"
			switch {
			case ref.Type == "ref/prompt":
				arg = "customer_id"
			case strings.HasSuffix(ref.URI, "{resource}"):
				arg = "resource"
			}
			if got := complete(t, guest, ref, arg, ""); len(got) != 0 {
				t.Errorf("%s guest completes %s%s: %v", era, ref.Name, ref.URI, got)
			}
		}
	}
}

// The DANFE and XML templates suggest only NF-e whose document exists
// (authorized or cancelled), and every suggestion reads.
func TestNFeDocumentCompletionSuggestsOnlyDocuments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	recs, err := e.st.ListRecords(context.Background(), demo.Organization, billing.KindNFe, store.Query{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	documented, undocumented := map[string]bool{}, 0
	for _, r := range recs {
		if r.Status == billing.NFeAuthorized || r.Status == billing.NFeCancelled {
			documented[r.ID] = true
		} else {
			undocumented++
		}
	}
	if len(documented) == 0 || undocumented == 0 {
		t.Fatalf("the demo needs NF-e with and without documents: %d and %d", len(documented), undocumented)
	}
	cs := e.Connect("viewer", "2026-07-28", nil)
	for _, uri := range []string{"kobana://billing/nfes/{id}/pdf", "kobana://billing/nfes/{id}/xml"} {
		got := complete(t, cs, resourceRef(uri), "id", "nfe_")
		if len(got) != len(documented) {
			t.Errorf("%s suggests %d ids, want the %d with documents: %v", uri, len(got), len(documented), got)
		}
		for _, id := range got {
			if !documented[id] {
				t.Errorf("%s suggests %s, which has no document", uri, id)
				continue
			}
			u := strings.Replace(uri, "{id}", id, 1)
			if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: u}); err != nil {
				t.Errorf("suggested %s does not read: %v", u, err)
			}
		}
	}
	// The record itself completes for every NF-e.
	if got := complete(t, cs, resourceRef("kobana://billing/nfes/{id}"), "id", "nfe_"); len(got) != len(recs) {
		t.Errorf("nfes/{id} suggests %d of %d", len(got), len(recs))
	}
}
