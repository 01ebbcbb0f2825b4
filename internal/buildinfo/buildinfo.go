// Package buildinfo says which build of the gateway is running, so an operator can tell from --version,
// /healthz, the start-up log and /metrics what is deployed. Release builds stamp it with -ldflags -X; any
// other build takes what the go command stamped (the module version, vcs.revision, vcs.time).
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Set by release builds (scripts/release.sh), e.g.
// -ldflags "-X github.com/acp-gateway/gateway/internal/buildinfo.version=v1.2.3"; empty = use the go command's stamp.
var (
	version string
	commit  string
	date    string
)

// Unknown is what a field holds when the build carries no value for it.
const Unknown = "unknown"

// Info identifies a build.
type Info struct {
	Version   string // a release tag, a module pseudo-version, or "dev"
	Commit    string // the VCS revision, with "-dirty" when the tree had uncommitted changes; Unknown if none
	Date      string // the commit time (RFC 3339, UTC); Unknown if none
	GoVersion string // the Go toolchain that built the binary
}

// Get returns this binary's build information.
func Get() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		bi = nil
	}
	return from(bi, version, commit, date)
}

// from merges the -X values (which win) over the go command's stamp.
func from(bi *debug.BuildInfo, version, commit, date string) Info {
	info := Info{Version: "dev", Commit: Unknown, Date: Unknown, GoVersion: runtime.Version()}
	if bi != nil {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			info.Version = v // `go install …@v1.2.3`, or Go's VCS-derived version of a local build
		}
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = s.Value
			case "vcs.time":
				info.Date = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && info.Commit != Unknown {
			info.Commit += "-dirty"
		}
	}
	if version != "" {
		info.Version = version
	}
	if commit != "" {
		info.Commit = commit
	}
	if date != "" {
		info.Date = date
	}
	return info
}
