package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/kobana/workflow/mcpserver/internal/version"
)

// kobana version, in a binary the go command built from this checkout,
// reports what the go command stamped into it: the commit (HEAD), whether
// the tree was modified, the Go version.
func TestVersionReportsTheBuild(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "kobana")
	build := exec.Command(goBin, "build", "-buildvcs=auto", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	stamped, err := exec.Command(goBin, "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	setting := func(key string) string {
		m := regexp.MustCompile(`(?m)^\s+build\s+` + regexp.QuoteMeta(key) + `=(\S+)$`).FindSubmatch(stamped)
		if m == nil {
			return ""
		}
		return string(m[1])
	}
	out, err := exec.Command(bin, "version", "-json").Output()
	if err != nil {
		t.Fatalf("kobana version -json: %v", err)
	}
	var info version.Info
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatalf("kobana version -json: %q: %v", out, err)
	}
	// The go command stamps the main module's version: a pseudo-version
	// from the commit in a clean checkout ("+dirty" when modified),
	// "(devel)" when it has no VCS information.
	stampedVersion := "devel"
	if m := regexp.MustCompile(`(?m)^\s+mod\s+\S+\s+(\S+)`).FindSubmatch(stamped); m != nil && string(m[1]) != "(devel)" {
		stampedVersion = string(m[1])
	}
	want := version.Info{Module: version.Module, Version: stampedVersion, Go: runtime.Version(),
		Commit: setting("vcs.revision"), Modified: setting("vcs.modified") == "true", CommitTime: setting("vcs.time")}
	if info != want {
		t.Errorf("kobana version -json = %+v, want %+v (go version -m:\n%s)", info, want, stamped)
	}
	if want.Commit == "" {
		// The go command stamps no VCS information in a git worktree.
		t.Logf("the go command stamped no commit into a build of this checkout; only the module and Go versions were compared")
	} else if head, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil && strings.TrimSpace(string(head)) != want.Commit {
		t.Errorf("stamped commit %s, HEAD is %s", want.Commit, head)
	}
	line, err := exec.Command(bin, "version").Output()
	if err != nil || strings.TrimSpace(string(line)) != info.String() {
		t.Errorf("kobana version = %q (%v), want %q", line, err, info.String())
	}
}
