package driver

import (
	"context"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// mib is the granularity of volume sizes: partitions are 1 MiB aligned.
const mib = 1 << 20

// ControllerGetCapabilities implements csi.ControllerServer: create and
// delete, and expansion. Nothing else is advertised, so csi-sanity and
// Kubernetes' sidecars never call the rest (each answers Unimplemented).
func (d *Driver) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	rpc := func(t csi.ControllerServiceCapability_RPC_Type) *csi.ControllerServiceCapability {
		return &csi.ControllerServiceCapability{Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{Type: t}}}
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: []*csi.ControllerServiceCapability{
		rpc(csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME),
		rpc(csi.ControllerServiceCapability_RPC_EXPAND_VOLUME),
	}}, nil
}

// checkCapabilities returns why caps cannot be served, or "": a disk of
// one node, with a filesystem, for one node at a time.
func checkCapabilities(caps []*csi.VolumeCapability) string {
	if len(caps) == 0 {
		return "no volume capabilities"
	}
	for _, c := range caps {
		if c.GetMount() == nil {
			return "only filesystem (mount) access is supported; the proxy publishes a staged filesystem by a link"
		}
		switch c.GetAccessMode().GetMode() {
		case csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER:
		case csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY:
			return "read-only access is not supported: a link to the staged volume cannot be made read-only"
		case csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER, csi.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER:
			// The spec allows these only to a plugin advertising
			// SINGLE_NODE_MULTI_WRITER, which this one does not.
			return "access mode " + c.GetAccessMode().GetMode().String() + " needs the SINGLE_NODE_MULTI_WRITER capability, which this driver does not advertise"
		default:
			return "access mode " + c.GetAccessMode().GetMode().String() + " is not supported: a local disk is on one node"
		}
	}
	return ""
}

// size returns the size to allocate for r: the required bytes rounded up
// to a MiB (DefaultVolumeSize when none), within the limit.
func size(r *csi.CapacityRange) (int64, error) {
	req, lim := r.GetRequiredBytes(), r.GetLimitBytes()
	if req < 0 || lim < 0 {
		return 0, status.Error(codes.InvalidArgument, "negative capacity")
	}
	n := req
	if n == 0 {
		n = DefaultVolumeSize
		if lim > 0 && lim < n {
			n = lim
		}
	}
	n = (n + mib - 1) / mib * mib
	if lim > 0 && n > lim {
		return 0, status.Errorf(codes.OutOfRange, "%d bytes rounded up to whole MiB (%d) exceed the limit of %d bytes", req, n, lim)
	}
	return n, nil
}

// CreateVolume implements csi.ControllerServer: a new disk on this node
// (an existing one if the name is taken with a fitting size).
func (d *Driver) CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	if req.GetName() == "" {
		return nil, status.Error(codes.InvalidArgument, "no volume name")
	}
	if why := checkCapabilities(req.GetVolumeCapabilities()); why != "" {
		return nil, status.Error(codes.InvalidArgument, why)
	}
	if req.GetVolumeContentSource() != nil {
		return nil, status.Error(codes.InvalidArgument, "volume content sources (snapshots, clones) are not supported")
	}
	if err := d.checkTopology(req.GetAccessibilityRequirements()); err != nil {
		return nil, err
	}
	n, err := size(req.GetCapacityRange())
	if err != nil {
		return nil, err
	}
	id := volumeID(req.GetName())
	defer d.lock(id)()
	disk, err := d.cfg.Allocator.Create(ctx, id, n)
	if err != nil {
		return nil, toStatus(err, "create volume %s", req.GetName())
	}
	if want, lim := req.GetCapacityRange().GetRequiredBytes(), req.GetCapacityRange().GetLimitBytes(); disk.Size < want || lim > 0 && disk.Size > lim {
		return nil, status.Errorf(codes.AlreadyExists, "volume %s exists with %d bytes, outside the requested %d to %d", req.GetName(), disk.Size, want, lim)
	}
	d.log.V(2).Info("volume created", "name", req.GetName(), "volume", id, "bytes", disk.Size)
	return &csi.CreateVolumeResponse{Volume: &csi.Volume{
		VolumeId:           id,
		CapacityBytes:      disk.Size,
		AccessibleTopology: []*csi.Topology{d.topology()},
	}}, nil
}

