package workflow_test

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kobana/workflow/internal/apilist"
)

var updateAPI = flag.Bool("update-api", false, "TestAPI: write the API's changes since the last release to api/next.txt")

// released is the listing of the last release's API; api/next.txt holds
// the changes since then, "+" added and "-" removed, one line each.
const released = "api/v0.1.0.txt"

// libraryPackages are the packages whose exported API the listing records.
var libraryPackages = []string{
	".", "compile", "compile/lint", "egress", "emit", "examples", "executor", "executor/guard",
	"lang", "lsp", "plan", "resolve", "resolve/eml", "resolve/resolvetest", "runrecord",
}

// TestAPI: the exported API of the library's packages is the last release's
// listing with api/next.txt's changes, and CHANGELOG.md's Unreleased section
// names every identifier next.txt adds or removes. A change of the API
// without both fails here.
func TestAPI(t *testing.T) {
	now, err := apilist.Tree(".", func(rel string) bool { return slices.Contains(libraryPackages, rel) })
	if err != nil {
		t.Fatal(err)
	}
	base := readLines(t, released)
	added, removed := diff(base, now)
	var next []string
	for _, l := range added {
		next = append(next, "+"+l)
	}
	for _, l := range removed {
		next = append(next, "-"+l)
	}
	if *updateAPI {
		body := "# Changes to the library's exported API since " + strings.TrimSuffix(strings.TrimPrefix(released, "api/"), ".txt") +
			": \"+\" added, \"-\" removed. Written by go test . -run TestAPI -update-api; describe each in CHANGELOG.md.\n"
		if len(next) > 0 {
			body += strings.Join(next, "\n") + "\n"
		}
		if err := os.WriteFile("api/next.txt", []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	recorded := readLines(t, "api/next.txt")
	if a, r := diff(recorded, next); len(a)+len(r) > 0 {
		t.Errorf("the exported API differs from %s with api/next.txt's changes: run go test . -run TestAPI -update-api, "+
			"then describe the changes in CHANGELOG.md's Unreleased section.\nnot in api/next.txt:\n\t%s\nin api/next.txt, not in the API:\n\t%s",
			released, strings.Join(a, "\n\t"), strings.Join(r, "\n\t"))
	}
	unreleased := changelogSection(t, "Unreleased")
	for _, l := range recorded {
		if id := apiIdent(l[1:]); !strings.Contains(unreleased, id) {
			t.Errorf("CHANGELOG.md's Unreleased section does not name %s (%s)", id, l)
		}
	}
}

// readLines returns the lines of path that are not blank or comments.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// diff returns the lines of b not in a, and those of a not in b.
func diff(a, b []string) (added, removed []string) {
	for _, l := range b {
		if !slices.Contains(a, l) {
			added = append(added, l)
		}
	}
	for _, l := range a {
		if !slices.Contains(b, l) {
			removed = append(removed, l)
		}
	}
	return added, removed
}

var apiLine = regexp.MustCompile(`^pkg ([^,]+), (func|method \(\*?([A-Za-z0-9_]+)[^)]*\)|type|const|var) ([A-Za-z0-9_]+)(?:[^,]*, (?:embedded )?\*?([A-Za-z0-9_.]+))?`)

// apiIdent names a listing line's identifier as the changelog writes it:
// "lang.Parse", "lang.ErrorList.Unwrap", "lang.Segment.Invalid".
func apiIdent(line string) string {
	m := apiLine.FindStringSubmatch(line)
	if m == nil {
		return line
	}
	pkg := m[1][strings.LastIndex(m[1], "/")+1:]
	if m[1] == "." {
		pkg = "workflow"
	}
	switch {
	case m[3] != "":
		return fmt.Sprintf("%s.%s.%s", pkg, m[3], m[4])
	case m[2] == "type" && m[5] != "":
		return fmt.Sprintf("%s.%s.%s", pkg, m[4], m[5])
	}
	return pkg + "." + m[4]
}

// changelogSection returns the text of CHANGELOG.md's "## name" section.
func changelogSection(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n## "+name+"\n")
	if !ok {
		t.Fatalf("CHANGELOG.md has no %q section", "## "+name)
	}
	section, _, _ := strings.Cut(rest, "\n## ")
	return section
}

func TestAPIIdent(t *testing.T) {
	for line, want := range map[string]string{
		"pkg lang, func Parse(string) (Template, error)":          "lang.Parse",
		"pkg lang, method (ErrorList) Unwrap() []error":           "lang.ErrorList.Unwrap",
		"pkg executor, method (*Executor) Run(context.Context)":   "executor.Executor.Run",
		"pkg lang, type Segment struct, Invalid bool":             "lang.Segment.Invalid",
		"pkg lang, type Segment struct":                           "lang.Segment",
		"pkg runrecord, type Journal interface, Done(Step) error": "runrecord.Journal.Done",
		"pkg compile/lint, const X":                               "lint.X",
		"pkg ., var Schema []byte":                                "workflow.Schema",
	} {
		if got := apiIdent(line); got != want {
			t.Errorf("apiIdent(%q) = %q; want %q", line, got, want)
		}
	}
}
