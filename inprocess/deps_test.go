//go:build !windows

// The dependency test runs where the go command is: on the build host,
// where it lists library mode's imports for both linux and windows. The
// Windows test binary runs under Wine (make test-windows), which has no go
// command, so it is not built into that binary.

package inprocess

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// forbidden are what library mode must never link, each with why: a driver
// that calls the groups in-process pays for no wire and no metrics library
// it did not ask for (inprocess/prommetrics is the opt-in for Prometheus).
var forbidden = []struct{ prefix, why string }{
	{"google.golang.org/grpc", "the wire: library mode has none (errdefs/errgrpc, grpccreds and the server keep it out)"},
	{"github.com/prometheus/", "metrics: Options.Metrics is a hook; inprocess/prommetrics links Prometheus on request"},
	{"google.golang.org/protobuf", "wire messages: the call gate reads paths, objects and secrets from the group models' declarations, not from protos"},
	{"github.com/csi-node-proxy/csi-node-proxy/api", "the wire stubs of every version"},
	{"github.com/csi-node-proxy/csi-node-proxy/internal/adapter", "the wire adapters of every version"},
	{"github.com/csi-node-proxy/csi-node-proxy/internal/server", "the gRPC server; the call gate is internal/callgate"},
}

// matches tells whether the import path pkg is prefix or below it (or,
// for a prefix ending in "/", starts with it).
func matches(pkg, prefix string) bool {
	if strings.HasSuffix(prefix, "/") {
		return strings.HasPrefix(pkg, prefix)
	}
	return pkg == prefix || strings.HasPrefix(pkg, prefix+"/")
}

// forbid returns why pkg must not be linked, or "".
func forbid(pkg string) string {
	for _, f := range forbidden {
		if matches(pkg, f.prefix) {
			return f.why
		}
	}
	return ""
}

// TestDependencies keeps library mode light for the drivers that link it:
// for linux and windows builds, no package it links may be gRPC,
// Prometheus, the wire adapters or the gRPC server. A failure names each
// way in: a package that may be linked importing one that may not.
func TestDependencies(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed to list library mode's dependencies: %v", err)
	}
	for _, goos := range []string{"linux", "windows"} {
		// upstreamv2's tree (upstream's v2 library on library mode) is
		// held to the same: drivers link it instead of inprocess.
		cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}", ".", "../upstreamv2/...")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list: %v", goos, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			pkg, imports, _ := strings.Cut(line, "\t")
			if forbid(pkg) != "" {
				continue // reported where it is imported from
			}
			for _, imp := range strings.Fields(imports) {
				if why := forbid(imp); why != "" {
					t.Errorf("GOOS=%s: %s imports %s, so library mode links it: %s", goos, pkg, imp, why)
				}
			}
		}
	}
}
