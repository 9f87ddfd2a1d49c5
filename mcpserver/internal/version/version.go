package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Module is the module kobana is built from.
const Module = "github.com/kobana/workflow/mcpserver"

// Info is what the go command stamped into the binary.
type Info struct {
	// Module is the main module's path; Version its version: a tag such as
	// v1.4.0 when built with `go install module@version`; for a build from
	// a checkout, the pseudo-version the go command derives from the commit
	// (v0.0.0-20261202031922-ba51626bd343, "+dirty" when modified), or
	// "devel" when it stamped none (the go command's "(devel)").
	Module  string `json:"module"`
	Version string `json:"version"`
	// Commit is the VCS revision a checkout build was made from (empty
	// when the go command stamped none: go run, tests, -buildvcs=false);
	// Modified says the work tree had uncommitted changes; CommitTime is
	// the commit's time (RFC 3339).
	Commit     string `json:"commit,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	// Go is the Go version the binary was built with.
	Go string `json:"go"`
}

// Read returns the running binary's Info.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Module: Module, Version: "devel", Go: runtime.Version()}
	}
	return fromBuildInfo(bi)
}

// fromBuildInfo reads an Info from build information.
func fromBuildInfo(bi *debug.BuildInfo) Info {
	i := Info{Module: bi.Main.Path, Version: bi.Main.Version, Go: bi.GoVersion}
	if i.Module == "" {
		i.Module = Module // a test binary names no main module
	}
	if i.Version == "" || i.Version == "(devel)" {
		i.Version = "devel"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Commit = s.Value
		case "vcs.modified":
			i.Modified = s.Value == "true"
		case "vcs.time":
			i.CommitTime = s.Value
		}
	}
	return i
}

// Short is the version as one token, for serverInfo.version: the module
// version, with the commit's first 12 digits for a checkout build
// ("devel+0123456789ab", "+dirty" when modified).
func (i Info) Short() string {
	v := i.Version
	if i.Commit != "" && v == "devel" {
		v += "+" + i.Commit[:min(12, len(i.Commit))]
		if i.Modified {
			v += "+dirty"
		}
	}
	return v
}

// String is the line kobana version prints.
func (i Info) String() string {
	s := fmt.Sprintf("kobana %s (%s)", i.Version, i.Module)
	if i.Commit != "" {
		s += ", commit " + i.Commit
		if i.CommitTime != "" {
			s += " of " + i.CommitTime
		}
		if i.Modified {
			s += ", with uncommitted changes"
		}
	}
	return s + ", built with " + i.Go
}
