package billing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver/billing"
)

// checkPDF asserts a complete PDF document.
func checkPDF(t *testing.T, what string, b []byte, wantText ...string) {
	t.Helper()
	if !bytes.HasPrefix(b, []byte("%PDF-")) || !bytes.HasSuffix(bytes.TrimRight(b, "\r\n"), []byte("%%EOF")) {
		t.Fatalf("%s is not a complete PDF: %q … %q", what, b[:min(20, len(b))], b[max(0, len(b)-20):])
	}
	if !bytes.Contains(b, []byte("/Type /Page")) || !bytes.Contains(b, []byte("startxref")) {
		t.Errorf("%s lacks a page or its xref", what)
	}
	for _, w := range wantText {
		if !bytes.Contains(b, []byte(w)) {
			t.Errorf("%s: missing %q", what, w)
		}
	}
}

// nfeProc is the part of the NF-e layout the tests check.
type nfeProc struct {
	XMLName xml.Name `xml:"http://www.portalfiscal.inf.br/nfe nfeProc"`
	Versao  string   `xml:"versao,attr"`
	NFe     struct {
		InfNFe struct {
			ID  string `xml:"Id,attr"`
			Ide struct {
				Mod   int    `xml:"mod"`
				NNF   int    `xml:"nNF"`
				Serie int    `xml:"serie"`
				CDV   string `xml:"cDV"`
				TpAmb int    `xml:"tpAmb"`
			} `xml:"ide"`
			Emit struct {
				CNPJ  string `xml:"CNPJ"`
				XNome string `xml:"xNome"`
			} `xml:"emit"`
			Dest struct {
				CNPJ  string `xml:"CNPJ"`
				CPF   string `xml:"CPF"`
				XNome string `xml:"xNome"`
			} `xml:"dest"`
			Det []struct {
				NItem int `xml:"nItem,attr"`
				Prod  struct {
					XProd string `xml:"xProd"`
					VProd string `xml:"vProd"`
				} `xml:"prod"`
			} `xml:"det"`
			Total struct {
				VNF string `xml:"ICMSTot>vNF"`
			} `xml:"total"`
		} `xml:"infNFe"`
	} `xml:"NFe"`
	Prot struct {
		ChNFe string `xml:"infProt>chNFe"`
		NProt string `xml:"infProt>nProt"`
		CStat int    `xml:"infProt>cStat"`
	} `xml:"protNFe"`
}

func read(t *testing.T, cs *mcp.ClientSession, uri string) *mcp.ResourceContents {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri {
		t.Fatalf("read %s: contents %+v", uri, res.Contents)
	}
	return res.Contents[0]
}

// Every Billing resource, read by a read-only token on both eras, over
// HTTP and stdio.
func TestEveryResourceBothEras(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	jsonCases := []struct {
		uri  string
		want []string
	}{
		{"kobana://billing/organization", []string{`"id":"org_demo"`, `"cnpj":"11222333000181"`, `"fiscal_profile_complete":true`}},
		{"kobana://billing/schemas", []string{`"resource":"invoices"`, `"uri":"kobana://billing/schemas/nfes"`}},
		{"kobana://billing/schemas/invoices", []string{`"name":"due_date"`, `"sortable":true`, `"enum":["open","overdue","paid","cancelled","refunded"]`}},
		{"kobana://billing/customers/cus_acme", []string{`"name":"ACME Industrial Ltda"`, `"document_type":"cnpj"`}},
		{"kobana://billing/subscriptions/sub_acme", []string{`"status":"active"`, `"next_billing_date":"2026-12-07"`}},
		{"kobana://billing/invoices/inv_1005", []string{`"status":"overdue"`, `"days_overdue":40`, `"uri":"kobana://billing/invoices/inv_1005/pdf"`, `"size_bytes":`}},
		{"kobana://billing/nfes/nfe_0006", []string{`"status":"rejected"`, `"code":"225"`}},
		{"kobana://billing/nfes/nfe_0001", []string{`"status":"authorized"`, `"uri":"kobana://billing/nfes/nfe_0001/xml"`, `"mime_type":"application/xml"`}},
	}
	for _, era := range eras {
		for name, cs := range map[string]*mcp.ClientSession{"http": e.Connect("viewer", era, nil), "stdio": e.ConnectStdio("viewer", era, nil)} {
			for _, c := range jsonCases {
				rc := read(t, cs, c.uri)
				if rc.MIMEType != "application/json" || !json.Valid([]byte(rc.Text)) {
					t.Errorf("%s %s %s: %s %.100s", era, name, c.uri, rc.MIMEType, rc.Text)
				}
				for _, w := range c.want {
					if !strings.Contains(rc.Text, w) {
						t.Errorf("%s %s %s: missing %s in %.400s", era, name, c.uri, w, rc.Text)
					}
				}
			}
			pdf := read(t, cs, "kobana://billing/invoices/inv_1004/pdf")
			if pdf.MIMEType != "application/pdf" || pdf.Text != "" {
				t.Errorf("%s %s invoice PDF served as %s with text", era, name, pdf.MIMEType)
			}
			checkPDF(t, "invoice PDF", pdf.Blob, "/Title (Fatura FAT-001004)")
			danfe := read(t, cs, "kobana://billing/nfes/nfe_0010/pdf")
			if danfe.MIMEType != "application/pdf" {
				t.Errorf("DANFE mime %s", danfe.MIMEType)
			}
			checkPDF(t, "DANFE", danfe.Blob, "/Title (DANFE NF-e 10 serie 1)")
			x := read(t, cs, "kobana://billing/nfes/nfe_0010/xml")
			if x.MIMEType != "application/xml" || len(x.Blob) != 0 || !strings.HasPrefix(x.Text, "<?xml") {
				t.Errorf("XML served as %s, %d blob bytes, text %.40q", x.MIMEType, len(x.Blob), x.Text)
			}
		}
	}
}

