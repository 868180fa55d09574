//go:build linux

package cifs

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// errStatTimeout is a stat of a mount that did not return in time: a hung
// CIFS mount, which counts as stale.
var errStatTimeout = errors.New("stat did not return in time")

// realKernel is the kernel seam on the running system.
type realKernel struct{}

// Mount is mount(2). The data string reaches only the kernel.
func (realKernel) Mount(source, target, fstype string, flags uintptr, data string) error {
	return unix.Mount(source, target, fstype, flags, data)
}

// Unmount is umount2(2).
func (realKernel) Unmount(target string, flags int) error {
	return unix.Unmount(target, flags)
}

// Mounts reads /proc/self/mountinfo.
func (realKernel) Mounts() ([]mountinfo.Mount, error) {
	return mountinfo.Read()
}

// Stat runs stat(2) in a goroutine so a mount whose server vanished cannot
// block the caller beyond timeout. The goroutine may stay blocked in the
// kernel; it ends when the stat returns or the mount is detached.
func (realKernel) Stat(path string, timeout time.Duration) error {
	done := make(chan error, 1)
	go func() {
		_, err := os.Stat(path)
		done <- err
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return errStatTimeout
	}
}
