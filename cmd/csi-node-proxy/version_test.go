package main

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestParseVersion: -version wins over everything else on the command line
// that parses, as -help does, so it works on any OS and with any host.
func TestParseVersion(t *testing.T) {
	resetKlog(t)
	for _, args := range [][]string{
		{"-version"},
		{"--version"},
		{"--host=nope", "-apis=nope", "-version"},
		{"-version", "-shutdown-timeout=0s"},
	} {
		if _, err := parseFlagsWith(args, registry); !errors.Is(err, errVersion) {
			t.Errorf("%q: %v, want errVersion", args, err)
		}
	}
	// A command line that does not parse is still an error.
	if _, err := parseFlagsWith([]string{"-version", "-no-such-flag"}, registry); err == nil || errors.Is(err, errVersion) {
		t.Errorf("-no-such-flag: %v, want a parse error", err)
	}
}

// buildStamped builds the daemon from this package with the variables of
// internal/version set as hack/release.sh sets them (stamp maps a
// variable's name to its value), and returns the binary's path. The
// daemonbin harness builds an unstamped daemon once per process; these
// tests need their own stamp. Skipped with -short or without a go command.
func buildStamped(t *testing.T, stamp map[string]string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the daemon; skipped with -short")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build the daemon: %v", err)
	}
	const pkg = "github.com/csi-node-proxy/csi-node-proxy/internal/version"
	var ldflags []string
	for _, name := range slices.Sorted(maps.Keys(stamp)) {
		ldflags = append(ldflags, "-X "+pkg+"."+name+"="+stamp[name])
	}
	bin := filepath.Join(t.TempDir(), "csi-node-proxy")
	// Static and -trimpath, as the release and daemonbin build it: the
	// packages are then the ones every build without the race detector
	// compiled already, and only the link is this test's own (issue 26).
	cmd := exec.Command(goTool, "build", "-trimpath", "-ldflags", strings.Join(ldflags, " "), "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestVersionStamped builds the daemon the way hack/release.sh does and
// checks that -version prints exactly the stamped values on stdout and
// exits 0.
func TestVersionStamped(t *testing.T) {
	bin := buildStamped(t, map[string]string{"Version": "v9.8.7-test", "Commit": "0123456789abcdef", "BuildDate": "2026-01-02T03:04:05Z"})
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "-version")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("-version: %v\n%s", err, stderr.String())
	}
	want := "csi-node-proxy v9.8.7-test (commit 0123456789abcdef, built 2026-01-02T03:04:05Z, " + runtime.Version() + ")\n"
	if stdout.String() != want || stderr.Len() != 0 {
		t.Errorf("stdout %q, stderr %q; want stdout %q", stdout.String(), stderr.String(), want)
	}
}
