//go:build windows

package identity

import (
	"os"

	"golang.org/x/sys/windows"
)

// Self returns the identity of the calling process itself, read as the
// daemon reads a pipe client's: the user and enabled groups of the
// process token and the container whose job holds the process. Library
// mode (package inprocess) decides its policy on it.
func Self() Caller {
	c := Caller{PID: os.Getpid()}
	proc := windows.CurrentProcess() // a pseudo-handle: nothing to close
	readAccount(proc, &c)
	return c
}
