// Package iscsiinit is the Linux iSCSI initiator backend of the iSCSI
// group (iscsi.Host): open-iscsi for sessions, a pure-Go SendTargets
// client for discovery, and sysfs for the disks a session brings. The
// name says what it is, an initiator, and avoids clashing with the
// groups/iscsi package every caller also imports; the directory has the
// same name, as the Windows initiator's has.
//
// # How the Windows RPCs map onto Linux
//
//   - AddTargetPortal: a SendTargets discovery session checks that the
//     portal answers (New-IscsiTargetPortal also talks to the portal),
//     then the portal becomes an open-iscsi discovery record
//     (iscsiadm -m discoverydb -t sendtargets -o new). An existing record
//     is success.
//   - DiscoverTargetPortal: SendTargets in pure Go (sendtargets.go, on
//     the encoder and decoder in pdu.go). It needs no kernel iSCSI
//     support, whereas iscsiadm discovery refuses to run without the
//     iscsi_tcp module, and it leaves no records behind, whereas iscsiadm
//     discovery writes node and send_targets records as a side effect.
//   - RemoveTargetPortal / ListTargetPortals: the discovery records.
//   - ConnectTarget: iscsiadm -m node -o new, the CHAP settings written
//     into the node record file, iscsiadm --login. An existing session
//     (exit code 15) is success.
//   - DisconnectTarget: iscsiadm --logout and -o delete; no session
//     (exit code 21) is success.
//   - GetTargetDisks: sysfs, from /sys/class/iscsi_session to the SCSI
//     disks below it, numbered by a DiskNumberFunc the daemon supplies;
//     no session gives an empty list, as upstream.
//   - SetMutualChapSecret: kept in memory, written as the node record's
//     password_in at each mutual CHAP login.
//
// # CHAP secrets
//
// iscsiadm takes record values only as arguments (-o update -n
// node.session.auth.password -v SECRET), which any user can read in
// /proc/<pid>/cmdline while it runs, and it has no option to read them
// from standard input or a file. So this package never passes a secret to
// iscsiadm: it creates the record with iscsiadm, then replaces the
// record's node.session.auth.* lines itself, writing a new 0600 file in
// open-iscsi's 0700 record directory and renaming it over the old one.
// Residual exposure, the same as with iscsiadm's own update: the secret
// sits in the root-only record file while the target is connected (a
// failed login and DisconnectTarget delete the record), iscsid holds it in
// memory, and the kernel keeps it in the session's sysfs attributes,
// readable by root. Secrets that the record format cannot hold exactly
// (leading or trailing blanks, control characters) are refused rather
// than silently changed.
//
// iscsiadm runs through the runner seam, with an argument vector (never a
// shell), a minimal environment and a timeout; its stderr goes into
// errors, and its exit code (open-iscsi iscsi_err.h) picks the errdefs
// kind: 24 (login authorization failure) is PermissionDenied, 21 (no
// records or sessions) NotFound, 12 (transport module missing) and 19
// (fatal login) FailedPrecondition, 4, 8, 11, 18, 20, 28, 29 and 32
// Unavailable.
//
// Files named *_linux.go are Linux-only; the PDU code, the SendTargets
// client and the initiator name helpers build everywhere.
package iscsiinit
