package billing

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/mcpserver"
	"github.com/kobana/workflow/mcpserver/store"
)

// maxRows caps the rows a prompt lists inline.
const maxRows = 50

func textMessage(s string) *mcp.PromptMessage {
	return &mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: s}}
}

// embed attaches a record as its resource would serve it.
func embed(uri string, v any) (*mcp.PromptMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", uri, err)
	}
	return &mcp.PromptMessage{Role: "user", Content: &mcp.EmbeddedResource{
		Resource: &mcp.ResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

func checkMonthArg(s string) error { _, err := parseMonth(s); return err }

func (p *Product) prompts() []mcpserver.Prompt {
	return []mcpserver.Prompt{
		{Name: "collect_overdue_invoices", Title: "Collect overdue invoices",
			Description: "Lists the overdue open invoices, shows them as a table and asks which should get a payment reminder before sending any.",
			Arguments:   []mcpserver.PromptArgument{{Name: "customer_id", Description: "only this customer's invoices"}},
			Tools:       []string{ToolInvoicesList, ToolCustomersGet, ToolInvoicesSendReminder},
			Get:         p.collectOverdue},
		{Name: "review_pending_nfes", Title: "Review pending NF-e",
			Description: "Gathers the invoices that still have no NF-e and the rejected NF-e, summarizes them and suggests the next step, without issuing anything.",
			Tools:       []string{ToolInvoicesList, ToolNFesList, ToolNFesGet},
			Get:         p.reviewPendingNFes},
		{Name: "customer_overview", Title: "Customer overview",
			Description: "A customer's portrait: details, subscriptions, what is open and what is overdue.",
			Arguments:   []mcpserver.PromptArgument{{Name: "customer_id", Description: "the customer to describe", Required: true}},
			Tools:       []string{ToolCustomersGet, ToolSubscriptionsList, ToolInvoicesList},
			Get:         p.customerOverview},
		{Name: "monthly_billing_summary", Title: "Monthly billing summary",
			Description: "What was invoiced, collected and left open in a month.",
			Arguments:   []mcpserver.PromptArgument{{Name: "month", Description: "YYYY-MM; default: the current month", Check: checkMonthArg}},
			Tools:       []string{ToolInvoicesList},
			Get:         p.monthlySummary},
	}
}

func invoiceRow(inv Invoice) string {
	last := "never"
	if !inv.LastReminderAt.IsZero() {
		last = inv.LastReminderAt.In(brt).Format("2006-01-02 15:04")
	}
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %d | %d | %s |", inv.ID, inv.Number, inv.CustomerName, formatBRL(inv.AmountCents), inv.DueDate,
		inv.DaysOverdue, inv.RemindersSent, last)
}

func (p *Product) collectOverdue(ctx context.Context, c *mcpserver.Caller, args map[string]string) (*mcp.GetPromptResult, error) {
	scope := ""
	var msgs []*mcp.PromptMessage
	if id := args["customer_id"]; id != "" {
		cu, err := p.getCustomer(ctx, c.Organization, id)
		if err != nil {
			return nil, err
		}
		scope = fmt.Sprintf(" of customer %s (%s)", cu.Name, cu.ID)
		m, err := embed(URIPrefix+"customers/"+cu.ID, cu)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	page, err := p.invoices(ctx, c.Organization, InvoiceListArg{CustomerID: args["customer_id"], Status: InvoiceOverdue, Page: Page{Sort: "-days_overdue"}})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Help me collect the overdue invoices%s (today is %s).\n\n", scope, p.today())
	if len(page) == 0 {
		b.WriteString("There are no overdue open invoices right now. Say so; check again with billing_invoices_list (status overdue) before concluding, and send nothing.\n")
		return &mcp.GetPromptResult{Description: "No overdue invoices", Messages: append([]*mcp.PromptMessage{textMessage(b.String())}, msgs...)}, nil
	}
	var total int64
	for _, inv := range page {
		total += inv.AmountCents
	}
	fmt.Fprintf(&b, "%d open invoice(s) are past their due date, %s in all, most overdue first:\n\n", len(page), formatBRL(total))
	b.WriteString("| id | number | customer | amount | due date | days overdue | reminders sent | last reminder |\n|---|---|---|---|---|---|---|---|\n")
	for i, inv := range page {
		if i == maxRows {
			fmt.Fprintf(&b, "| … %d more: use billing_invoices_list with status overdue | | | | | | | |\n", len(page)-maxRows)
			break
		}
		b.WriteString(invoiceRow(inv) + "\n")
	}
	b.WriteString("\nSteps:\n" +
		"1. Refresh the list with billing_invoices_list (status overdue" + customerFilter(args["customer_id"]) + ") and show me the table above, updated.\n" +
		"2. Ask me which of these invoices should get a payment reminder. Do not send any reminder before I answer.\n" +
		"3. For each invoice I choose, call billing_invoices_send_reminder once (id = the invoice id). Skip any invoice whose customer has no e-mail " +
		"(look it up with billing_customers_get) and any reminded in the last 24 hours, and tell me why.\n" +
		"4. Report what was sent, and what was not and why.\n")
	return &mcp.GetPromptResult{Description: fmt.Sprintf("%d overdue invoices, %s", len(page), formatBRL(total)),
		Messages: append([]*mcp.PromptMessage{textMessage(b.String())}, msgs...)}, nil
}

func customerFilter(id string) string {
	if id == "" {
		return ""
	}
	return ", customer_id " + id
}

func (p *Product) reviewPendingNFes(ctx context.Context, c *mcpserver.Caller, _ map[string]string) (*mcp.GetPromptResult, error) {
	without, err := p.invoices(ctx, c.Organization, InvoiceListArg{WithoutNFe: true})
	if err != nil {
		return nil, err
	}
	without = slices.DeleteFunc(without, func(inv Invoice) bool { return inv.Status == InvoiceCancelled || inv.Status == InvoiceRefunded })
	rejected, err := p.repo.nfes.All(ctx, c.Organization, store.Query{Status: NFeRejected})
	if err != nil {
		return nil, err
	}
	pending, err := p.repo.nfes.All(ctx, c.Organization, store.Query{Status: NFePending})
	if err != nil {
		return nil, err
	}
	// A rejection still matters while its invoice has no NF-e.
	needs := map[string]bool{}
	for _, inv := range without {
		needs[inv.ID] = true
	}
	rejected = slices.DeleteFunc(rejected, func(n NFe) bool { return !needs[n.InvoiceID] })
	var b strings.Builder
	fmt.Fprintf(&b, "Review the NF-e still to be sorted out in organization %s (today is %s). Issue nothing: this is a review.\n\n", c.Organization, p.today())
	if len(without) == 0 && len(rejected) == 0 && len(pending) == 0 {
		b.WriteString("Every open, overdue or paid invoice has an authorized NF-e and none is rejected or pending. Say so.\n")
		return &mcp.GetPromptResult{Description: "Nothing pending", Messages: []*mcp.PromptMessage{textMessage(b.String())}}, nil
	}
	lastRejection := map[string]NFe{}
	for _, n := range rejected {
		if _, seen := lastRejection[n.InvoiceID]; !seen {
			lastRejection[n.InvoiceID] = n
		}
	}
	fmt.Fprintf(&b, "Invoices without an NF-e (%d):\n", len(without))
	for i, inv := range without {
		if i == maxRows {
			fmt.Fprintf(&b, "- … %d more: billing_invoices_list with without_nfe true\n", len(without)-maxRows)
			break
		}
		line := fmt.Sprintf("- %s %s, %s, %s, %s", inv.ID, inv.Number, inv.CustomerName, formatBRL(inv.AmountCents), inv.Status)
		if n, ok := lastRejection[inv.ID]; ok {
			line += fmt.Sprintf("; last attempt %s rejected by SEFAZ: %s %s", n.ID, n.Rejection.Code, n.Rejection.Message)
		}
		b.WriteString(line + "\n")
	}
	fmt.Fprintf(&b, "\nRejected NF-e whose invoice still has none (%d):\n", len(rejected))
	for i, n := range rejected {
		if i == maxRows {
			break
		}
		fmt.Fprintf(&b, "- %s number %d for invoice %s, customer %s: %s %s\n", n.ID, n.Number, n.InvoiceID, n.CustomerID, n.Rejection.Code, n.Rejection.Message)
	}
	fmt.Fprintf(&b, "\nNF-e pending at SEFAZ (%d):\n", len(pending))
	for _, n := range pending {
		fmt.Fprintf(&b, "- %s number %d for invoice %s, issued %s\n", n.ID, n.Number, n.InvoiceID, n.IssuedAt.In(brt).Format("2006-01-02 15:04"))
	}
	b.WriteString("\nSummarize this for me: how many invoices lack an NF-e and how much they add up to, which rejections have the same cause, " +
		"and what the next step is for each group (for a rejected recipient CPF/CNPJ or address: fix the customer with billing_customers_update, " +
		"then issue again with billing_nfes_emit; for invoices never issued: billing_nfes_emit; for pending ones: wait and check with billing_nfes_get). " +
		"Use billing_nfes_list and billing_nfes_get for details. Do not call billing_nfes_emit or change anything: suggest, and let me decide.\n")
	msgs := []*mcp.PromptMessage{textMessage(b.String())}
	for i, n := range rejected {
		if i == 10 {
			break
		}
		m, err := embed(URIPrefix+"nfes/"+n.ID, viewNFe(n))
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return &mcp.GetPromptResult{Description: fmt.Sprintf("%d invoices without NF-e, %d rejected, %d pending", len(without), len(rejected), len(pending)), Messages: msgs}, nil
}

func (p *Product) customerOverview(ctx context.Context, c *mcpserver.Caller, args map[string]string) (*mcp.GetPromptResult, error) {
	cu, err := p.getCustomer(ctx, c.Organization, args["customer_id"])
	if err != nil {
		return nil, err
	}
	subs, err := p.repo.subscriptions.All(ctx, c.Organization, store.Query{Parent: cu.ID})
	if err != nil {
		return nil, err
	}
	invs, err := p.invoices(ctx, c.Organization, InvoiceListArg{CustomerID: cu.ID})
	if err != nil {
		return nil, err
	}
	count := map[string]int{}
	sum := map[string]int64{}
	for _, inv := range invs {
		count[inv.Status]++
		sum[inv.Status] += inv.AmountCents
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Give me an overview of customer %s (%s) as of %s.\n\n", cu.Name, cu.ID, p.today())
	doc := "no CPF/CNPJ on file (NF-e cannot be issued)"
	if cu.Document != "" {
		doc = strings.ToUpper(cu.DocumentType) + " " + formatDocument(cu.Document)
	}
	fmt.Fprintf(&b, "Details: %s; e-mail %s; address %s.\n", doc, firstNonEmpty(cu.Email, "none"), firstNonEmpty(addressLine(cu.Address), "none"))
	fmt.Fprintf(&b, "Subscriptions (%d):\n", len(subs))
	for _, s := range subs {
		next := ""
		if s.Status == SubscriptionActive {
			next = ", next billing " + s.NextBillingDate
		}
		fmt.Fprintf(&b, "- %s %s, %s %s, %s%s\n", s.ID, s.Description, formatBRL(s.AmountCents), s.Interval, s.Status, next)
	}
	fmt.Fprintf(&b, "Invoices (%d): open %d (%s), overdue %d (%s), paid %d (%s), cancelled %d, refunded %d.\n",
		len(invs), count[InvoiceOpen], formatBRL(sum[InvoiceOpen]), count[InvoiceOverdue], formatBRL(sum[InvoiceOverdue]),
		count[InvoicePaid], formatBRL(sum[InvoicePaid]), count[InvoiceCancelled], count[InvoiceRefunded])
	for i, inv := range invs {
		if i == maxRows {
			break
		}
		if inv.Status == InvoiceOpen || inv.Status == InvoiceOverdue {
			fmt.Fprintf(&b, "- %s %s %s due %s, %s", inv.ID, inv.Number, formatBRL(inv.AmountCents), inv.DueDate, inv.Status)
			if inv.DaysOverdue > 0 {
				fmt.Fprintf(&b, " (%d days)", inv.DaysOverdue)
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\nPortray this customer for me: who they are, what they pay for, what is open and what is overdue, and anything that needs attention " +
		"(missing e-mail or CPF/CNPJ, overdue invoices, a cancelled subscription). Use billing_invoices_list with customer_id for more detail. Change nothing.\n")
	msgs := []*mcp.PromptMessage{textMessage(b.String())}
	m, err := embed(URIPrefix+"customers/"+cu.ID, cu)
	if err != nil {
		return nil, err
	}
	msgs = append(msgs, m)
	return &mcp.GetPromptResult{Description: "Overview of " + cu.Name, Messages: msgs}, nil
}

// MonthSummary is what monthly_billing_summary computes.
type MonthSummary struct {
	Month              string         `json:"month"`
	InvoicedCount      int            `json:"invoiced_count"`
	InvoicedCents      int64          `json:"invoiced_cents"`
	CollectedCount     int            `json:"collected_count"`
	CollectedCents     int64          `json:"collected_cents"`
	LeftOpenCount      int            `json:"left_open_count"`
	LeftOpenCents      int64          `json:"left_open_cents"`
	CancelledCount     int            `json:"cancelled_count"`
	RefundedCents      int64          `json:"refunded_cents"`
	InvoicedByStatus   map[string]int `json:"invoiced_by_status"`
	OverdueOfThisMonth int            `json:"overdue_of_this_month"`
}

func (p *Product) summarize(ctx context.Context, org, month string) (MonthSummary, error) {
	invs, err := p.invoices(ctx, org, InvoiceListArg{})
	if err != nil {
		return MonthSummary{}, err
	}
	s := MonthSummary{Month: month, InvoicedByStatus: map[string]int{}}
	for _, inv := range invs {
		if strings.HasPrefix(inv.IssueDate, month) {
			s.InvoicedByStatus[inv.Status]++
			switch inv.Status {
			case InvoiceCancelled:
				s.CancelledCount++
			default:
				s.InvoicedCount++
				s.InvoicedCents += inv.AmountCents
			}
			if inv.Status == InvoiceOpen || inv.Status == InvoiceOverdue {
				s.LeftOpenCount++
				s.LeftOpenCents += inv.AmountCents
			}
			if inv.Status == InvoiceOverdue {
				s.OverdueOfThisMonth++
			}
		}
		if !inv.PaidAt.IsZero() && inv.PaidAt.In(brt).Format("2006-01") == month {
			s.CollectedCount++
			s.CollectedCents += inv.PaidAmountCents
		}
		if inv.Status == InvoiceRefunded && inv.RefundedAt.In(brt).Format("2006-01") == month {
			s.RefundedCents += inv.PaidAmountCents
		}
	}
	return s, nil
}

func (p *Product) monthlySummary(ctx context.Context, c *mcpserver.Caller, args map[string]string) (*mcp.GetPromptResult, error) {
	month := args["month"]
	if month == "" {
		month = p.now().In(brt).Format("2006-01")
	}
	s, err := p.summarize(ctx, c.Organization, month)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Summarize billing for %s in organization %s.\n\n", month, c.Organization)
	fmt.Fprintf(&b, "- Invoiced (issued in %s, not cancelled): %d invoice(s), %s.\n", month, s.InvoicedCount, formatBRL(s.InvoicedCents))
	fmt.Fprintf(&b, "- Collected (payments received in %s, whatever month they were issued): %d, %s.\n", month, s.CollectedCount, formatBRL(s.CollectedCents))
	fmt.Fprintf(&b, "- Left open (issued in %s and not paid yet): %d, %s, of which %d already overdue.\n", month, s.LeftOpenCount, formatBRL(s.LeftOpenCents), s.OverdueOfThisMonth)
	fmt.Fprintf(&b, "- Cancelled (issued in %s): %d. Refunded in %s: %s.\n", month, s.CancelledCount, month, formatBRL(s.RefundedCents))
	b.WriteString("\nWrite a short summary for a finance team: what was billed, what came in, what is still open, and how it compares with what is usual " +
		"(call billing_invoices_list for other months if useful). The figures are attached as JSON. Change nothing.\n")
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding the summary: %w", err)
	}
	msgs := []*mcp.PromptMessage{textMessage(b.String()), textMessage(string(data))}
	return &mcp.GetPromptResult{Description: fmt.Sprintf("Billing in %s: invoiced %s, collected %s, open %s", month,
		formatBRL(s.InvoicedCents), formatBRL(s.CollectedCents), formatBRL(s.LeftOpenCents)), Messages: msgs}, nil
}