// topology is this node's topology segment.
func (d *Driver) topology() *csi.Topology {
	return &csi.Topology{Segments: map[string]string{TopologyKey: d.cfg.NodeID}}
}

// checkTopology refuses requirements this node is not among: its disks
// can be made here only.
func (d *Driver) checkTopology(r *csi.TopologyRequirement) error {
	if len(r.GetRequisite()) == 0 {
		return nil
	}
	for _, t := range r.GetRequisite() {
		if v, ok := t.GetSegments()[TopologyKey]; ok && v == d.cfg.NodeID {
			return nil
		}
	}
	return status.Errorf(codes.ResourceExhausted, "the requisite topology does not include node %s, the only node this controller can make disks on", d.cfg.NodeID)
}

// DeleteVolume implements csi.ControllerServer. A volume that does not
// exist (or an ID of another form) is deleted already.
func (d *Driver) DeleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	id := req.GetVolumeId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "no volume ID")
	}
	if !validID.MatchString(id) {
		return &csi.DeleteVolumeResponse{}, nil
	}
	defer d.lock(id)()
	if err := d.cfg.Allocator.Delete(ctx, id); err != nil {
		return nil, toStatus(err, "delete volume %s", id)
	}
	d.log.V(2).Info("volume deleted", "volume", id)
	return &csi.DeleteVolumeResponse{}, nil
}

// disk returns the disk of volume id, NotFound for an unknown or
// malformed ID.
func (d *Driver) disk(ctx context.Context, id string) (Disk, error) {
	if !validID.MatchString(id) {
		return Disk{}, status.Errorf(codes.NotFound, "no volume %q", id)
	}
	disk, err := d.cfg.Allocator.Get(ctx, id)
	return disk, toStatus(err, "volume %s", id)
}

// ValidateVolumeCapabilities implements csi.ControllerServer.
func (d *Driver) ValidateVolumeCapabilities(ctx context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	switch {
	case req.GetVolumeId() == "":
		return nil, status.Error(codes.InvalidArgument, "no volume ID")
	case len(req.GetVolumeCapabilities()) == 0:
		return nil, status.Error(codes.InvalidArgument, "no volume capabilities")
	}
	if _, err := d.disk(ctx, req.GetVolumeId()); err != nil {
		return nil, err
	}
	if why := checkCapabilities(req.GetVolumeCapabilities()); why != "" {
		return &csi.ValidateVolumeCapabilitiesResponse{Message: why}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext:      req.GetVolumeContext(),
		VolumeCapabilities: req.GetVolumeCapabilities(),
		Parameters:         req.GetParameters(),
		MutableParameters:  req.GetMutableParameters(),
	}}, nil
}

// ControllerExpandVolume implements csi.ControllerServer: the disk grows
// (the loop file and its device's capacity); the node then grows the
// partition and filesystem (NodeExpandVolume), so node expansion is
// required.
func (d *Driver) ControllerExpandVolume(ctx context.Context, req *csi.ControllerExpandVolumeRequest) (*csi.ControllerExpandVolumeResponse, error) {
	id := req.GetVolumeId()
	switch {
	case id == "":
		return nil, status.Error(codes.InvalidArgument, "no volume ID")
	case req.GetCapacityRange() == nil:
		return nil, status.Error(codes.InvalidArgument, "no capacity range")
	}
	if err := checkCapability(req.GetVolumeCapability(), false); err != nil {
		return nil, err
	}
	n, err := size(req.GetCapacityRange())
	if err != nil {
		return nil, err
	}
	defer d.lock(id)()
	if _, err := d.disk(ctx, id); err != nil {
		return nil, err
	}
	disk, err := d.cfg.Allocator.Expand(ctx, id, n)
	if err != nil {
		return nil, toStatus(err, "expand volume %s", id)
	}
	d.log.V(2).Info("volume expanded", "volume", id, "bytes", disk.Size)
	return &csi.ControllerExpandVolumeResponse{CapacityBytes: disk.Size, NodeExpansionRequired: true}, nil
}
