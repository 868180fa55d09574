//go:build linux

package soak

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// onIntent kills once the call's intent record is in the audit file, and
// delay later; a negative delay is half the last UnmountVolume's duration.
func onIntent(delay time.Duration) func(h *killHarness, c *killCall) string {
	return func(h *killHarness, c *killCall) string {
		d := delay
		if d < 0 {
			d = h.unmountTook / 2
		}
		for in, _ := h.intentSince(c.auditOffset, c.method); in == nil; in, _ = h.intentSince(c.auditOffset, c.method) {
			if c.ended() {
				return "missed"
			}
			time.Sleep(100 * time.Microsecond)
		}
		seen := time.Since(c.start)
		if d > 0 {
			for t0 := time.Now(); time.Since(t0) < d; {
				// Spin: timers are too coarse for a fraction of a
				// millisecond.
			}
		}
		return fmt.Sprintf("intent seen %v after the call began, +%v", seen.Round(10*time.Microsecond), d.Round(10*time.Microsecond))
	}
}

// onChildExit kills once the named child has been seen and has ended.
func onChildExit(name string) func(h *killHarness, c *killCall) string {
	return func(h *killHarness, c *killCall) string {
		pid := h.waitChild(c, name)
		if pid == 0 {
			return "missed"
		}
		for procAlive(pid) {
			if c.ended() {
				break
			}
			time.Sleep(50 * time.Microsecond)
		}
		return fmt.Sprintf("%s ended %v after the call began", name, time.Since(c.start).Round(10*time.Microsecond))
	}
}

// onMounted kills once the volume is mounted (or, with false, no longer
// mounted) in the test's mount table: the call's change is made and its
// answer not yet given, if the kill comes before the daemon answers.
func onMounted(mounted bool) func(h *killHarness, c *killCall) string {
	return func(h *killHarness, c *killCall) string {
		for (len(h.mountsOf(c.kd)) > 0) != mounted {
			if c.ended() {
				return "missed"
			}
			time.Sleep(20 * time.Microsecond)
		}
		what := "mounted"
		if !mounted {
			what = "unmounted"
		}
		return fmt.Sprintf("%s %v after the call began", what, time.Since(c.start).Round(10*time.Microsecond))
	}
}

// ended tells, without waiting, whether the call has returned; the answer
// stays in c.done for killPoint. A call that returned before its moment
// came is missed.
func (c *killCall) ended() bool {
	select {
	case err := <-c.done:
		c.done <- err
		return true
	default:
		return false
	}
}

// waitChildAt waits until the daemon has a child process named name that
// has the volume's device open, and has written at least writes bytes;
// it returns the child's PID and what it was doing, or 0 (missed)
// when the call or the child ends first.
func (h *killHarness) waitChildAt(c *killCall, name string, writes int64) (int, string) {
	pid := h.waitChild(c, name)
	if pid == 0 {
		return 0, ""
	}
	dev := c.kd.l.Path + "p1"
	for {
		if !procAlive(pid) || c.ended() {
			return 0, ""
		}
		if hasOpen(pid, dev) {
			if writes == 0 {
				return pid, "with " + dev + " open"
			}
			if n := wchar(pid); n >= writes {
				return pid, fmt.Sprintf("writing (%d bytes written)", n)
			}
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// hasOpen tells whether process pid has path open.
func hasOpen(pid int, path string) bool {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && target == path {
			return true
		}
	}
	return false
}

// wchar returns how many bytes process pid has passed to write(2) and
// its kin, from /proc/PID/io.
func wchar(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "wchar: "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// waitChild waits until the daemon has a child process named name and
// returns its PID, or 0 (missed) when the call ends first.
func (h *killHarness) waitChild(c *killCall, name string) int {
	daemon := h.d.PID()
	for i := 0; ; i++ {
		// Every fiftieth scan reads every process, in case a PID in
		// use before the call was freed and given to its child.
		skip := c.before
		if i%50 == 49 {
			skip = nil
		}
		if pid := childNamed(daemon, skip, name); pid > 0 {
			return pid
		}
		if c.ended() {
			return 0
		}
		time.Sleep(20 * time.Microsecond) // leave the CPU to the daemon and its tools
	}
}

// childNamed returns the PID of a child of parent whose command is name,
// from /proc, or 0. The PIDs in skip are not read, so a scan is quick
// enough to catch a tool that runs for a few milliseconds.
func childNamed(parent int, skip map[int]bool, name string) int {
	f, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || skip[pid] {
			continue
		}
		ppid, comm, state, ok := procStat(pid)
		if ok && ppid == parent && comm == name && state != 'Z' {
			return pid
		}
	}
	return 0
}

// pids returns the PIDs in /proc.
func pids() map[int]bool {
	names, _ := os.ReadDir("/proc")
	out := map[int]bool{}
	for _, e := range names {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out[pid] = true
		}
	}
	return out
}

// procStat reads a process's parent, command and state from
// /proc/PID/stat.
func procStat(pid int) (ppid int, comm string, state byte, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", 0, false
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open || len(b) < end+4 {
		return 0, "", 0, false
	}
	fields := strings.Fields(string(b[end+2:]))
	if len(fields) < 2 {
		return 0, "", 0, false
	}
	ppid, err = strconv.Atoi(fields[1])
	return ppid, string(b[open+1 : end]), fields[0][0], err == nil
}

// procAlive tells whether pid runs (a zombie has ended).
func procAlive(pid int) bool {
	_, _, state, ok := procStat(pid)
	return ok && state != 'Z'
}

// childFate reaps the child the kill left (reparented to this process, a
// subreaper) and says how it ended.
func (h *killHarness) childFate(p killPoint, c *killCall) (fate string, completed bool) {
	if p.child == "" {
		return "none", false
	}
	if c.childPID == 0 {
		return p.child + " not seen", false
	}
	since := time.Now()
	var ws unix.WaitStatus
	for {
		wpid, err := unix.Wait4(c.childPID, &ws, unix.WNOHANG, nil)
		if err != nil {
			return fmt.Sprintf("%s (pid %d): not reaped here (%v)", p.child, c.childPID, err), false
		}
		if wpid == c.childPID {
			break
		}
		if time.Since(since) > 20*time.Second {
			h.t.Errorf("%s: the orphaned %s (pid %d) still runs 20 s after the re-run", p.name, p.child, c.childPID)
			return p.child + " still running", false
		}
		time.Sleep(5 * time.Millisecond)
	}
	how := fmt.Sprintf("exited %d", ws.ExitStatus())
	if ws.Signaled() {
		how = "killed by " + unix.SignalName(ws.Signal())
	}
	verb := "left running as an orphan"
	switch {
	case p.withChild:
		verb = "killed with the daemon"
	case p.holdChild > 0:
		verb = fmt.Sprintf("left as an orphan, held stopped %v after the kill", p.holdChild)
	}
	return fmt.Sprintf("%s %s: %s", p.child, verb, how), ws.Exited() && ws.ExitStatus() == 0
}
