package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kobana/workflow/internal/golden"
)

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
	if golden.Updating() {
		t.Logf("writing %s: %d tools, %d resources, %d templates, %d prompts", path, len(l.Tools), len(l.Resources), len(l.ResourceTemplates), len(l.Prompts))
	}
	golden.Check(t, path, got)
}
