package billing

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"
)

// nfeDoc is everything an NF-e's documents (XML and DANFE) show.
type nfeDoc struct {
	nfe     NFe
	invoice Invoice
}

func (p *Product) nfeDocument(ctx context.Context, org string, n NFe) (nfeDoc, error) {
	inv, err := p.repo.invoices.Get(ctx, org, n.InvoiceID)
	if err != nil {
		return nfeDoc{}, fmt.Errorf("NF-e %s: its invoice: %w", n.ID, err)
	}
	return nfeDoc{nfe: n, invoice: inv}, nil
}

// newPDF starts an A4 document whose bytes depend only on its content and
// the given creation time.
func newPDF(title string, created time.Time) (*fpdf.Fpdf, func(string) string) {
	f := fpdf.New("P", "mm", "A4", "")
	f.SetCreationDate(created)
	f.SetModificationDate(created)
	f.SetCatalogSort(true)
	f.SetProducer("Kobana Billing", false)
	tr := f.UnicodeTranslatorFromDescriptor("")
	f.SetTitle(tr(title), false)
	f.SetMargins(12, 12, 12)
	f.SetAutoPageBreak(true, 15)
	f.AddPage()
	return f, tr
}

func output(f *fpdf.Fpdf, what string) ([]byte, error) {
	var b bytes.Buffer
	if err := f.Output(&b); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", what, err)
	}
	return b.Bytes(), nil
}

// box draws a labelled field: a small caption over its value.
func box(f *fpdf.Fpdf, tr func(string) string, x, y, w, h float64, label, value string) {
	sizedBox(f, tr, x, y, w, h, label, value, 8)
}

// sizedBox is box with the value in a given font size.
func sizedBox(f *fpdf.Fpdf, tr func(string) string, x, y, w, h float64, label, value string, size float64) {
	f.Rect(x, y, w, h, "D")
	f.SetXY(x+1, y+0.8)
	f.SetFont("Helvetica", "", 5.5)
	f.CellFormat(w-2, 2.5, tr(strings.ToUpper(label)), "", 0, "L", false, 0, "")
	f.SetXY(x+1, y+3.5)
	f.SetFont("Helvetica", "B", size)
	f.CellFormat(w-2, h-4.5, tr(value), "", 0, "L", false, 0, "")
}

func addressLine(a Address) string {
	parts := []string{}
	street := strings.TrimSpace(a.Street + ", " + a.Number)
	if a.Complement != "" {
		street += " " + a.Complement
	}
	if strings.Trim(street, ", ") != "" {
		parts = append(parts, street)
	}
	if a.Neighborhood != "" {
		parts = append(parts, a.Neighborhood)
	}
	if a.City != "" {
		parts = append(parts, a.City+"/"+a.State)
	}
	if len(a.ZIP) == 8 {
		parts = append(parts, "CEP "+a.ZIP[:5]+"-"+a.ZIP[5:])
	}
	return strings.Join(parts, " - ")
}

// stamp writes a large diagonal-free banner across the page.
func stamp(f *fpdf.Fpdf, tr func(string) string, text string, r, g, b int) {
	f.SetTextColor(r, g, b)
	f.SetFont("Helvetica", "B", 22)
	f.SetXY(12, f.GetY()+2)
	f.CellFormat(186, 10, tr(text), "", 1, "C", false, 0, "")
	f.SetTextColor(0, 0, 0)
}

var statusLabels = map[string]string{
	InvoiceOpen: "EM ABERTO", InvoiceOverdue: "VENCIDA", InvoicePaid: "PAGA", InvoiceCancelled: "CANCELADA", InvoiceRefunded: "ESTORNADA",
}

