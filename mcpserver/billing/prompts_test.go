package billing_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/billing"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/store"
)

func promptNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range res.Prompts {
		if !strings.Contains("review_failed_runs inbox_overview webhook_health usage_report", p.Name) {
			out = append(out, p.Name)
		}
	}
	slices.Sort(out)
	return out
}

func promptText(r *mcp.GetPromptResult) string {
	var b strings.Builder
	for _, m := range r.Messages {
		switch c := m.Content.(type) {
		case *mcp.TextContent:
			b.WriteString(c.Text)
		case *mcp.EmbeddedResource:
			b.WriteString("\n[resource " + c.Resource.URI + "]\n" + c.Resource.Text)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func getPrompt(t *testing.T, cs *mcp.ClientSession, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	t.Helper()
	return cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: name, Arguments: args})
}

// collect_overdue_invoices writes (it relies on the reminder tool): a
// read-only token neither sees nor runs it; the other three are read-only.
func TestPromptVisibilityByScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, era := range eras {
		if got := strings.Join(promptNames(t, e.Connect("owner", era, nil)), " "); got != "collect_overdue_invoices customer_overview monthly_billing_summary review_pending_nfes" {
			t.Errorf("%s owner prompts: %s", era, got)
		}
		for _, who := range []string{"viewer", "owner-ro"} {
			cs := e.Connect(who, era, nil)
			if got := strings.Join(promptNames(t, cs), " "); got != "customer_overview monthly_billing_summary review_pending_nfes" {
				t.Errorf("%s %s prompts: %s", era, who, got)
			}
			if _, err := getPrompt(t, cs, "collect_overdue_invoices", nil); rpcCode(err) != -32602 {
				t.Errorf("%s %s got collect_overdue_invoices: %v", era, who, err)
			}
		}
	}
}

func TestCollectOverdueInvoices(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs := e.Connect("owner", "2026-07-28", nil)
	r, err := getPrompt(t, cs, "collect_overdue_invoices", nil)
	if err != nil {
		t.Fatal(err)
	}
	text := promptText(r)
	for _, w := range []string{
		"| id | number | customer | amount | due date | days overdue |",
		"| inv_1005 | FAT-001005 | Globex Serviços S.A. | R$ 8.700,00 | 2026-10-11 | 40 | 2 |",
		"| inv_1011 |", "| inv_1006 |", "| inv_1003 |",
		"Ask me which of these invoices should get a payment reminder. Do not send any reminder before I answer.",
		"billing_invoices_send_reminder",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("missing %q in\n%s", w, text)
		}
	}
	if strings.Contains(text, "inv_1009") || strings.Contains(text, "inv_1001 ") {
		t.Errorf("a not-overdue invoice is listed:\n%s", text)
	}
	// Most overdue first.
	if strings.Index(text, "inv_1005") > strings.Index(text, "inv_1011") || strings.Index(text, "inv_1011") > strings.Index(text, "inv_1003") {
		t.Errorf("rows are not ordered by days overdue:\n%s", text)
	}
	// Building the prompt sends nothing.
	if e.invoice("inv_1005").RemindersSent != 2 {
		t.Fatal("the prompt sent a reminder")
	}
	r, err = getPrompt(t, cs, "collect_overdue_invoices", map[string]string{"customer_id": "cus_acme"})
	if err != nil {
		t.Fatal(err)
	}
	text = promptText(r)
	if !strings.Contains(text, "inv_1003") || strings.Contains(text, "inv_1005") || !strings.Contains(text, "[resource kobana://billing/customers/cus_acme]") {
		t.Errorf("for cus_acme:\n%s", text)
	}
	r, err = getPrompt(t, cs, "collect_overdue_invoices", map[string]string{"customer_id": "cus_maria"})
	if err != nil || !strings.Contains(promptText(r), "no overdue open invoices") {
		t.Errorf("for cus_maria: %v %v", r, err)
	}
	for _, args := range []map[string]string{{"customer_id": "cus_nobody"}, {"customer_id": otherCustomer}, {"month": "2026-11"}} {
		if _, err := getPrompt(t, cs, "collect_overdue_invoices", args); rpcCode(err) != -32602 {
			t.Errorf("args %v: %v, want -32602", args, err)
		}
	}
}

