package inboxdemo

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"strings"
	"time"

	"github.com/kobana/workflow/egress"
	"github.com/kobana/workflow/internal/minipdf"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/store"
	"github.com/kobana/workflow/runrecord"
)

// Load fills st with the demo organization (package demo) and the Inbox
// records of its workspaces, once: the organization unless it exists, the
// Inbox records unless the Finance workspace's Inbox record exists (written
// last, so a load cut short is completed by the next one; every write is a
// replace). Then it mints new tokens: a read-write token for the owner and
// a read-only token for the viewer. now anchors every date (runs spread
// over the last 40 days).
func Load(ctx context.Context, st store.Store, now time.Time) ([]demo.Token, error) {
	now = now.UTC().Truncate(time.Second)
	if _, err := demo.Identity(ctx, st); err != nil {
		return nil, err
	}
	_, err := inbox.NewRepo(st).Workspaces.Get(ctx, demo.Workspace, demo.Workspace)
	switch {
	case errors.Is(err, store.ErrNotFound):
		if err := load(ctx, st, now); err != nil {
			return nil, fmt.Errorf("loading the Inbox demo: %w", err)
		}
	case err != nil:
		return nil, fmt.Errorf("looking for the inbox.Inbox demo: %w", err)
	}
	return demo.Tokens(ctx, st)
}

type loader struct {
	ctx  context.Context
	st   store.Store
	r    inbox.Repo
	now  time.Time
	err  error
	ws   string
	evts int
}

// put stores one record of the demo.
func (s *loader) put(d inbox.Document) {
	if s.err != nil {
		return
	}
	switch v := d.(type) {
	case inbox.Workspace:
		s.err = s.r.Workspaces.Put(s.ctx, s.ws, v)
	case inbox.Inbox:
		s.err = s.r.Inboxes.Put(s.ctx, s.ws, v)
	case inbox.Email:
		s.err = s.r.Emails.Put(s.ctx, s.ws, v)
	case inbox.Agent:
		s.err = s.r.Agents.Put(s.ctx, s.ws, v)
	case inbox.AgentRun:
		s.err = s.r.AgentRuns.Put(s.ctx, s.ws, v)
	case inbox.WorkflowRun:
		s.err = s.r.WorkflowRuns.Put(s.ctx, s.ws, v)
	case inbox.Webhook:
		s.err = s.r.Webhooks.Put(s.ctx, s.ws, v)
	case inbox.Delivery:
		s.err = s.r.Deliveries.Put(s.ctx, s.ws, v)
	case inbox.SystemEvent:
		s.err = s.r.Events.Put(s.ctx, s.ws, v)
	default:
		s.err = fmt.Errorf("the demo has no repository for %T", d)
	}
}

func (s *loader) event(typ, actor, subject string, at time.Time, payload any) {
	s.evts++
	b, _ := json.Marshal(payload)
	e := inbox.SystemEvent{ID: fmt.Sprintf("evt_%04d", s.evts), Type: typ, Actor: actor, Subject: subject, Payload: b, CreatedAt: at}
	s.put(e)
}

func (s *loader) ago(d time.Duration) time.Time { return s.now.Add(-d) }

const day = 24 * time.Hour

// financeLimits are the demo Finance workspace's plan limits.
var financeLimits = inbox.Limits{EmailsPerMonth: 5000, Inboxes: 10, Agents: 10, Webhooks: 10, MaxAttachmentBytes: 25 << 20, RetentionDays: 90}

// demoAuth is what the intake records for a demo sender whose domain
// publishes SPF, DKIM and DMARC and passes them all.
func demoAuth(from string) *inbox.SenderAuth {
	_, domain, _ := strings.Cut(from, "@")
	pass := func(sel string) inbox.AuthCheck {
		return inbox.AuthCheck{Result: inbox.AuthPass, Domain: domain, Selector: sel}
	}
	return &inbox.SenderAuth{EnvelopeFrom: from, SPF: pass(""), DKIM: []inbox.AuthCheck{pass("mail")}, DMARC: pass(""), AuthenticatedFrom: strings.ToLower(from)}
}

