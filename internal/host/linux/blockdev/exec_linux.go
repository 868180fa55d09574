//go:build linux

package blockdev

import (
	"runtime"
	"syscall"
)

// toolProcAttr has the kernel send the tool SIGKILL when its parent goes:
// a daemon killed with SIGKILL takes its mkfs and e2fsck with it. Left
// running, an orphaned mkfs holds the device while the restarted daemon
// checks it for a filesystem, and one that finishes after that check has
// its fresh filesystem overwritten by the retried format (mkfs.ext4 off a
// terminal does not refuse an existing filesystem).
func toolProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// lockToolThread pins the calling goroutine to its OS thread for a tool's
// whole run, from the fork to the wait. The parent-death signal fires when
// the thread that forked exits, not the process, and the Go runtime ends a
// thread whenever a goroutine that locked it returns without unlocking.
// Holding the thread until the tool has been waited for means no other
// goroutine can run on it, lock it and end it while the tool runs; after
// the wait, the thread ending kills nothing. It costs one thread per tool
// running.
func lockToolThread() (unlock func()) {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
