// Package objecthost answers the authorisation policy's questions about
// disks and volumes (policy.ObjectHost) from a node's host backends: which
// disk a volume is on, which volumes a disk holds, a disk's location and
// IDs, and where a volume is mounted. The daemon and library mode ask the
// same answers of the same host, so a rule confining objects means the
// same over the wire and in-process; it lives apart from the gRPC server
// so library mode can use it without linking gRPC.
package objecthost

import (
	"context"
	"fmt"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// HostObjects answers the policy's questions about disks and volumes
// (policy.ObjectHost) from a host's volume and disk backends, plus one
// question those do not answer: where a volume is mounted.
type HostObjects struct {
	// Volume and Disk are the host's backends.
	Volume volume.Host
	Disk   disk.Host
	// Mounts returns every path where a volume is mounted. Nil: the host
	// cannot tell, and every rule confining volumes to its path roots
	// refuses calls that name a volume or disk (fail closed).
	Mounts func(ctx context.Context, volumeID string) ([]string, error)
}

var _ policy.ObjectHost = (*HostObjects)(nil)

// NewHostObjects returns the object answers of a host from its volume
// and disk backends as built (not wrapped: a decorator hides the optional
// interfaces looked for here), and the simulated host when it is one
// (nil otherwise). Where a volume is mounted comes from the simulated
// host's own table; from a volume backend that tells it itself
// (VolumeMounter: the Linux block backend, from the mount tables it
// trusts, blockdev.Backend.VolumeMounts); and otherwise from the OS:
// Windows' volume path names (GetVolumePathNamesForVolumeName), nothing
// elsewhere (see Mounts).
func NewHostObjects(vol volume.Host, dsk disk.Host, sim *simulated.Host) *HostObjects {
	o := &HostObjects{Volume: vol, Disk: dsk, Mounts: osVolumeMounts}
	if m, ok := vol.(VolumeMounter); ok {
		o.Mounts = m.VolumeMounts
	}
	if sim != nil {
		o.Mounts = simulatedMounts(sim)
	}
	return o
}

// VolumeMounter is a volume backend that tells where its volumes are
// mounted, as policy.ObjectHost's VolumeMounts asks: every path, anywhere
// on the node (not only inside the working directories), so that a
// volume mounted at / is never taken for one mounted beneath a rule's
// path roots.
type VolumeMounter interface {
	// VolumeMounts lists every path where the volume is mounted.
	VolumeMounts(ctx context.Context, volumeID string) ([]string, error)
}

// simulatedMounts lists a simulated volume's mount folders and drive
// letter root.
func simulatedMounts(h *simulated.Host) func(context.Context, string) ([]string, error) {
	return func(_ context.Context, id string) ([]string, error) {
		for _, v := range h.ListVolumes() {
			if !strings.EqualFold(v.ID, id) {
				continue
			}
			out := append([]string(nil), v.MountPoints...)
			if v.DriveLetter != "" {
				out = append(out, v.DriveLetter+`:\`)
			}
			return out, nil
		}
		return nil, errdefs.Errorf(errdefs.ErrNotFound, "no volume %s", id)
	}
}

// VolumeMounts implements policy.ObjectHost.
func (o *HostObjects) VolumeMounts(ctx context.Context, id string) ([]string, error) {
	if o.Mounts == nil {
		return nil, errdefs.Errorf(errdefs.ErrUnimplemented, "this host cannot tell where a volume is mounted")
	}
	return o.Mounts(ctx, id)
}

// VolumeDisk implements policy.ObjectHost.
func (o *HostObjects) VolumeDisk(ctx context.Context, id string) (uint32, error) {
	return o.Volume.DiskNumber(ctx, id)
}

// DiskVolumes implements policy.ObjectHost.
func (o *HostObjects) DiskVolumes(ctx context.Context, d uint32) ([]string, error) {
	return o.Volume.ListVolumesOnDisk(ctx, d, 0)
}

// DiskFacts implements policy.ObjectHost.
func (o *HostObjects) DiskFacts(ctx context.Context, d uint32) (policy.DiskFacts, error) {
	locs, err := o.Disk.ListDiskLocations(ctx)
	if err != nil {
		return policy.DiskFacts{}, fmt.Errorf("disk locations: %w", err)
	}
	ids, err := o.Disk.ListDiskIDs(ctx)
	if err != nil {
		return policy.DiskFacts{}, fmt.Errorf("disk IDs: %w", err)
	}
	l, hasLoc := locs[d]
	id, hasIDs := ids[d]
	if !hasLoc && !hasIDs {
		return policy.DiskFacts{}, errdefs.Errorf(errdefs.ErrNotFound, "no disk %d", d)
	}
	f := policy.DiskFacts{Page83: id.Page83, Serial: id.SerialNumber}
	if hasLoc {
		f.Location = strings.Join([]string{l.Adapter, l.Bus, l.Target, l.LUNID}, ":")
	}
	return f, nil
}
