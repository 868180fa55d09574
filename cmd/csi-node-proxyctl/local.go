package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"

	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
)

// openLocal builds the node in this process (library mode) from the
// --local flags, which mean what the daemon's flags of the same names
// mean. A node that cannot be built is a usage error (exit 2): its
// constructors only check configuration (a --host this OS cannot run, a
// --sim-config that does not parse), so it is the command line that is
// wrong.
func openLocal(ctx context.Context, g *globals) (groups.Node, error) {
	n, err := inprocess.New(ctx, localOptions(g))
	if err != nil {
		return nil, &usageError{msg: "--local: " + err.Error()}
	}
	return n, nil
}

// localOptions are library mode's Options the --local flags make: each
// flag fills the Options field of the daemon flag it mirrors, and a flag
// not given leaves the field zero, which library mode reads as the
// daemon's default. The policy is read once: this process ends before a
// reload could matter, so --policy-reload-interval has no --local twin.
func localOptions(g *globals) inprocess.Options {
	return inprocess.Options{
		Host:                  g.host,
		KubeletPath:           g.kubeletPath,
		WorkingDirs:           g.workingDirs,
		AllowedServices:       g.allowedServices,
		ClearReadOnlyOnOnline: g.clearReadOnlyOnOnline,
		RequirePrivacy:        &g.requirePrivacy,
		LinuxFilesystem:       g.linuxFilesystem,
		LinuxHostMountTable:   g.linuxHostMountTable,
		LinuxDiskReadTimeout:  g.linuxDiskReadTimeout,
		SMBPermissions:        g.smb.permissions(),
		SimConfigFile:         g.simConfig,
		SimDisks:              g.simDisks,
		PolicyFile:            g.policy,
		PolicyPresets:         g.policyPresets,
		AuditLog:              g.auditLog,
		AuditReads:            g.auditReads,
		AuditSync:             g.auditSync,
		NodeName:              g.nodeName,
	}
}

// localHost is the backend --local uses: --host, or this OS's real one.
func localHost(g *globals) string {
	if g.host != "" {
		return g.host
	}
	return defaultHost()
}

// smbFlags are the --smb-* flags of --local: the owner, group, modes and
// SELinux context of the Linux host's SMB mounts, as the daemon's flags
// of the same names, whose defaults (modes 0777) they share.
type smbFlags struct {
	perms inprocess.SMBPermissions
	given bool // any --smb-* flag was given
}

// permissions returns the SMB permissions the flags give; nil when none
// was given, which is the daemon's default.
func (f *smbFlags) permissions() *inprocess.SMBPermissions {
	if !f.given {
		return nil
	}
	p := f.perms
	return &p
}

// addSMBFlags defines the --smb-* flags on fs, writing into f.
func addSMBFlags(fs *flag.FlagSet, f *smbFlags) {
	f.perms.FileMode, f.perms.DirMode = hostset.DefaultSMBMode, hostset.DefaultSMBMode
	id := func(dst **uint32) func(string) error {
		return func(s string) error {
			n, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				return fmt.Errorf("want a numeric ID (0 or more)")
			}
			v := uint32(n)
			*dst, f.given = &v, true
			return nil
		}
	}
	fs.Func("smb-uid", "With --local --host=linux: numeric user `ID` owning the files of SMB mounts, as the daemon's --smb-uid (default the kernel's, root)", id(&f.perms.UID))
	fs.Func("smb-gid", "With --local --host=linux: numeric group `ID` of the files of SMB mounts, as the daemon's --smb-gid (default the kernel's, root)", id(&f.perms.GID))
	fs.Var(&smbMode{&f.perms.FileMode, &f.given}, "smb-file-mode", "With --local --host=linux: permission `bits` of the files of SMB mounts, in octal, as the daemon's --smb-file-mode; 0 is the kernel's 0755")
	fs.Var(&smbMode{&f.perms.DirMode, &f.given}, "smb-dir-mode", "With --local --host=linux: permission `bits` of the directories of SMB mounts, in octal, as the daemon's --smb-dir-mode; 0 is the kernel's 0755")
	fs.Func("smb-selinux-context", "With --local --host=linux: SELinux `context` of SMB mounts, as the daemon's --smb-selinux-context; empty sets none", func(s string) error {
		f.perms.SELinuxContext, f.given = s, true
		return nil
	})
}

// smbMode is an --smb-*-mode flag: permission bits in octal.
type smbMode struct {
	dst   *uint32
	given *bool
}

// String shows the bits as the flag takes them.
func (m *smbMode) String() string {
	if m == nil || m.dst == nil {
		return "0"
	}
	return fmt.Sprintf("%#o", *m.dst)
}

// Set parses octal permission bits, at most 0777.
func (m *smbMode) Set(s string) error {
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil || n > 0o777 {
		return fmt.Errorf("want octal permission bits such as 0770")
	}
	*m.dst, *m.given = uint32(n), true
	return nil
}
