// Package playground is the workflow playground: one page where an author
// edits an agent's output document and sees, as they type, the compiler's
// diagnostics (underlines, hover messages, quick fixes), completion, and
// the dry run of package plan against a sample e-mail — all computed in
// the browser by the project's own compiler, language server and plan
// built for WebAssembly (playground/wasm). No keystroke reaches a server.
//
// The page and its editor (CodeMirror 6, bundled from playground/web into
// static/editor.js and committed) are embedded in this package. The
// WebAssembly module is built, not committed: `go generate ./mcpserver/playground`
// writes static/playground.wasm and the Go toolchain's matching
// wasm_exec.js, and a binary built afterwards embeds them; Build does the
// same into any directory.
//
// Files returns the site; Handler serves it (kobana serve mounts it at
// /playground/); Write copies it to a directory as static files (kobana
// playground -out DIR). HasModule says whether a site holds the module.
package playground

//go:generate go run ./internal/generate

import (
	"bytes"
	"compress/gzip"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:embed static
var static embed.FS

// Names of the module's files in a site.
const (
	ModuleFile  = "playground.wasm"
	RuntimeFile = "wasm_exec.js"
)

// Files returns the site embedded in this binary: the page, its editor and
// licences, and the module when it was generated before the build.
func Files() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the directory is embedded
	}
	return sub
}

// HasModule reports whether site holds the WebAssembly module and its
// runtime.
func HasModule(site fs.FS) bool {
	for _, name := range []string{ModuleFile, RuntimeFile} {
		if fi, err := fs.Stat(site, name); err != nil || fi.Size() == 0 {
			return false
		}
	}
	return true
}

// WithModule returns site with the module files of dir (as Build writes
// them) in place of its own.
func WithModule(site fs.FS, dir string) fs.FS {
	return overlay{top: os.DirFS(dir), names: []string{ModuleFile, RuntimeFile}, base: site}
}

// overlay serves names from top and everything else from base.
type overlay struct {
	top   fs.FS
	names []string
	base  fs.FS
}

func (o overlay) Open(name string) (fs.File, error) {
	for _, n := range o.names {
		if n == name {
			return o.top.Open(name)
		}
	}
	return o.base.Open(name)
}

// ErrNoToolchain is returned by Build when no Go toolchain is on PATH.
var ErrNoToolchain = errors.New("building the playground's module needs the go command on PATH")

// Build compiles the WebAssembly module (GOOS=js GOARCH=wasm, trimmed and
// stripped) into dir/playground.wasm and copies the toolchain's
// wasm_exec.js, which must match it, beside it. It runs the go command in
// the current directory, which must be inside this module's source.
func Build(ctx context.Context, dir string) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return ErrNoToolchain
	}
	out, err := filepath.Abs(filepath.Join(dir, ModuleFile))
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, goTool, "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", out, "github.com/kobana/workflow/mcpserver/playground/wasm")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "cannot find") || strings.Contains(msg, "not in a module") || strings.Contains(msg, "go.mod file not found") {
			msg += "\n(building the playground's module needs this module's source: run it from a clone of github.com/kobana/workflow)"
		}
		return fmt.Errorf("building the playground's module: %v: %s", err, msg)
	}
	root, err := exec.CommandContext(ctx, goTool, "env", "GOROOT").Output()
	if err != nil {
		return fmt.Errorf("finding the Go toolchain's wasm_exec.js: %w", err)
	}
	goroot := strings.TrimSpace(string(root))
	var runtime []byte
	for _, p := range []string{"lib/wasm/wasm_exec.js", "misc/wasm/wasm_exec.js"} {
		if runtime, err = os.ReadFile(filepath.Join(goroot, p)); err == nil {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("the Go toolchain at %s has no wasm_exec.js: %w", goroot, err)
	}
	return os.WriteFile(filepath.Join(dir, RuntimeFile), runtime, 0o644)
}

// Write copies site into dir, creating it: a static copy of the
// playground any web server can serve (it must serve .wasm files as
// application/wasm). It fails when the site has no module.
func Write(site fs.FS, dir string) error {
	if !HasModule(site) {
		return errors.New("the playground has no WebAssembly module to write: run `go generate ./mcpserver/playground` first, or use Build")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	copyFile := func(name string) error {
		data, err := fs.ReadFile(site, name)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), data, 0o644)
	}
	err := fs.WalkDir(site, ".", func(name string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dir, filepath.FromSlash(name)), 0o755)
		case name == ModuleFile || name == RuntimeFile:
			return nil // below, from wherever the site takes them
		}
		return copyFile(name)
	})
	if err != nil {
		return err
	}
	for _, name := range []string{ModuleFile, RuntimeFile} {
		if err := copyFile(name); err != nil {
			return err
		}
	}
	return nil
}

// notBuilt is the answer for the module when the site has none.
const notBuilt = "This kobana was built without the playground's WebAssembly module. " +
	"Run `go generate ./mcpserver/playground` in the source and build kobana again, " +
	"or write a static copy with `kobana playground -out DIR`."

// Handler serves site: the page at the root, the module as
// application/wasm (gzip-compressed for clients that accept it, compressed
// once), with a content security policy that lets the page run the module
// and nothing from elsewhere. Mount it under a prefix with
// http.StripPrefix.
func Handler(site fs.FS) http.Handler {
	files := http.FileServerFS(site)
	var gz gzipCache
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if name == ModuleFile || name == RuntimeFile {
			if !HasModule(site) {
				http.Error(w, notBuilt, http.StatusServiceUnavailable)
				return
			}
			h.Set("Cache-Control", "no-cache")
			if name == ModuleFile && acceptsGzip(r) {
				data, err := gz.get(site)
				if err != nil {
					http.Error(w, "reading the module: "+err.Error(), http.StatusInternalServerError)
					return
				}
				h.Set("Content-Type", "application/wasm")
				h.Set("Content-Encoding", "gzip")
				h.Add("Vary", "Accept-Encoding")
				http.ServeContent(w, r, ModuleFile, gz.mod, bytes.NewReader(data))
				return
			}
		}
		files.ServeHTTP(w, r)
	})
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(enc), "gzip") {
			continue
		}
		if q, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err != nil || v == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// gzipCache holds the module compressed, made on first use.
type gzipCache struct {
	once sync.Once
	data []byte
	mod  time.Time
	err  error
}

func (c *gzipCache) get(site fs.FS) ([]byte, error) {
	c.once.Do(func() {
		f, err := site.Open(ModuleFile)
		if err != nil {
			c.err = err
			return
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil {
			c.mod = fi.ModTime()
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if _, err := io.Copy(zw, f); err != nil {
			c.err = err
			return
		}
		if c.err = zw.Close(); c.err == nil {
			c.data = buf.Bytes()
		}
	})
	return c.data, c.err
}
