package mcptest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorder is a testing.TB that keeps failures instead of failing.
type recorder struct {
	testing.TB
	mu       sync.Mutex
	failures []string
}

func (r *recorder) Helper()             {}
func (r *recorder) Name() string        { return "TestRecorded" }
func (r *recorder) Logf(string, ...any) {}
func (r *recorder) Errorf(f string, a ...any) {
	r.mu.Lock()
	r.failures = append(r.failures, fmt.Sprintf(f, a...))
	r.mu.Unlock()
}
func (r *recorder) Fatalf(f string, a ...any) { r.Errorf(f, a...); runtime.Goexit() }
func (r *recorder) Fatal(a ...any)            { r.Errorf("%s", fmt.Sprint(a...)); runtime.Goexit() }

// run calls f with a recorder and returns what failed.
func (r *recorder) run(f func(testing.TB)) []string {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f(r)
	}()
	wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.failures
	r.failures = nil
	return out
}

// session serves a small go-sdk server whose one tool has the given
// description, in process.
func session(t *testing.T, description string) *mcp.ClientSession {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	type in struct {
		ID string `json:"id"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "b_get", Description: description}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
		return nil, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "a_list", Description: "Lists."}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
		return nil, nil, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "p", Arguments: []*mcp.PromptArgument{{Name: "id", Required: true}}}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return nil, nil
	})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestSnapshotWritesComparesAndNamesTheDifference(t *testing.T) {
	path := filepath.Join(t.TempDir(), "snapshots", "owner.json")
	r := &recorder{TB: t}

	// No file yet: a failure that says how to create it.
	if got := r.run(func(tb testing.TB) { Snapshot(tb, session(t, "Gets one."), path) }); len(got) != 1 || !strings.Contains(got[0], "-update") {
		t.Fatalf("missing snapshot: %q", got)
	}

	// -update writes it: sorted, pretty, stable.
	flag.Set("update", "true")
	got := r.run(func(tb testing.TB) { Snapshot(tb, session(t, "Gets one."), path) })
	flag.Set("update", "false")
	if len(got) != 0 {
		t.Fatalf("update: %q", got)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.HasSuffix(text, "}\n") || !strings.Contains(text, "\n  \"prompts\": [") || strings.Index(text, `"a_list"`) > strings.Index(text, `"b_get"`) {
		t.Fatalf("snapshot is not sorted, pretty JSON:\n%s", text)
	}

	// The same listing compares equal; a changed description is a diff.
	if got := r.run(func(tb testing.TB) { Snapshot(tb, session(t, "Gets one."), path) }); len(got) != 0 {
		t.Fatalf("unchanged listing: %q", got)
	}
	got = r.run(func(tb testing.TB) { Snapshot(tb, session(t, "Gets exactly one."), path) })
	if len(got) != 1 || !regexp.MustCompile(`\n-[^\n]*"description": "Gets one\.",[^\n]*\n\+[^\n]*"description": "Gets exactly one\.",`).MatchString(got[0]) {
		t.Fatalf("changed listing: %q", got)
	}
}
