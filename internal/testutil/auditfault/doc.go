// Package auditfault breaks an audit log the three ways the audit-fault
// tests (the server's, library mode's and the soak's) prove that no change
// reaches the host without its record: the log on /dev/full, on a tmpfs
// that fills up, and removed with its path made unopenable. Linux only:
// it mounts a tmpfs, which needs root. The audit package's own torn-write
// test mounts its small tmpfs through SmallTmpfs too, so the mount and its
// cleanup live in one place.
package auditfault
