package mcptest

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
)

// ReadListing reads a snapshot written by Snapshot, for tests that check
// other sessions (roles, eras, transports) against the reviewed file.
func ReadListing(path string) (*Listing, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading snapshot: %w", err)
	}
	var l Listing
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", path, err)
	}
	return &l, nil
}

// ToolNames returns the listing's tool names, sorted.
func (l *Listing) ToolNames() []string {
	out := make([]string, 0, len(l.Tools))
	for _, t := range l.Tools {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}
