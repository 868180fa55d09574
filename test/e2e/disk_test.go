package e2e

import (
	"reflect"
	"testing"

	"google.golang.org/grpc/codes"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
)

// TestDiskV1 calls every method of disk v1.
func TestDiskV1(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	c := e.disk

	t.Run("ListDiskLocations", func(t *testing.T) {
		r, err := c.ListDiskLocations(ctx, &diskv1.ListDiskLocationsRequest{})
		ok(t, "ListDiskLocations", err)
		// Adapter, Bus, Target, LUNID: Bus is "" for SCSI disks, as
		// upstream's MSFT_Disk.Location parse and the Windows backend give.
		want := map[uint32][4]string{
			0:           {"0", "", "0", "0"},
			dataDisk1:   {"1", "", "0", "1"},
			dataDisk2:   {"1", "", "0", "2"},
			offlineDisk: {"1", "", "0", "3"},
		}
		got := r.GetDiskLocations()
		if len(got) != len(want) {
			t.Errorf("ListDiskLocations = %v, want disks %v", got, want)
		}
		for n, w := range want {
			l := got[n]
			if g := [4]string{l.GetAdapter(), l.GetBus(), l.GetTarget(), l.GetLUNID()}; g != w {
				t.Errorf("location of disk %d = %v, want %v", n, g, w)
			}
		}
	})

	t.Run("ListDiskIDs", func(t *testing.T) {
		r, err := c.ListDiskIDs(ctx, &diskv1.ListDiskIDsRequest{})
		ok(t, "ListDiskIDs", err)
		want := map[uint32][2]string{
			0:           {"60022480000000000000000000000000", "SIM-SYSTEM-0000"},
			dataDisk1:   {"60022480000000000000000000000e01", "E2E-DATA-0001"},
			dataDisk2:   {"60022480000000000000000000000e02", "E2E-DATA-0002"},
			offlineDisk: {"60022480000000000000000000000e03", "E2E-OFFLINE-0003"},
		}
		got := r.GetDiskIDs()
		if len(got) != len(want) {
			t.Errorf("ListDiskIDs = %v, want disks %v", got, want)
		}
		for n, w := range want {
			if g := [2]string{got[n].GetPage83(), got[n].GetSerialNumber()}; g != w {
				t.Errorf("IDs of disk %d = %q, want %q", n, g, w)
			}
		}
	})

	t.Run("GetDiskStats", func(t *testing.T) {
		for n, size := range map[uint32]int64{0: 128 << 30, dataDisk1: 1 << 30, offlineDisk: 512 << 20} {
			r, err := c.GetDiskStats(ctx, &diskv1.GetDiskStatsRequest{DiskNumber: n})
			ok(t, "GetDiskStats", err)
			if r.GetTotalBytes() != size {
				t.Errorf("GetDiskStats(%d) = %d bytes, want %d", n, r.GetTotalBytes(), size)
			}
		}
		_, err := c.GetDiskStats(ctx, &diskv1.GetDiskStatsRequest{DiskNumber: missingDisk})
		wantErr(t, "GetDiskStats(missing disk)", err, codes.NotFound, "disk 99 does not exist")
	})

	state := func(t *testing.T, n uint32) bool {
		t.Helper()
		r, err := c.GetDiskState(ctx, &diskv1.GetDiskStateRequest{DiskNumber: n})
		ok(t, "GetDiskState", err)
		return r.GetIsOnline()
	}
	setState := func(n uint32, online bool) error {
		_, err := c.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: n, IsOnline: online})
		return err
	}

	t.Run("GetDiskState", func(t *testing.T) {
		for n, want := range map[uint32]bool{0: true, dataDisk1: true, offlineDisk: false} {
			if got := state(t, n); got != want {
				t.Errorf("GetDiskState(%d) = online %v, want %v", n, got, want)
			}
		}
		_, err := c.GetDiskState(ctx, &diskv1.GetDiskStateRequest{DiskNumber: missingDisk})
		wantErr(t, "GetDiskState(missing disk)", err, codes.NotFound, "disk 99 does not exist")
	})

	t.Run("SetDiskState", func(t *testing.T) {
		twice(t, "SetDiskState(offline)", func() error { return setState(dataDisk2, false) })
		if state(t, dataDisk2) {
			t.Errorf("disk %d is online after SetDiskState(offline)", dataDisk2)
		}
		twice(t, "SetDiskState(online)", func() error { return setState(dataDisk2, true) })
		if !state(t, dataDisk2) {
			t.Errorf("disk %d is offline after SetDiskState(online)", dataDisk2)
		}
		wantErr(t, "SetDiskState(system disk offline)", setState(0, false), codes.FailedPrecondition, "is the system disk and cannot be taken offline")
		if !state(t, 0) {
			t.Error("the system disk went offline")
		}
		wantErr(t, "SetDiskState(missing disk)", setState(missingDisk, true), codes.NotFound, "disk 99 does not exist")
	})

	t.Run("PartitionDisk", func(t *testing.T) {
		partition := func(n uint32) error {
			_, err := c.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: n})
			return err
		}
		twice(t, "PartitionDisk", func() error { return partition(dataDisk1) })
		var found bool
		for _, d := range e.host.ListDisks() {
			if d.Number != dataDisk1 {
				continue
			}
			found = true
			// GPT with one data partition from 1 MiB to the last MiB
			// boundary before the backup GPT.
			if d.PartitionStyle != "GPT" || len(d.Partitions) != 1 || d.Partitions[0].Type != "Basic" ||
				d.Partitions[0].Offset != 1<<20 || d.Partitions[0].Size != 1<<30-2<<20 || !isVolumeID(d.Partitions[0].VolumeID) {
				t.Errorf("disk %d after PartitionDisk twice: %+v", dataDisk1, d)
			}
		}
		if !found {
			t.Fatalf("disk %d is gone", dataDisk1)
		}
		// The system disk has its C: data partition: nothing to do.
		ok(t, "PartitionDisk(system disk)", partition(0))
		if n := len(e.host.ListDisks()[0].Partitions); n != 3 {
			t.Errorf("the system disk has %d partitions after PartitionDisk, want 3", n)
		}

		// gcp-pd, aws-ebs and vsphere partition before SetDiskState(online)
		// and take the disk offline in NodeUnstage. An offline disk that
		// has a data partition: nothing to do, and it stays offline
		// (upstream reads the layout, which is readable offline).
		before := e.host.ListDisks()[offlineDisk]
		twice(t, "PartitionDisk(offline, partitioned disk)", func() error { return partition(offlineDisk) })
		if after := e.host.ListDisks()[offlineDisk]; !reflect.DeepEqual(after, before) {
			t.Errorf("PartitionDisk(offline, partitioned) changed disk %d:\n%+v\n%+v", offlineDisk, before, after)
		}
		wantErr(t, "PartitionDisk(missing disk)", partition(missingDisk), codes.NotFound, "disk 99 does not exist")
		// An offline RAW disk is brought online to be initialised.
		ok(t, "SetDiskState(offline)", setState(dataDisk2, false))
		twice(t, "PartitionDisk(offline, RAW disk)", func() error { return partition(dataDisk2) })
		if d := e.host.ListDisks()[dataDisk2]; !d.Online || d.PartitionStyle != "GPT" || len(d.Partitions) != 1 {
			t.Errorf("disk %d after PartitionDisk(offline, RAW): %+v; want online with one partition", dataDisk2, d)
		}
	})

	t.Run("Rescan", func(t *testing.T) {
		before := e.host.RescanCount()
		for range 2 {
			_, err := c.Rescan(ctx, &diskv1.RescanRequest{})
			ok(t, "Rescan", err)
		}
		if got := e.host.RescanCount() - before; got != 2 {
			t.Errorf("the host saw %d rescans, want 2", got)
		}
		// A disk hot-added after start shows up (the simulated host needs
		// no rescan, but a driver calls it first).
		n, err := e.host.AddDisk(simulatedDisk(2<<30, "1:0:0:9", "E2E-HOTPLUG"))
		ok(t, "AddDisk", err)
		_, err = c.Rescan(ctx, &diskv1.RescanRequest{})
		ok(t, "Rescan", err)
		ids, err := c.ListDiskIDs(ctx, &diskv1.ListDiskIDsRequest{})
		ok(t, "ListDiskIDs", err)
		if got := ids.GetDiskIDs()[n].GetSerialNumber(); got != "E2E-HOTPLUG" {
			t.Errorf("hot-added disk %d has serial %q, want E2E-HOTPLUG", n, got)
		}
		locs, err := c.ListDiskLocations(ctx, &diskv1.ListDiskLocationsRequest{})
		ok(t, "ListDiskLocations", err)
		if got := locs.GetDiskLocations()[n].GetLUNID(); got != "9" {
			t.Errorf("hot-added disk %d has LUN %q, want 9", n, got)
		}
	})
}
