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
	// Mkfs is the command line that formats a device with it, the
	// device's path to follow: set in WholeDisk, whose tests format the
	// disk themselves.
	Mkfs []string
	// Size is the loop disk's size: large enough for the filesystem
	// (mkfs.xfs needs 300 MiB).
	Size int64
}

// Growable are the filesystems the disk and volume lifecycle tests
// (blockdev's through the Services, linuxe2e's through the daemon) run
// with: the two the backend can make and grow.
var Growable = []Filesystem{
	{Name: "ext4", Package: "e2fsprogs", Tools: []string{"mkfs.ext4", "e2fsck", "resize2fs"}, Size: 256 << 20},
	{Name: "xfs", Package: "xfsprogs", Tools: []string{"mkfs.xfs", "xfs_growfs"}, Size: 512 << 20}, // mkfs.xfs needs 300 MiB
}

// WholeDisk are the filesystems the whole-disk volume tests (blockdev's and
// linuxe2e's) put on a bare loop disk with Mkfs, as a pre-formatted or
// restored disk arrives: forced (-F, -f), since the disk may hold an old
// signature, and quiet.
var WholeDisk = []Filesystem{
	{Name: "ext4", Package: "e2fsprogs", Tools: []string{"mkfs.ext4"}, Mkfs: []string{"mkfs.ext4", "-q", "-F"}, Size: 128 << 20},
	{Name: "xfs", Package: "xfsprogs", Tools: []string{"mkfs.xfs"}, Mkfs: []string{"mkfs.xfs", "-q", "-f"}, Size: 512 << 20},
}
