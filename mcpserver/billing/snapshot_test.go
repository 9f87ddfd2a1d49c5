package billing_test

import (
	"path/filepath"
	"testing"

	"github.com/kobana/workflow/mcpserver/mcptest"
)

// TestSnapshots compares what each role of the demo workspace sees of Billing
// (tools with their schemas and annotations, resources, templates,
// prompts) with testdata/snapshots/<role>.json. After adding or changing a
// tool, resource or prompt: go test ./mcpserver/billing -run TestSnapshots
// -update, and review the diff.
func TestSnapshots(t *testing.T) {
	t.Parallel()
	mcptest.Snapshots(t, newKit(t), filepath.Join("testdata", "snapshots"), "owner", "operator", "viewer")
}