func load(ctx context.Context, st store.Store, now time.Time) error {
	for _, step := range []func() error{
		func() error { return st.SetSecret(ctx, demo.Workspace, "ERP_TOKEN", "erp_live_9f8e7d6c5b4a") },
		func() error {
			// The ERP token may go to the ERP only (secrets_set destinations).
			return st.SetSecret(ctx, demo.Workspace, inbox.DestinationsSecretName("ERP_TOKEN"), inbox.EncodeDestinations(egress.MustParseList("erp.example.com")))
		},
		func() error {
			return st.SetSecret(ctx, demo.Workspace, "CHAT_WEBHOOK_URL", "https://chat.example.com/hooks/T024BE7LD/B08Q9XYZ/abc123")
		},
		func() error {
			return st.SetSecret(ctx, demo.Workspace, inbox.WebhookSecretName("whk_erp"), "whsec_demo_erp_0123456789abcdef")
		},
		func() error {
			return st.SetSecret(ctx, demo.Workspace, inbox.WebhookSecretName("whk_chat"), "whsec_demo_chat_fedcba9876543210")
		},
	} {
		if err := step(); err != nil {
			return err
		}
	}
	s := &loader{ctx: ctx, st: st, r: inbox.NewRepo(st), now: now, ws: demo.Workspace}
	// The Finance workspace's record says the load is complete: it is
	// written last.
	finance := inbox.Workspace{ID: demo.Workspace, OrganizationID: demo.Organization, Name: "Finance", Slug: "finance",
		ExternalID: "erp-7781", Plan: "business", Environment: "sandbox", CreatedAt: s.ago(60 * day),
		Limits: financeLimits}
	s.event("secret.set", "person:"+demo.Owner, "ERP_TOKEN", s.ago(59*day), map[string]string{"name": "ERP_TOKEN"})
	s.event("secret.set", "person:"+demo.Owner, "CHAT_WEBHOOK_URL", s.ago(59*day), map[string]string{"name": "CHAT_WEBHOOK_URL"})

	invoiceAgent := inbox.Agent{ID: "agt_invoices", Name: "Invoice reader", Model: "claude-sonnet-4-5", Status: "active",
		SystemMessage: "You read supplier invoices sent to the finance inbox. Extract supplier, invoice number, due date and amount, " +
			"then create a payable in the ERP (POST https://erp.example.com/api/payables with Authorization: Bearer ${{secrets.ERP_TOKEN}}), " +
			"attach the PDF (form field file = ${{email.attachments.0}}) and notify the chat webhook ${{secrets.CHAT_WEBHOOK_URL}}. " +
			"Answer {\"result\": {...}, \"workflow\": [...]}; omit workflow when the e-mail is not an invoice.",
		Skills: []string{"extract_invoice", "read_pdf"}, CreatedAt: s.ago(58 * day), UpdatedAt: s.ago(20 * day)}
	receiptAgent := inbox.Agent{ID: "agt_receipts", Name: "Receipt classifier", Model: "gpt-4.1-mini", Status: "active",
		SystemMessage: "You classify expense receipts by category and cost centre and answer {\"result\": {category, amount, cost_centre}}. Never send requests.",
		Skills:        []string{"classify_expense"}, CreatedAt: s.ago(40 * day), UpdatedAt: s.ago(40 * day)}
	s.put(invoiceAgent)
	s.put(receiptAgent)
	s.event("agent.created", "person:"+demo.Owner, invoiceAgent.ID, invoiceAgent.CreatedAt, map[string]string{"agent_id": invoiceAgent.ID, "model": invoiceAgent.Model})
	s.event("agent.created", "person:"+demo.Owner, receiptAgent.ID, receiptAgent.CreatedAt, map[string]string{"agent_id": receiptAgent.ID, "model": receiptAgent.Model})

	invoices := inbox.Inbox{ID: "ibx_invoices", Name: "Supplier invoices", Address: "invoices@finance.in.kobana.email", AgentID: invoiceAgent.ID,
		Recipients:      []string{"@acme.example", "@globex.example", "billing@initech.example"},
		Filters:         inbox.Filters{RejectAutoReplies: true},
		AttachmentRules: inbox.AttachmentRules{MaxBytes: 10 << 20, AllowedTypes: []string{"application/pdf", "application/xml", "text/xml"}, Required: true},
		Status:          "active", CreatedAt: s.ago(57 * day), UpdatedAt: s.ago(15 * day)}
	receipts := inbox.Inbox{ID: "ibx_receipts", Name: "Expense receipts", Address: "receipts@finance.in.kobana.email", AgentID: receiptAgent.ID,
		Recipients: []string{}, Filters: inbox.Filters{SubjectContains: []string{"receipt", "recibo"}},
		AttachmentRules: inbox.AttachmentRules{MaxBytes: 5 << 20, AllowedTypes: []string{"image/jpeg", "image/png", "application/pdf"}},
		Status:          "active", CreatedAt: s.ago(39 * day), UpdatedAt: s.ago(39 * day)}
	s.put(invoices)
	s.put(receipts)
	s.event("inbox.created", "person:"+demo.Owner, invoices.ID, invoices.CreatedAt, map[string]string{"inbox_id": invoices.ID, "address": invoices.Address})
	s.event("inbox.created", "person:"+demo.Owner, receipts.ID, receipts.CreatedAt, map[string]string{"inbox_id": receipts.ID, "address": receipts.Address})
	s.event("inbox.recipient_added", "person:"+demo.Owner, invoices.ID, s.ago(15*day), map[string]string{"inbox_id": invoices.ID, "recipient": "billing@initech.example"})

	// Invoices: mostly succeeded, some failed for different causes.
	suppliers := []struct{ name, domain, from string }{
		{"ACME Industrial Ltda", "acme.example", "faturamento@acme.example"},
		{"Globex Serviços S.A.", "globex.example", "nfe@globex.example"},
		{"Initech Software", "initech.example", "billing@initech.example"},
	}
	type outcome struct{ status, cause, err string }
	plan := []outcome{
		{"succeeded", "", ""}, {"succeeded", "", ""}, {"failed", "workflow_failed", "one or more workflow steps failed or were skipped"},
		{"succeeded", "", ""}, {"failed", "invalid_output", "the model's answer is not JSON: it starts with \"Here is the extracted invoice\""},
		{"succeeded", "", ""}, {"succeeded", "", ""}, {"failed", "model_timeout", "the model did not answer within 120s"},
		{"succeeded", "", ""}, {"failed", "workflow_failed", "one or more workflow steps failed or were skipped"},
		{"succeeded", "", ""}, {"succeeded", "", ""}, {"failed", "attachment_unreadable", "the PDF attachment is password-protected"},
		{"succeeded", "", ""}, {"succeeded", "", ""}, {"succeeded", "", ""},
		{"failed", "workflow_failed", "one or more workflow steps failed or were skipped"}, {"succeeded", "", ""},
	}
	for i, o := range plan {
		sup := suppliers[i%len(suppliers)]
		at := s.ago(time.Duration(38-2*i)*day + time.Duration(i*37)*time.Minute)
		number := fmt.Sprintf("NF-%06d", 4100+i*7)
		amount := 850.0 + float64(i*i*37%2400) + 0.5*float64(i%2)
		due := at.Add(20 * day).Format("2006-01-02")
		pdf := invoicePDF(sup.name, number, amount, due)
		atts := []demoAttachment{{"fatura-" + strings.ToLower(number) + ".pdf", "application/pdf", pdf}}
		if sup.domain == "globex.example" {
			atts = append(atts, demoAttachment{number + ".xml", "application/xml", nfeXML(sup.name, number, amount)})
		}
		raw := buildEML(sup.from, invoices.Address, fmt.Sprintf("Fatura %s - %s", number, sup.name),
			fmt.Sprintf("Olá,\n\nSegue em anexo a fatura %s no valor de R$ %.2f com vencimento em %s.\n\nAtenciosamente,\nDepartamento financeiro\n%s\n", number, amount, due, sup.name),
			fmt.Sprintf("<%s.%d@%s>", strings.ToLower(number), at.Unix(), sup.domain), at, atts)
		s.email(invoices, invoiceAgent, raw, at, o.status, o.cause, o.err, invoiceOutput(sup.name, number, amount, due, o.cause), i)
	}
	// Receipts: classification only, no workflow.
	for i := range 6 {
		at := s.ago(time.Duration(25-4*i)*day + 3*time.Hour)
		amount := 42.9 + float64(i*17)
		raw := buildEML(fmt.Sprintf("colaborador%d@demo.kobana.dev", i+1), receipts.Address, fmt.Sprintf("Recibo de despesa #%d", 300+i),
			fmt.Sprintf("Recibo do almoço com cliente, R$ %.2f.\n", amount), fmt.Sprintf("<recibo-%d.%d@demo.kobana.dev>", i, at.Unix()), at,
			[]demoAttachment{{fmt.Sprintf("recibo-%d.png", 300+i), "image/png", tinyPNG()}})
		out, _ := json.Marshal(map[string]any{"result": map[string]any{"category": "meals", "amount": amount, "cost_centre": "sales"}})
		s.email(receipts, receiptAgent, raw, at, "succeeded", "", "", out, 100+i)
	}
	// An automatic reply the inbox rejected: no agent run.
	at := s.ago(3 * day)
	raw := buildEML("nfe@globex.example", invoices.Address, "Resposta automática: Fatura NF-004107", "Estou fora do escritório até segunda-feira.\n",
		fmt.Sprintf("<auto.%d@globex.example>", at.Unix()), at, nil)
	e, err := inbox.ParseEmail(raw)
	if err != nil {
		return err
	}
	e.ID, e.InboxID, e.ReceivedAt, e.Auth = "eml_autoreply", invoices.ID, at, demoAuth(e.From)
	rej := inbox.Screen(invoices, financeLimits, e)
	if rej == nil {
		return fmt.Errorf("the demo's automatic reply passes the rules of inbox %s", invoices.ID)
	}
	e.Reject(rej)
	s.put(e)
	if s.err == nil {
		s.err = st.PutBlob(ctx, demo.Workspace, e.ID, raw)
	}

	// Webhooks: one healthy, one failing since two days.
	erp := inbox.Webhook{ID: "whk_erp", URL: "https://erp.example.com/hooks/kobana", Description: "ERP integration", Events: []string{"email.processed", "workflow_run.failed"},
		Status: "active", SecretHint: "…cdef", CreatedAt: s.ago(50 * day), UpdatedAt: s.ago(50 * day), LastDelivery: s.ago(6 * time.Hour)}
	chat := inbox.Webhook{ID: "whk_chat", URL: "https://chat.example.com/hooks/kobana-alerts", Description: "Alerts channel", Events: []string{"agent_run.failed", "email.failed"},
		Status: "failing", SecretHint: "…3210", FailingSince: s.ago(2*day + 4*time.Hour), CreatedAt: s.ago(45 * day), UpdatedAt: s.ago(45 * day), LastDelivery: s.ago(5 * time.Hour)}
	s.put(erp)
	s.put(chat)
	for i := range 5 {
		d := inbox.Delivery{ID: fmt.Sprintf("dlv_erp_%02d", i), WebhookID: erp.ID, Event: "email.processed", Status: "delivered", HTTPStatus: 200,
			ResponseBody: `{"ok":true}`, DurationMS: int64(120 + i*13), AttemptedAt: s.ago(time.Duration(5-i)*day + 6*time.Hour),
			Payload: json.RawMessage(fmt.Sprintf(`{"email_id":"eml_inv_%02d","status":"processed"}`, 10+i))}
		s.put(d)
	}
	chatPlan := []inbox.Delivery{
		{Status: "delivered", HTTPStatus: 200, ResponseBody: "ok", AttemptedAt: s.ago(4 * day)},
		{Status: "failed", HTTPStatus: 503, ResponseBody: "<html><body>503 Service Unavailable</body></html>", Error: "the receiver answered HTTP 503", AttemptedAt: s.ago(2*day + 4*time.Hour)},
		{Status: "failed", Error: "Post: context deadline exceeded (Client.Timeout exceeded while awaiting headers)", AttemptedAt: s.ago(1*day + 9*time.Hour)},
		{Status: "failed", HTTPStatus: 410, ResponseBody: `{"error":"webhook_revoked"}`, Error: "the receiver answered HTTP 410", AttemptedAt: s.ago(5 * time.Hour)},
	}
	for i, d := range chatPlan {
		d.ID, d.WebhookID, d.Event, d.DurationMS = fmt.Sprintf("dlv_chat_%02d", i), chat.ID, "agent_run.failed", int64(300+i*4000)
		d.Payload = json.RawMessage(fmt.Sprintf(`{"agent_run_id":"arun_inv_%02d","cause":"workflow_failed"}`, 2+i*7))
		s.put(d)
		if d.Status == "failed" {
			s.event("webhook.delivery_failed", "system", chat.ID, d.AttemptedAt, map[string]any{"webhook_id": chat.ID, "delivery_id": d.ID, "http_status": d.HTTPStatus, "error": d.Error})
		}
	}

	// The sandbox workspace has its own records, invisible from Finance.
	s.ws = demo.Sandbox
	sc := s.ago(10 * day)
	s.put(inbox.Workspace{ID: demo.Sandbox, OrganizationID: demo.Organization, Name: "Sandbox", Slug: "sandbox", Plan: "free", Environment: "sandbox",
		CreatedAt: sc, Limits: inbox.Limits{EmailsPerMonth: 100, Inboxes: 1, Agents: 1, Webhooks: 1, MaxAttachmentBytes: 5 << 20, RetentionDays: 7}})
	s.put(inbox.Inbox{ID: "ibx_sandbox_test", Name: "Test inbox", Address: "test@sandbox.in.kobana.email", Recipients: []string{}, Status: "active", CreatedAt: sc, UpdatedAt: sc})
	s.ws = demo.Workspace
	s.put(finance)
	return s.err
}

