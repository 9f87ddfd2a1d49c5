package consumer

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNoPlatformDependency: a service that requires the library gets none
// of the platform's dependencies — not in what it builds, not in the module
// graph that minimal version selection reads. The platform's are the
// modules mcpserver/go.mod requires that are not in the library's own
// module graph.
func TestNoPlatformDependency(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: the module graph is not checked")
	}
	library := modGraph(t, goBin, "..")
	var platform []string
	for m := range requires(t, "../mcpserver/go.mod") {
		if !strings.Contains(library, "\n"+m+"@") && !strings.Contains(library, " "+m+"@") && m != "github.com/kobana/workflow" {
			platform = append(platform, m)
		}
	}
	if len(platform) < 20 {
		t.Fatalf("mcpserver/go.mod names %d modules the library does not: the check would prove little", len(platform))
	}
	graph := modGraph(t, goBin, ".")
	if !strings.Contains(graph, "github.com/kobana/workflow@") {
		t.Fatalf("the graph does not hold the library:\n%s", graph)
	}
	for _, m := range platform {
		if strings.Contains(graph, " "+m+"@") || strings.Contains(graph, "\n"+m+"@") {
			t.Errorf("the consumer's module graph holds %s, a dependency of the platform only", m)
		}
	}
}

// modGraph returns go mod graph of the module in dir, outside any
// workspace, with a newline before its first line.
func modGraph(t *testing.T, goBin, dir string) string {
	t.Helper()
	cmd := exec.Command(goBin, "mod", "graph")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod graph in %s: %v", dir, err)
	}
	return "\n" + string(out)
}

// requires returns the module paths a go.mod file requires.
func requires(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	block := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "require (":
			block = true
		case block && line == ")":
			block = false
		case block && line != "" && !strings.HasPrefix(line, "//"):
			out[strings.Fields(line)[0]] = true
		case strings.HasPrefix(line, "require "):
			out[strings.Fields(line)[1]] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
