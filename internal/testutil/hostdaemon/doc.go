// Package hostdaemon starts the real host daemons that the Linux backend's
// tests talk to (smbd for cifs, tgtd for iscsiinit) and waits until they
// serve: each is a child in a process group of its own, its output kept in
// a buffer that the test may read while it runs, and a daemon that exits
// before it listens fails the test at once instead of after the wait. The
// backends' tests share it so that those rules are kept in one place;
// stopping each daemon stays with its test, since every daemon is stopped
// its own way. Everything but this comment builds on Linux only.
package hostdaemon