// email stores one received e-mail with its agent run and, when the output
// carries a workflow, its workflow run.
func (s *loader) email(ib inbox.Inbox, ag inbox.Agent, raw []byte, at time.Time, status, cause, errMsg string, output json.RawMessage, n int) {
	if s.err != nil {
		return
	}
	e, err := inbox.ParseEmail(raw)
	if err != nil {
		s.err = err
		return
	}
	prefix := "inv"
	if ib.ID == "ibx_receipts" {
		prefix, n = "rcp", n-100
	}
	e.ID, e.InboxID, e.ReceivedAt, e.Auth = fmt.Sprintf("eml_%s_%02d", prefix, n), ib.ID, at, demoAuth(e.From)
	run := inbox.AgentRun{ID: fmt.Sprintf("arun_%s_%02d", prefix, n), AgentID: ag.ID, EmailID: e.ID, InboxID: ib.ID, Model: ag.Model,
		Status: status, Cause: inbox.Cause(cause), Error: errMsg, StartedAt: at.Add(4 * time.Second)}
	switch cause {
	case "model_timeout":
		run.Tokens = inbox.Tokens{Input: 5200 + n*31}
	case "attachment_unreadable":
		run.Tokens = inbox.Tokens{}
	default:
		run.Output = output
		run.Tokens = inbox.Tokens{Input: 3100 + n*173%900, Output: 420 + n*41%200}
	}
	run.CostUSD = inbox.Cost(ag.Model, run.Tokens)
	run.FinishedAt = run.StartedAt.Add(time.Duration(6+n%9) * time.Second)
	if cause == "model_timeout" {
		run.FinishedAt = run.StartedAt.Add(120 * time.Second)
	}
	if len(run.Output) > 0 && inbox.HasWorkflow(run.Output) {
		wr := inbox.WorkflowRun{ID: fmt.Sprintf("wrun_%s_%02d", prefix, n), AgentRunID: run.ID, EmailID: e.ID, InboxID: ib.ID,
			StartedAt: run.FinishedAt, FinishedAt: run.FinishedAt.Add(1900 * time.Millisecond)}
		wr.Status, wr.Steps = demoSteps(e, run, cause == "workflow_failed", n)
		run.WorkflowRunID = wr.ID
		e.WorkflowRunID = wr.ID
		s.put(wr)
	}
	e.AgentRunID = run.ID
	e.Status = "processed"
	if status == "failed" {
		e.Status, e.StatusDetail = "failed", cause
		s.event("agent_run.failed", "system", run.ID, run.FinishedAt, map[string]string{"agent_run_id": run.ID, "email_id": e.ID, "cause": cause})
	}
	s.put(run)
	s.put(e)
	if s.err == nil {
		s.err = s.st.PutBlob(s.ctx, s.ws, e.ID, raw)
	}
}

