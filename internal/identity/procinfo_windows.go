//go:build windows

package identity

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/windows"
)

// processImage returns the full Win32 path of the program proc runs
// (QueryFullProcessImageNameW), for audit records as /proc/<pid>/exe is on
// Linux. It reads through the handle taken at connect, which pins the
// process, so it names the client's program even if its PID is reused
// later. PROCESS_QUERY_LIMITED_INFORMATION is enough.
func processImage(proc windows.Handle) (string, error) {
	return imageName(func(buf []uint16, size *uint32) error {
		return windows.QueryFullProcessImageName(proc, 0, &buf[0], size)
	})
}

// imageName runs query, a QueryFullProcessImageNameW on some process,
// with a buffer that grows until the path fits: MAX_PATH is the common
// case, but a process may run from a long path (up to MAX_LONG_PATH), and
// then the call fails with ERROR_INSUFFICIENT_BUFFER instead of cutting
// the path short. query gets the buffer and its size in characters, and
// on success sets size to the length of the path without its NUL.
func imageName(query func(buf []uint16, size *uint32) error) (string, error) {
	for n := uint32(windows.MAX_PATH); ; n *= 2 {
		n = min(n, windows.MAX_LONG_PATH)
		buf := make([]uint16, n)
		size := n
		err := query(buf, &size)
		switch {
		case err == nil && (size == 0 || size >= n):
			// The path and its NUL must fit in what was given; an
			// answer that claims otherwise is not used.
			return "", fmt.Errorf("QueryFullProcessImageNameW reported %d characters in a buffer of %d", size, n)
		case err == nil:
			return windows.UTF16ToString(buf[:size]), nil
		case errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER) && n < windows.MAX_LONG_PATH:
			continue
		}
		return "", fmt.Errorf("QueryFullProcessImageNameW: %w", err)
	}
}

// processCreated returns when proc was created (GetProcessTimes).
func processCreated(proc windows.Handle) (time.Time, error) {
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(proc, &created, &exited, &kernel, &user); err != nil {
		return time.Time{}, fmt.Errorf("GetProcessTimes: %w", err)
	}
	t := filetimeTime(created)
	if t.IsZero() {
		return time.Time{}, errors.New("GetProcessTimes gave no creation time")
	}
	return t, nil
}

// filetimeTime converts a FILETIME (100 ns intervals since 1601-01-01
// UTC) to a time. A zero FILETIME is no time at all, not 1601: it
// becomes the zero time, which audit records leave out, rather than a
// start time centuries before the process could have run.
func filetimeTime(ft windows.Filetime) time.Time {
	if ft.HighDateTime == 0 && ft.LowDateTime == 0 {
		return time.Time{}
	}
	return time.Unix(0, ft.Nanoseconds()).UTC()
}
