package billing

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func tag[T any](t *testing.T, field, key string) string {
	t.Helper()
	f, ok := reflect.TypeFor[T]().FieldByName(field)
	if !ok {
		t.Fatalf("%T has no field %s", *new(T), field)
	}
	v, ok := f.Tag.Lookup(key)
	if !ok {
		t.Fatalf("%T.%s has no %s tag", *new(T), field, key)
	}
	return v
}

// The enums the schemas state are the product's own values.
func TestSchemaEnumsFollowTheProduct(t *testing.T) {
	var resources []string
	for _, s := range Schemas {
		resources = append(resources, s.Resource)
	}
	for got, want := range map[string][]string{
		tag[InvoiceListArg](t, "Status", "enum"):      {InvoiceOpen, InvoiceOverdue, InvoicePaid, InvoiceCancelled, InvoiceRefunded},
		tag[NFeListArg](t, "Status", "enum"):          {NFeAuthorized, NFeRejected, NFePending, NFeCancelled},
		tag[SubscriptionListArg](t, "Status", "enum"): {SubscriptionActive, SubscriptionCancelled},
		tag[SchemaArg](t, "Resource", "enum"):         resources,
	} {
		if !slices.Equal(strings.Split(got, ","), want) {
			t.Errorf("enum %q, want %v", got, want)
		}
	}
}

// Id and date patterns accept what records hold and nothing around it.
func TestIDAndDatePatterns(t *testing.T) {
	for pattern, ids := range map[string][]string{
		tag[CustomerIDArg](t, "ID", "pattern"):         {"cus_acme", newID("cus")},
		tag[SubscriptionIDArg](t, "ID", "pattern"):     {"sub_acme", newID("sub")},
		tag[InvoiceIDArg](t, "ID", "pattern"):          {"inv_1001", newID("inv")},
		tag[NFeIDArg](t, "ID", "pattern"):              {"nfe_0001", "nfe_1005_2"},
		tag[InvoiceCreateArg](t, "DueDate", "pattern"): {"2026-12-10"},
	} {
		re := regexp.MustCompile(pattern)
		for _, id := range ids {
			if !re.MatchString(id) {
				t.Errorf("%s refuses %q", pattern, id)
			}
			for _, bad := range []string{" " + id, id + " ", id + "\n"} {
				if re.MatchString(bad) {
					t.Errorf("%s accepts %q", pattern, bad)
				}
			}
		}
	}
	if lo, hi := tag[NFeCancelArg](t, "Reason", "minLength"), tag[NFeCancelArg](t, "Reason", "maxLength"); lo != "15" || hi != "255" {
		t.Errorf("NF-e justification length %s-%s, want 15-255 (SEFAZ's xJust)", lo, hi)
	}
}