func invoiceOutput(supplier, number string, amount float64, due, cause string) json.RawMessage {
	if cause == "invalid_output" {
		return json.RawMessage(`"Here is the extracted invoice: supplier ` + supplier + `, amount ` + fmt.Sprintf("%.2f", amount) + `"`)
	}
	doc := map[string]any{
		"result": map[string]any{"supplier": supplier, "invoice_number": number, "amount": amount, "due_date": due, "currency": "BRL"},
		"workflow": []any{
			map[string]any{"type": "request", "label": "Create payable", "method": "POST", "url": "https://erp.example.com/api/payables",
				"headers":         map[string]string{"authorization": "Bearer ${{secrets.ERP_TOKEN}}"},
				"body":            map[string]any{"supplier": supplier, "number": number, "amount": amount, "due_date": due, "received_at": "${{kobana.now}}"},
				"expected_status": 201},
			map[string]any{"type": "request", "label": "Attach the invoice PDF", "method": "POST",
				"url":     "https://erp.example.com/api/payables/${{steps.0.response.body.data.id}}/attachments",
				"headers": map[string]string{"authorization": "Bearer ${{secrets.ERP_TOKEN}}"},
				"form":    map[string]string{"file": "${{email.attachments.0}}", "kind": "invoice"}},
			map[string]any{"type": "request", "label": "Notify the finance channel", "method": "POST", "url": "${{secrets.CHAT_WEBHOOK_URL}}",
				"body": map[string]any{"text": "Payable ${{steps.0.response.body.data.id}} created for " + supplier + " (" + number + ")"}},
		},
	}
	b, _ := json.Marshal(doc)
	return b
}

