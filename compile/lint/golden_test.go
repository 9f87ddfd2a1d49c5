package lint_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kobana/workflow/compile"
	"github.com/kobana/workflow/compile/lint"
	"github.com/kobana/workflow/egress"
	"github.com/kobana/workflow/internal/golden"
	"github.com/kobana/workflow/internal/secretnames"
)

const (
	examplesDir = "../../examples/workflows"
	invalidDir  = examplesDir + "/invalid"
	// goldenJSON ends the name of the json output of an invalid example.
	goldenJSON = ".diagnostics.json"
)

// invalidExamples returns the paths of the invalid example documents by
// code (the file name without .json).
func invalidExamples(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(invalidDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range paths {
		if strings.HasSuffix(p, goldenJSON) {
			continue
		}
		out[strings.TrimSuffix(filepath.Base(p), ".json")] = p
	}
	if len(out) == 0 {
		t.Fatalf("no examples in %s", invalidDir)
	}
	return out
}

// exampleOptions are what an invalid example is linted with: the secret
// names of CODE.secrets and the policy of CODE.policy beside it, when
// present — the files validate-workflow's -secrets-names and -policy read.
func exampleOptions(t *testing.T, path string) lint.Options {
	t.Helper()
	base := strings.TrimSuffix(path, ".json")
	var opts lint.Options
	if b, err := os.ReadFile(base + ".secrets"); err == nil {
		names, problems := secretnames.Parse(b)
		if len(problems) > 0 {
			t.Fatalf("%s.secrets: %v", base, problems)
		}
		opts.SecretNames = names
	}
	if b, err := os.ReadFile(base + ".policy"); err == nil {
		p, err := egress.ParsePolicy(b)
		if err != nil {
			t.Fatalf("%s.policy: %v", base, err)
		}
		opts.Policy = p
	}
	return opts
}

// displayName is how an example is named in golden outputs: relative to the
// repository root, as `validate-workflow examples/workflows/invalid/X.json`
// run there prints it.
func displayName(path string) string {
	return "examples/workflows/invalid/" + filepath.Base(path)
}

func TestEveryCodeHasAnInvalidExample(t *testing.T) {
	t.Parallel()
	examples := invalidExamples(t)
	for _, code := range compile.AllCodes() {
		if _, ok := examples[code]; !ok {
			t.Errorf("no example %s/%s.json for code %s", invalidDir, code, code)
		}
	}
	for name := range examples {
		known := false
		for _, code := range compile.AllCodes() {
			known = known || code == name
		}
		if !known {
			t.Errorf("example %s.json is named after no diagnostic code", name)
		}
	}
}

// TestGolden lints every invalid example as the command line does and
// compares the text and json outputs with the files next to it; run with
// -update to rewrite them.
func TestGolden(t *testing.T) {
	t.Parallel()
	for code, path := range invalidExamples(t) {
		t.Run(code, func(t *testing.T) {
			doc, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			rep := lint.Reader(displayName(path), bytes.NewReader(doc), exampleOptions(t, path))
			if rep.Err != nil {
				t.Fatal(rep.Err)
			}
			found := false
			for _, d := range rep.Diagnostics {
				found = found || d.Code == code
			}
			if !found {
				t.Errorf("%s does not produce %s: %v", path, code, rep.Diagnostics)
			}
			var text, js bytes.Buffer
			if err := lint.WriteText(&text, []lint.Report{rep}, lint.TextOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := lint.WriteJSON(&js, []lint.Report{rep}); err != nil {
				t.Fatal(err)
			}
			base := strings.TrimSuffix(path, ".json")
			golden.Check(t, base+".txt", text.Bytes())
			golden.Check(t, base+goldenJSON, js.Bytes())
		})
	}
}

// TestValidExamplesAreClean checks that the valid examples lint without a
// single diagnostic, in every format.
func TestValidExamplesAreClean(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join(examplesDir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no valid examples: %v", err)
	}
	reports := lint.Files(lint.Options{}, paths...)
	for _, r := range reports {
		if r.Err != nil || len(r.Diagnostics) != 0 {
			t.Errorf("%s: %v %v", r.File, r.Err, r.Diagnostics)
		}
	}
	var js bytes.Buffer
	if err := lint.WriteJSON(&js, reports); err != nil {
		t.Fatal(err)
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(js.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if string(out["diagnostics"]) != "[]" {
		t.Errorf("diagnostics = %s, want []", out["diagnostics"])
	}
}

// TestDocsListEveryCode checks that docs/lint.md has a heading for every
// code (SARIF rules link to it by the code as anchor), followed by the
// severity the compiler reports it with and the rule's summary.
func TestDocsListEveryCode(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/lint.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lint.Rules() {
		sev := strings.ToUpper(r.Severity.String()[:1]) + r.Severity.String()[1:]
		if entry := "\n### `" + r.Code + "`\n" + sev + ". " + r.Summary; !strings.Contains(string(doc), entry) {
			t.Errorf("docs/lint.md has no entry %q", entry)
		}
	}
	if !strings.HasSuffix(lint.HelpURI, "docs/lint.md#") {
		t.Errorf("HelpURI %s does not point at docs/lint.md", lint.HelpURI)
	}
}

// TestForwardReferenceFailsOnlyWithStrict: a forward reference is a
// warning, so the linter passes the document unless -strict is given.
func TestForwardReferenceFailsOnlyWithStrict(t *testing.T) {
	t.Parallel()
	path := filepath.Join(invalidDir, compile.CodeForwardReference+".json")
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{path}, lint.ExitOK},
		{[]string{"-strict", path}, lint.ExitProblems},
	} {
		var out, errOut bytes.Buffer
		c := &lint.CLI{Stdout: &out, Stderr: &errOut}
		if got := c.Run(tc.args); got != tc.want {
			t.Errorf("%v: exit %d, want %d\n%s%s", tc.args, got, tc.want, out.String(), errOut.String())
		}
		if !strings.Contains(out.String(), "warning: step 0 refers to step 1") {
			t.Errorf("%v: output %q", tc.args, out.String())
		}
	}
}

// TestCLIWithTheWorkspace: -secrets-names and -policy read the files
// beside the examples that need them, and the rules they enable report;
// without them the same documents pass; an unreadable policy is a usage
// error that says where.
func TestCLIWithTheWorkspace(t *testing.T) {
	t.Parallel()
	base := func(code string) string { return filepath.Join(invalidDir, code) }
	for _, tc := range []struct {
		args []string
		want int
		says string
	}{
		{[]string{"-secrets-names", base(compile.CodeUnknownSecret) + ".secrets", base(compile.CodeUnknownSecret) + ".json"}, lint.ExitProblems, "[" + compile.CodeUnknownSecret + "]"},
		{[]string{"-policy", base(compile.CodeSecretDestination) + ".policy", base(compile.CodeSecretDestination) + ".json"}, lint.ExitProblems, "[" + compile.CodeSecretDestination + "]"},
		{[]string{base(compile.CodeSecretDestination) + ".json", base(compile.CodeEgressDenied) + ".json", base(compile.CodeUnknownSecret) + ".json"}, lint.ExitOK, "0 errors"},
	} {
		var out, errOut bytes.Buffer
		c := &lint.CLI{Stdout: &out, Stderr: &errOut}
		if got := c.Run(tc.args); got != tc.want || !strings.Contains(out.String(), tc.says) {
			t.Errorf("%v: exit %d, want %d and %q\n%s%s", tc.args, got, tc.want, tc.says, out.String(), errOut.String())
		}
	}
	bad := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(bad, []byte(`{"egress": ["https://a.example"]}`), 0o600)
	var out, errOut bytes.Buffer
	c := &lint.CLI{Stdout: &out, Stderr: &errOut}
	if got := c.Run([]string{"-policy", bad, base(compile.CodeEgressDenied) + ".json"}); got != lint.ExitUsage || !strings.Contains(errOut.String(), "-policy: "+bad+": egress: [0]: destination") {
		t.Errorf("an unreadable policy: exit %d: %s", got, errOut.String())
	}
}
