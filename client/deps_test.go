//go:build !windows

// The dependency test runs where the go command is: on the build host,
// where it lists the client's imports for both linux and windows. The
// Windows test binary runs under Wine (make test-windows), which has no go
// command, so it is not built into that binary.

package client

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// mainModule is the module of the client, the api/ stubs, the group models
// and errdefs: the one module a driver imports (the daemon and the CLI are
// in the cmd module, which requires this one).
const mainModule = "github.com/csi-node-proxy/csi-node-proxy"

// clientPrefix is the import path prefix of the client's own packages.
const clientPrefix = mainModule + "/client"

// allowedModules are the only modules the client may link, each with why.
var allowedModules = map[string]string{
	mainModule:                                  "this package, api/ stubs, groups/ model types, errdefs",
	"google.golang.org/grpc":                    "the calls and the health check",
	"google.golang.org/protobuf":                "the wire messages (grpc needs it too)",
	"google.golang.org/genproto/googleapis/rpc": "grpc's status message",
	"golang.org/x/net":                          "grpc's HTTP/2",
	"golang.org/x/text":                         "x/net's IDNA tables, through grpc",
	"golang.org/x/sys":                          "grpc and go-winio's system calls",
	"github.com/Microsoft/go-winio":             "named pipes on Windows",
}

// mounterModules are the further modules package mounter may link: it
// implements k8s.io/mount-utils' mount.Interface, whose method List returns
// mount-utils' own type, so there is no implementing it without importing
// the module, and mount-utils brings these. Every Windows CSI driver
// studied (azuredisk, aws-ebs, gcp-pd, csi-driver-smb, vsphere) links them
// already. The client package itself must not: a driver that only dials
// links none of them (the "client" scope below).
var mounterModules = map[string]string{
	"k8s.io/mount-utils":            "mount.Interface and mount.MountPoint",
	"k8s.io/klog/v2":                "mount-utils logs with it",
	"github.com/go-logr/logr":       "Options.Logger; klog is built on it",
	"k8s.io/utils":                  "mount-utils' exec and I/O helpers",
	"github.com/moby/sys/mountinfo": "mount-utils reads /proc/self/mountinfo on Linux",
}

// clientMayImport tells whether a client package may import a main-module
// package directly: only the wire stubs, the model types and the error
// kinds and their gRPC mapping (and hostpath, the model's path rules).
func clientMayImport(rel string) bool {
	return strings.HasPrefix(rel, "api/") || strings.HasPrefix(rel, "groups/") ||
		rel == "groups" || rel == "errdefs" || rel == "errdefs/errgrpc" || rel == "hostpath"
}

// isClientPackage tells whether pkg is one of the client's own packages
// (client, client/internal/..., client/mounter), whose direct imports of
// the module's other packages clientMayImport limits.
func isClientPackage(pkg string) bool {
	return pkg == clientPrefix || strings.HasPrefix(pkg, clientPrefix+"/")
}

// daemonPackage tells whether a main-module package is part of the daemon
// (its backends, server, adapters, transport, policy, audit, metrics,
// wiring): none may reach the client, not even through the model packages.
// The leaves the model packages import (internal/leaf/keylock, the
// validators' internal/leaf/printable) are allowed: they have no layer.
func daemonPackage(rel string) bool {
	for _, p := range []string{"cmd/", "host/", "internal/host/", "internal/hostset", "inprocess", "internal/adapter", "internal/server",
		"internal/transport", "internal/policy", "internal/audit", "internal/metrics", "internal/identity",
		"internal/winsvc", "internal/version"} {
		if strings.HasPrefix(rel, p) {
			return true
		}
	}
	return false
}

// TestDependencies keeps the client small for the drivers that import it:
// for linux and windows builds, every non-standard package its packages
// link must come from an allowed module, and main-module packages must be
// among the few the client needs (never the daemon's: no host backends,
// server, metrics, policy or audit, and so none of their dependencies:
// prometheus, yaml, klog, dbus, go-smb2, go-ole, go-diskfs).
func TestDependencies(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed to list the client's dependencies: %v", err)
	}
	scopes := []struct {
		name     string
		patterns []string
		extra    map[string]string
	}{
		{"client", []string{".", "./internal/..."}, nil},
		{"all", []string{"./..."}, mounterModules},
	}
	for _, goos := range []string{"linux", "windows"} {
		for _, scope := range scopes {
			t.Run(goos+"/"+scope.name, func(t *testing.T) {
				checkDependencies(t, goos, scope.patterns, scope.extra)
			})
		}
	}
}

// checkDependencies is TestDependencies for the packages matching patterns
// in a goos build, with extra modules allowed besides allowedModules.
func checkDependencies(t *testing.T, goos string, patterns []string, extra map[string]string) {
	t.Helper()
	args := append([]string{"list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}} {{with .Module}}{{.Path}}{{end}} {{join .Imports \",\"}}{{end}}"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	pkgs, modules := 0, map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			t.Fatalf("unexpected go list line %q", line)
		}
		pkg, mod := f[0], f[1]
		pkgs++
		modules[mod] = true
		_, allowed := allowedModules[mod]
		if _, ok := extra[mod]; ok {
			allowed = true
		}
		if !allowed {
			t.Errorf("%s links %s from module %q, which the client must not depend on", goos, pkg, mod)
			continue
		}
		if rel, ok := strings.CutPrefix(pkg, mainModule+"/"); ok && mod == mainModule && daemonPackage(rel) {
			t.Errorf("%s links the daemon's package %s", goos, pkg)
		}
		if !isClientPackage(pkg) || len(f) < 3 {
			continue
		}
		for _, imp := range strings.Split(f[2], ",") {
			rel, ok := strings.CutPrefix(imp, mainModule+"/")
			if ok && !strings.HasPrefix(rel, "client/") && !clientMayImport(rel) {
				t.Errorf("%s: client package %s imports %s; it may import only api/, groups/, errdefs and hostpath of the main module", goos, pkg, imp)
			}
		}
	}
	if !modules["google.golang.org/grpc"] || !modules[mainModule] {
		t.Fatalf("go list found neither grpc nor the main module among %d packages; the listing is broken:\n%s", pkgs, out)
	}
	if goos == "windows" && !modules["github.com/Microsoft/go-winio"] {
		t.Errorf("the windows build does not link go-winio: how does it dial pipes?")
	}
	if goos == "linux" && modules["github.com/Microsoft/go-winio"] {
		t.Errorf("the linux build links go-winio")
	}
}
