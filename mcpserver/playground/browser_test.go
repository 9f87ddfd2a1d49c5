package playground_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kobana/workflow/mcpserver/internal/chromiumtest"
	"github.com/kobana/workflow/mcpserver/playground"
)

var (
	moduleOnce sync.Once
	moduleDir  string
	moduleErr  error
)

// module builds the WebAssembly module once for the package's tests.
func module(t *testing.T) string {
	t.Helper()
	moduleOnce.Do(func() {
		moduleDir, moduleErr = os.MkdirTemp("", "playground-module-")
		if moduleErr == nil {
			moduleErr = playground.Build(context.Background(), moduleDir)
		}
	})
	if moduleErr != nil {
		t.Fatalf("building the module: %v", moduleErr)
	}
	return moduleDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if moduleDir != "" {
		os.RemoveAll(moduleDir)
	}
	os.Exit(code)
}

// serve serves the playground with the freshly built module at /playground/.
// The handler compresses the module once, on its first request: that is
// done here, before any browser's timed page load (under the race detector
// compressing the 9 MB module takes ~7 s, against 0.7 s without it, and it
// pushed the page's load past its deadline on a loaded machine).
func serve(t *testing.T) *httptest.Server {
	site := playground.WithModule(playground.Files(), module(t))
	mux := http.NewServeMux()
	mux.Handle("/playground/", http.StripPrefix("/playground", playground.Handler(site)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/playground/"+playground.ModuleFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("compressing the module: %s %q %v", resp.Status, resp.Header.Get("Content-Encoding"), err)
	}
	return srv
}

// browser starts headless Chromium with a fresh profile and a desktop
// window's size.
func browser(t *testing.T) context.Context {
	t.Helper()
	return chromiumtest.Browser(t, chromedp.WindowSize(1440, 1000))
}

// waitText waits until the text of sel contains want.
func waitText(sel, want string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Poll[bool](`(() => { const e = document.querySelector(`+jsString(sel)+`); return !!e && e.textContent.includes(`+jsString(want)+`); })()`, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second))(ctx, t)
		if err != nil {
			return fmt.Errorf("waiting for %s to show %q: %w", sel, want, err)
		}
		return nil
	})
}

// waitFor waits until the JavaScript expression is truthy.
func waitFor(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Poll[bool]("!!("+expr+")", chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(10*time.Second))(ctx, t)
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", expr, err)
		}
		return nil
	})
}

// script runs JavaScript for its effect; it must return true.
func script(js string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		ok, err := chromedp.Evaluate[bool]("(() => {"+js+"; return true; })()")(ctx, t)
		if err == nil && !ok {
			err = fmt.Errorf("the script returned false")
		}
		return err
	})
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// selectText selects the text find in the editor (from offset skip within
// it, for length n) and focuses the editor, so that keys typed replace it.
func selectText(find string, skip, n int) chromedp.Action[chromedp.Void] {
	return script(`const view = playground.view, at = view.state.doc.toString().indexOf(` + jsString(find) + `);
		if (at < 0) throw new Error("not in the document: " + ` + jsString(find) + `);
		view.dispatch({selection: {anchor: at + ` + fmt.Sprint(skip) + `, head: at + ` + fmt.Sprint(skip+n) + `}});
		view.focus()`)
}

