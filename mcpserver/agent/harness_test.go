package agent

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kobana/workflow/examples"
	"github.com/kobana/workflow/mcpserver/agent/standin"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
)

// testKey is the API key the tests configure; it must never appear in a
// log line or a result.
const testKey = "sk-test-Zr8Qm2Vx71LkPq0e"

// attachment is one attachment of a test e-mail.
type attachment struct {
	name, contentType string
	data              []byte
}

// pdf returns n bytes that look like a PDF, seeded so two sizes differ in
// content; the marker in the middle lets a test look for leaked bytes.
func pdf(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, seed))
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	copy(b, "%PDF-1.7\n")
	if n > 64 {
		copy(b[n/2:], "LEAK-MARKER-9f31")
	}
	return b
}

// makeEML builds an e-mail with a text body and attachments, base64
// encoded as mail clients send them.
func makeEML(subject, text string, atts ...attachment) []byte {
	var b bytes.Buffer
	b.WriteString("From: \"ACME Distribuidora\" <faturamento@acme.example.com.br>\r\n")
	b.WriteString("To: financeiro@example.inbox.kobana.com.br\r\n")
	b.WriteString("Subject: " + subject + "\r\n")
	b.WriteString("Date: Fri, 27 Nov 2026 09:20:13 -0300\r\n")
	b.WriteString("Message-ID: <nfe-4521@acme.example.com.br>\r\n")
	b.WriteString("MIME-Version: 1.0\r\n")
	b.WriteString("Content-Type: multipart/mixed; boundary=\"b0\"\r\n\r\n")
	b.WriteString("--b0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n" + strings.ReplaceAll(text, "\n", "\r\n") + "\r\n")
	for _, a := range atts {
		fmt.Fprintf(&b, "--b0\r\nContent-Type: %s\r\nContent-Disposition: attachment; filename=\"%s\"\r\nContent-Transfer-Encoding: base64\r\n\r\n", a.contentType, a.name)
		enc := base64.StdEncoding.EncodeToString(a.data)
		for len(enc) > 76 {
			b.WriteString(enc[:76] + "\r\n")
			enc = enc[76:]
		}
		b.WriteString(enc + "\r\n")
	}
	b.WriteString("--b0--\r\n")
	return b.Bytes()
}

const invoiceText = "Prezados,\n\nSegue a nota fiscal 4521 no valor de R$ 1.250,50, vencimento em 10/12/2026.\n\nAtenciosamente,\nACME Distribuidora"

// input is an agent run's input on an e-mail: the invoice agent on model
// id, the workspace's secrets FINANCE_TOKEN and SLACK_WEBHOOK_URL.
func input(t testing.TB, model string, raw []byte) inbox.AgentInput {
	t.Helper()
	e, err := inbox.ParseEmail(raw)
	if err != nil {
		t.Fatal(err)
	}
	e.ID, e.InboxID = "eml_test", "inb_finance"
	e.Auth = &inbox.SenderAuth{SPF: inbox.AuthCheck{Result: inbox.AuthPass, Domain: "acme.example.com.br"},
		DKIM:              []inbox.AuthCheck{{Result: inbox.AuthPass, Domain: "acme.example.com.br", Selector: "s1"}},
		DMARC:             inbox.AuthCheck{Result: inbox.AuthPass, Domain: "acme.example.com.br"},
		AuthenticatedFrom: "faturamento@acme.example.com.br"}
	return inbox.AgentInput{
		Workspace: inbox.Workspace{ID: "ws_test", Environment: "sandbox"},
		Inbox:     inbox.Inbox{ID: "inb_finance", Address: "financeiro@example.inbox.kobana.com.br", AgentID: "agt_invoices"},
		Agent: inbox.Agent{ID: "agt_invoices", Name: "Invoice reader", Model: model,
			SystemMessage: "You read supplier invoices. Create a payable in the ERP (https://erp.example.com/payables), attach the PDF, tell the finance channel.",
			Skills:        []string{"extract_invoice"}},
		Email:       e,
		Message:     inbox.BytesMessage(raw),
		SecretNames: []string{"FINANCE_TOKEN", "SLACK_WEBHOOK_URL"},
	}
}

// invoiceInput is input on the sample invoice e-mail of examples/.
func invoiceInput(t testing.TB) inbox.AgentInput {
	return input(t, "claude-sonnet-4-5", []byte(examples.InvoiceEmail))
}

// harness is a Runner wired to a stand-in server, with a clock that never
// sleeps and a log kept in memory.
type harness struct {
	srv    *standin.Server
	runner *Runner
	logs   *syncBuffer
	mu     sync.Mutex
	waits  []time.Duration
}

// syncBuffer is an output goroutines write to while the test reads it.
type syncBuffer = syncbuf.Buffer

func newHarness(t testing.TB, respond standin.Responder, endpoint ...func(*Endpoint)) *harness {
	t.Helper()
	h := &harness{srv: standin.New(respond), logs: &syncBuffer{}}
	h.srv.APIKey = testKey
	hs := httptest.NewServer(h.srv)
	t.Cleanup(hs.Close)
	ep := Endpoint{BaseURL: hs.URL + "/v1", APIKeyEnv: "TEST_MODEL_KEY", ResponseFormat: FormatJSONSchema}
	for _, f := range endpoint {
		f(&ep)
	}
	if err := ep.check(func(string) string { return testKey }, "base", "key", "format", "family"); err != nil {
		t.Fatal(err)
	}
	h.runner = &Runner{
		Config: Config{Providers: map[string]Endpoint{AnyProvider: ep}},
		Logger: slog.New(slog.NewTextHandler(h.logs, nil)),
		Sleep: func(ctx context.Context, d time.Duration) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.waits = append(h.waits, d)
			return ctx.Err()
		},
	}
	return h
}

func (h *harness) run(t testing.TB, in inbox.AgentInput) inbox.AgentResult {
	t.Helper()
	res, err := h.runner.RunAgent(context.Background(), in)
	if err != nil {
		t.Fatalf("RunAgent: %v", err)
	}
	if strings.Contains(h.logs.String(), testKey) {
		t.Fatalf("the API key is in the log:\n%s", h.logs.String())
	}
	if b, _ := json.Marshal(res); bytes.Contains(b, []byte(testKey)) {
		t.Fatalf("the API key is in the result: %s", b)
	}
	return res
}

// payableAnswer is the complete example, the answer to the invoice.
var payableAnswer = examples.Payable
