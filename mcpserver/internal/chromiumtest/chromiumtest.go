package chromiumtest

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// Browser starts headless Chromium with a fresh profile for the test, with
// the flags that work on a CI machine (no sandbox, no GPU, no background
// networking) and opts after them, and returns the chromedp context of its
// first tab; the browser ends with the test.
func Browser(t testing.TB, opts ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	exe := find()
	if exe == "" {
		if os.Getenv("KOBANA_CHROMIUM_REQUIRED") != "" {
			t.Fatal("no Chromium on PATH, and KOBANA_CHROMIUM_REQUIRED is set: install Debian's chromium package")
		}
		t.Skip("no Chromium on PATH: install Debian's chromium package (.ci/run does)")
	}
	all := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	}, opts...)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), all...)
	t.Cleanup(cancel)
	ctx, cancelCtx := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancelCtx)
	// The first action starts the browser, which lives as long as ctx.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	return ctx
}

// find is the path of the first Chromium-like browser on PATH, or "".
func find() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}
