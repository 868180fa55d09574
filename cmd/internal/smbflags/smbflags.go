// Package smbflags defines the --smb-* flags: the owner, group, modes and
// SELinux context of the Linux host's SMB mounts. The daemon and
// csi-node-proxyctl --local both take them, and one definition keeps the
// two command lines reading them alike (issue 22: options spelled twice
// had drifted).
package smbflags

import (
	"flag"
	"fmt"
	"strconv"

	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// Values are what the flags give: the node's defaults (modes
// hostset.DefaultSMBMode, owner and group the kernel's) until a flag
// says otherwise.
type Values struct {
	// Permissions are the flags' values over the defaults.
	Permissions policy.SMBPermissions
	// Given tells whether any of the flags was given.
	Given bool
}

// Add defines the flags on fs, writing into v, which it sets to the
// defaults first. when starts each usage text: the daemon's "With
// --host=linux", the CLI's "With --local --host=linux".
func Add(fs *flag.FlagSet, v *Values, when string) {
	v.Permissions = policy.SMBPermissions{FileMode: hostset.DefaultSMBMode, DirMode: hostset.DefaultSMBMode}
	id := func(dst **uint32) func(string) error {
		return func(s string) error {
			n, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				return fmt.Errorf("want a numeric ID (0 or more)")
			}
			u := uint32(n)
			*dst, v.Given = &u, true
			return nil
		}
	}
	p := &v.Permissions
	fs.Func("smb-uid", when+": numeric user `ID` owning the files of SMB mounts (cifs uid=; default the kernel's, root); a policy rule's smbPermissions override it for its callers", id(&p.UID))
	fs.Func("smb-gid", when+": numeric group `ID` of the files of SMB mounts (cifs gid=, e.g. the fsGroup of the pods using them; default the kernel's, root); a policy rule's smbPermissions override it for its callers", id(&p.GID))
	fs.Var(&mode{&p.FileMode, &v.Given}, "smb-file-mode", when+": permission `bits` of the files of SMB mounts, in octal (cifs file_mode=); 0 is the kernel's 0755. The default lets every process of the node write, as a Windows global mapping does")
	fs.Var(&mode{&p.DirMode, &v.Given}, "smb-dir-mode", when+": permission `bits` of the directories of SMB mounts, in octal (cifs dir_mode=); 0 is the kernel's 0755")
	fs.Func("smb-selinux-context", when+": SELinux `context` of SMB mounts (cifs context=), such as system_u:object_r:container_file_t:s0, so that confined containers may use them; empty sets none", func(s string) error {
		p.SELinuxContext, v.Given = s, true
		return nil
	})
}

// mode is an --smb-*-mode flag: permission bits in octal.
type mode struct {
	dst   *uint32
	given *bool
}

// String shows the bits as the flag takes them. The flag package calls
// it on a zero mode for -help's defaults.
func (m *mode) String() string {
	if m == nil || m.dst == nil {
		return "0"
	}
	return fmt.Sprintf("%#o", *m.dst)
}

// Set parses octal permission bits, at most 0777.
func (m *mode) Set(s string) error {
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil || n > 0o777 {
		return fmt.Errorf("want octal permission bits such as 0770")
	}
	*m.dst, *m.given = uint32(n), true
	return nil
}
