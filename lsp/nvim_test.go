package lsp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kobana/workflow/internal/secretnames"
	"github.com/kobana/workflow/lang"
)

// TestMain lets the Neovim test start this test binary as its language
// server: with KOBANA_LSP_TEST_SERVER=1 it serves standard input and output
// the way `validate-workflow lsp` does, instead of running the tests.
func TestMain(m *testing.M) {
	if os.Getenv("KOBANA_LSP_TEST_SERVER") == "1" {
		names, _ := secretnames.Parse([]byte(os.Getenv("KOBANA_SECRETS")))
		srv := New(Options{Debounce: DefaultDebounce, SecretNames: names, Log: os.Stderr})
		if err := srv.Serve(os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestNeovim drives a real editor's client: Neovim, headless, opens a
// document through its own LSP client, waits for the diagnostics, asks for
// completion and applies the quick fix the server offers.
func TestNeovim(t *testing.T) {
	t.Parallel()
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		t.Skip("nvim is not installed: this test needs Neovim 0.7 or later (Debian's neovim package; .ci/run installs it)")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("testdata/neovim.lua")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// One line holds multi-byte characters (and one outside the BMP, two
	// UTF-16 units) before the misspelt field: Neovim's client speaks UTF-16
	// and turns the range into byte columns.
	line := `    {"type": "request", "label": "Ação 🚀 já", "expected-status": 201, "url": "https://erp.example.com/x?at=${{kobana.now}}"}`
	doc := "{\n  \"result\": {},\n  \"workflow\": [\n" + line + "\n  ]\n}\n"
	docPath := filepath.Join(dir, "w.json")
	if err := os.WriteFile(docPath, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	completionAt := strings.Index(line, "${{kobana.") + len("${{kobana.")
	cfg := map[string]any{
		"doc":           docPath,
		"root":          dir,
		"cmd":           []string{self},
		"env":           map[string]string{"KOBANA_LSP_TEST_SERVER": "1"},
		"completion_at": Position{Line: 3, Character: units(line[:completionAt], UTF16)},
		"out":           filepath.Join(dir, "out.json"),
	}
	cfgJSON, _ := json.Marshal(cfg)
	cfgPath := filepath.Join(dir, "config.json")
	os.WriteFile(cfgPath, cfgJSON, 0o644)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvim, "--headless", "--clean", "-n", "-i", "NONE", "-c", "luafile "+script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KOBANA_NVIM_CONFIG="+cfgPath, "HOME="+dir, "XDG_STATE_HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_CACHE_HOME="+dir)
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nvim: %v\n%s", err, output)
	}
	data, err := os.ReadFile(cfg["out"].(string))
	if err != nil {
		t.Fatalf("nvim wrote no result: %v", err)
	}
	var out struct {
		Error       string
		Diagnostics []struct {
			Lnum     int `json:"lnum"`
			Col      int `json:"col"`
			EndCol   int `json:"end_col"`
			Severity int `json:"severity"`
			Code     string
			Message  string
		}
		Completion []string
		Action     string
		Text       []string
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	if out.Error != "" {
		t.Fatalf("the Lua script failed: %s", out.Error)
	}
	col := strings.Index(line, `"expected-status"`)
	if len(out.Diagnostics) != 1 {
		t.Fatalf("diagnostics in Neovim: %+v", out.Diagnostics)
	}
	d := out.Diagnostics[0]
	if d.Lnum != 3 || d.Col != col || d.EndCol != col+len(`"expected-status"`) || d.Severity != 1 || d.Code != "step-unknown-field" {
		t.Errorf("diagnostic in Neovim: %+v, want line 3, byte columns %d–%d", d, col, col+len(`"expected-status"`))
	}
	if diff := cmp.Diff(lang.KobanaKeys(), out.Completion); diff != "" {
		t.Errorf("completion in Neovim (-want +got):\n%s", diff)
	}
	if out.Action != "Change to expected_status" {
		t.Errorf("quick fix %q", out.Action)
	}
	fixed := strings.Replace(doc, "expected-status", "expected_status", 1)
	if got := strings.Join(out.Text, "\n") + "\n"; got != fixed {
		t.Errorf("the buffer after the quick fix:\n%s\nwant\n%s", got, fixed)
	}
}