func TestReviewPendingNFes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs := e.Connect("viewer", "2025-11-25", nil)
	r, err := getPrompt(t, cs, "review_pending_nfes", nil)
	if err != nil {
		t.Fatal(err)
	}
	text := promptText(r)
	for _, w := range []string{
		"Invoices without an NF-e (6):",
		"inv_1005", "inv_1006", "inv_1007", "inv_1008", "inv_1009", "inv_1011",
		"last attempt nfe_0004 rejected by SEFAZ: 208 Rejeição: CNPJ do destinatário inválido",
		"Rejected NF-e whose invoice still has none (3):",
		"nfe_0006 number 6 for invoice inv_1008, customer cus_initech: 225",
		"NF-e pending at SEFAZ (1):", "nfe_0009 number 9 for invoice inv_1014",
		"Do not call billing_nfes_emit",
		"[resource kobana://billing/nfes/nfe_0004]",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("missing %q in\n%s", w, text)
		}
	}
	// Cancelled and refunded invoices need no NF-e; inv_1010's cancelled
	// NF-e was replaced by an authorized one.
	for _, no := range []string{"inv_1012", "inv_1013", "inv_1010"} {
		if strings.Contains(text, no) {
			t.Errorf("%s should not be pending:\n%s", no, text)
		}
	}
	if n := e.count(demo.Organization, billing.KindNFe, store.Query{}); n != 10 {
		t.Fatalf("the review issued something: %d NF-e", n)
	}
}

func TestCustomerOverview(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs := e.Connect("viewer", "2026-07-28", nil)
	if _, err := getPrompt(t, cs, "customer_overview", nil); rpcCode(err) != -32602 {
		t.Errorf("missing customer_id: %v", err)
	}
	if _, err := getPrompt(t, cs, "customer_overview", map[string]string{"customer_id": otherCustomer}); rpcCode(err) != -32602 {
		t.Errorf("other org's customer: %v", err)
	}
	r, err := getPrompt(t, cs, "customer_overview", map[string]string{"customer_id": "cus_acme"})
	if err != nil {
		t.Fatal(err)
	}
	text := promptText(r)
	for _, w := range []string{
		"ACME Industrial Ltda (cus_acme)", "CNPJ 45.781.236/0001-40", "sub_acme Kobana Business, R$ 1.490,00 monthly, active, next billing 2026-12-07",
		"Invoices (5): open 2 (R$ 5.540,00), overdue 1 (R$ 1.490,00), paid 2 (R$ 2.980,00)",
		"inv_1003 FAT-001003 R$ 1.490,00 due 2026-11-15, overdue (5 days)",
		"[resource kobana://billing/customers/cus_acme]",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("missing %q in\n%s", w, text)
		}
	}
	r, err = getPrompt(t, cs, "customer_overview", map[string]string{"customer_id": "cus_joao"})
	if err != nil || !strings.Contains(promptText(r), "e-mail none") {
		t.Errorf("João: %v\n%s", err, promptText(r))
	}
}

func TestMonthlyBillingSummary(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs := e.Connect("viewer", "2026-07-28", nil)
	for _, bad := range []string{"2026-13", "11/2026", "2026-1", "november"} {
		if _, err := getPrompt(t, cs, "monthly_billing_summary", map[string]string{"month": bad}); rpcCode(err) != -32602 {
			t.Errorf("month %q: %v, want -32602", bad, err)
		}
	}
	// Worked out by hand from the demo (today is 2026-11-20 in Brasília).
	cases := []struct {
		args map[string]string
		want string
		line string
	}{
		// November: issued inv_1003, 1004, 1009, 1014 (1.490 + 5.000 + 49,90 + 540), all still open, inv_1003 overdue; no payment yet.
		{nil, `{"month":"2026-11","invoiced_count":4,"invoiced_cents":707990,"collected_count":0,"collected_cents":0,"left_open_count":4,"left_open_cents":707990,"cancelled_count":0,"refunded_cents":0,"invoiced_by_status":{"open":3,"overdue":1},"overdue_of_this_month":1}`,
			"Invoiced (issued in 2026-11, not cancelled): 4 invoice(s), R$ 7.079,90."},
		// October: issued inv_1002, 1005, 1006, 1008, 1010, 1011 and the cancelled 1012; paid in October inv_1002, 1008, 1010;
		// inv_1013 (paid in September) refunded in October.
		{map[string]string{"month": "2026-10"}, `{"month":"2026-10","invoiced_count":6,"invoiced_cents":2468990,"collected_count":3,"collected_cents":1443990,"left_open_count":3,"left_open_cents":1025000,"cancelled_count":1,"refunded_cents":149000,"invoiced_by_status":{"cancelled":1,"overdue":3,"paid":3},"overdue_of_this_month":3}`,
			"Collected (payments received in 2026-10, whatever month they were issued): 3, R$ 14.439,90."},
	}
	for _, c := range cases {
		r, err := getPrompt(t, cs, "monthly_billing_summary", c.args)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Messages[1].Content.(*mcp.TextContent).Text; got != c.want {
			t.Errorf("%v:\n got %s\nwant %s", c.args, got, c.want)
		}
		if !strings.Contains(promptText(r), c.line) {
			t.Errorf("%v: missing %q in\n%s", c.args, c.line, promptText(r))
		}
	}
}
