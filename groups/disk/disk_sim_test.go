package disk_test

import (
	"context"
	"errors"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/simtest"
)

var ctx = context.Background()

func simService(t *testing.T) (*disk.Service, *simulated.Host) {
	t.Helper()
	h := simtest.Node(t, simulated.DefaultConfig(nil))
	return disk.NewService(h.Disk()), h
}

func TestSimListDisks(t *testing.T) {
	s, _ := simService(t)
	locs, err := s.ListDiskLocations(ctx, &disk.ListDiskLocationsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if l := locs.DiskLocations[2]; l == nil || *l != (disk.DiskLocation{Adapter: "1", Bus: "", Target: "0", LUNID: "1"}) {
		t.Errorf("location of disk 2 = %+v", l)
	}
	// Each entry is its own value, not a shared loop variable.
	if locs.DiskLocations[1] == locs.DiskLocations[2] || *locs.DiskLocations[1] == *locs.DiskLocations[2] {
		t.Error("disk locations alias each other")
	}
	ids, err := s.ListDiskIDs(ctx, &disk.ListDiskIDsRequest{})
	if err != nil || len(ids.DiskIDs) != 3 || ids.DiskIDs[1].SerialNumber != "SIM-DATA-0001" {
		t.Errorf("ListDiskIDs = %+v, %v", ids, err)
	}
}

func TestSimPartitionAndState(t *testing.T) {
	s, h := simService(t)
	_, err := s.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: 9})
	if !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("PartitionDisk(9) = %v; want not found", err)
	}
	if _, err := s.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: 1, IsOnline: false}); err != nil {
		t.Fatal(err)
	}
	if st, err := s.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: 1}); err != nil || st.IsOnline {
		t.Errorf("GetDiskState = %+v, %v", st, err)
	}
	// gcp-pd's, aws-ebs's and vsphere's order: partition, then online. A
	// RAW disk is brought online to be initialised.
	if _, err = s.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: 1}); err != nil {
		t.Errorf("PartitionDisk(offline, RAW) = %v", err)
	}
	if st, err := s.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: 1}); err != nil || !st.IsOnline {
		t.Errorf("after PartitionDisk(offline, RAW): GetDiskState = %+v, %v; want online", st, err)
	}
	// Re-staging after NodeUnstage took the disk offline: partitioned, so
	// nothing to do, and the disk stays offline.
	if _, err := s.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: 1, IsOnline: false}); err != nil {
		t.Fatal(err)
	}
	if _, err = s.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: 1}); err != nil {
		t.Errorf("PartitionDisk(offline, partitioned) = %v", err)
	}
	if st, err := s.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: 1}); err != nil || st.IsOnline {
		t.Errorf("after PartitionDisk(offline, partitioned): GetDiskState = %+v, %v; want offline", st, err)
	}
	// The other drivers' order: online, then partition, twice (kubelet
	// retries).
	for range 2 {
		if _, err := s.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: 1, IsOnline: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if v := h.ListVolumes(); len(v) != 3 {
		t.Errorf("%d volumes; want EFI, C: and one on disk 1", len(v))
	}
	_, err = s.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: 0, IsOnline: false})
	if !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("taking the system disk offline = %v", err)
	}
}

func TestSimDiskStatsAfterGrowth(t *testing.T) {
	s, h := simService(t)
	if err := h.ResizeDisk(1, 5<<30); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Rescan(ctx, &disk.RescanRequest{}); err != nil {
		t.Fatal(err)
	}
	st, err := s.GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: 1})
	if err != nil || st.TotalBytes != 5<<30 {
		t.Errorf("GetDiskStats = %+v, %v", st, err)
	}
	if h.RescanCount() != 1 {
		t.Errorf("RescanCount = %d", h.RescanCount())
	}
}
