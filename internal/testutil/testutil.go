// Package testutil holds helpers shared by the project's tests: the one
// place that decides whether a privileged test may run.
//
// Its subpackages are the shared test harness; every test that runs a
// daemon uses them instead of a copy of its own:
//   - daemonbin builds the daemon once per test process and starts it as a
//     process (ready checks, fail-fast on early exit, how it is ended);
//   - daemonserver runs the daemon's server in the test's process, wired
//     through hostset as the daemon wires it;
//   - sockdir makes short directories for unix sockets;
//   - syncbuf is the buffer a daemon or logger writes while a test reads;
//   - poll waits until a condition holds;
//   - auditfault breaks an audit log the ways the audit-fault tests need;
//   - auditlog reads an audit log back: the one test-side spelling of its
//     record format, and the one check that every change has its intent
//     record before its outcome;
//   - fakecri is a container runtime speaking the CRI protocol, for the
//     tests that identify callers by pod;
//   - loopdisk attaches, partitions away and copies the loop disks the
//     privileged tests use as real disks;
//   - hostdaemon starts the real smbd and tgtd the Linux backend's tests
//     talk to, and waits until they listen.
//
// Four more are not about running a daemon: genfile checks a generated
// reference page against the committed copy (the daemon's and the CLI's
// doc tests), httpcall sends the requests tests make to the metrics and
// operations endpoints, klogcapture points klog at a buffer a test reads
// (or, in a TestMain, away from the test output), and simtest builds the
// simulated node the groups' own tests run their Services on.
//
// This package itself decides whether a test may run here: RequireRoot
// and RequireTool for the privileged Linux tests, RequireRealWindows for
// the Windows tests that Wine's stubs would pass without testing anything.
// CopyMountTable gives the tests of the host mount table option a copy
// of the process's own table to name.
//
// test/wirecompat keeps copies of daemonbin's start and syncbuf: that
// module imports nothing of this repository by design.
package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RequireRoot skips t unless the test runs as root. It is the only gate for
// privileged tests (loop devices, mounts, daemons on privileged ports): CI
// runs as root, so these tests run there; a developer without root sees
// them skipped with the reason, never silently passed.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (loop devices, mounts): run as root, as CI does")
	}
}

// RequireTool skips t unless every named program is on PATH, naming the
// Debian package that provides it. CI's .ci/run installs them all, so a skip
// there means .ci/run is missing a package.
func RequireTool(t testing.TB, pkg string, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed (Debian package %s): .ci/run must install it", tool, pkg)
			}
			t.Skipf("%s is not installed (Debian package %s)", tool, pkg)
		}
	}
}

// CopyMountTable copies the test process's mount table
// (/proc/self/mountinfo, Linux) to a file in t's temporary directory and
// returns its path: a host mount table a test can name
// (--linux-host-mount-table, hostset.Config.LinuxHostMountTable) that
// reads as the real one. It fails t when the table cannot be read or
// written.
func CopyMountTable(t testing.TB) string {
	t.Helper()
	table := filepath.Join(t.TempDir(), "mountinfo")
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(table, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return table
}