// demoSteps builds a redacted run record in the executor's shape
// (executor.StepRecord: JSON bodies as JSON values, reasons, timings).
func demoSteps(e inbox.Email, run inbox.AgentRun, fail bool, n int) (runrecord.Status, []runrecord.Step) {
	var doc struct {
		Result map[string]any `json:"result"`
	}
	json.Unmarshal(run.Output, &doc)
	payable := fmt.Sprintf("pay_%05d", 20000+n*11)
	att := e.Attachments[0]
	t0 := run.FinishedAt
	at := func(ms int) string { return t0.Add(time.Duration(ms) * time.Millisecond).Format(time.RFC3339Nano) }
	body0 := map[string]any{"supplier": doc.Result["supplier"], "number": doc.Result["invoice_number"], "amount": doc.Result["amount"],
		"due_date": doc.Result["due_date"], "received_at": t0.Format("2006-01-02T15:04:05.000Z07:00")}
	auth := map[string]string{"authorization": "Bearer [redacted secrets.ERP_TOKEN]", "Content-Type": "application/json"}
	created := map[string]any{"data": map[string]any{"id": payable}}
	steps := []map[string]any{{
		"index": 0, "label": "Create payable", "state": "succeeded", "started_at": at(0), "duration_ms": 412,
		"request":  map[string]any{"method": "POST", "url": "https://erp.example.com/api/payables", "headers": auth, "body": body0},
		"response": map[string]any{"status": 201, "headers": map[string]string{"content-type": "application/json", "location": "/api/payables/" + payable}, "body": created, "size": 27},
	}}
	if fail {
		steps[0]["state"], steps[0]["reason"] = "failed", "unexpected-status"
		steps[0]["error"] = "the response status is 422; the step expects status 201"
		steps[0]["response"] = map[string]any{"status": 422, "headers": map[string]string{"content-type": "application/json"},
			"body": map[string]any{"error": "supplier_unknown", "message": "supplier is not registered in the ERP"}, "size": 73}
		for i, label := range []string{"Attach the invoice PDF", "Notify the finance channel"} {
			steps = append(steps, map[string]any{"index": i + 1, "label": label, "state": "skipped", "reason": "dependency-not-succeeded",
				"error": "skipped: it uses the response of step 0, which failed", "started_at": at(413 + i), "duration_ms": 0})
		}
		return runrecord.RunFailed, typedSteps(steps)
	}
	steps = append(steps,
		map[string]any{"index": 1, "label": "Attach the invoice PDF", "state": "succeeded", "started_at": at(413), "duration_ms": 688,
			"request": map[string]any{"method": "POST", "url": "https://erp.example.com/api/payables/" + payable + "/attachments",
				"headers": map[string]string{"authorization": "Bearer [redacted secrets.ERP_TOKEN]", "Content-Type": "multipart/form-data"},
				"form":    map[string]any{"file": map[string]any{"attachment": 0, "filename": att.Filename, "content_type": att.ContentType, "size": att.Size}, "kind": "invoice"}},
			"response": map[string]any{"status": 200, "headers": map[string]string{"content-type": "application/json"}, "body": map[string]any{"ok": true}, "size": 11}},
		map[string]any{"index": 2, "label": "Notify the finance channel", "state": "succeeded", "started_at": at(1102), "duration_ms": 240,
			"request": map[string]any{"method": "POST", "url": "[redacted secrets.CHAT_WEBHOOK_URL]", "headers": map[string]string{"Content-Type": "application/json"},
				"body": map[string]any{"text": fmt.Sprintf("Payable %s created for %v (%v)", payable, doc.Result["supplier"], doc.Result["invoice_number"])}},
			"response": map[string]any{"status": 200, "headers": map[string]string{"content-type": "text/plain"}, "body": "ok", "size": 2}})
	return runrecord.RunSucceeded, typedSteps(steps)
}

