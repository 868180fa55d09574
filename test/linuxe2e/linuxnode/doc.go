// Package linuxnode gives root tests a real Linux node to drive: scratch
// directories short enough for unix sockets, loop disks attached in pure Go
// (LOOP_CTL_GET_FREE + LOOP_CONFIGURE with AUTOCLEAR) over sparse files,
// csi-node-proxy built from this module and started as a subprocess with
// --host=linux (which Daemon.Kill ends with SIGKILL and Daemon.Restart
// starts again on the same sockets and working directory), and a cleanup
// that runs even when a test fails: it stops the daemon, unmounts
// everything of the test (deepest first), detaches its loop devices and
// fails the test if a mount or an attached loop device of the test is left
// behind.
//
// It is used by test/linuxe2e (the daemon's disk, volume and filesystem
// groups on real loop disks), test/soak (recovery from kill -9) and
// test/bench (the stage flow through the proxy against the standard
// tools). Everything but this comment builds on Linux only.
package linuxnode
