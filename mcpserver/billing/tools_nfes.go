package billing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/store"
)

// NFeListArg filters billing_nfes_list.
type NFeListArg struct {
	Page
	Status     string `json:"status,omitempty" jsonschema:"authorized, rejected, pending or cancelled" enum:"authorized,rejected,pending,cancelled"`
	InvoiceID  string `json:"invoice_id,omitempty" jsonschema:"only NF-e of this invoice" pattern:"^inv_[A-Za-z0-9_-]{1,64}$"`
	CustomerID string `json:"customer_id,omitempty" jsonschema:"only NF-e issued to this customer" pattern:"^cus_[A-Za-z0-9_-]{1,64}$"`
}

// NFeList is a page of NF-e.
type NFeList struct {
	NFes       []NFe  `json:"nfes"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// NFeEmitArg asks for an NF-e for an invoice.
type NFeEmitArg struct {
	InvoiceID string `json:"invoice_id" jsonschema:"the open or paid invoice to document" pattern:"^inv_[A-Za-z0-9_-]{1,64}$"`
}

// NFeCancelArg cancels an authorized NF-e.
type NFeCancelArg struct {
	ID     string `json:"id" jsonschema:"the authorized NF-e" pattern:"^nfe_[A-Za-z0-9_-]{1,64}$"`
	Reason string `json:"reason" jsonschema:"justification sent to SEFAZ (xJust), 15 to 255 characters" minLength:"15" maxLength:"255"`
}

// nfeSorts are the sortable fields of NF-e.
var nfeSorts = sortable{
	"number":        {field: store.NumberField("number")},
	"amount_cents":  {field: store.NumberField("amount_cents")},
	"issued_at":     {field: store.TimeField("issued_at")},
	"authorized_at": {field: store.TimeField("authorized_at")},
	"created_at":    {field: store.CreatedField},
}

// cancelWindow is how long after authorization SEFAZ accepts a cancellation.
const cancelWindow = 24 * time.Hour

// hasDocuments reports whether an NF-e has a DANFE and an authorized XML.
func hasDocuments(n NFe) bool { return n.Status == NFeAuthorized || n.Status == NFeCancelled }

// viewNFe describes the NF-e's documents.
func viewNFe(n NFe) NFe {
	n.PDF, n.XML = nil, nil
	if hasDocuments(n) {
		n.PDF = &FileInfo{URI: URIPrefix + "nfes/" + n.ID + "/pdf", MIMEType: "application/pdf"}
		n.XML = &FileInfo{URI: URIPrefix + "nfes/" + n.ID + "/xml", MIMEType: "application/xml"}
	}
	return n
}

func (p *Product) getNFe(ctx context.Context, org, id string) (NFe, error) {
	if err := required("id", id); err != nil {
		return NFe{}, err
	}
	n, err := p.repo.nfes.Get(ctx, org, id)
	return viewNFe(n), err
}

// withSizes renders an NF-e's documents to report their sizes.
func (p *Product) withSizes(ctx context.Context, org string, n NFe) (NFe, error) {
	if !hasDocuments(n) {
		return n, nil
	}
	doc, err := p.nfeDocument(ctx, org, n)
	if err != nil {
		return n, err
	}
	x, err := doc.xml()
	if err != nil {
		return n, err
	}
	pdf, err := doc.danfe()
	if err != nil {
		return n, err
	}
	n.XML.SizeBytes, n.PDF.SizeBytes = len(x), len(pdf)
	return n, nil
}

func (p *Product) nfesList(ctx context.Context, c *mcpserver.Caller, in NFeListArg) (NFeList, error) {
	switch in.Status {
	case "", NFeAuthorized, NFeRejected, NFePending, NFeCancelled:
	default:
		return NFeList{}, mcpserver.Errorf("invalid_arguments", "status must be authorized, rejected, pending or cancelled, got %q", in.Status)
	}
	var where []store.Filter
	if in.CustomerID != "" {
		where = append(where, store.Eq(store.TextField("customer_id"), in.CustomerID))
	}
	q, err := in.query(nfeSorts, where...)
	if err != nil {
		return NFeList{}, err
	}
	q.Parent, q.Status = in.InvoiceID, in.Status
	items, next, err := listPage(ctx, p.repo.nfes, c.Organization, q)
	for i := range items {
		items[i] = viewNFe(items[i])
	}
	return NFeList{NFes: items, NextCursor: next}, err
}

func (p *Product) nfesGet(ctx context.Context, c *mcpserver.Caller, in NFeIDArg) (NFe, error) {
	n, err := p.getNFe(ctx, c.Organization, in.ID)
	if err != nil {
		return n, err
	}
	return p.withSizes(ctx, c.Organization, n)
}

func (p *Product) nfesEmit(ctx context.Context, c *mcpserver.Caller, in NFeEmitArg) (NFe, error) {
	return p.emit(ctx, c, in.InvoiceID)
}

// cancellableNFe is the NF-e a cancel acts on, when it can, with the
// justification SEFAZ receives.
func (p *Product) cancellableNFe(ctx context.Context, c *mcpserver.Caller, in NFeCancelArg) (NFe, string, error) {
	reason := strings.TrimSpace(in.Reason)
	if n := utf8.RuneCountInString(reason); n < 15 || n > 255 {
		return NFe{}, "", mcpserver.Errorf("invalid_arguments", "reason must have 15 to 255 characters (SEFAZ's xJust), got %d", n)
	}
	n, err := p.getNFe(ctx, c.Organization, in.ID)
	if err != nil {
		return n, "", err
	}
	switch n.Status {
	case NFeAuthorized:
	case NFeCancelled:
		return n, "", mcpserver.Errorf("invalid_state", "NF-e %s was already cancelled at %s", n.ID, n.CancelledAt.Format(time.RFC3339))
	case NFeRejected:
		return n, "", mcpserver.Errorf("invalid_state", "NF-e %s was rejected by SEFAZ and has no legal effect; there is nothing to cancel", n.ID)
	default:
		return n, "", mcpserver.Errorf("invalid_state", "NF-e %s is %s; only an authorized NF-e can be cancelled", n.ID, n.Status)
	}
	if p.now().Sub(n.AuthorizedAt) > cancelWindow {
		return n, "", mcpserver.Errorf("cancel_window_closed", "NF-e %s was authorized at %s, more than 24 hours ago; SEFAZ no longer accepts its cancellation (issue a return NF-e instead)",
			n.ID, n.AuthorizedAt.Format(time.RFC3339))
	}
	return n, reason, nil
}

// checkNFeCancel is billing_nfes_cancel's check.
func (p *Product) checkNFeCancel(ctx context.Context, c *mcpserver.Caller, in NFeCancelArg) error {
	_, _, err := p.cancellableNFe(ctx, c, in)
	return err
}

func (p *Product) nfesCancel(ctx context.Context, c *mcpserver.Caller, in NFeCancelArg) (NFe, error) {
	n, reason, err := p.cancellableNFe(ctx, c, in)
	if err != nil {
		return n, err
	}
	now := p.now().UTC()
	org, err := p.organization(ctx, c.Organization)
	if err != nil {
		return n, err
	}
	n.Status, n.CancelledAt, n.CancelReason, n.UpdatedAt = NFeCancelled, now, reason, now
	n.CancelProtocol = protocolNumber(org.Address.State, now, n.Number+500000)
	// The cancellation and the invoice's copy of its NF-e's status (which
	// listings filter on), together.
	err = p.opts.Store.WithTx(ctx, func(tx store.Tx) error {
		r := p.repo.in(tx)
		if err := r.nfes.Put(ctx, c.Organization, n); err != nil {
			return err
		}
		inv, err := r.invoices.Get(ctx, c.Organization, n.InvoiceID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && inv.NFeID != n.ID) {
			return nil
		}
		if err != nil {
			return err
		}
		inv.NFeStatus, inv.UpdatedAt = n.Status, now
		return r.invoices.Put(ctx, c.Organization, inv)
	})
	if err != nil {
		return n, err
	}
	return viewNFe(n), nil
}

// protocolNumber builds a 15-digit SEFAZ protocol number.
func protocolNumber(state string, at time.Time, seq int) string {
	return fmt.Sprintf("1%02d%s%010d", ufCodes[state], at.In(brt).Format("06"), seq%10_000_000_000)
}

// sefaz decides, as the homologation web service would, whether an NF-e
// for this recipient is authorized: a recipient document with wrong check
// digits or an incomplete address is rejected with SEFAZ's code.
func sefaz(cu Customer) *Rejection {
	switch {
	case cu.DocumentType == "cpf" && !ValidCPF(cu.Document):
		return &Rejection{Code: "237", Message: "Rejeição: CPF do destinatário inválido"}
	case cu.DocumentType == "cnpj" && !ValidCNPJ(cu.Document):
		return &Rejection{Code: "208", Message: "Rejeição: CNPJ do destinatário inválido"}
	case !cu.Address.complete():
		return &Rejection{Code: "225", Message: "Rejeição: Falha no Schema XML da NFe (endereço do destinatário incompleto: logradouro, número, município, código IBGE, UF e CEP)"}
	}
	return nil
}

func (p *Product) emit(ctx context.Context, c *mcpserver.Caller, invoiceID string) (NFe, error) {
	if err := required("invoice_id", invoiceID); err != nil {
		return NFe{}, err
	}
	inv, err := p.getInvoice(ctx, c.Organization, invoiceID)
	if err != nil {
		return NFe{}, err
	}
	if inv.Status == InvoiceCancelled || inv.Status == InvoiceRefunded {
		return NFe{}, mcpserver.Errorf("invalid_state", "invoice %s is %s; an NF-e is only issued for open, overdue or paid invoices", inv.ID, inv.Status)
	}
	org, err := p.organization(ctx, c.Organization)
	if err != nil {
		return NFe{}, err
	}
	if !org.FiscalProfileComplete {
		return NFe{}, mcpserver.Errorf("fiscal_profile_incomplete", "the organization's fiscal profile lacks a legal name, a valid CNPJ or a complete address; NF-e cannot be issued (see billing_organization_get)")
	}
	cu, err := p.getCustomer(ctx, c.Organization, inv.CustomerID)
	if err != nil {
		if isNotFound(err) {
			return NFe{}, mcpserver.Errorf("customer_not_found", "the customer of invoice %s no longer exists; an NF-e needs its recipient", inv.ID)
		}
		return NFe{}, err
	}
	if cu.Document == "" {
		return NFe{}, mcpserver.Errorf("customer_without_document", "customer %s (%s) has no CPF or CNPJ; add one with billing_customers_update before issuing the NF-e", cu.ID, cu.Name)
	}
	all, err := p.repo.nfes.All(ctx, c.Organization, store.Query{Parent: inv.ID})
	if err != nil {
		return NFe{}, err
	}
	for _, n := range all {
		if n.Status == NFeAuthorized || n.Status == NFePending {
			return NFe{}, mcpserver.Errorf("nfe_exists", "invoice %s already has NF-e %s (%s, number %d); cancel it first to issue another", inv.ID, n.ID, n.Status, n.Number)
		}
	}
	// Claim the invoice's next NF-e by creating it, pending, under an id
	// that says which attempt it is: of callers (or replicas) that saw the
	// same NF-e history, exactly one creates it. The number is taken only
	// after the claim, so a lost race burns none.
	now := p.now().UTC()
	n := NFe{ID: fmt.Sprintf("nfe_%s_%d", strings.TrimPrefix(inv.ID, "inv_"), len(all)+1), InvoiceID: inv.ID, CustomerID: cu.ID,
		Status: NFePending, Series: org.NFeSeries, AmountCents: inv.AmountCents, CreatedAt: now, UpdatedAt: now}
	if err := p.repo.nfes.Create(ctx, c.Organization, n); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return NFe{}, mcpserver.Errorf("nfe_exists", "another NF-e for invoice %s is being issued right now; list the invoice's NF-e (billing_nfes_list) before trying again", inv.ID)
		}
		return NFe{}, err
	}
	num, err := p.nextNumber(ctx, c.Organization, fmt.Sprintf("nfe_series_%d", org.NFeSeries), 1)
	if err != nil {
		return NFe{}, err
	}
	n.Number, n.Issuer, n.Recipient, n.IssuedAt = int(num), issuerParty(org), recipientParty(cu), now
	if n.AccessKey, err = AccessKey(org.Address.State, now.In(brt), org.CNPJ, n.Series, n.Number, numericCode(n.ID)); err != nil {
		return NFe{}, err
	}
	if rej := sefaz(cu); rej != nil {
		n.Status, n.Rejection = NFeRejected, rej
	} else {
		n.Status, n.AuthorizedAt = NFeAuthorized, now
		n.Protocol = protocolNumber(org.Address.State, now, n.Number)
	}
	// The NF-e's outcome and the invoice that points at it, together.
	inv.NFeID, inv.NFeStatus, inv.UpdatedAt = n.ID, n.Status, now
	err = p.opts.Store.WithTx(ctx, func(tx store.Tx) error {
		r := p.repo.in(tx)
		if err := r.nfes.Put(ctx, c.Organization, n); err != nil {
			return err
		}
		return r.invoices.Put(ctx, c.Organization, inv)
	})
	if err != nil {
		return NFe{}, err
	}
	return p.withSizes(ctx, c.Organization, viewNFe(n))
}

// numericCode is the 8-digit random code (cNF) of an access key, derived
// from the NF-e's random id.
func numericCode(id string) int {
	h := 0
	for _, r := range id {
		h = (h*31 + int(r)) % 100_000_000
	}
	return h
}

func issuerParty(o Organization) Party {
	return Party{Name: o.LegalName, Document: o.CNPJ, DocumentType: "cnpj", StateReg: o.StateReg, Email: o.Email, Address: o.Address}
}

func recipientParty(cu Customer) Party {
	return Party{Name: cu.Name, Document: cu.Document, DocumentType: cu.DocumentType, Email: cu.Email, Address: cu.Address}
}
