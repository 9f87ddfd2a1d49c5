package docs

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/lang"
)

// root is the repository, seen from this package's directory.
const root = ".."

// read returns a document of the repository by its path from the root.
func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// markdownFiles lists the Markdown documents of the repository (not
// testdata), by path from the root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && p != root) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"README.md", "CONTRIBUTING.md", "docs/language.md", "docs/architecture.md"} {
		if !slices.Contains(files, want) {
			t.Fatalf("%s is missing (found %v)", want, files)
		}
	}
	return files
}

var (
	// link matches an inline Markdown link's target: [text](target).
	link = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// fence matches a fenced code block, whose content is not Markdown.
	fence = regexp.MustCompile("(?ms)^ *```.*?^ *```")
	// heading matches a Markdown heading line.
	heading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
)

// anchor is the fragment GitHub gives a heading: lower case, punctuation
// other than '-' and '_' dropped, spaces as '-'.
func anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 0x7f:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(doc, ""), -1) {
		a := anchor(m[1])
		for i := 0; out[a]; i++ {
			a = anchor(m[1]) + "-" + strconv.Itoa(i+1) // repeated headings get -1, -2…
		}
		out[a] = true
	}
	return out
}

// TestLinksStayInTheRepository: every relative link of every document
// names a file or directory of the repository (never one beside it, such as
// a planning folder), and every #fragment a heading of its target.
func TestLinksStayInTheRepository(t *testing.T) {
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range markdownFiles(t) {
		doc := fence.ReplaceAllString(read(t, file), "")
		for _, m := range link.FindAllStringSubmatch(doc, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			full := filepath.Join(filepath.Dir(filepath.Join(abs, file)), filepath.FromSlash(path))
			if path == "" {
				full = filepath.Join(abs, file)
			}
			if rel, err := filepath.Rel(abs, full); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s links %s, outside the repository: bring what it says into docs/", file, target)
				continue
			}
			info, err := os.Stat(full)
			if err != nil {
				t.Errorf("%s links %s, which does not exist", file, target)
				continue
			}
			if frag != "" && !info.IsDir() && strings.HasSuffix(full, ".md") {
				b, err := os.ReadFile(full)
				if err != nil {
					t.Fatal(err)
				}
				if !anchors(string(b))[frag] {
					t.Errorf("%s links %s: no heading makes #%s", file, target, frag)
				}
			}
		}
	}
}

// TestReadmeStartsWithTheTwoCommands: the first thing a newcomer runs.
func TestReadmeStartsWithTheTwoCommands(t *testing.T) {
	readme := read(t, "README.md")
	block := fence.FindString(readme)
	var cmds []string
	for _, line := range strings.Split(block, "\n") {
		if cmd, _, _ := strings.Cut(line, "#"); strings.HasPrefix(cmd, "go ") {
			cmds = append(cmds, strings.TrimSpace(cmd))
		}
	}
	if want := []string{"go run ./mcpserver/cmd/kobana demo", "go test ./... ./mcpserver/..."}; !slices.Equal(cmds, want) {
		t.Errorf("the README's first code block runs %q, want %q", cmds, want)
	}
}

// TestLanguageReferenceNamesEveryRule: docs/language.md names every step
// type, step field, method, refused header, kobana fact and attachment suffix the
// compiler knows, and the step limit.
func TestLanguageReferenceNamesEveryRule(t *testing.T) {
	doc := read(t, "docs/language.md")
	need := func(what, text string) {
		if !strings.Contains(doc, text) {
			t.Errorf("docs/language.md does not name the %s %s", what, text)
		}
	}
	for _, f := range compile.StepFields() {
		need("step field", "| `"+f+"` |")
	}
	for _, st := range compile.StepTypes() {
		need("step type", "`"+st.Name+"`")
	}
	for _, m := range compile.Methods() {
		need("method", "`"+m+"`")
	}
	for _, h := range compile.ReservedHeaders() {
		need("reserved header", "`"+h+"`")
	}
	for _, h := range compile.TransportHeaders() {
		need("header the transport rewrites", "`"+h+"`")
	}
	need("reserved prefix", "`x-kobana-*`")
	for _, k := range lang.KobanaKeys() {
		need("fact", "`kobana."+k+"`")
	}
	for _, s := range lang.AttachmentSuffixes() {
		if s != "base64" {
			need("attachment metadata", "${{email.attachments.N."+s+"}}")
		}
	}
	need("attachment suffix", "${{email.attachments.N.base64}}")
	for _, ns := range []string{"secrets.KEY", "kobana.KEY", "steps.N.response.…", "email.attachments.N"} {
		need("namespace", "### `${{"+ns+"}}`")
	}
	need("step limit", "up to **"+strconv.Itoa(compile.MaxSteps)+"** steps")
	need("placeholder limit", "at most "+strconv.Itoa(lang.MaxRefs)+" placeholders")
}

// TestArchitectureNamesEveryPackage: the layout in docs/architecture.md
// names every package of the module, so a new package comes with a line
// saying what it is for.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: the layout is not checked")
	}
	cmd := exec.Command(goBin, "list", "./...", "./mcpserver/...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	doc := read(t, "docs/architecture.md")
	layout, _, _ := strings.Cut(doc[strings.Index(doc, "## Layout"):], "\n## ")
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p, "github.com/kobana/workflow/")
		if !strings.Contains(layout, "`"+rel+"`") {
			t.Errorf("the layout in docs/architecture.md does not name package %s", rel)
		}
	}
}