// typedSteps reads steps written as maps into step records.
func typedSteps(steps []map[string]any) []runrecord.Step {
	b, _ := json.Marshal(steps)
	var out []runrecord.Step
	json.Unmarshal(b, &out)
	return out
}

type demoAttachment struct {
	filename, contentType string
	content               []byte
}

// buildEML writes an RFC 5322 message with a text body and attachments.
func buildEML(from, to, subject, text, msgID string, at time.Time, atts []demoAttachment) []byte {
	var b bytes.Buffer
	h := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	h("From", from)
	h("To", to)
	h("Subject", mime.QEncoding.Encode("utf-8", subject))
	h("Date", at.Format(time.RFC1123Z))
	h("Message-ID", msgID)
	h("MIME-Version", "1.0")
	if strings.HasPrefix(subject, "Resposta automática") {
		h("Auto-Submitted", "auto-replied")
	}
	boundary := "kobana-demo-" + fmt.Sprint(at.Unix())
	if len(atts) == 0 {
		h("Content-Type", "text/plain; charset=utf-8")
		h("Content-Transfer-Encoding", "quoted-printable")
		b.WriteString("\r\n")
		b.WriteString(qp(text))
		return b.Bytes()
	}
	h("Content-Type", "multipart/mixed; boundary=\""+boundary+"\"")
	b.WriteString("\r\nThis is a multi-part message in MIME format.\r\n")
	fmt.Fprintf(&b, "--%s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n%s\r\n", boundary, qp(text))
	for _, a := range atts {
		fmt.Fprintf(&b, "--%s\r\nContent-Type: %s; name=\"%s\"\r\nContent-Disposition: attachment; filename=\"%s\"\r\nContent-Transfer-Encoding: base64\r\n\r\n",
			boundary, a.contentType, a.filename, a.filename)
		enc := base64.StdEncoding.EncodeToString(a.content)
		for len(enc) > 76 {
			b.WriteString(enc[:76] + "\r\n")
			enc = enc[76:]
		}
		b.WriteString(enc + "\r\n")
	}
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return b.Bytes()
}

