package playground_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kobana/workflow/internal/leandeps"
	"github.com/kobana/workflow/mcpserver/playground"
)

func site(withModule bool) fstest.MapFS {
	fs := fstest.MapFS{
		"index.html": {Data: []byte("<!doctype html><title>playground</title>")},
		"editor.js":  {Data: []byte("console.log(1)")},
	}
	if withModule {
		fs[playground.ModuleFile] = &fstest.MapFile{Data: bytes.Repeat([]byte("\x00asm module bytes "), 1000)}
		fs[playground.RuntimeFile] = &fstest.MapFile{Data: []byte("// wasm_exec")}
	}
	return fs
}

func get(t *testing.T, h http.Handler, method, path string, header map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func TestHandler(t *testing.T) {
	h := playground.Handler(site(true))
	resp := get(t, h, "GET", "/", nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), "<title>playground</title>") {
		t.Fatalf("/: %d %s", resp.StatusCode, body)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self' 'wasm-unsafe-eval'", "connect-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}

	want := site(true)[playground.ModuleFile].Data
	resp = get(t, h, "GET", "/"+playground.ModuleFile, map[string]string{"Accept-Encoding": "br, gzip;q=0.8"})
	if resp.Header.Get("Content-Type") != "application/wasm" || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("module: %v", resp.Header)
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(zr)
	if !bytes.Equal(got, want) {
		t.Errorf("the gzipped module is %d bytes unzipped, want %d", len(got), len(want))
	}
	if n, _ := io.Copy(io.Discard, get(t, h, "GET", "/"+playground.ModuleFile, map[string]string{"Accept-Encoding": "gzip"}).Body); n >= int64(len(want)) {
		t.Errorf("gzipped module of %d bytes for %d", n, len(want))
	}
	resp = get(t, h, "GET", "/"+playground.ModuleFile, map[string]string{"Accept-Encoding": "gzip;q=0"})
	got, _ = io.ReadAll(resp.Body)
	if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(got, want) || resp.Header.Get("Content-Type") != "application/wasm" {
		t.Errorf("gzip;q=0: %v, %d bytes", resp.Header, len(got))
	}
	if resp := get(t, h, "POST", "/", nil); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", resp.StatusCode)
	}

	// Without the module the page still loads; the module says how to build it.
	h = playground.Handler(site(false))
	resp = get(t, h, "GET", "/"+playground.ModuleFile, nil)
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "go generate ./mcpserver/playground") {
		t.Errorf("no module: %d %s", resp.StatusCode, body)
	}
	if resp := get(t, h, "GET", "/", nil); resp.StatusCode != 200 {
		t.Errorf("no module, /: %d", resp.StatusCode)
	}
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "site")
	if err := playground.Write(site(false), dir); err == nil || !strings.Contains(err.Error(), "go generate ./mcpserver/playground") {
		t.Errorf("Write without a module: %v", err)
	}
	if err := playground.Write(site(true), dir); err != nil {
		t.Fatal(err)
	}
	for name, f := range site(true) {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, f.Data) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The embedded site has the page, the editor and the licences.
	for _, name := range []string{"index.html", "editor.js", "playground.css", "THIRD_PARTY_LICENSES.txt"} {
		if fi, err := fsStat(name); err != nil || fi == 0 {
			t.Errorf("embedded %s: %v", name, err)
		}
	}
}

func fsStat(name string) (int64, error) {
	b, err := playground.Files().Open(name)
	if err != nil {
		return 0, err
	}
	defer b.Close()
	fi, err := b.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// TestLeanModule keeps the WebAssembly module free of database drivers,
// the MCP SDK, the job queue and the packages that run workflows: it holds
// the compiler, the language server and the dry run only.
func TestLeanModule(t *testing.T) {
	leandeps.Check(t, "./wasm", "the module", leandeps.Rules{
		Banned:  leandeps.Heavy("github.com/chromedp/"),
		Allowed: []string{"lang", "egress", "compile", "runrecord", "resolve", "emit", "executor/guard", "internal/", "lsp", "plan", "examples", "mcpserver/playground/engine", "mcpserver/playground/wasm"},
		Env:     []string{"GOOS=js", "GOARCH=wasm"},
	})
}
