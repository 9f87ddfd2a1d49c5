package billing

import (
	"slices"
	"strings"
	"testing"

	"github.com/kobana/workflow/mcpserver/mcptest"
)

// The enums the schemas state are the product's own values.
func TestSchemaEnumsFollowTheProduct(t *testing.T) {
	t.Parallel()
	var resources []string
	for _, s := range Schemas {
		resources = append(resources, s.Resource)
	}
	for got, want := range map[string][]string{
		mcptest.Tag[InvoiceListArg](t, "Status", "enum"):      {InvoiceOpen, InvoiceOverdue, InvoicePaid, InvoiceCancelled, InvoiceRefunded},
		mcptest.Tag[NFeListArg](t, "Status", "enum"):          {NFeAuthorized, NFeRejected, NFePending, NFeCancelled},
		mcptest.Tag[SubscriptionListArg](t, "Status", "enum"): {SubscriptionActive, SubscriptionCancelled},
		mcptest.Tag[SchemaArg](t, "Resource", "enum"):         resources,
	} {
		if !slices.Equal(strings.Split(got, ","), want) {
			t.Errorf("enum %q, want %v", got, want)
		}
	}
}

// Id and date patterns accept what records hold and nothing around it.
func TestIDAndDatePatterns(t *testing.T) {
	t.Parallel()
	for pattern, ids := range map[string][]string{
		mcptest.Tag[CustomerIDArg](t, "ID", "pattern"):         {"cus_acme", newID("cus")},
		mcptest.Tag[SubscriptionIDArg](t, "ID", "pattern"):     {"sub_acme", newID("sub")},
		mcptest.Tag[InvoiceIDArg](t, "ID", "pattern"):          {"inv_1001", newID("inv")},
		mcptest.Tag[NFeIDArg](t, "ID", "pattern"):              {"nfe_0001", "nfe_1005_2"},
		mcptest.Tag[InvoiceCreateArg](t, "DueDate", "pattern"): {"2026-12-10"},
	} {
		mcptest.WantAnchored(t, pattern, ids...)
	}
	if lo, hi := mcptest.Tag[NFeCancelArg](t, "Reason", "minLength"), mcptest.Tag[NFeCancelArg](t, "Reason", "maxLength"); lo != "15" || hi != "255" {
		t.Errorf("NF-e justification length %s-%s, want 15-255 (SEFAZ's xJust)", lo, hi)
	}
}
