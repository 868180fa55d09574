package policy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// SMBPermissions are the owner, group, modes and SELinux context the
// files of an SMB mapping show to local processes on a Linux node (the
// cifs uid=, gid=, file_mode=, dir_mode= and context= mount options). The
// wire API carries no mount options, and without them a Windows server's
// share is root:root 0755 on the node, which non-root pods cannot write:
// csi-driver-smb passes gid=<volumeMountGroup>, which a rule can give its
// driver here. A field left out takes the daemon's value (--smb-uid,
// --smb-gid, --smb-file-mode, --smb-dir-mode, --smb-selinux-context).
// Windows nodes ignore them: a global mapping has no owner or modes.
type SMBPermissions struct {
	// UID owns every file of the mount.
	UID *uint32 `json:"uid,omitempty"`
	// GID is every file's group: a pod's fsGroup, for example.
	GID *uint32 `json:"gid,omitempty"`
	// FileMode and DirMode are permission bits (at most 0777; write them
	// in octal with a leading 0, 0770, which YAML reads as octal); 0
	// leaves them to the daemon.
	FileMode uint32 `json:"fileMode,omitempty"`
	DirMode  uint32 `json:"dirMode,omitempty"`
	// SELinuxContext labels the whole mount (CIFS has no per-file
	// labels), such as "system_u:object_r:container_file_t:s0", so that
	// confined containers may use it.
	SELinuxContext string `json:"seLinuxContext,omitempty"`
}

// maxSELinuxContext bounds a context, as the Linux SMB backend does.
const maxSELinuxContext = 255

// IsZero reports whether p sets nothing.
func (p SMBPermissions) IsZero() bool {
	return p.UID == nil && p.GID == nil && p.FileMode == 0 && p.DirMode == 0 && p.SELinuxContext == ""
}

// Validate refuses what cannot be a mount option: modes beyond the
// permission bits (0777), and an SELinux context that is not
// user:role:type:level (at least three colons) written in letters,
// digits and _ . : , - (a quote or a NUL would end the quoted option
// early). Errors wrap errdefs.ErrInvalidArgument.
func (p SMBPermissions) Validate() error {
	var errs []error
	for name, m := range map[string]uint32{"fileMode": p.FileMode, "dirMode": p.DirMode} {
		if m > 0o777 {
			errs = append(errs, fmt.Errorf("%s %#o has more than permission bits (at most 0777): %w", name, m, errdefs.ErrInvalidArgument))
		}
	}
	if c := p.SELinuxContext; c != "" {
		switch {
		case len(c) > maxSELinuxContext:
			errs = append(errs, fmt.Errorf("seLinuxContext is %d bytes long, the limit is %d: %w", len(c), maxSELinuxContext, errdefs.ErrInvalidArgument))
		case strings.IndexFunc(c, func(r rune) bool { return !selinuxContextRune(r) }) >= 0:
			errs = append(errs, fmt.Errorf("seLinuxContext %q holds characters other than letters, digits and _ . : , -: %w", c, errdefs.ErrInvalidArgument))
		case strings.Count(c, ":") < 3:
			errs = append(errs, fmt.Errorf("seLinuxContext %q is not user:role:type:level: %w", c, errdefs.ErrInvalidArgument))
		}
	}
	return errors.Join(errs...)
}

// selinuxContextRune tells whether r may appear in an SELinux context as
// written in mount data.
func selinuxContextRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.:,-", r)
}

// validateSMBPermissions checks a rule's smbPermissions.
func validateSMBPermissions(p *SMBPermissions) []error {
	switch {
	case p == nil:
		return nil
	case p.IsZero():
		return []error{fmt.Errorf("smbPermissions sets nothing: name uid, gid, fileMode, dirMode or seLinuxContext, or leave it out: %w", errdefs.ErrInvalidArgument)}
	}
	if err := p.Validate(); err != nil {
		return []error{fmt.Errorf("smbPermissions: %w", err)}
	}
	return nil
}

// decisionKey is the context key of the Decision that let a call through.
type decisionKey struct{}

// DecisionKey is the key under which a context holds the *Decision that
// let its call through: for a context type that answers several keys
// with one node (the call gate's, which spares each call the allocations
// of a context.WithValue per key). Its Value must return a *Decision
// that does not change afterwards.
func DecisionKey() any { return decisionKey{} }

// NewDecisionContext returns ctx carrying d, the decision that allowed the
// call ctx belongs to. The call gate adds it once the policy has allowed
// a call, so what runs the call can follow the allowing rule: the Linux
// SMB backend mounts with its SMBPermissions.
func NewDecisionContext(ctx context.Context, d Decision) context.Context {
	return context.WithValue(ctx, decisionKey{}, &d)
}

// DecisionFromContext returns the decision NewDecisionContext put in ctx,
// and false when there is none (a call that did not come through the
// call gate).
func DecisionFromContext(ctx context.Context) (Decision, bool) {
	if d, ok := ctx.Value(decisionKey{}).(*Decision); ok && d != nil {
		return *d, true
	}
	return Decision{}, false
}
