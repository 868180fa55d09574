//go:build !linux && !windows

package main

import (
	"errors"
	"os"
)

// isTerminal reports false on an OS where the CLI does not read terminal
// settings: mutating commands then need --yes and secrets a file, the
// safe side.
func isTerminal(*os.File) bool { return false }

// echoOff is not available here; isTerminal never reports a terminal, so
// it is not called.
func echoOff(*os.File) (func(), error) {
	return nil, errors.New("turning off terminal echo is not supported on this OS")
}
