package opsdoc

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kobana/workflow/mcpserver/internal/pgtest"
)

// root is the repository's root, where docs/operations.md and the
// commands it gives start.
const root = "../../.."

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// opsBlock is a fenced block of docs/operations.md with the marker before
// it (<!-- run -->, <!-- run postgres -->, <!-- systemd-unit NAME -->).
type opsBlock struct {
	marker, body string
}

var markedBlock = regexp.MustCompile("(?s)<!-- ([a-z][^>]*?) -->\n```[a-z]*\n(.*?)```")

func opsBlocks(t *testing.T) []opsBlock {
	t.Helper()
	var out []opsBlock
	for _, m := range markedBlock.FindAllStringSubmatch(read(t, "docs/operations.md"), -1) {
		out = append(out, opsBlock{marker: m[1], body: m[2]})
	}
	return out
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestOperationsCommands runs the shell blocks docs/operations.md marks
// <!-- run -->, in order, in one shell, with the kobana built from this
// checkout on PATH, in a scratch directory, the loopback ports it names
// swapped for free ones; the <!-- run postgres --> blocks too when a
// PostgreSQL server is at hand (KOBANA_TEST_POSTGRES; CI has one), with
// KOBANA_DATABASE_URL a fresh schema of it.
func TestOperationsCommands(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "openssl", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH: the operations guide's commands are not run", tool)
		}
	}
	blocks := opsBlocks(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "kobana"), "./mcpserver/cmd/kobana")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./mcpserver/cmd/kobana: %v\n%s", err, out)
	}
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	ports := strings.NewReplacer("127.0.0.1:8080", freeAddr(t), "127.0.0.1:2525", freeAddr(t), "127.0.0.1:9464", freeAddr(t))
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+dir, "KOBANA_SECRET_KEY=", "KOBANA_NEW_SECRET_KEY=")
	script := "set -euo pipefail\n"
	ran := 0
	for _, b := range blocks {
		switch b.marker {
		case "run":
		case "run postgres":
			if os.Getenv("KOBANA_TEST_POSTGRES") == "" {
				t.Logf("no PostgreSQL server (KOBANA_TEST_POSTGRES): the block %q is not run", strings.TrimSpace(b.body))
				continue
			}
			env = append(env, "KOBANA_DATABASE_URL="+pgtest.SchemaURL(t, "ops", "kobana-ops-doc"))
		default:
			continue
		}
		script += fmt.Sprintf("echo '+ block %d'\n%s\n", ran, ports.Replace(b.body))
		ran++
	}
	if ran < 6 {
		t.Fatalf("docs/operations.md marks %d blocks <!-- run -->, want the guide's walk-through", ran)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Env = work, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the background server is in its group
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever a failed block left running
	}
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(work, "kobana.log"))
		t.Fatalf("the guide's commands failed: %v\n%s\nkobana.log:\n%s", err, out, log)
	}
	for _, want := range []string{`"status":"ready"`, `"status":"ok"`, "kobana_build_info{", "is a complete backup", "restored backups/nightly", "sealed"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the guide's commands did not print %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"owner.token", "bruno.token", "backups/nightly/manifest.json", "restored/kobana.db", "backups/after-rotation/manifest.json"} {
		if _, err := os.Stat(filepath.Join(work, f)); err != nil {
			t.Errorf("the guide's commands did not make %s: %v", f, err)
		}
	}
}

// TestSystemdUnitVerifies: the unit docs/operations.md gives passes
// systemd-analyze verify without a word, and its sandboxing rates at most
// the exposure the guide says (systemd-analyze security --offline). It
// skips without systemd-analyze unless KOBANA_SYSTEMD_REQUIRED is set
// (CI), and fails then.
func TestSystemdUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("KOBANA_SYSTEMD_REQUIRED") != "" {
			t.Fatal("systemd-analyze is not installed (Debian: apt-get install systemd) and KOBANA_SYSTEMD_REQUIRED is set")
		}
		t.Skip("systemd-analyze is not installed (Debian: systemd): the unit is not verified")
	}
	var unit, name string
	for _, b := range opsBlocks(t) {
		if n, ok := strings.CutPrefix(b.marker, "systemd-unit "); ok {
			unit, name = b.body, n
		}
	}
	if unit == "" {
		t.Fatal("docs/operations.md has no <!-- systemd-unit NAME --> block")
	}
	// The unit names the installed binary; verify needs an executable
	// there.
	exe, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(unit, "/usr/local/bin/kobana ") {
		t.Fatal("the unit's ExecStart is not /usr/local/bin/kobana")
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(unit, "/usr/local/bin/kobana ", exe+" ")), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", "--man=no", path).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify %s: %v\n%s", name, err, out)
	}
	out, err = exec.Command(analyze, "security", "--offline=true", path).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security printed no exposure level:\n%s", out)
	}
	level, _ := strconv.ParseFloat(string(m[1]), 64)
	guide := regexp.MustCompile(`rates it ([0-9.]+)`).FindStringSubmatch(read(t, "docs/operations.md"))
	if guide == nil {
		t.Fatal("docs/operations.md does not say the unit's exposure level")
	}
	if said, _ := strconv.ParseFloat(guide[1], 64); level > said {
		t.Errorf("the unit's exposure is %.1f; the guide says %s", level, guide[1])
	}
}
