//go:build linux

package blockdev

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

// helperEnv makes the test binary a helper process instead of running
// the tests: "exec" runs `sleep 30` through the backend's Exec, as the
// daemon runs mkfs; "hold:<device>" opens the device O_EXCL, as a running
// mkfs does, says "held" and keeps it until its standard input closes.
const helperEnv = "BLOCKDEV_TEST_HELPER"

func TestMain(m *testing.M) {
	switch mode := os.Getenv(helperEnv); {
	case mode == "exec":
		_, err := NewExec(0).Run(context.Background(), []string{"sleep", "30"})
		fmt.Fprintln(os.Stderr, "helper: sleep ended:", err)
		os.Exit(1)
	case strings.HasPrefix(mode, "hold:"):
		f, err := os.OpenFile(strings.TrimPrefix(mode, "hold:"), os.O_RDONLY|unix.O_EXCL, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		fmt.Println("held")
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = f.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestToolCommandDiesWithDaemon: every tool the backend runs is started
// with the kernel's parent-death signal set to SIGKILL, so a daemon killed
// with SIGKILL takes its mkfs and e2fsck with it.
func TestToolCommandDiesWithDaemon(t *testing.T) {
	cmd := (&osExec{}).command(context.Background(), []string{"mkfs.ext4", "/dev/x"})
	if cmd.SysProcAttr == nil || cmd.SysProcAttr.Pdeathsig != syscall.SIGKILL {
		t.Fatalf("SysProcAttr = %+v, want Pdeathsig SIGKILL", cmd.SysProcAttr)
	}
}

// childrenOf returns the PIDs whose parent is ppid and whose command is
// comm, from /proc/<pid>/stat.
func childrenOf(ppid int, comm string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(string(b[end+1:]))
		if len(fields) > 1 && string(b[open+1:end]) == comm && fields[1] == strconv.Itoa(ppid) {
			out = append(out, pid)
		}
	}
	return out
}

// TestToolDiesWithItsParent: a helper process runs `sleep 30` through the
// backend's Exec and is killed with SIGKILL; the sleep must die with it
// rather than run on as an orphan (as mkfs did in the kill -9 suite).
// This process is made a subreaper so the orphan is reparented here and
// its end can be seen.
func TestToolDiesWithItsParent(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatalf("PR_SET_CHILD_SUBREAPER: %v", err)
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
	helper := exec.Command(os.Args[0])
	helper.Env = append(os.Environ(), helperEnv+"=exec")
	var stderr bytes.Buffer
	helper.Stderr = &stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	var sleepPID int
	t.Cleanup(func() {
		_ = helper.Process.Kill()
		_ = helper.Wait()
		if sleepPID > 0 {
			// Left running without the fix: end and reap it.
			_ = unix.Kill(sleepPID, unix.SIGKILL)
			var ws unix.WaitStatus
			_, _ = unix.Wait4(sleepPID, &ws, 0, nil)
		}
	})
	for deadline := time.Now().Add(10 * time.Second); sleepPID == 0; time.Sleep(10 * time.Millisecond) {
		if c := childrenOf(helper.Process.Pid, "sleep"); len(c) == 1 {
			sleepPID = c[0]
		} else if time.Now().After(deadline) {
			t.Fatalf("the helper started no sleep within 10 s: %s", stderr.String())
		}
	}
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	// Reparented here when the helper died; the parent-death signal was
	// sent then too.
	var ws unix.WaitStatus
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		pid, err := unix.Wait4(sleepPID, &ws, unix.WNOHANG, nil)
		if err != nil {
			t.Fatalf("wait for the orphaned sleep (pid %d): %v", sleepPID, err)
		}
		if pid == sleepPID {
			sleepPID = 0
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sleep (pid %d) still runs 5 s after its parent was killed", sleepPID)
		}
	}
	if !ws.Signaled() || ws.Signal() != unix.SIGKILL {
		t.Fatalf("the sleep ended with status %v, want killed by SIGKILL", ws)
	}
}

// TestFormatBusyLoopVolume: FormatVolume on a partition another process
// holds open O_EXCL (as an orphaned mkfs does) answers Unavailable and
// writes nothing; once the holder is gone it formats.
func TestFormatBusyLoopVolume(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "e2fsprogs", "mkfs.ext4")
	ctx := context.Background()
	h := newHarness(t)
	l := h.attach("csi-busy-format.img", 64<<20)
	b, err := New(Config{Filesystem: "ext4", DiskFilter: []string{l.name}, MountRoots: []string{h.root}})
	if err != nil {
		t.Fatal(err)
	}
	n := loopNumber(t, l)
	if err := b.PartitionDisk(ctx, n); err != nil {
		t.Fatal(err)
	}
	ids, err := b.ListVolumesOnDisk(ctx, n, 0)
	if err != nil || len(ids) != 1 {
		t.Fatalf("ListVolumesOnDisk = %v, %v", ids, err)
	}

	holder := exec.Command(os.Args[0])
	holder.Env = append(os.Environ(), helperEnv+"=hold:"+l.path+"p1")
	stdin, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	holder.Stderr = &stderr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = holder.Process.Kill()
		_ = holder.Wait()
	})
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "held\n" {
		t.Fatalf("holder: %q, %v: %s", line, err, stderr.String())
	}

	before := fileHash(t, l.file)
	err = b.FormatVolume(ctx, ids[0])
	wantErr(t, err, errdefs.ErrUnavailable, "a previous format may still be running; retry")
	if after := fileHash(t, l.file); after != before {
		t.Fatal("FormatVolume wrote to the volume although it refused")
	}

	_ = stdin.Close()
	if err := holder.Wait(); err != nil {
		t.Fatalf("holder: %v: %s", err, stderr.String())
	}
	if err := b.FormatVolume(ctx, ids[0]); err != nil {
		t.Fatalf("FormatVolume once the holder is gone: %v", err)
	}
	if got := blkid(t, "TYPE", l.path+"p1"); got != "" && got != "ext4" {
		t.Fatalf("blkid says the volume holds %q after FormatVolume", got)
	}
}

// fileHash hashes a loop disk's backing file: what the disk holds.
func fileHash(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hash := sha256.New()
	if _, err := io.Copy(hash, f); err != nil {
		t.Fatal(err)
	}
	var out [sha256.Size]byte
	copy(out[:], hash.Sum(nil))
	return out
}
