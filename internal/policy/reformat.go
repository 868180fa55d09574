package policy

import (
	"context"
	"errors"
	"slices"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// Erasing a formatted volume is what FormatVolume refuses by default: a
// driver formats a fresh volume once, and a second format is a bug that
// destroys a tenant's data. One consumer needs it on purpose:
// sig-storage-local-static-provisioner's Windows deleter
// (pkg/util/volume_util_windows.go, DeleteContents, at 6cbe253c) wipes a
// released local volume by GetVolumeIDFromTargetPath(hostPath) then
// FormatVolume(volumeID), where hostPath is the volume's mount folder
// under the provisioner's discovery directory. A rule's allowReformat lets
// its callers do exactly that and no more.
//
// The volume must be mounted, and only beneath the rule's path roots. A
// volume mounted nowhere is refused: nothing ties it to the caller (a
// fresh data disk another driver is about to stage is mounted nowhere
// too), whereas the provisioner always reaches its volume through its
// mount under its discovery directory. A volume with a drive letter is
// mounted at D:\, outside any root but the drive's, and is refused too.

// reformatGrant is what an allowReformat rule hands the volume Service
// through the Decision, to judge the volume once the Service holds its
// lock and has found it formatted: judged then, not when the policy
// decided, so that a mount made in between still counts.
type reformatGrant struct {
	rule    string
	roots   []string // cleaned
	style   hostpath.Style
	objects ObjectHost
}

// reformatGrant returns the grant of an allowReformat rule for a
// FormatVolume call, nil for any other rule or call.
func (r *rule) reformatGrant(p *Policy, c *Call) *reformatGrant {
	if !r.AllowReformat || c.Group != "volume" || c.Method != "FormatVolume" {
		return nil
	}
	return &reformatGrant{rule: r.Name, roots: r.roots, style: p.style, objects: c.Objects}
}

// CheckReformat decides whether the FormatVolume call ctx belongs to may
// erase volumeID, which the caller has found already formatted: nil when
// the call came through the call gate, the rule that allowed it has
// allowReformat, and the volume is mounted, every mount beneath that
// rule's path roots. Otherwise an error wrapping
// errdefs.ErrFailedPrecondition that says why, naming the setting when
// no rule granted it. The volume Service calls it holding the volume's
// lock; it is the one place the setting is enforced.
func CheckReformat(ctx context.Context, volumeID string) error {
	d, _ := DecisionFromContext(ctx)
	g := d.reformat
	if g == nil {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition,
			"volume %s is already formatted; refusing to erase it (a policy rule with allowReformat lets its callers erase volumes mounted only beneath its path roots)", shortID(volumeID))
	}
	if g.objects == nil {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition,
			"volume %s is already formatted; rule %q allows reformatting, but this host cannot tell where the volume is mounted", shortID(volumeID), g.rule)
	}
	mounts, err := g.objects.VolumeMounts(ctx, volumeID)
	if err != nil {
		if errors.Is(err, errdefs.ErrNotFound) {
			return err
		}
		return errdefs.Errorf(errdefs.ErrFailedPrecondition,
			"volume %s is already formatted; rule %q allows reformatting, but where the volume is mounted cannot be told: %v", shortID(volumeID), g.rule, err)
	}
	if len(mounts) == 0 {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition,
			"volume %s is already formatted and mounted nowhere; rule %q allows reformatting only volumes mounted beneath its path roots %v", shortID(volumeID), g.rule, g.roots)
	}
	for _, m := range mounts {
		cleaned, err := g.style.Clean(m)
		if err != nil || !slices.ContainsFunc(g.roots, func(root string) bool { return g.style.Within(cleaned, root) }) {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition,
				"volume %s is already formatted and mounted at %s, outside the path roots %v of rule %q; refusing to erase it", shortID(volumeID), m, g.roots, g.rule)
		}
	}
	return nil
}
