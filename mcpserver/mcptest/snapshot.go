package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// update is the -update flag of every test binary that imports mcptest:
// `go test ./mcpserver/inbox -run Snapshot -update` rewrites the snapshots.
// (A test package using mcptest must not define its own -update flag.)
var update = flag.Bool("update", false, "rewrite the golden files (MCP snapshots) instead of comparing with them")

// Updating reports whether the test binary runs with -update.
func Updating() bool { return *update }

// Listing is what a client sees of a server before using it: every page of
// tools/list, resources/list, resources/templates/list and prompts/list,
// each sorted by name (or URI).
type Listing struct {
	Tools             []*mcp.Tool             `json:"tools"`
	Resources         []*mcp.Resource         `json:"resources"`
	ResourceTemplates []*mcp.ResourceTemplate `json:"resourceTemplates"`
	Prompts           []*mcp.Prompt           `json:"prompts"`
}

// List collects the Listing of session cs.
func List(ctx context.Context, cs *mcp.ClientSession) (*Listing, error) {
	var l Listing
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		l.Tools = append(l.Tools, t)
	}
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("resources/list: %w", err)
		}
		l.Resources = append(l.Resources, r)
	}
	for r, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("resources/templates/list: %w", err)
		}
		l.ResourceTemplates = append(l.ResourceTemplates, r)
	}
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("prompts/list: %w", err)
		}
		l.Prompts = append(l.Prompts, p)
	}
	sort.Slice(l.Tools, func(i, j int) bool { return l.Tools[i].Name < l.Tools[j].Name })
	sort.Slice(l.Resources, func(i, j int) bool { return l.Resources[i].URI < l.Resources[j].URI })
	sort.Slice(l.ResourceTemplates, func(i, j int) bool {
		return l.ResourceTemplates[i].URITemplate < l.ResourceTemplates[j].URITemplate
	})
	sort.Slice(l.Prompts, func(i, j int) bool { return l.Prompts[i].Name < l.Prompts[j].Name })
	return &l, nil
}

// JSON renders the listing as stable, pretty JSON: object keys sorted, two
// spaces of indentation, no HTML escaping, a final newline.
func (l *Listing) JSON() ([]byte, error) {
	raw, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	for _, list := range v.(map[string]any) {
		if list == nil {
			continue
		}
		for _, item := range list.([]any) {
			delete(item.(map[string]any), "_meta") // per response, not part of the declaration
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil { // maps encode with sorted keys
		return nil, err
	}
	return b.Bytes(), nil
}

// Snapshot compares the Listing session cs sees with the golden file at
// path (names, titles, descriptions, input and output schemas, annotations,
// prompt arguments), in the style of github-mcp-server's tool snapshots:
// a difference fails the test with a diff; -update writes the file instead.
// A missing file fails too, so that a new snapshot is a reviewed file.
func Snapshot(t testing.TB, cs *mcp.ClientSession, path string) {
	t.Helper()
	l, err := List(context.Background(), cs)
	if err != nil {
		t.Fatalf("snapshot %s: %v", path, err)
	}
	got, err := l.JSON()
	if err != nil {
		t.Fatalf("snapshot %s: %v", path, err)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d tools, %d resources, %d templates, %d prompts", path, len(l.Tools), len(l.Resources), len(l.ResourceTemplates), len(l.Prompts))
		return
	}
	want, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no snapshot %s yet: run `go test -run '%s' -update` in this package and review the file", path, t.Name())
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("what clients see differs from %s; if the change is intended, run `go test -run '%s' -update` and review the diff:\n%s",
			path, t.Name(), lineDiff(string(want), string(got)))
	}
}

// lineDiff shows where two texts differ: the lines between their common
// beginning and common end, "-" from a and "+" from b, with three lines of
// context.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	pre := 0
	for pre < len(al) && pre < len(bl) && al[pre] == bl[pre] {
		pre++
	}
	suf := 0
	for suf < len(al)-pre && suf < len(bl)-pre && al[len(al)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	const context = 3
	var out strings.Builder
	from := max(0, pre-context)
	fmt.Fprintf(&out, "@@ line %d @@\n", from+1)
	for _, l := range al[from:pre] {
		out.WriteString("  " + l + "\n")
	}
	for _, l := range al[pre : len(al)-suf] {
		out.WriteString("- " + l + "\n")
	}
	for _, l := range bl[pre : len(bl)-suf] {
		out.WriteString("+ " + l + "\n")
	}
	for _, l := range al[len(al)-suf : min(len(al), len(al)-suf+context)] {
		out.WriteString("  " + l + "\n")
	}
	return out.String()
}
