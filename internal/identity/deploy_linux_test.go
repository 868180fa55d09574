//go:build linux

package identity

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The tests here reproduce the shipped Linux deployments in child
// processes: the daemon's identification runs under the systemd unit's
// exact capability bounding set (deploy/linux/csi-node-proxy.service,
// applied with setpriv from util-linux), or in a PID namespace of its own
// (a DaemonSet without hostPID); the caller runs as another user with a
// supplementary group, in a PID namespace of its own, as a pod does.
//
// The children are this test binary run again: helperEnv selects the
// role. test/deployment goes further with the real daemon: callers in
// kubelet's cgroups, a CRI runtime naming their pods, and the shipped
// policy deciding.
const helperEnv = "CSI_NODE_PROXY_IDENTITY_HELPER"

// TestMain lets this test binary act as a helper process.
func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "daemon":
		helperDaemon()
		return
	case "caller":
		helperCaller()
		return
	}
	os.Exit(m.Run())
}

// daemonReport is what the daemon helper prints: the caller it identified,
// its own effective capabilities, and what CheckVisibility says.
type daemonReport struct {
	Caller     Caller
	CapEff     string
	Visibility []string
	// ExitedAfterCallerGone is Exited on the connection after the caller
	// closed its end and exited.
	ExitedAfterCallerGone bool
	// ExitedWhileConnected is Exited while the caller still ran.
	ExitedWhileConnected bool
	ExitedErr            string
}

// helperDaemon listens on the socket named by argv, identifies one caller
// and prints a daemonReport as JSON.
func helperDaemon() {
	sock := os.Getenv("SOCK")
	l, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(2)
	}
	if err := os.Chmod(sock, 0o777); err != nil {
		fmt.Println("chmod:", err)
		os.Exit(2)
	}
	fmt.Println("ready")
	conn, err := l.Accept()
	if err != nil {
		fmt.Println("accept:", err)
		os.Exit(2)
	}
	var r daemonReport
	_, ai, _ := NewCredentials(Options{}).ServerHandshake(conn)
	info := ai.(AuthInfo)
	r.Caller = info.Caller
	r.Visibility = CheckVisibility(Options{})
	status, _ := os.ReadFile("/proc/self/status")
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			r.CapEff = strings.TrimSpace(v)
		}
	}
	exited, err := info.Exited()
	r.ExitedWhileConnected = exited
	// Tell the caller to go, and wait for its end of the connection to
	// close: it exits right after.
	_, _ = conn.Write([]byte("x"))
	_, _ = io.Copy(io.Discard, conn)
	for range 100 {
		if r.ExitedAfterCallerGone, err = info.Exited(); r.ExitedAfterCallerGone || err != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		r.ExitedErr = err.Error()
	}
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
}

// helperCaller connects to the socket, waits for one byte and exits.
func helperCaller() {
	c, err := net.Dial("unix", os.Getenv("SOCK"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial:", err)
		os.Exit(2)
	}
	_, _ = c.Read(make([]byte, 1))
	os.Exit(0)
}

// unitBoundingSet returns the capabilities of the shipped unit's
// CapabilityBoundingSet= line, in setpriv's spelling (sys_admin, ...).
func unitBoundingSet(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "linux", "csi-node-proxy.service"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapabilityBoundingSet="); ok {
			var caps []string
			for _, c := range strings.Fields(v) {
				caps = append(caps, strings.ToLower(strings.TrimPrefix(c, "CAP_")))
			}
			return caps
		}
	}
	t.Fatal("the unit has no CapabilityBoundingSet= line")
	return nil
}

// privileged skips unless the test can make users, namespaces and
// capability sets: it runs as root with setpriv installed.
func privileged(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run helpers as other users and in other namespaces")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv (util-linux)")
	}
	return setpriv
}

// helperBinary copies this test binary where a helper running as another
// user can execute it, and returns a directory that user can reach.
func helperBinary(t *testing.T) (bin, dir string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "identity-deploy")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, "helper")
	if err := os.WriteFile(bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, dir
}

const (
	callerUID   = 4242
	callerGID   = 4242
	callerGroup = 4343
)

