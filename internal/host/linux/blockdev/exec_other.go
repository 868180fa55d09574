//go:build !linux

package blockdev

import "syscall"

// toolProcAttr: only Linux has a parent-death signal, and the backend's
// tools run only there.
func toolProcAttr() *syscall.SysProcAttr { return nil }

// lockToolThread: nothing to pin without a parent-death signal.
func lockToolThread() (unlock func()) { return func() {} }
