//go:build linux

package cifs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/hostdaemon"
)

// smbdPassword is the password of the test smbd's only user, root. It
// contains a comma and an equals sign so the tests see them survive.
const smbdPassword = "Secr3t,pa=ss!"

// smbdServer is a real Samba smbd serving one share, "share", on
// 127.0.0.1:port, configured entirely inside a temporary directory (the
// recipe of /work/shared/facts/this-machine.md section 3, with a free port
// instead of a fixed 4455 so that parallel runs cannot collide).
type smbdServer struct {
	dir  string
	port int
}

// startSmbd starts smbd for the test and stops it, and the samba-dcerpcd
// it may spawn, by PID when the test ends.
func startSmbd(t *testing.T) *smbdServer {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "samba", "smbd", "smbpasswd")
	d := t.TempDir()
	for _, sub := range []string{"private", "binddns", "lock", "state", "cache", "run", "ncalrpc", "share"} {
		if err := os.MkdirAll(filepath.Join(d, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	port := hostdaemon.FreePort(t)
	conf := filepath.Join(d, "smb.conf")
	text := fmt.Sprintf(`[global]
  server role = standalone server
  smb ports = %[2]d
  interfaces = lo
  bind interfaces only = yes
  disable netbios = yes
  private dir = %[1]s/private
  binddns dir = %[1]s/binddns
  lock directory = %[1]s/lock
  state directory = %[1]s/state
  cache directory = %[1]s/cache
  pid directory = %[1]s/run
  ncalrpc dir = %[1]s/ncalrpc
  log file = %[1]s/log.%%m
  passdb backend = tdbsam:%[1]s/private/passdb.tdb
  map to guest = never
  load printers = no
  printing = bsd
  printcap name = /dev/null
  disable spoolss = yes
  server min protocol = SMB2_10
[share]
  path = %[1]s/share
  read only = no
`, d, port)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	pw := exec.Command("smbpasswd", "-c", conf, "-s", "-a", "root")
	pw.Stdin = strings.NewReader(smbdPassword + "\n" + smbdPassword + "\n")
	if out, err := pw.CombinedOutput(); err != nil {
		t.Fatalf("smbpasswd: %v: %s", err, out)
	}
	// Its own process group (hostdaemon.Start): on shutdown smbd signals
	// its whole process group.
	p := hostdaemon.Start(t, "smbd", exec.Command("smbd", "--foreground", "--no-process-group", "-s", conf))
	t.Cleanup(func() {
		stopPID(t, p.Cmd.Process.Pid, p.Exited)
		// smbd spawns samba-dcerpcd on demand; it is reparented to PID 1,
		// so find it by the pid file in our pid directory and by its
		// command line naming our configuration.
		for _, pid := range sambaHelpers(d, conf) {
			stopPID(t, pid, nil)
		}
		for end := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			left := sambaHelpers(d, conf)
			if len(left) == 0 {
				break
			}
			if time.Now().After(end) {
				t.Errorf("Samba processes %v still run after the test", left)
				break
			}
		}
	})
	p.WaitListening(t, port)
	return &smbdServer{dir: d, port: port}
}

// stopPID sends SIGTERM to pid, then SIGKILL if it has not exited after
// 2 s. exited, when not nil, closes when the process has been reaped.
func stopPID(t *testing.T, pid int, exited <-chan struct{}) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return // already gone
	}
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if exited != nil {
			select {
			case <-exited:
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		if !alive(pid) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("pid %d ignored SIGTERM; killing it", pid)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// sambaHelpers returns the PIDs of Samba processes that belong to the test
// server in dir: those named by pid files there, and those whose command
// line names conf or dir.
func sambaHelpers(dir, conf string) []int {
	seen := map[int]bool{}
	var pids []int
	add := func(pid int) {
		if pid > 1 && pid != os.Getpid() && !seen[pid] {
			seen[pid] = true
			pids = append(pids, pid)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "run", "*.pid"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && isSamba(pid) {
			add(pid)
		}
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if bytes.Contains(cmdline, []byte(conf)) || bytes.Contains(cmdline, []byte(dir+"/")) {
			add(pid)
		}
	}
	return pids
}

// isSamba reports whether pid runs a Samba program, so a recycled PID in a
// stale pid file is never signalled.
func isSamba(pid int) bool {
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		return false
	}
	c := strings.TrimSpace(string(comm))
	return strings.HasPrefix(c, "smbd") || strings.HasPrefix(c, "samba") || strings.HasPrefix(c, "rpcd_")
}

// alive reports whether pid exists and is not a zombie waiting for a
// parent (PID 1 for samba-dcerpcd) to reap it.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}
