package inprocess

import (
	"errors"
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

const (
	kubelet = `C:\var\lib\kubelet`
	page83  = "60022480abcdef0123456789abcdef01"
)

// simNode is a Node on the simulated host with one extra data disk.
func simNode(t *testing.T, o Options) *Node {
	t.Helper()
	o.Host = HostSimulated
	o.SimDisks = append(o.SimDisks, "size=4GiB,location=1:0:0:5,page83="+page83)
	n, err := New(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	return n
}

// TestEveryGroupReachable: each of the six groups answers on the
// simulated host, with the daemon's defaults for the working directory.
func TestEveryGroupReachable(t *testing.T) {
	n := simNode(t, Options{})
	ctx := t.Context()
	ids, err := n.Disk().ListDiskIDs(ctx, &disk.ListDiskIDsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, id := range ids.DiskIDs {
		found = found || id.Page83 == page83
	}
	if !found {
		t.Errorf("the --sim-disk is not among %v", ids.DiskIDs)
	}
	vols, err := n.Volume().ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: 0})
	if err != nil || len(vols.VolumeIDs) == 0 {
		t.Errorf("volumes of the system disk: %v, %v", vols, err)
	}
	exists, err := n.Filesystem().PathExists(ctx, &filesystem.PathExistsRequest{Path: kubelet})
	if err != nil || !exists.Exists {
		t.Errorf("the default kubelet directory: %v, %v", exists, err)
	}
	if _, err := n.SMB().RemoveSmbGlobalMapping(ctx, &smb.RemoveSmbGlobalMappingRequest{}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("RemoveSmbGlobalMapping without a path: %v", err)
	}
	if _, err := n.ISCSI().ListTargetPortals(ctx, &iscsi.ListTargetPortalsRequest{}); err != nil {
		t.Errorf("ListTargetPortals: %v", err)
	}
	if bios, err := n.System().GetBIOSSerialNumber(ctx, &system.GetBIOSSerialNumberRequest{}); err != nil || bios.SerialNumber == "" {
		t.Errorf("GetBIOSSerialNumber: %v, %v", bios, err)
	}
	// A service not allowed is refused as by the daemon without
	// --allowed-service.
	if _, err := n.System().StartService(ctx, &system.StartServiceRequest{Name: "dhcp"}); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("StartService without AllowedServices: %v", err)
	}
	if n.Simulated() == nil || !slices.Contains(n.Simulated().WorkingDirs(), kubelet) {
		t.Errorf("simulated host %v", n.Simulated())
	}
	// After Close every call fails, as a failed precondition (the
	// client's answer after its Close): retrying never succeeds.
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = n.Disk().ListDiskIDs(ctx, nil)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) || errgrpc.Code(err) != codes.FailedPrecondition ||
		err.Error() != "csi-node-proxy inprocess: the node is closed: failed precondition" {
		t.Errorf("a call after Close: %v", err)
	}
	if err := n.Reload(); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("Reload after Close: %v", err)
	}
	if err := n.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
