//go:build linux

package identity

import (
	"errors"
	"os"
)

// Self returns the identity of the calling process itself, read as the
// daemon reads a peer's: effective user and group IDs, and from /proc the
// supplementary groups, container and pod. Library mode (package
// inprocess) decides its policy on it, so a rule that names a driver's
// pod or UID matches the driver whether it calls the daemon or links the
// library.
func Self() Caller { return self(Options{}) }

func self(o Options) Caller {
	c := Caller{PID: os.Getpid(), HasUnixIDs: true, UID: uint32(os.Geteuid()), GID: uint32(os.Getegid())}
	p, err := ReadProcess(o.procRoot(), c.PID, c.UID, o.CgroupRoot)
	switch {
	case errors.Is(err, ErrPIDReused):
		// Cannot happen to a live process reading itself; keep the
		// daemon's rule anyway: nothing read is trusted.
		c.Incomplete = err.Error()
		return c
	case err != nil && p.StartTime == 0:
		c.Incomplete = "cannot read this process: " + err.Error()
		return c
	}
	c.Groups = p.Groups
	c.ContainerID, c.PodUID, c.Runtime = p.Container.ID, p.Container.PodUID, p.Container.Runtime
	if err != nil {
		c.Incomplete = "cannot tell this process's container: " + err.Error()
	}
	return c
}
