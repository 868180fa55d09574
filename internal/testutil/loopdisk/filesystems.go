package loopdisk

// Filesystem is one filesystem a lifecycle test formats, checks and grows
// a loop disk with.
type Filesystem struct {
	// Name is the filesystem type (ext4, xfs): the daemon's
	// --linux-filesystem and the backend's choice.
	Name string
	// Package is the Debian package of its tools, for
	// testutil.RequireTool.
	Package string
	// Tools are the commands the test needs to make, check and grow it.
	Tools []string
	// Size is the loop disk's size: large enough for the filesystem
	// (mkfs.xfs needs 300 MiB).
	Size int64
}

// Growable are the filesystems the disk and volume lifecycle tests
// (blockdev's through the Services, linuxe2e's through the daemon) run
// with: the two the backend can make and grow.
var Growable = []Filesystem{
	{"ext4", "e2fsprogs", []string{"mkfs.ext4", "e2fsck", "resize2fs"}, 256 << 20},
	{"xfs", "xfsprogs", []string{"mkfs.xfs", "xfs_growfs"}, 512 << 20}, // mkfs.xfs needs 300 MiB
}
