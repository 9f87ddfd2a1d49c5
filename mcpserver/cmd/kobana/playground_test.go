package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kobana/workflow/mcpserver/playground"
)

// TestServePlayground: serve -http serves the playground at /playground/
// beside /mcp, with no token (it reads no record), and says where.
func TestServePlayground(t *testing.T) {
	var stderr serveBuffer
	addrs, stop := startServe(t, &Command{Stdout: io.Discard, Stderr: &stderr}, &stderr, "-http", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "p.db"))
	defer stop()
	base := "http://" + addrs["http"].String()
	resp, err := http.Get(base + "/playground")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Request.URL.Path != "/playground/" || !strings.Contains(string(page), "Workflow playground") {
		t.Fatalf("GET /playground: %s at %s\n%.300s", resp.Status, resp.Request.URL, page)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "'wasm-unsafe-eval'") {
		t.Errorf("CSP %q", csp)
	}
	resp, err = http.Get(base + "/playground/" + playground.ModuleFile)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if playground.HasModule(playground.Files()) {
		if resp.StatusCode != 200 || !bytes.HasPrefix(body, []byte("\x00asm")) {
			t.Errorf("the embedded module: %s, %d bytes", resp.Status, len(body))
		}
		if !strings.Contains(stderr.String(), "playground on "+base+"/playground/") {
			t.Errorf("serve does not say where the playground is: %s", stderr.String())
		}
	} else {
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "go generate ./mcpserver/playground") {
			t.Errorf("no module: %s %s", resp.Status, body)
		}
		if !strings.Contains(stderr.String(), "go generate ./mcpserver/playground") {
			t.Errorf("serve does not say the module is missing: %s", stderr.String())
		}
	}
}

// TestPlaygroundCommand writes the static site, building the module with
// the go command when this binary carries none.
func TestPlaygroundCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "site")
	var out, errb bytes.Buffer
	c := &Command{Stdout: &out, Stderr: &errb, Context: t.Context()}
	if status := c.Main([]string{"playground", "-out", dir}); status != exitOK {
		t.Fatalf("status %d: %s", status, errb.String())
	}
	for _, name := range []string{"index.html", "editor.js", "playground.css", "THIRD_PARTY_LICENSES.txt", playground.RuntimeFile, playground.ModuleFile} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || len(data) == 0 {
			t.Errorf("%s: %v", name, err)
		}
		if name == playground.ModuleFile && !bytes.HasPrefix(data, []byte("\x00asm")) {
			t.Errorf("%s is not WebAssembly", name)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "-out DIR is required"},
		{[]string{"-out", dir, "x"}, `unexpected argument "x"`},
	} {
		errb.Reset()
		if status := c.Main(append([]string{"playground"}, tc.args...)); status != exitUsage || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: %d %s", tc.args, status, errb.String())
		}
	}
}
