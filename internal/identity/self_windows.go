//go:build windows

package identity

import (
	"os"
	"strings"

	"golang.org/x/sys/windows"
)

// Self returns the identity of the calling process itself, read as the
// daemon reads a pipe client's: the user and enabled groups of the
// process token and the container whose job holds the process. Library
// mode (package inprocess) decides its policy on it.
func Self() Caller {
	c := Caller{PID: os.Getpid()}
	proc := windows.CurrentProcess() // a pseudo-handle: nothing to close
	var problems []string
	if err := readToken(proc, &c); err != nil {
		problems = append(problems, "token: "+err.Error())
	}
	id, err := containerOf(proc)
	if err != nil {
		problems = append(problems, "container: "+err.Error())
	}
	c.ContainerID = id
	c.Incomplete = strings.Join(problems, "; ")
	return c
}
