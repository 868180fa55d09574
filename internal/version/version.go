// Package version identifies a build of csi-node-proxy: the release version,
// the commit it was built from and when, stamped by the linker, plus the Go
// version from the runtime.
//
// hack/release.sh (make release) sets the variables:
//
//	go build -ldflags "-X github.com/csi-node-proxy/csi-node-proxy/internal/version.Version=v1.2.3 \
//	  -X github.com/csi-node-proxy/csi-node-proxy/internal/version.Commit=0123abc... \
//	  -X github.com/csi-node-proxy/csi-node-proxy/internal/version.BuildDate=2026-01-02T03:04:05Z"
//
// A build that is not stamped (go build, go install) falls back to what the
// Go toolchain recorded in the binary: the module version for
// "go install …@v1.2.3", and the VCS revision when it was built in a Git
// checkout without -buildvcs=false. Its build date is unknown.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set with -ldflags -X at build time; see the package comment. They are
// variables, not constants, because the linker can only set variables.
var (
	// Version is the release version, from git describe: v1.2.3, or
	// v1.2.3-4-gabcdef0-dirty between tags.
	Version = ""
	// Commit is the full Git commit hash the binary was built from.
	Commit = ""
	// BuildDate is when the binary was built, UTC, RFC 3339.
	BuildDate = ""
)

// Info is the identity of this build.
type Info struct {
	Version   string
	Commit    string
	BuildDate string
	GoVersion string
}

// Get returns the stamped values, filling unset ones from the build
// information the Go toolchain embeds, and "unknown" where neither has
// one (Version "dev").
func Get() Info {
	info := Info{Version: Version, Commit: Commit, BuildDate: BuildDate, GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		fillFromBuildInfo(&info, bi)
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	if info.BuildDate == "" {
		info.BuildDate = "unknown"
	}
	return info
}

// fillFromBuildInfo sets the fields of info that are still empty from bi.
func fillFromBuildInfo(info *Info, bi *debug.BuildInfo) {
	if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		info.Version = bi.Main.Version
	}
	var revision, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if info.Commit == "" && revision != "" {
		info.Commit = revision
		if modified == "true" {
			info.Commit += "-dirty"
		}
	}
}

// String is the one-line form -version prints:
// "csi-node-proxy v1.2.3 (commit 0123abc…, built 2026-01-02T03:04:05Z, go1.26.8)".
func (i Info) String() string {
	return fmt.Sprintf("csi-node-proxy %s (commit %s, built %s, %s)", i.Version, i.Commit, i.BuildDate, i.GoVersion)
}

// String returns Get().String().
func String() string { return Get().String() }