// The sizes the tools report are those of the documents the resources serve.
func TestToolsDescribeTheFilesResourcesServe(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs := e.Connect("viewer", "2026-07-28", nil)
	var inv billing.Invoice
	e.OK(cs, "billing_invoices_get", map[string]any{"id": "inv_1004"}, &inv)
	if got := len(read(t, cs, inv.PDF.URI).Blob); got != inv.PDF.SizeBytes {
		t.Errorf("invoice PDF: tool says %d bytes, resource has %d", inv.PDF.SizeBytes, got)
	}
	var n billing.NFe
	e.OK(cs, "billing_nfes_get", map[string]any{"id": "nfe_0010"}, &n)
	if got := len(read(t, cs, n.PDF.URI).Blob); got != n.PDF.SizeBytes || n.PDF.MIMEType != "application/pdf" {
		t.Errorf("DANFE: tool says %d bytes, resource has %d", n.PDF.SizeBytes, got)
	}
	if got := len(read(t, cs, n.XML.URI).Text); got != n.XML.SizeBytes {
		t.Errorf("XML: tool says %d bytes, resource has %d", n.XML.SizeBytes, got)
	}
	// Tools never carry the bytes.
	r := e.Call(cs, "billing_nfes_get", map[string]any{"id": "nfe_0010"})
	if strings.Contains(textOf(r), "%PDF") || strings.Contains(textOf(r), "nfeProc") {
		t.Error("billing_nfes_get returned document contents")
	}
}

func TestNFeXMLHasTheNfeProcShape(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs := e.Connect("viewer", "2026-07-28", nil)
	var n billing.NFe
	e.OK(cs, "billing_nfes_get", map[string]any{"id": "nfe_0010"}, &n)
	text := read(t, cs, "kobana://billing/nfes/nfe_0010/xml").Text
	var doc nfeProc
	if err := xml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("the NF-e XML does not parse: %v\n%s", err, text)
	}
	inf := doc.NFe.InfNFe
	switch {
	case doc.Versao != "4.00", inf.ID != "NFe"+n.AccessKey, doc.Prot.ChNFe != n.AccessKey, doc.Prot.CStat != 100, doc.Prot.NProt != n.Protocol:
		t.Errorf("header: versao %s Id %s chNFe %s cStat %d nProt %s; NF-e %+v", doc.Versao, inf.ID, doc.Prot.ChNFe, doc.Prot.CStat, doc.Prot.NProt, n)
	case inf.Ide.Mod != 55 || inf.Ide.NNF != 10 || inf.Ide.Serie != 1 || inf.Ide.CDV != n.AccessKey[43:] || inf.Ide.TpAmb != 2:
		t.Errorf("ide %+v", inf.Ide)
	case inf.Emit.CNPJ != "11222333000181" || inf.Emit.XNome != "Demo Comércio de Software Ltda":
		t.Errorf("emit %+v", inf.Emit)
	case inf.Dest.CNPJ == "" || inf.Dest.CPF != "" || inf.Dest.XNome != "ACME Industrial Ltda":
		t.Errorf("dest %+v", inf.Dest)
	case len(inf.Det) != 2 || inf.Det[0].NItem != 1 || inf.Det[1].Prod.VProd != "1500.00" || inf.Total.VNF != "5000.00":
		t.Errorf("det %+v total %+v", inf.Det, inf.Total)
	}
	if !billing.ValidAccessKey(n.AccessKey) {
		t.Errorf("access key %s has a wrong check digit", n.AccessKey)
	}
	// Every element lives in the NF-e namespace.
	dec := xml.NewDecoder(strings.NewReader(text))
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Space != billing.NFeNamespace {
			t.Fatalf("element %s in namespace %q", se.Name.Local, se.Name.Space)
		}
	}
	// A CPF recipient goes in dest/CPF.
	e.OK(e.Connect("owner", "2026-07-28", nil), "billing_nfes_emit", map[string]any{"invoice_id": "inv_1011"}, &n)
	var cpfDoc nfeProc
	if err := xml.Unmarshal([]byte(read(t, cs, "kobana://billing/nfes/"+n.ID+"/xml").Text), &cpfDoc); err != nil {
		t.Fatal(err)
	}
	if d := cpfDoc.NFe.InfNFe.Dest; d.CPF != "98765432100" || d.CNPJ != "" || d.XNome != "João Pereira" {
		t.Errorf("CPF recipient: %+v", d)
	}
}

