// Package cifs is the Linux backend of the SMB group (smb.Host): it turns
// Windows "SMB global mappings" into kernel CIFS mounts.
//
// # How Windows semantics map onto Linux
//
// On Windows, New-SmbGlobalMapping makes \\server\share reachable by every
// process on the node, and csi-proxy then links local_path to the remote
// path with a directory symbolic link. Linux has no node-wide UNC
// namespace, so this package gives each mapped share one mount owned by
// the proxy:
//
//   - The mapping of \\server\share is a CIFS mount of //server/share at
//     Config.MountRoot/<server>+<share> (both parts percent-escaped, see
//     MountDir). Mappings are keyed by the lower-cased share root, as
//     upstream keys them, so every PV on one share shares one mount.
//   - local_path, when set, becomes a symbolic link to the mount directory
//     plus the sub-path of remote_path: \\srv\share\a\b links to
//     <MountRoot>/srv+share/a/b.
//     The link is made with symlinkat(2) in local_path's parent directory,
//     opened beneath the proxy's working directories (Config.WorkingDirs,
//     package beneath): a link in the parents that stays inside them is
//     followed, one that leads out is errdefs.ErrPermissionDenied, and
//     nothing is mapped or linked.
//   - A healthy mapping (mounted, and a stat(2) of the mount succeeds) is
//     reused whatever user name the request carries, as upstream reuses
//     any mapping whose status is OK: csi-driver-smb stages several PVs of
//     one share, with the user possibly spelled differently (user,
//     DOMAIN\user, user@domain). The caller's own credentials are checked
//     against the server first (see Credentials); the mount keeps the
//     user that made it. There is no one-user-per-server rule (Windows
//     error 1219): the Linux kernel has no such limit.
//   - A stale mapping (mounted, but stat fails with EIO, ENOTCONN,
//     EHOSTDOWN, ESTALE, ... or does not answer within Config.StatTimeout)
//     is lazily unmounted and mounted again, as upstream removes and
//     re-creates a mapping whose path is no longer valid.
//   - RemoveSmbGlobalMapping unmounts (lazily when the mount is busy, like
//     Remove(Force=true) on Windows) and removes the mount directory. Links
//     made by NewSmbGlobalMapping stay and dangle, as they do on Windows.
//   - Config.RequirePrivacy (the daemon's -require-privacy flag) adds the
//     cifs "seal" option: SMB3 encryption, what RequirePrivacy asks of
//     Windows.
//   - Permissions (uid=, gid=, file_mode=, dir_mode=, context=) decide
//     who may write through the mount: Config.Permissions for everyone
//     (DefaultConfig: modes 0777, since a Windows global mapping serves
//     every process of the node), Config.PermissionsFor per caller (the
//     daemon's policy). Each set of permissions is a mount of its own,
//     at <server>+<share>+<tag>; RemoveSmbGlobalMapping removes them all.
//
// # Credentials
//
// Every call first checks the share and the credentials with a pure-Go
// SMB2/3 client (github.com/hirochachacha/go-smb2) over TCP: a wrong
// password is errdefs.ErrPermissionDenied, an unknown share
// errdefs.ErrNotFound and a server that does not answer
// errdefs.ErrUnavailable. The check runs even when an existing mapping is
// reused, so a caller who does not know the password cannot ride on a
// mapping someone else made. (The simulated host and upstream reuse
// without checking; this backend is deliberately stricter.)
//
// The mount itself is the mount(2) system call, never mount(8) or
// mount.cifs: the password travels only in the mount data string inside
// this process and the kernel, never on a command line, in a child's
// environment, in a credentials file or in a log. The kernel does not show
// it in /proc/self/mountinfo. Commas are the option separator of the mount
// data; the kernel's option parser reads a doubled comma as a literal one
// (fs/smb/client/fs_context.c, smb3_fs_context_parse_monolithic, the same
// escape mount.cifs uses), so passwords with commas are passed with their
// commas doubled. A NUL byte cannot be passed at all and is refused.
// Nothing in this package logs, and no error quotes the password.
//
// # Kernels without CIFS
//
// When the kernel has no CIFS support, mount(2) fails with ENODEV and
// NewSmbGlobalMapping returns errdefs.ErrFailedPrecondition ("the kernel
// has no CIFS support (mount: no such device)"): the call is implemented,
// but this node is not in a state that allows it, and only an
// administrator (a kernel with CONFIG_CIFS, or loading cifs.ko) can change
// that. The build and CI machines are such kernels; see
// docs/linux-smb-iscsi.md.
//
// All files but this one are Linux-only.
package cifs
