// Package linuxe2e drives csi-node-proxy on its Linux backend, end to end,
// on real loop disks: it builds cmd/csi-node-proxy, starts it as a
// subprocess with --host=linux (once with --linux-filesystem=ext4, once
// with xfs), and makes the calls the big CSI node plugins make, through the
// daemon's unix sockets with the generated client stubs under api/: find
// the disk, online, partition, format, mount the staging path, publish by
// symlink, stats, grow, unpublish, unstage, offline. Every mutating call is
// made twice and the second must change nothing; wrong inputs must fail
// with the documented status codes.
//
// The tests need root (testutil.RequireRoot) and e2fsprogs and xfsprogs
// (testutil.RequireTool: a skip on a developer machine, a failure under
// CI). They clean up even when they fail: the daemon is stopped, mounts are
// unmounted deepest first, loop devices detached, and the test fails if
// anything of it is left in /proc/self/mountinfo or `losetup -a`.
//
//	sudo go test -race -count=1 ./test/linuxe2e/ -v
//
// Everything but this comment builds on Linux only.
package linuxe2e
