package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/store"
)

// trialAnswer uses the demo's secrets, a fact, an earlier response and the
// e-mail's first attachment.
const trialAnswer = `{"result": {"supplier": "ACME"}, "workflow": [
  {"type": "request", "label": "create the payable", "method": "POST", "url": "https://erp.example.com/payables",
   "headers": {"Authorization": "Bearer ${{secrets.ERP_TOKEN}}"}, "body": {"email": "${{kobana.email_id}}"}, "expected_status": 201},
  {"type": "request", "label": "attach the invoice", "method": "POST", "url": "https://erp.example.com/payables/${{steps.0.response.body.data.id}}/files",
   "headers": {"Authorization": "Bearer ${{secrets.ERP_TOKEN}}"}, "form": {"file": "${{email.attachments.0}}"}},
  {"type": "request", "label": "tell the channel", "method": "POST", "url": "${{secrets.CHAT_WEBHOOK_URL}}", "body": {"text": "done"}}]}`

func TestTryPlansAgainstAnEmailAndSendsNothing(t *testing.T) {
	bothStores(t, func(t *testing.T, open func(testing.TB, *clock) store.Store) {
		e := newEnv(t, open)
		b := e.browser()
		e.signIn(b, demo.Owner, demo.Workspace)
		form := e.get(b, "/console/try?email_id=eml_inv_00")
		if form.code != http.StatusOK || !strings.Contains(form.body, `value="eml_inv_00"`) {
			t.Fatalf("the trial form: %d\n%s", form.code, form.body)
		}
		p := e.post(b, "/console/try", url.Values{"csrf": {csrfOf(t, form)}, "document": {trialAnswer}, "email_id": {"eml_inv_00"}}, nil)
		if p.code != http.StatusOK {
			t.Fatalf("trying: %d\n%s", p.code, p.body)
		}
		for _, want := range []string{"The answer is valid.", "3 steps: 3 would be sent", "create the payable", "attach the invoice",
			"POST https://erp.example.com/payables", "[redacted secrets.CHAT_WEBHOOK_URL]", "uses the responses of steps 0", "steps.0.response.body.data.id"} {
			if !strings.Contains(p.body, want) && !strings.Contains(p.body, strings.ReplaceAll(want, `"`, "&#34;")) {
				t.Errorf("the trial does not show %q", want)
			}
		}
		secrets, err := e.st.RevealSecrets(context.Background(), demo.Workspace)
		if err != nil {
			t.Fatal(err)
		}
		for name, v := range secrets {
			if strings.Contains(p.body, v) {
				t.Errorf("the trial page shows the value of %s", name)
			}
		}
	})
}

func TestTryShowsDiagnosticsWithCaret(t *testing.T) {
	e := newEnv(t, openSQLite)
	b := e.browser()
	e.signIn(b, demo.Viewer, demo.Workspace) // a viewer may try: nothing is sent
	form := e.get(b, "/console/try")
	doc := "{\"result\": 1, \"workflow\": [\n\t{\"type\": \"request\", \"method\": \"post\", \"url\": \"https://erp.example.com/${{secret.ERP_TOKEN}}\"}]}"
	p := e.post(b, "/console/try", url.Values{"csrf": {csrfOf(t, form)}, "document": {doc}}, nil)
	if p.code != http.StatusOK || !strings.Contains(p.body, "does not validate") {
		t.Fatalf("an invalid answer: %d\n%s", p.code, p.body)
	}
	// The method is at line 2, column 32 (a tab counts one character): the
	// caret line keeps the tab and puts ^ under the value.
	want := "<pre class=\"caret\">\t{&#34;type&#34;: &#34;request&#34;, &#34;method&#34;: &#34;post&#34;"
	if !strings.Contains(p.body, want) || !strings.Contains(p.body, "\n\t"+strings.Repeat(" ", 30)+"^</pre>") {
		t.Errorf("no source line with a caret under the method:\n%s", p.body)
	}
	for _, code := range []string{"method-invalid", "placeholder-unknown-namespace", "line 2, column 32"} {
		if !strings.Contains(p.body, code) {
			t.Errorf("the diagnostics do not show %q", code)
		}
	}
}

func TestTryRefusesWhatItCannotTry(t *testing.T) {
	e := newEnv(t, openSQLite)
	if err := inbox.NewRepo(e.st).Emails.Put(context.Background(), demo.Sandbox, inbox.Email{ID: "eml_sandbox_only", InboxID: "ibx_x", Subject: "sandbox", Status: inbox.EmailPending, ReceivedAt: demoNow}); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	e.signIn(b, demo.Owner, demo.Workspace)
	csrf := csrfOf(t, e.get(b, "/console/try?email_id=%3Cscript%3E"))
	for _, c := range []struct {
		name string
		form url.Values
		code int
		want string
	}{
		{"no document", url.Values{"csrf": {csrf}, "document": {"  "}}, http.StatusBadRequest, "Paste an agent"},
		{"a malformed e-mail id", url.Values{"csrf": {csrf}, "document": {trialAnswer}, "email_id": {"<b>x"}}, http.StatusBadRequest, "looks like eml_"},
		{"another workspace's e-mail", url.Values{"csrf": {csrf}, "document": {trialAnswer}, "email_id": {"eml_sandbox_only"}}, http.StatusNotFound, "Nothing by that id"},
		{"no CSRF token", url.Values{"document": {trialAnswer}}, http.StatusForbidden, "stale"},
		{"over 1 MiB", url.Values{"csrf": {csrf}, "document": {strings.Repeat(" ", 1<<20+70<<10)}}, http.StatusRequestEntityTooLarge, "1 MiB"},
	} {
		p := e.post(b, "/console/try", c.form, nil)
		if p.code != c.code || !strings.Contains(p.body, c.want) {
			t.Errorf("%s: %d, want %d with %q\n%.400s", c.name, p.code, c.code, c.want, p.body)
		}
	}
	if p := e.get(b, "/console/try?email_id=%3Cscript%3E"); strings.Contains(p.body, "<script>") || strings.Contains(p.body, "&lt;script") {
		t.Errorf("a malformed e-mail id is put back in the form")
	}
}
