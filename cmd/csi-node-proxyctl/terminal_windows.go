package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// isTerminal tells whether f is a console: only a console has a console
// mode.
func isTerminal(f *os.File) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}

// echoOff turns off echo on the console f, keeping line input and Ctrl+C,
// and returns the function that restores the previous mode.
func echoOff(f *os.File) (func(), error) {
	h := windows.Handle(f.Fd())
	var old uint32
	if err := windows.GetConsoleMode(h, &old); err != nil {
		return nil, err
	}
	mode := old&^windows.ENABLE_ECHO_INPUT | windows.ENABLE_LINE_INPUT | windows.ENABLE_PROCESSED_INPUT
	if err := windows.SetConsoleMode(h, mode); err != nil {
		return nil, err
	}
	return func() {
		_ = windows.SetConsoleMode(h, old) // best effort: nothing better to do if the console went away
	}, nil
}
