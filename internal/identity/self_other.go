//go:build !linux && !windows

package identity

import (
	"os"
	"runtime"
)

// Self returns what this OS tells about the calling process: its PID and,
// on Unix, its effective user and group IDs. Containers and pods are not
// identified here, as peers are not (see identify).
func Self() Caller {
	c := Caller{PID: os.Getpid(), Incomplete: "containers are not identified on " + runtime.GOOS}
	if uid, gid := os.Geteuid(), os.Getegid(); uid >= 0 && gid >= 0 {
		c.HasUnixIDs, c.UID, c.GID = true, uint32(uid), uint32(gid)
	}
	return c
}