// TestPlaygroundInChromium drives the page in a real browser: the complete
// example loads and is planned in the page; a misspelt field typed on the
// keyboard is underlined, its hover message offers the quick fix, applying
// it makes the document valid again and the plan comes back; an edit to a
// URL changes the plan; completion offers the namespaces inside ${{ }};
// and the compiler is timed in the page. Screenshots go to the test's
// artifacts (go test -artifacts -outputdir DIR keeps them).
func TestPlaygroundInChromium(t *testing.T) {
	srv := serve(t)
	ctx := browser(t)
	if err := do(ctx,
		chromedp.Navigate(srv.URL+"/playground/"),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Poll[bool](`document.body.dataset.state !== "loading"`, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second))(ctx, tg)
			return err
		}),
	); err != nil {
		fatal(t, ctx, err)
	}
	if failed := eval[string](t, ctx, `document.body.dataset.state === "failed" ? document.getElementById("status").textContent : ""`); failed != "" {
		t.Fatalf("the page failed: %s", failed)
	}
	if err := do(ctx, waitText("#plan .summary", "3 steps: 3 would be sent, 0 would fail before sending, 0 would be skipped")); err != nil {
		fatal(t, ctx, err)
	}
	if url1 := eval[string](t, ctx, `document.querySelector('#plan .step[data-index="1"] .url').textContent`); url1 != "https://erp.example.com/payables/pay_0193/attachments" {
		t.Errorf("step 1's URL in the plan: %q", url1)
	}

	// Type a misspelt field over the key "label" of step 0.
	if err := do(ctx,
		selectText(`"label"`, 1, len("label")),
		chromedp.KeyEvent("lable"),
		waitFor(`document.querySelector(".cm-lintRange-error")`),
		waitText("#plan .summary", "does not validate"),
	); err != nil {
		fatal(t, ctx, err)
	}
	if doc := eval[string](t, ctx, `playground.view.state.doc.toString()`); !strings.Contains(doc, `"lable": "crea la cuenta a pagar"`) {
		t.Fatalf("typing did not reach the editor: %.200s", doc)
	}

	// Hover the underline: the message and its quick fix.
	xy := eval[[]float64](t, ctx, `(() => { const r = document.querySelector(".cm-lintRange-error").getBoundingClientRect(); return [r.left + r.width/2, r.top + r.height/2]; })()`)
	if err := do(ctx,
		chromedp.MouseEvent(chromedp.MouseMoved, xy[0]-2, xy[1]),
		chromedp.MouseEvent(chromedp.MouseMoved, xy[0], xy[1]),
		waitFor(`document.querySelector(".cm-tooltip-lint .cm-diagnosticAction")`),
	); err != nil {
		fatal(t, ctx, err)
	}
	message := eval[string](t, ctx, `document.querySelector(".cm-tooltip-lint .cm-diagnostic").textContent`)
	if !strings.Contains(message, `unknown field "lable" in step 0; did you mean "label"?`) {
		t.Errorf("hover message: %q", message)
	}
	shot(t, ctx, "playground-diagnostic.png")

	if err := do(ctx,
		script(`document.querySelector(".cm-tooltip-lint .cm-diagnosticAction").click()`),
		waitText("#plan .summary", "3 steps: 3 would be sent"),
		waitFor(`!document.querySelector(".cm-lintRange-error")`),
	); err != nil {
		fatal(t, ctx, err)
	}
	if doc := eval[string](t, ctx, `playground.view.state.doc.toString()`); !strings.Contains(doc, `"label": "crea la cuenta a pagar"`) {
		t.Errorf("the quick fix did not restore the field: %.300s", doc)
	}

	// Hover on a reference: what it resolves to, from the language server.
	rxy := eval[[]float64](t, ctx, `(() => {
		const view = playground.view, at = view.state.doc.toString().indexOf("secrets.FINANCE_TOKEN") + 3;
		const c = view.coordsAtPos(at); return [c.left + 2, (c.top + c.bottom) / 2]; })()`)
	if err := do(ctx,
		chromedp.MouseEvent(chromedp.MouseMoved, rxy[0]-2, rxy[1]),
		chromedp.MouseEvent(chromedp.MouseMoved, rxy[0], rxy[1]),
		waitFor(`[...document.querySelectorAll(".cm-tooltip-hover")].some(e => e.textContent.includes("FINANCE_TOKEN"))`),
	); err != nil {
		fatal(t, ctx, err)
	}
	hover := eval[string](t, ctx, `[...document.querySelectorAll(".cm-tooltip-hover")].map(e => e.textContent).join(" | ")`)
	t.Logf("hover: %.300s", hover)
	shot(t, ctx, "playground-hover.png")

	// The plan follows the document: point step 1 at another path.
	if err := do(ctx,
		selectText(`/attachments"`, 1, len("attachments")),
		chromedp.KeyEvent("files"),
		waitText(`#plan .step[data-index="1"] .url`, "https://erp.example.com/payables/pay_0193/files"),
	); err != nil {
		fatal(t, ctx, err)
	}

	// Completion inside ${{ }}.
	if err := do(ctx,
		selectText(`"source_email_id": "`, len(`"source_email_id": "`), 0),
		chromedp.KeyEvent("${{"),
		waitFor(`document.querySelector(".cm-tooltip-autocomplete .cm-completionLabel")`),
	); err != nil {
		fatal(t, ctx, err)
	}
	labels := eval[[]string](t, ctx, `[...document.querySelectorAll(".cm-tooltip-autocomplete .cm-completionLabel")].map(e => e.textContent)`)
	for _, ns := range []string{"secrets", "kobana", "steps", "email"} {
		if !strings.Contains(strings.Join(labels, " "), ns) {
			t.Errorf("completion offers %q, not %s", labels, ns)
		}
	}
	shot(t, ctx, "playground-completion.png")

	// Secret names come from the page's secret names, which the language
	// server reads as the workspace's .kobana-secrets file.
	if err := do(ctx,
		chromedp.KeyEvent("secrets."),
		waitFor(`[...document.querySelectorAll(".cm-tooltip-autocomplete .cm-completionLabel")].some(e => e.textContent === "FINANCE_TOKEN")`),
	); err != nil {
		fatal(t, ctx, err)
	}

	// Time the compiler on the complete example, in the page.
	if err := do(ctx,
		chromedp.KeyEvent("\u001b"), // Escape
		script(`const s = JSON.parse(playground.kobana.samples())[0]; playground.view.dispatch({changes: {from: 0, to: playground.view.state.doc.length, insert: s.document}})`),
		waitText("#plan .summary", "3 steps: 3 would be sent"),
		script(`document.getElementById("measure").click()`),
	); err != nil {
		fatal(t, ctx, err)
	}
	result, err := chromedp.Run(ctx, chromedp.Poll[string](`document.getElementById("measurement").dataset.result || ""`, chromedp.WithPollingInterval(50*time.Millisecond)))
	if err != nil {
		fatal(t, ctx, err)
	}
	t.Logf("compile time of the complete example in Chromium: %s", result)
	os.WriteFile(filepath.Join(t.ArtifactDir(), "compile-in-chromium.json"), []byte(result+"\n"), 0o644)
	shot(t, ctx, "playground.png")
}

// do runs steps, each wait bounded so that a failure leaves time to say
// what the page shows.
func do(ctx context.Context, steps ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return chromedp.Do(ctx, steps...)
}

// fatal reports err with what the page shows, and a screenshot.
func fatal(t *testing.T, ctx context.Context, err error) {
	t.Helper()
	state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.state + ": " + document.getElementById("status").textContent + " | plan: " + document.getElementById("plan").textContent.slice(0, 400)`))
	shot(t, ctx, "failure.png")
	t.Fatalf("%v\npage: %s", err, state)
}

// shot saves a screenshot of the page into the test's artifacts.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Errorf("screenshot: %v", err)
		return
	}
	path := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Error(err)
	}
	t.Logf("screenshot: %s", path)
}
