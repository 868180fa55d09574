package sanitytest

import "golang.org/x/sys/unix"

// unmount unmounts mp, lazily if it is busy, so that no mount of the test
// outlives it.
func unmount(mp string) error {
	if err := unix.Unmount(mp, 0); err != nil && err != unix.EINVAL {
		return unix.Unmount(mp, unix.MNT_DETACH)
	}
	return nil
}
