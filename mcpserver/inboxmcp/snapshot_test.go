package inboxmcp_test

import (
	"path/filepath"
	"testing"

	"github.com/kobana/workflow/mcpserver/mcptest"
)

// TestSnapshots compares what each role of the demo workspace sees of Inbox
// (tools with their schemas and annotations, resources, templates,
// prompts) with testdata/snapshots/<role>.json. After adding or changing a
// tool, resource or prompt: go test ./mcpserver/inboxmcp -run TestSnapshots
// -update, and review the diff.
func TestSnapshots(t *testing.T) {
	k := newKit(t)
	for _, role := range []string{"owner", "operator", "viewer"} {
		t.Run(role, func(t *testing.T) {
			cs := mcptest.Connect(t, mcptest.Stdio(t, k.srv, k.tokens[role]), mcptest.Legacy, nil)
			mcptest.Snapshot(t, cs, filepath.Join("testdata", "snapshots", role+".json"))
		})
	}
}
