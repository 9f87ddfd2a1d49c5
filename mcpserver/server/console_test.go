package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/kobana/workflow/internal/testwait"
	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/internal/chromiumtest"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/internal/syncbuf"
	"github.com/kobana/workflow/mcpserver/server"
	"github.com/kobana/workflow/mcpserver/store"
)

// A person signs in to the console of a real server in Chromium with a
// one-time code, and browses the e-mails list and an e-mail whose fields
// carry script: no dialog opens, no script of the e-mail runs, the page
// breaks no rule of its own Content-Security-Policy, and the console's own
// module runs.
func TestConsoleInChromium(t *testing.T) {
	ctx := chromiumtest.Browser(t)
	st, path := openStore(t)
	var notices syncbuf.Buffer
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Demo: true,
		HTTP: &server.HTTP{Addr: "127.0.0.1:0"}, Notices: &notices})
	defer stop()
	base := "http://" + addrs["http"].String()
	if want := "console on " + base + "/console/"; !strings.Contains(notices.String(), want) {
		t.Errorf("the notices do not say %q:\n%s", want, notices.String())
	}
	hostile := `<script>alert(1)</script><img src=x onerror=alert(2)><svg onload=alert(3)>`
	if err := inbox.NewRepo(st).Emails.Put(t.Context(), demo.Workspace, inbox.Email{ID: "eml_hostile", InboxID: "ibx_invoices",
		From: hostile, Subject: hostile, Text: hostile, Headers: map[string]string{"X-Evil": hostile},
		Status: inbox.EmailRejected, ReceivedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	// Its HTML body: script, a remote image and a form, aimed at a host
	// that counts what it is asked.
	var asked atomic.Int32
	tracker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked.Add(1) }))
	defer tracker.Close()
	raw := "From: a@example.com\r\nSubject: html\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" +
		`<p id="hi">hello</p><script>alert(7)</script><img src="` + tracker.URL + `/pixel.gif" onerror="alert(8)">` +
		`<form action="` + tracker.URL + `/form"><button>go</button></form><meta http-equiv="refresh" content="0;url=` + tracker.URL + `/refresh">` + "\r\n"
	if err := st.PutBlob(t.Context(), demo.Workspace, "eml_hostile", []byte(raw)); err != nil {
		t.Fatal(err)
	}
	if err := inbox.NewRepo(st).AgentRuns.Put(t.Context(), demo.Workspace, inbox.AgentRun{ID: "arun_big", EmailID: "eml_hostile", Model: "m", Status: inbox.RunSucceeded,
		Output: json.RawMessage(`{"amount":12345678901234567890123,"lines":[{"n":1}],"note":"<img src=x onerror=alert(9)>"}`), StartedAt: time.Now(), FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	code := store.NewSignInCode()
	if err := st.CreateSignInCode(t.Context(), store.SignInCode{Hash: store.HashToken(code), Person: demo.Owner, Workspace: demo.Workspace, Expires: time.Now().Add(5 * time.Minute)}); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var problems []string
	add := func(p string) { mu.Lock(); problems = append(problems, p); mu.Unlock() }
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			add("a dialog opened: " + e.Message)
			go chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}); err != nil {
		t.Fatal(err)
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if strings.Contains(m.URL, "/html") || strings.Contains(m.Text, "/html") {
				continue // the e-mail's frame: what it tried is refused, and said so
			}
			if m.IsException() || m.Type == chromedp.ConsoleError || strings.Contains(m.String(), "Content Security Policy") {
				add("console: " + m.String())
			}
		}
	}()
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/console/emails")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `location.pathname === "/console/signin" && document.getElementById("code")`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.getElementById("code").focus(), true)`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.KeyEvent(code)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector("form.signin button").click(), true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `location.pathname === "/console/emails" && document.querySelector('a[href="/console/emails/eml_hostile"]')`)
	// The console's module ran (its nonce let it): times are local.
	waitFor(t, ctx, `document.querySelector("time[datetime]").title !== ""`)
	text := evalText(t, ctx, "document.body.innerText")
	for _, want := range []string{"Ana Souza", "ws_finance", "owner", "<script>alert(1)</script>"} {
		if !strings.Contains(text, want) {
			t.Errorf("the list does not show %q:\n%s", want, text)
		}
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector('a[href="/console/emails/eml_hostile"]').click(), true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `location.pathname === "/console/emails/eml_hostile" && document.getElementById("h-envelope")`)
	// The frame is loaded (its document is opaque to the page: a
	// sandboxed frame without allow-same-origin has an origin of its own).
	waitFor(t, ctx, `document.querySelector("iframe.html-body") && performance.getEntriesByName(document.querySelector("iframe.html-body").src).length > 0`)
	if n := evalText(t, ctx, `String(document.querySelectorAll("main script, main img, main svg").length)`); n != "0" {
		t.Errorf("the e-mail's markup became %s elements of the page", n)
	}
	// The agent run's answer in the JSON viewer: folded by the console's
	// module, the large number exact, the hostile string text.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/console/agent-runs/arun_big")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.querySelector(".json-tree details[open] > summary")`)
	if got := evalText(t, ctx, `document.querySelector(".json-number").textContent`); got != "12345678901234567890123" {
		t.Errorf("the JSON viewer shows the amount as %s", got)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector(".json-tree summary").click(), true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `!document.querySelector(".json-tree details").open`)
	if n := evalText(t, ctx, `String(document.querySelectorAll("main img").length)`); n != "0" {
		t.Errorf("the answer's markup became %s elements", n)
	}
	// The list's filters: typed into the form, kept in the URL, the
	// facets counted under them; the select-all box (bulk.js) ticks the
	// page's rows.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/console/emails")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.getElementById("f-from")`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.getElementById("f-from").focus(), true)`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.KeyEvent("acme.example")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector("form.filters button[type=submit]").click(), true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `location.search === "?from=acme.example" && document.querySelector("nav.facets a[aria-current] .count")`)
	if got := evalText(t, ctx, `document.querySelector("nav.facets a[aria-current] .count").textContent`); got != "6" {
		t.Errorf("the filtered list counts %s e-mails, want the demo's 6 from acme.example", got)
	}
	waitFor(t, ctx, `document.getElementById("select-all") && !document.getElementById("select-all").hidden`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.getElementById("select-all").click(), true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `[...document.querySelectorAll('form.bulk input[name="id"]')].every(b => b.checked) && document.querySelectorAll('form.bulk input[name="id"]').length === 6`)
	// The list is live: an e-mail that arrives shows up without a reload;
	// the pause button says it is pressed.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.getElementById("select-all").click(), window.stayed = true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `!document.getElementById("live-bar").hidden && document.getElementById("live-toggle").getAttribute("aria-pressed") === "false"`)
	if err := inbox.NewRepo(st).Emails.Put(t.Context(), demo.Workspace, inbox.Email{ID: "eml_live", InboxID: "ibx_invoices", From: "news@acme.example",
		Subject: "arrived while watching", Status: inbox.EmailPending, ReceivedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.querySelector('a[href="/console/emails/eml_live"]') && window.stayed === true && document.querySelector("time[datetime]").title !== ""`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.getElementById("live-toggle").click(), true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.getElementById("live-toggle").getAttribute("aria-pressed") === "true" && document.getElementById("live-status").textContent.startsWith("Paused")`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.getElementById("live-toggle").click(), true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.getElementById("live-toggle").getAttribute("aria-pressed") === "false"`)
	// Every other page reads: webhooks with their health, one endpoint's
	// deliveries, the configuration, usage with its chart, the event log.
	for path, ready := range map[string]string{
		"/console/webhooks":          `document.querySelector(".health")`,
		"/console/webhooks/whk_chat": `document.querySelector("section.delivery") && document.querySelector('input[type="datetime-local"]')`,
		"/console/inboxes":           `document.getElementById("ibx_invoices")`,
		"/console/agents":            `document.getElementById("agt_invoices")`,
		"/console/secrets":           `document.querySelector("main table")`,
		"/console/usage":             `document.querySelectorAll("figure.chart svg rect.bar").length === 6`,
		"/console/events":            `document.querySelector("main table pre.json")`,
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+path)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, `location.pathname === "`+path+`" && document.readyState === "complete" && (`+ready+`)`)
	}
	// Readable at 320 px: no page is wider than the screen (wide tables
	// scroll inside their own box).
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(320, 640)); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/console/emails", "/console/emails/eml_hostile", "/console/emails/eml_inv_00", "/console/agent-runs/arun_big", "/console/deliveries",
		"/console/webhooks", "/console/webhooks/whk_chat", "/console/inboxes", "/console/agents", "/console/secrets", "/console/usage", "/console/events"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(base+path)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, `document.readyState === "complete" && document.getElementById("main")`)
		if w := evalText(t, ctx, `document.documentElement.scrollWidth + " of " + document.documentElement.clientWidth`); !strings.HasSuffix(w, " of "+strings.SplitN(w, " ", 2)[0]) {
			t.Errorf("%s is %s px wide on a 320 px screen", path, w)
		}
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector('form[action="/console/signout"] button').click(), true)`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `location.pathname === "/console/signin"`)
	if n := asked.Load(); n != 0 {
		t.Errorf("the e-mail's HTML made %d requests to its sender's host", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("in the browser:\n%s", strings.Join(problems, "\n"))
	}
}

func waitFor(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	err := testwait.Until(20*time.Second, func() error {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+expr+")"))
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("not yet: %s", expr)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%v\nat %s", err, evalText(t, ctx, `location.href + "\n" + document.body.innerText`))
	}
}

func evalText(t *testing.T, ctx context.Context, expr string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return s
}