func TestResourceListsAndNotFound(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	for _, era := range eras {
		for _, who := range []string{"owner", "viewer"} {
			cs := e.Connect(who, era, nil)
			rl, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var fixed []string
			for _, r := range rl.Resources {
				if strings.HasPrefix(r.URI, billing.URIPrefix) {
					fixed = append(fixed, r.URI)
				}
			}
			if strings.Join(fixed, " ") != "kobana://billing/organization kobana://billing/schemas" {
				t.Errorf("%s %s resources/list = %v", era, who, fixed)
			}
			tl, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			mimes := map[string]string{}
			for _, r := range tl.ResourceTemplates {
				if strings.HasPrefix(r.URITemplate, billing.URIPrefix) {
					mimes[r.URITemplate] = r.MIMEType
				}
			}
			want := map[string]string{
				"kobana://billing/schemas/{resource}": "application/json", "kobana://billing/customers/{id}": "application/json",
				"kobana://billing/subscriptions/{id}": "application/json", "kobana://billing/invoices/{id}": "application/json",
				"kobana://billing/invoices/{id}/pdf": "application/pdf", "kobana://billing/nfes/{id}": "application/json",
				"kobana://billing/nfes/{id}/pdf": "application/pdf", "kobana://billing/nfes/{id}/xml": "application/xml",
			}
			if len(mimes) != len(want) {
				t.Errorf("%s %s templates %v", era, who, mimes)
			}
			for k, v := range want {
				if mimes[k] != v {
					t.Errorf("%s %s template %s: %q, want %q", era, who, k, mimes[k], v)
				}
			}
		}
		// A guest, whose role runs no tool, sees and reads no resource.
		guest := e.Connect("guest", era, nil)
		if rl, err := guest.ListResources(ctx, nil); err != nil || len(rl.Resources) != 0 {
			t.Errorf("%s guest lists %v, %v", era, rl, err)
		}
		notFound := int64(-32002)
		if era == "2026-07-28" {
			notFound = -32602
		}
		if _, err := guest.ReadResource(ctx, &mcp.ReadResourceParams{URI: "kobana://billing/organization"}); rpcCode(err) != notFound {
			t.Errorf("%s guest reads the organization: %v", era, err)
		}
		cs := e.Connect("viewer", era, nil)
		for _, uri := range []string{
			"kobana://billing/invoices/inv_9999", "kobana://billing/invoices/inv_9999/pdf", "kobana://billing/customers/" + otherCustomer,
			"kobana://billing/nfes/nfe_9999/xml", "kobana://billing/schemas/payments", "kobana://billing/nothing", "kobana://billing/invoices/inv_1001/html",
		} {
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if rpcCode(err) != notFound {
				t.Errorf("%s %s: %v, want %d", era, uri, err, notFound)
			}
		}
		// A rejected NF-e has no DANFE nor authorized XML: a clear -32602.
		for _, uri := range []string{"kobana://billing/nfes/nfe_0004/xml", "kobana://billing/nfes/nfe_0009/pdf"} {
			_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if rpcCode(err) != -32602 || !strings.Contains(err.Error(), "only an authorized") {
				t.Errorf("%s %s: %v", era, uri, err)
			}
		}
	}
}

func TestResourceSizeCap(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, envOptions{maxResourceBytes: 1000})
	for _, era := range eras {
		cs := e.Connect("viewer", era, nil)
		for _, uri := range []string{"kobana://billing/invoices/inv_1001/pdf", "kobana://billing/nfes/nfe_0001/pdf", "kobana://billing/nfes/nfe_0001/xml"} {
			_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
			if rpcCode(err) != -32602 || !strings.Contains(err.Error(), "resource_too_large") || !strings.Contains(err.Error(), "1000-byte") {
				t.Errorf("%s %s over the cap: %v", era, uri, err)
			}
		}
		// JSON records are not documents: they are served whatever the cap.
		read(t, cs, "kobana://billing/invoices/inv_1001")
	}
}