// qp encodes text as quoted-printable (enough for the demo's Portuguese).
func qp(s string) string {
	var b strings.Builder
	w := quotedprintable.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

// invoicePDF returns a small, valid one-page PDF.
func invoicePDF(supplier, number string, amount float64, due string) []byte {
	esc := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`)
	content := fmt.Sprintf("BT /F1 14 Tf 72 760 Td (FATURA %s) Tj 0 -24 Td /F1 11 Tf (%s) Tj 0 -18 Td (Valor: R$ %.2f) Tj 0 -18 Td (Vencimento: %s) Tj ET",
		esc.Replace(number), esc.Replace(asciiOnly(supplier)), amount, due)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	return minipdf.Write("%PDF-1.4\n", objs, "")
}

func asciiOnly(s string) string {
	return strings.Map(func(r rune) rune {
		if r > 126 {
			return '?'
		}
		return r
	}, s)
}

func nfeXML(supplier, number string, amount float64) []byte {
	return []byte(fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<nfeProc xmlns="http://www.portalfiscal.inf.br/nfe" versao="4.00">
  <NFe><infNFe Id="NFe%s"><emit><xNome>%s</xNome></emit><total><ICMSTot><vNF>%.2f</vNF></ICMSTot></total></infNFe></NFe>
</nfeProc>
`, strings.TrimPrefix(number, "NF-"), supplier, amount))
}

// tinyPNG is a valid 1×1 PNG.
func tinyPNG() []byte {
	b, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
	return b
}
