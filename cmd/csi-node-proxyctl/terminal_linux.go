package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal tells whether f is a terminal: only a terminal's termios can
// be read.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// echoOff turns off echo on the terminal f, keeping line editing and
// signals, and returns the function that restores the previous settings.
func echoOff(f *os.File) (func(), error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	t := *old
	t.Lflag &^= unix.ECHO
	t.Lflag |= unix.ICANON | unix.ISIG
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &t); err != nil {
		return nil, err
	}
	return func() {
		_ = unix.IoctlSetTermios(fd, unix.TCSETS, old) // best effort: nothing better to do if the terminal went away
	}, nil
}