// invoicePDF renders an invoice (as viewed) as a one-or-more-page PDF.
func (p *Product) invoicePDF(ctx context.Context, orgID string, inv Invoice) ([]byte, error) {
	org, err := p.organization(ctx, orgID)
	if err != nil {
		return nil, err
	}
	haveCustomer := true
	cu, err := p.repo.customers.Get(ctx, orgID, inv.CustomerID)
	if err != nil {
		if !isNotFound(err) {
			return nil, err
		}
		haveCustomer = false
	}
	f, tr := newPDF("Fatura "+inv.Number, inv.CreatedAt)
	// Issuer.
	f.SetFont("Helvetica", "B", 13)
	f.CellFormat(120, 7, tr(firstNonEmpty(org.LegalName, org.Name, org.ID)), "", 0, "L", false, 0, "")
	f.SetFont("Helvetica", "B", 16)
	f.CellFormat(66, 7, tr("FATURA "+inv.Number), "", 1, "R", false, 0, "")
	f.SetFont("Helvetica", "", 8.5)
	if org.CNPJ != "" {
		f.CellFormat(186, 4.5, tr("CNPJ "+formatDocument(org.CNPJ)), "", 1, "L", false, 0, "")
	}
	if l := addressLine(org.Address); l != "" {
		f.CellFormat(186, 4.5, tr(l), "", 1, "L", false, 0, "")
	}
	if org.Email != "" {
		f.CellFormat(186, 4.5, tr(org.Email), "", 1, "L", false, 0, "")
	}
	f.Ln(3)
	// Customer and dates.
	y := f.GetY()
	box(f, tr, 12, y, 124, 10, "Cliente", inv.CustomerName)
	box(f, tr, 136, y, 31, 10, "Emissão", brDate(inv.IssueDate))
	box(f, tr, 167, y, 31, 10, "Vencimento", brDate(inv.DueDate))
	y += 10
	doc, addr, email := "", "", ""
	if haveCustomer {
		doc, addr, email = formatDocument(cu.Document), addressLine(cu.Address), cu.Email
	}
	box(f, tr, 12, y, 50, 10, "CPF/CNPJ", doc)
	box(f, tr, 62, y, 136, 10, "Endereço", addr)
	y += 10
	box(f, tr, 12, y, 124, 10, "E-mail", email)
	box(f, tr, 136, y, 62, 10, "Situação", statusLabels[inv.Status])
	f.SetXY(12, y+14)
	// Items.
	f.SetFont("Helvetica", "B", 8.5)
	f.SetFillColor(230, 230, 230)
	f.CellFormat(106, 6, tr("Descrição"), "1", 0, "L", true, 0, "")
	f.CellFormat(20, 6, tr("Qtd."), "1", 0, "R", true, 0, "")
	f.CellFormat(30, 6, tr("Valor unitário"), "1", 0, "R", true, 0, "")
	f.CellFormat(30, 6, tr("Valor"), "1", 1, "R", true, 0, "")
	f.SetFont("Helvetica", "", 8.5)
	for _, it := range inv.Items {
		f.CellFormat(106, 6, tr(truncate(it.Description, 70)), "1", 0, "L", false, 0, "")
		f.CellFormat(20, 6, fmt.Sprint(it.Quantity), "1", 0, "R", false, 0, "")
		f.CellFormat(30, 6, tr(formatBRL(it.UnitPriceCents)), "1", 0, "R", false, 0, "")
		f.CellFormat(30, 6, tr(formatBRL(it.AmountCents)), "1", 1, "R", false, 0, "")
	}
	f.SetFont("Helvetica", "B", 10)
	f.CellFormat(156, 8, tr("Total"), "1", 0, "R", false, 0, "")
	f.CellFormat(30, 8, tr(formatBRL(inv.AmountCents)), "1", 1, "R", false, 0, "")
	f.Ln(3)
	f.SetFont("Helvetica", "", 8.5)
	f.MultiCell(186, 4.5, tr("Referente a: "+inv.Description), "", "L", false)
	switch inv.Status {
	case InvoicePaid:
		f.MultiCell(186, 4.5, tr(fmt.Sprintf("Pagamento de %s recebido em %s (%s).", formatBRL(inv.PaidAmountCents), inv.PaidAt.In(brt).Format("02/01/2006"), inv.PaymentMethod)), "", "L", false)
	case InvoiceCancelled:
		f.MultiCell(186, 4.5, tr("Fatura cancelada em "+inv.CancelledAt.In(brt).Format("02/01/2006")+". Não pague este documento."), "", "L", false)
	case InvoiceRefunded:
		f.MultiCell(186, 4.5, tr("Valor estornado ao cliente em "+inv.RefundedAt.In(brt).Format("02/01/2006")+"."), "", "L", false)
	default:
		f.MultiCell(186, 4.5, tr("Pague por boleto ou Pix até "+brDate(inv.DueDate)+". Após o vencimento podem incidir multa e juros."), "", "L", false)
	}
	if inv.NFeID != "" {
		f.MultiCell(186, 4.5, tr("NF-e vinculada: "+inv.NFeID), "", "L", false)
	}
	if inv.Status != InvoiceOpen {
		r, g, b := 180, 0, 0
		if inv.Status == InvoicePaid {
			r, g, b = 0, 120, 0
		}
		stamp(f, tr, statusLabels[inv.Status], r, g, b)
	}
	return output(f, "the PDF of invoice "+inv.ID)
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// groupKey writes an access key in groups of four digits, as printed.
func groupKey(k string) string {
	var parts []string
	for i := 0; i < len(k); i += 4 {
		parts = append(parts, k[i:min(i+4, len(k))])
	}
	return strings.Join(parts, " ")
}

// danfe renders the DANFE (Documento Auxiliar da NF-e) of an NF-e.
func (d nfeDoc) danfe() ([]byte, error) {
	n, inv := d.nfe, d.invoice
	f, tr := newPDF(fmt.Sprintf("DANFE NF-e %d serie %d", n.Number, n.Series), n.IssuedAt)
	// Receipt strip.
	y := 12.0
	box(f, tr, 12, y, 150, 10, "Recebemos de "+n.Issuer.Name+" os produtos/serviços constantes da nota fiscal indicada ao lado", "Data de recebimento / Identificação e assinatura do recebedor")
	box(f, tr, 162, y, 36, 10, "NF-e", fmt.Sprintf("Nº %09d Série %03d", n.Number, n.Series))
	y += 13
	// Header: issuer, DANFE title, access key.
	f.Rect(12, y, 80, 30, "D")
	f.SetXY(14, y+2)
	f.SetFont("Helvetica", "B", 10)
	f.MultiCell(76, 4.5, tr(n.Issuer.Name), "", "L", false)
	f.SetX(14)
	f.SetFont("Helvetica", "", 7.5)
	f.MultiCell(76, 3.6, tr(addressLine(n.Issuer.Address)), "", "L", false)
	f.Rect(92, y, 34, 30, "D")
	f.SetXY(92, y+2)
	f.SetFont("Helvetica", "B", 12)
	f.CellFormat(34, 5, "DANFE", "", 2, "C", false, 0, "")
	f.SetFont("Helvetica", "", 6)
	f.MultiCell(34, 2.8, tr("Documento Auxiliar da Nota Fiscal Eletrônica"), "", "C", false)
	f.SetX(92)
	f.SetFont("Helvetica", "", 7)
	f.CellFormat(34, 4, tr("0 - Entrada  1 - Saída   [1]"), "", 2, "C", false, 0, "")
	f.SetFont("Helvetica", "B", 8)
	f.CellFormat(34, 4, fmt.Sprintf("N. %09d", n.Number), "", 2, "C", false, 0, "")
	f.CellFormat(34, 4, tr(fmt.Sprintf("Série %03d  Folha 1/1", n.Series)), "", 0, "C", false, 0, "")
	sizedBox(f, tr, 126, y, 72, 10, "Chave de acesso", groupKey(n.AccessKey), 6.8)
	f.Rect(126, y+10, 72, 10, "D")
	f.SetXY(127, y+11)
	f.SetFont("Helvetica", "", 6.5)
	f.MultiCell(70, 3, tr("Consulta de autenticidade no portal nacional da NF-e www.nfe.fazenda.gov.br/portal ou no site da Sefaz autorizadora"), "", "C", false)
	prot := n.Protocol + " - " + n.AuthorizedAt.In(brt).Format("02/01/2006 15:04:05")
	box(f, tr, 126, y+20, 72, 10, "Protocolo de autorização de uso", prot)
	y += 30
	box(f, tr, 12, y, 114, 10, "Natureza da operação", "PRESTACAO DE SERVICOS")
	box(f, tr, 126, y, 72, 10, "Inscrição estadual", n.Issuer.StateReg)
	y += 10
	box(f, tr, 12, y, 114, 10, "CNPJ", formatDocument(n.Issuer.Document))
	box(f, tr, 126, y, 72, 10, "Fatura", inv.Number)
	y += 13
	// Recipient.
	f.SetXY(12, y)
	f.SetFont("Helvetica", "B", 7)
	f.CellFormat(186, 4, tr("DESTINATÁRIO / REMETENTE"), "", 1, "L", false, 0, "")
	y += 4
	box(f, tr, 12, y, 120, 10, "Nome / razão social", n.Recipient.Name)
	box(f, tr, 132, y, 40, 10, "CNPJ / CPF", formatDocument(n.Recipient.Document))
	box(f, tr, 172, y, 26, 10, "Data da emissão", n.IssuedAt.In(brt).Format("02/01/2006"))
	y += 10
	box(f, tr, 12, y, 120, 10, "Endereço", addressLine(n.Recipient.Address))
	box(f, tr, 132, y, 40, 10, "Município / UF", n.Recipient.Address.City+"/"+n.Recipient.Address.State)
	box(f, tr, 172, y, 26, 10, "Vencimento", brDate(inv.DueDate))
	y += 13
	// Totals.
	f.SetXY(12, y)
	f.SetFont("Helvetica", "B", 7)
	f.CellFormat(186, 4, tr("CÁLCULO DO IMPOSTO"), "", 1, "L", false, 0, "")
	y += 4
	zero := formatBRL(0)
	w := 186.0 / 6
	for i, c := range [][2]string{{"Base de cálculo do ICMS", zero}, {"Valor do ICMS", zero}, {"Valor total dos produtos", formatBRL(n.AmountCents)},
		{"Valor do frete", zero}, {"Desconto", zero}, {"Valor total da nota", formatBRL(n.AmountCents)}} {
		box(f, tr, 12+float64(i)*w, y, w, 10, c[0], c[1])
	}
	y += 13
	// Items.
	f.SetXY(12, y)
	f.SetFont("Helvetica", "B", 7)
	f.CellFormat(186, 4, tr("DADOS DOS PRODUTOS / SERVIÇOS"), "", 1, "L", false, 0, "")
	f.SetFillColor(230, 230, 230)
	cols := []struct {
		w     float64
		title string
		align string
	}{{16, "Código", "L"}, {80, "Descrição", "L"}, {16, "NCM", "L"}, {10, "CFOP", "L"}, {10, "Un.", "L"}, {14, "Qtd.", "R"}, {20, "V. unit.", "R"}, {20, "V. total", "R"}}
	for _, c := range cols {
		f.CellFormat(c.w, 5, tr(c.title), "1", 0, c.align, true, 0, "")
	}
	f.Ln(-1)
	f.SetFont("Helvetica", "", 7)
	cfop := "5933"
	if n.Issuer.Address.State != n.Recipient.Address.State {
		cfop = "6933"
	}
	for i, it := range inv.Items {
		vals := []string{fmt.Sprintf("SRV%03d", i+1), truncate(it.Description, 55), "00000000", cfop, "UN", fmt.Sprint(it.Quantity), formatBRL(it.UnitPriceCents), formatBRL(it.AmountCents)}
		for j, c := range cols {
			f.CellFormat(c.w, 5, tr(vals[j]), "1", 0, c.align, false, 0, "")
		}
		f.Ln(-1)
	}
	f.Ln(3)
	f.SetFont("Helvetica", "B", 7)
	f.CellFormat(186, 4, tr("DADOS ADICIONAIS"), "", 1, "L", false, 0, "")
	f.SetFont("Helvetica", "", 7)
	f.MultiCell(186, 3.5, tr(fmt.Sprintf("Fatura %s. Documento emitido por ME ou EPP optante pelo Simples Nacional. %s.", inv.Number, homologationNote)), "1", "L", false)
	if n.Status == NFeCancelled {
		stamp(f, tr, "NF-e CANCELADA", 180, 0, 0)
		f.SetFont("Helvetica", "", 8)
		f.MultiCell(186, 4, tr(fmt.Sprintf("Cancelada em %s, protocolo %s: %s", n.CancelledAt.In(brt).Format("02/01/2006 15:04"), n.CancelProtocol, n.CancelReason)), "", "C", false)
	}
	return output(f, "the DANFE of NF-e "+n.ID)
}
