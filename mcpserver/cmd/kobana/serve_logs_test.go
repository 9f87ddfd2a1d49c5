package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/smtp"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/agent/standin"
	"github.com/kobana/workflow/mcpserver/mcptest"
)

// kobana serve -log-format json writes one JSON line per SMTP transaction
// (the e-mail's id, the client, the envelope, the size, the result), per
// agent run, per workflow run, per webhook delivery attempt and per refused
// token — and no line, at any level, holds a token, a secret's value, the
// model's key or a word of the message.
func TestServeLogsEachTransactionAndNoSecret(t *testing.T) {
	db := filepath.Join(t.TempDir(), "logs.db")
	seeded := seedDemo(t, db)
	var tokens []string
	for _, l := range strings.Split(seeded, "\n") {
		if m := tokenLine.FindStringSubmatch(l); m != nil {
			tokens = append(tokens, m[6])
		}
	}
	rv := newHeldReceiver(t)
	close(rv.release)
	doc := fmt.Sprintf(`{"result": {"supplier": "ACME"}, "workflow": [
  {"type": "request", "label": "create the payable", "method": "POST", "url": %q,
   "body": {"email_id": "${{kobana.email_id}}"}, "expected_status": 201}]}`, rv.URL+"/payables")
	model := standin.New(standin.Always(standin.Answer(doc)))
	model.APIKey = modelKey
	ms := httptest.NewServer(model)
	defer ms.Close()
	var stderr serveBuffer
	c := &Command{Stdout: &serveBuffer{}, Stderr: &stderr, Getenv: func(k string) string {
		return map[string]string{"E2E_MODEL_KEY": modelKey}[k]
	}}
	addrs, stop := startServe(t, c, &stderr, "-db", db, "-http", "127.0.0.1:0", "-smtp", "127.0.0.1:0", "-dns", spfZone(t),
		"-allow", "127.0.0.1/32", "-model-base-url", ms.URL+"/v1", "-model-api-key-env", "E2E_MODEL_KEY", "-log-format", "json", "-v")

	const marker = "BODY-MARKER-7f3a91"
	msg := strings.Replace(demoInvoice, "The invoice is attached.", "The invoice is attached. "+marker, 1)
	if err := smtp.SendMail(addrs["smtp"].String(), nil, "billing@acme.example", []string{"invoices@finance.in.kobana.email"}, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	refused := "kbn_" + strings.Repeat("d3adb33f", 8)
	req, _ := http.NewRequest("POST", mcpURL(t, addrs), strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+refused)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	cs := mcptest.Connect(t, mcptest.HTTP(mcpURL(t, addrs), tokens[0]), mcptest.Modern, nil)
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "secrets_list", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}

	type line map[string]any
	lines := func() []line {
		var out []line
		for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
			var m line
			if json.Unmarshal([]byte(l), &m) == nil {
				out = append(out, m)
			}
		}
		return out
	}
	want := map[string]func(line) bool{
		"smtp": func(l line) bool {
			id, _ := l["id"].(string)
			return strings.HasPrefix(id, "eml_") && l["result"] == "stored" && l["from"] == "<billing@acme.example>" &&
				l["to"] == "<invoices@finance.in.kobana.email>" && l["size"].(float64) == float64(len(msg)) && strings.HasPrefix(l["client"].(string), "127.0.0.1:")
		},
		"agent run":        func(l line) bool { return l["status"] == "succeeded" && l["agent"] == "agt_invoices" },
		"workflow run":     func(l line) bool { return l["status"] == "succeeded" && l["steps"] == "succeeded" },
		"webhook delivery": func(l line) bool { return l["webhook"] == "whk_erp" && l["event"] == "email.processed" },
		"token refused":    func(l line) bool { return strings.HasPrefix(l["remote"].(string), "127.0.0.1:") },
	}
	err := testwait.Until(60*time.Second, func() error {
		for msg, ok := range want {
			found := false
			for _, l := range lines() {
				found = found || l["msg"] == msg && ok(l)
			}
			if !found {
				return fmt.Errorf("no %q line as expected yet", msg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v; the log:\n%s", err, stderr.String())
	}
	stop()
	log := stderr.String()
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		// Beside the log, standard error has serve's notices (where it
		// listens); every log line is a JSON object.
		if strings.HasPrefix(l, "{") && !json.Valid([]byte(l)) || !strings.HasPrefix(l, "{") && strings.Contains(l, "level=") {
			t.Errorf("a log line that is not JSON: %q", l)
		}
	}
	for what, secret := range map[string]string{
		"the owner's token": tokens[0], "the viewer's token": tokens[1], "the refused token": refused, "the refused token's digits": "d3adb33fd3adb33f",
		"the model's key": modelKey, "the ERP token secret": "erp_live_9f8e7d6c5b4a", "a webhook signing secret": "whsec_demo_",
		"the message's body": marker, "the attachment's bytes": "JVBERi0x",
	} {
		if strings.Contains(log, secret) {
			t.Errorf("the log holds %s", what)
		}
	}
	if req, ans := rv.counts(); req != 1 || ans != 1 {
		t.Errorf("the receiver got %d requests (%d answered)", req, ans)
	}
}
