//go:build linux

package cifs

import (
	"context"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// Permissions are the owner, group and modes the files of a CIFS mount
// show to local processes, and the SELinux label they carry. Without CIFS
// Unix extensions (every Windows server) the kernel invents them: by
// default root:root, 0755, so only root in a pod can write. The wire API
// has no mount options, so they come from the daemon (Config.Permissions)
// or, per caller, from its policy (Config.PermissionsFor).
//
// The zero value sets nothing: the kernel's defaults.
type Permissions struct {
	// UID is the cifs uid= option: the owner every file shows; nil leaves
	// the kernel's default (the mounting user, root).
	UID *uint32
	// GID is the cifs gid= option; nil leaves the kernel's default (root).
	// csi-driver-smb passes the pod's fsGroup here (gid=<volumeMountGroup>;
	// kubernetes-csi/csi-driver-smb pkg/smb/nodeserver.go, commit
	// 95c69680), which this API cannot carry: a policy can.
	GID *uint32
	// FileMode is the cifs file_mode= option (permission bits only); 0
	// leaves the kernel's default, 0755.
	FileMode fs.FileMode
	// DirMode is the cifs dir_mode= option (permission bits only); 0
	// leaves the kernel's default, 0755.
	DirMode fs.FileMode
	// SELinuxContext is the context= mount option, such as
	// "system_u:object_r:container_file_t:s0", so that confined containers
	// may use the share (CIFS has no per-file labels). "" sets none.
	SELinuxContext string
}

// PermissionsFunc returns the Permissions for the caller of ctx (its
// identity is in ctx, see internal/identity) and true, or false when the
// daemon's defaults (Config.Permissions) apply. The daemon implements it
// from its policy; it must be quick and must not fail: it runs on every
// NewSmbGlobalMapping.
type PermissionsFunc func(ctx context.Context) (Permissions, bool)

// UID32 returns a pointer to uid, for Permissions.UID and GID.
func UID32(uid uint32) *uint32 { return &uid }

// IsZero reports whether p sets nothing.
func (p Permissions) IsZero() bool {
	return p.UID == nil && p.GID == nil && p.FileMode == 0 && p.DirMode == 0 && p.SELinuxContext == ""
}

// Validate refuses what cannot be a cifs mount option: modes with more
// than permission bits (setuid, sticky, file type), and SELinux contexts
// holding anything but the characters of user:role:type:level[:categories]
// (a quote or a NUL would end the quoted option early).
func (p Permissions) Validate() error {
	for name, m := range map[string]fs.FileMode{"file mode": p.FileMode, "directory mode": p.DirMode} {
		if m&^fs.ModePerm != 0 {
			return errdefs.Errorf(errdefs.ErrInvalidArgument, "SMB %s %#o has more than permission bits", name, uint32(m))
		}
	}
	if c := p.SELinuxContext; c != "" {
		if len(c) > 255 {
			return errdefs.Errorf(errdefs.ErrInvalidArgument, "SELinux context is %d bytes long, the limit is 255", len(c))
		}
		for _, r := range c {
			if !selinuxContextRune(r) {
				return errdefs.Errorf(errdefs.ErrInvalidArgument, "SELinux context %q holds %q, which a context never does", c, r)
			}
		}
		if strings.Count(c, ":") < 3 {
			return errdefs.Errorf(errdefs.ErrInvalidArgument, "SELinux context %q is not user:role:type:level", c)
		}
	}
	return nil
}

// permField is one field of Permissions that is set, rendered twice: as
// a cifs mount option and as its part of a mount directory's tag.
type permField struct{ option, tag string }

// fields renders p's set fields in a fixed order. options and tag both
// read it, so a tag tells apart every two sets of options: a field added
// to the options cannot be left out of the directory name, where two
// mappings with different permissions must be two mounts. The context
// option is quoted: MCS categories hold commas ("s0:c1,c2"), and the
// kernel's LSM option parser (security/selinux/hooks.c,
// selinux_sb_eat_lsm_opts, which cifs calls before its own parser) keeps a
// quoted value whole and drops the quotes, as mount(8) documents for
// context=. In the tag the context is "c" and a hash, since it may hold
// any character a context holds.
func (p Permissions) fields() []permField {
	var out []permField
	if p.UID != nil {
		u := strconv.FormatUint(uint64(*p.UID), 10)
		out = append(out, permField{"uid=" + u, "u" + u})
	}
	if p.GID != nil {
		g := strconv.FormatUint(uint64(*p.GID), 10)
		out = append(out, permField{"gid=" + g, "g" + g})
	}
	if p.FileMode != 0 {
		m := fmt.Sprintf("%04o", uint32(p.FileMode))
		out = append(out, permField{"file_mode=" + m, "f" + m})
	}
	if p.DirMode != 0 {
		m := fmt.Sprintf("%04o", uint32(p.DirMode))
		out = append(out, permField{"dir_mode=" + m, "d" + m})
	}
	if c := p.SELinuxContext; c != "" {
		out = append(out, permField{`context="` + c + `"`, "c" + hashName(c)[:12]})
	}
	return out
}

// options renders p as cifs mount options, in fields' order.
func (p Permissions) options() []string {
	var out []string
	for _, f := range p.fields() {
		out = append(out, f.option)
	}
	return out
}

// tag names p in a mount directory name: "" for the zero value (the
// directory name mappings had before permissions existed, so those mounts
// are still found), else a short form such as "u1000-g2000-f0770-d0770"
// plus "c" and a hash of the SELinux context. Two mappings of one share
// with different permissions are two mounts: one mount cannot show two
// owners.
func (p Permissions) tag() string {
	var parts []string
	for _, f := range p.fields() {
		parts = append(parts, f.tag)
	}
	return strings.Join(parts, "-")
}

// lsmOptionPrefixes are the mount options the kernel's LSMs take out of
// the data string before cifs parses it (SELinux: context, fscontext,
// defcontext, rootcontext, seclabel; Smack: smackfs*).
var lsmOptionPrefixes = []string{"context=", "fscontext=", "defcontext=", "rootcontext=", "seclabel", "smackfs"}

// checkLSMOptions refuses mount data in which an LSM would find an option
// that is not ours. The LSM parsers split at every comma outside double
// quotes and know nothing of cifs' doubled-comma escape, so a password
// such as "x,context=..." (passed as "x,,context=...") would lose its
// tail to SELinux and set a label nobody asked for. ours is the
// context= option the data carries on purpose, or "".
func checkLSMOptions(data, ours string) error {
	for _, tok := range lsmTokens(data) {
		for _, p := range lsmOptionPrefixes {
			if strings.HasPrefix(tok, p) && tok != ours {
				return errdefs.Errorf(errdefs.ErrInvalidArgument, "the credentials hold a comma followed by %q, which the kernel's security modules would take as a mount option; choose another password", strings.TrimSuffix(p, "="))
			}
		}
	}
	return nil
}

// lsmTokens splits mount data as the kernel's LSM parsers do (opt_len in
// security/selinux/hooks.c): at commas outside double quotes.
func lsmTokens(data string) []string {
	var out []string
	quoted := false
	start := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				out = append(out, data[start:i])
				start = i + 1
			}
		}
	}
	return append(out, data[start:])
}

// selinuxContextRune tells whether r may appear in an SELinux context as
// written in mount data: letters, digits and _ . : , -.
func selinuxContextRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.:,-", r)
}
