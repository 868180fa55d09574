// Package loopdisk attaches and takes apart the loop disks that privileged
// tests use as real disks, in pure Go (LOOP_CTL_GET_FREE + LOOP_CONFIGURE
// and BLKPG: no losetup or partx to install), and reads and copies what is
// on them. The backend's own tests (internal/host/linux/blockdev), the
// Linux node of test/linuxe2e (linuxnode) and the hostile suite share it,
// so the retry on a device another test took, the removal of partitions
// that would outlive a detach and the filesystems a lifecycle test formats
// are written once. Its disk functions build on Linux only; the callers
// are root tests (testutil.RequireRoot).
package loopdisk
