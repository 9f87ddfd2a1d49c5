package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name        string
		bi          debug.BuildInfo
		short, line string
	}{
		{"installed at a tag", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: Module, Version: "v1.4.0"}},
			"v1.4.0", "kobana v1.4.0 (github.com/kobana/workflow/mcpserver), built with go1.26.0"},
		{"built from a checkout", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: Module, Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			"devel+0123456789ab+dirty", "kobana devel (github.com/kobana/workflow/mcpserver), commit 0123456789abcdef0123 of 2026-12-01T10:00:00Z, with uncommitted changes, built with go1.26.0"},
		{"built from a clean checkout", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: Module, Version: "v0.0.0-20261202031922-ba51626bd343"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "ba51626bd343c450ff51"}, {Key: "vcs.time", Value: "2026-12-02T03:19:22Z"}}},
			"v0.0.0-20261202031922-ba51626bd343", "kobana v0.0.0-20261202031922-ba51626bd343 (github.com/kobana/workflow/mcpserver), commit ba51626bd343c450ff51 of 2026-12-02T03:19:22Z, built with go1.26.0"},
		{"a test binary", debug.BuildInfo{GoVersion: "go1.26.0"},
			"devel", "kobana devel (github.com/kobana/workflow/mcpserver), built with go1.26.0"},
	} {
		i := fromBuildInfo(&tc.bi)
		if i.Short() != tc.short || i.String() != tc.line {
			t.Errorf("%s: %q / %q, want %q / %q", tc.name, i.Short(), i.String(), tc.short, tc.line)
		}
	}
}
