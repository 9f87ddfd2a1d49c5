package billing

import (
	"strings"
	"testing"
	"time"
)

func TestDocumentCheckDigits(t *testing.T) {
	t.Parallel()
	// Published examples: CPF 529.982.247-25 and CNPJ 11.222.333/0001-81.
	for _, c := range []struct {
		doc  string
		cpf  bool
		cnpj bool
	}{
		{"52998224725", true, false},
		{"52998224724", false, false},
		{"11111111111", false, false},
		{"11222333000181", false, true},
		{"11222333000182", false, false},
		{"00000000000000", false, false},
		{"1122233300018", false, false},
		{"1122233300018a", false, false},
	} {
		if ValidCPF(c.doc) != c.cpf || ValidCNPJ(c.doc) != c.cnpj {
			t.Errorf("%s: cpf %v cnpj %v", c.doc, ValidCPF(c.doc), ValidCNPJ(c.doc))
		}
	}
	if d, typ, err := checkDocument("529.982.247-25"); err != nil || d != "52998224725" || typ != "cpf" {
		t.Errorf("punctuated CPF: %s %s %v", d, typ, err)
	}
	if _, _, err := checkDocument("11.222.333/0001-80"); err == nil || !strings.Contains(err.Error(), "not a valid CNPJ") {
		t.Errorf("wrong CNPJ: %v", err)
	}
	if _, _, err := checkDocument("123"); err == nil {
		t.Error("a 3-digit document passed")
	}
}

func TestAccessKey(t *testing.T) {
	t.Parallel()
	// The key of resolve/eml/testdata/files/nfe.xml: 35 2605 12345678000190 55
	// 001 000000042 1 00000042; weighted sum 476, 476 mod 11 = 3, check digit 8.
	if !ValidAccessKey("35260512345678000190550010000000421000000428") {
		t.Error("a valid key was refused")
	}
	for _, bad := range []string{"35260512345678000190550010000000421000000427", "3526051234567800019055001000000042100000042", "3526051234567800019055001000000042100000042x"} {
		if ValidAccessKey(bad) {
			t.Errorf("%s passed", bad)
		}
	}
	at := time.Date(2026, 5, 3, 10, 0, 0, 0, brt)
	k, err := AccessKey("SP", at, "12345678000190", 1, 42, 42)
	if err != nil || k != "35260512345678000190550010000000421000000428" {
		t.Errorf("AccessKey = %s, %v", k, err)
	}
	// Every single-digit change is caught by the check digit.
	for i := 0; i < 43; i++ {
		b := []byte(k)
		b[i] = '0' + (b[i]-'0'+1)%10
		if ValidAccessKey(string(b)) {
			t.Errorf("changing digit %d went unnoticed", i)
		}
	}
	for _, c := range []struct {
		state, cnpj   string
		series, n, cd int
	}{{"XX", "12345678000190", 1, 1, 1}, {"SP", "123", 1, 1, 1}, {"SP", "12345678000190", 1000, 1, 1}, {"SP", "12345678000190", 1, 0, 1}} {
		if _, err := AccessKey(c.state, at, c.cnpj, c.series, c.n, c.cd); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

func TestFormatting(t *testing.T) {
	t.Parallel()
	for cents, want := range map[int64]string{0: "R$ 0,00", 5: "R$ 0,05", 4990: "R$ 49,90", 149000: "R$ 1.490,00", 123456789: "R$ 1.234.567,89", -1050: "-R$ 10,50"} {
		if got := formatBRL(cents); got != want {
			t.Errorf("formatBRL(%d) = %s, want %s", cents, got, want)
		}
	}
	if decimal(870000) != "8700.00" || decimal(5) != "0.05" {
		t.Error("decimal")
	}
	if formatDocument("11222333000181") != "11.222.333/0001-81" || formatDocument("52998224725") != "529.982.247-25" {
		t.Error("formatDocument")
	}
}

// The sorts each list tool accepts are the fields the catalog marks sortable.
func TestCatalogSortsMatchTools(t *testing.T) {
	t.Parallel()
	keys := func(m map[string]bool) string {
		var out []string
		for _, f := range []string{"name", "email", "number", "amount_cents", "start_date", "next_billing_date", "issue_date", "due_date", "days_overdue", "paid_at", "issued_at", "authorized_at", "created_at", "updated_at"} {
			if m[f] {
				out = append(out, f)
			}
		}
		return strings.Join(out, ",")
	}
	set := func(names []string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	for resource, tool := range map[string]map[string]bool{
		"customers":     set(mapKeys(customerSorts)),
		"subscriptions": set(mapKeys(subscriptionSorts)),
		"invoices":      set(mapKeys(invoiceSorts)),
		"nfes":          set(mapKeys(nfeSorts)),
	} {
		if got, want := keys(tool), keys(set(sortableFields(resource))); got != want || got == "" {
			t.Errorf("%s: the tool sorts by %s, the catalog says %s", resource, got, want)
		}
	}
}

func mapKeys(s sortable) []string {
	var out []string
	for k := range s {
		out = append(out, k)
	}
	return out
}

func TestDocumentSizeCap(t *testing.T) {
	t.Parallel()
	p := &Product{max: MaxResourceBytes}
	if MaxResourceBytes != 10*1024*1024 {
		t.Fatalf("MaxResourceBytes = %d", MaxResourceBytes)
	}
	big := make([]byte, MaxResourceBytes+1)
	if _, err := p.document("kobana://billing/invoices/x/pdf", "application/pdf", big); err == nil || !strings.Contains(err.Error(), "10 MB") {
		t.Errorf("10 MB + 1 byte: %v", err)
	}
	rc, err := p.document("kobana://billing/invoices/x/pdf", "application/pdf", big[:MaxResourceBytes])
	if err != nil || len(rc.Blob) != MaxResourceBytes || rc.Text != "" || rc.MIMEType != "application/pdf" {
		t.Errorf("exactly 10 MB: %v", err)
	}
	rc, err = p.document("kobana://billing/nfes/x/xml", "application/xml", []byte("<a/>"))
	if err != nil || rc.Text != "<a/>" || rc.Blob != nil {
		t.Errorf("XML as text: %+v %v", rc, err)
	}
}

func TestNextBilling(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 8, 7, 0, 0, 0, 0, brt)
	for _, c := range []struct{ interval, today, want string }{
		{"monthly", "2026-08-07", "2026-08-07"},
		{"monthly", "2026-11-20", "2026-12-07"},
		{"monthly", "2026-12-07", "2026-12-07"},
		{"yearly", "2026-11-20", "2027-08-07"},
	} {
		if got := nextBilling(start, c.interval, c.today); got != c.want {
			t.Errorf("%s from %s: %s, want %s", c.interval, c.today, got, c.want)
		}
	}
}
