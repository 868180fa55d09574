//go:build windows

package identity

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// osProcess is a process handle opened with SYNCHRONIZE when the client
// connected; it pins the process object, so its PID is not reused while
// the handle is open.
type osProcess struct{ h windows.Handle }

// exited waits on the process handle without blocking: a process object
// is signalled when the process exits.
func (p osProcess) exited() (bool, error) {
	ev, err := windows.WaitForSingleObject(p.h, 0)
	switch {
	case err != nil:
		return false, err
	case ev == windows.WAIT_OBJECT_0:
		return true, nil
	case ev == uint32(windows.WAIT_TIMEOUT):
		return false, nil
	}
	return false, fmt.Errorf("WaitForSingleObject returned %#x", ev)
}

func (p osProcess) close() { _ = windows.CloseHandle(p.h) } // our own handle; nothing to report

// known is never sure without asking: exited waits on the handle.
func (osProcess) known() (exited, ok bool) { return false, false }