// runDeployment starts the daemon helper with daemonCmd's extra setup,
// then a caller as uid 4242 gid 4242 with supplementary group 4343 in a
// PID namespace of its own, and returns the daemon's report and the
// caller's PID as the host sees it.
func runDeployment(t *testing.T, daemon *exec.Cmd, bin, dir string) (daemonReport, int) {
	t.Helper()
	sock := filepath.Join(dir, "s")
	daemon.Env = append(os.Environ(), helperEnv+"=daemon", "SOCK="+sock)
	daemon.Stderr = os.Stderr
	out, err := daemon.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = daemon.Process.Kill(); _ = daemon.Wait() })
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("daemon helper: %q %v", lines.Text(), lines.Err())
	}

	caller := exec.Command(bin)
	caller.Env = append(os.Environ(), helperEnv+"=caller", "SOCK="+sock)
	caller.Stderr = os.Stderr
	caller.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: callerUID, Gid: callerGID, Groups: []uint32{callerGroup}},
		Cloneflags: syscall.CLONE_NEWPID,
	}
	if err := caller.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = caller.Process.Kill(); _ = caller.Wait() })
	callerPID := caller.Process.Pid
	if !lines.Scan() {
		t.Fatalf("daemon helper printed no report: %v", lines.Err())
	}
	var r daemonReport
	if err := json.Unmarshal(lines.Bytes(), &r); err != nil {
		t.Fatalf("daemon report %q: %v", lines.Text(), err)
	}
	_ = caller.Wait()
	return r, callerPID
}

// capKill is CAP_KILL's bit in /proc/<pid>/status CapEff.
const capKill = 5

// TestIdentifyUnderUnitCapabilities runs identification with the systemd
// unit's bounding set (no CAP_KILL) against a caller of another user in
// its own PID namespace: the caller's supplementary groups must be found
// (a gids rule is what docs/security.md recommends), and its exit seen.
func TestIdentifyUnderUnitCapabilities(t *testing.T) {
	setpriv := privileged(t)
	bin, dir := helperBinary(t)
	caps := unitBoundingSet(t)
	bounding := "-all"
	for _, c := range caps {
		bounding += ",+" + c
	}
	daemon := exec.Command(setpriv, "--bounding-set", bounding, "--inh-caps", "-all", "--", bin)
	r, callerPID := runDeployment(t, daemon, bin, dir)

	var capEff uint64
	if _, err := fmt.Sscanf(r.CapEff, "%x", &capEff); err != nil {
		t.Fatalf("CapEff %q: %v", r.CapEff, err)
	}
	if capEff&(1<<capKill) != 0 || slices.Contains(caps, "kill") {
		t.Fatalf("the daemon helper has CAP_KILL (CapEff %s): the unit's bounding set is not reproduced", r.CapEff)
	}
	c := r.Caller
	if c.PID != callerPID || c.UID != callerUID || c.GID != callerGID {
		t.Errorf("caller %+v, want pid %d uid %d gid %d", c, callerPID, callerUID, callerGID)
	}
	if !slices.Contains(c.Groups, callerGroup) {
		t.Errorf("caller's supplementary groups %v lack %d (incomplete: %q)", c.Groups, callerGroup, c.Incomplete)
	}
	if c.Incomplete != "" && !strings.Contains(c.Incomplete, "cgroup namespace") {
		t.Errorf("incomplete identity: %s", c.Incomplete)
	}
	if r.ExitedWhileConnected {
		t.Error("the caller was taken for exited while it ran")
	}
	if !r.ExitedAfterCallerGone || r.ExitedErr != "" {
		t.Errorf("the caller's exit was not seen (err %q)", r.ExitedErr)
	}
}

// TestIdentifyFromForeignPIDNamespace runs the daemon in a PID namespace
// of its own, as a DaemonSet without hostPID: the kernel reports pid 0
// for the caller, identification says why, and CheckVisibility warns.
func TestIdentifyFromForeignPIDNamespace(t *testing.T) {
	privileged(t)
	bin, dir := helperBinary(t)
	daemon := exec.Command(bin)
	daemon.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	r, _ := runDeployment(t, daemon, bin, dir)
	c := r.Caller
	if c.PID != 0 || c.UID != callerUID || !strings.Contains(c.Incomplete, "PID namespace") {
		t.Errorf("caller %+v, want pid 0, uid %d and an explanation", c, callerUID)
	}
	if !slices.ContainsFunc(r.Visibility, func(s string) bool { return strings.Contains(s, "hostPID") }) {
		t.Errorf("CheckVisibility %q does not warn about the PID namespace", r.Visibility)
	}
}

// TestCheckVisibilityHere checks that the test's own process, in the host
// PID namespace, gets no PID namespace warning.
func TestCheckVisibilityHere(t *testing.T) {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Skip("no /proc/self/ns/pid:", err)
	}
	got := CheckVisibility(Options{})
	warned := slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "hostPID") })
	if warned != (ns != hostPIDNamespace) {
		t.Errorf("in %s: CheckVisibility %q", ns, got)
	}
}
