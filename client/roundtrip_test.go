package client_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
)

// TestRoundTripNewest: every model method of every group through the
// newest versions (disk v1, volume and filesystem v2alpha1, smb v1, iscsi
// v1alpha2, system v1alpha1).
func TestRoundTripNewest(t *testing.T) {
	d := startDaemon(t, socketDir(t), "all")
	c, err := client.Dial(context.Background(), client.Options{SocketDir: d.dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	runFlows(t, c, c.Versions())
}

// TestRoundTripV1: the same through the v1 versions, where volume and
// filesystem lack one method each.
func TestRoundTripV1(t *testing.T) {
	d := startDaemon(t, socketDir(t), "all")
	c, err := client.Dial(context.Background(), client.Options{SocketDir: d.dir, Versions: map[string][]string{
		"volume": {"v1"}, "filesystem": {"v1"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v := c.Versions(); v["volume"] != "v1" || v["filesystem"] != "v1" || v["disk"] != "v1" {
		t.Fatalf("negotiated %v", v)
	}
	runFlows(t, c, c.Versions())
}

// has tells whether the group's negotiated version has a method: versions
// lists, per group, the versions that lack it.
func has(versions map[string]string, group string, lacking ...string) bool {
	for _, v := range lacking {
		if versions[group] == v {
			return false
		}
	}
	return true
}

// runFlows drives every model method of every group against the simulated
// host from testdata/sim.json, checking results and that a method the
// negotiated version lacks fails with errdefs.ErrUnimplemented. The host
// must be fresh.
func runFlows(t *testing.T, n groups.Node, versions map[string]string) {
	t.Helper()
	t.Run("disk", func(t *testing.T) { diskFlow(t, n.Disk(), versions) })
	t.Run("volume", func(t *testing.T) { volumeFlow(t, n, versions) })
	t.Run("filesystem", func(t *testing.T) { filesystemFlow(t, n.Filesystem(), versions) })
	t.Run("smb", func(t *testing.T) { smbFlow(t, n.SMB(), n.Filesystem()) })
	t.Run("iscsi", func(t *testing.T) { iscsiFlow(t, n.ISCSI(), versions) })
	t.Run("system", func(t *testing.T) { systemFlow(t, n.System()) })
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// wantKind checks that err wraps kind and mentions substr.
func wantKind(t *testing.T, what string, err, kind error, substr string) {
	t.Helper()
	if !errors.Is(err, kind) || !strings.Contains(err.Error(), substr) {
		t.Errorf("%s: %v, want %v containing %q", what, err, kind, substr)
	}
}

// unimplemented checks the error of a method the negotiated version lacks.
func unimplemented(t *testing.T, group, method string, versions map[string]string, err error) {
	t.Helper()
	wantKind(t, method, err, errdefs.ErrUnimplemented, group+" "+method+": the "+group+" "+versions[group]+" API the client uses has no such call")
}

func diskFlow(t *testing.T, d disk.Interface, versions map[string]string) {
	ctx := context.Background()
	locs, err := d.ListDiskLocations(ctx, nil)
	must(t, "ListDiskLocations", err)
	// sim.json's locations, "adapter:bus:target:lun", reported with Bus ""
	// as Windows does for SCSI disks; disk 0 is the simulated host's system disk.
	wantLocs := map[uint32]disk.DiskLocation{
		0:           {Adapter: "0", Target: "0", LUNID: "0"},
		dataDisk:    {Adapter: "1", Target: "0", LUNID: "1"},
		offlineDisk: {Adapter: "1", Target: "0", LUNID: "2"},
	}
	if len(locs.DiskLocations) != len(wantLocs) {
		t.Errorf("ListDiskLocations: %d disks, want %d", len(locs.DiskLocations), len(wantLocs))
	}
	for n, want := range wantLocs {
		if l := locs.DiskLocations[n]; l == nil || *l != want {
			t.Errorf("ListDiskLocations: disk %d at %+v, want %+v", n, l, want)
		}
	}
	_, err = d.Rescan(ctx, &disk.RescanRequest{})
	must(t, "Rescan", err)

	ids, err := d.ListDiskIDs(ctx, nil)
	if !has(versions, "disk", "v1alpha1") {
		unimplemented(t, "disk", "ListDiskIDs", versions, err)
	} else {
		must(t, "ListDiskIDs", err)
		// v1beta1 carries these in a map keyed by "page83" and
		// "serialNumber", under disk IDs written as strings.
		if id := ids.DiskIDs[dataDisk]; id == nil || id.Page83 != dataPage83 || id.SerialNumber != dataSerial {
			t.Errorf("ListDiskIDs: disk %d has %+v", dataDisk, id)
		}
	}

	stats, err := d.GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: dataDisk})
	if !has(versions, "disk", "v1alpha1") {
		unimplemented(t, "disk", "GetDiskStats", versions, err)
	} else {
		must(t, "GetDiskStats", err)
		if stats.TotalBytes != 1<<30 {
			t.Errorf("GetDiskStats: %d bytes, want 1 GiB", stats.TotalBytes)
		}
		_, err = d.GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: missingDisk})
		wantKind(t, "GetDiskStats(missing disk)", err, errdefs.ErrNotFound, "99")
	}

	state, err := d.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: offlineDisk})
	if !has(versions, "disk", "v1alpha1", "v1beta1") {
		unimplemented(t, "disk", "GetDiskState", versions, err)
		_, err = d.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: offlineDisk, IsOnline: true})
		unimplemented(t, "disk", "SetDiskState", versions, err)
	} else {
		must(t, "GetDiskState", err)
		if state.IsOnline {
			t.Error("GetDiskState: the offline disk is online")
		}
		_, err = d.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: offlineDisk, IsOnline: true})
		must(t, "SetDiskState", err)
		state, err = d.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: offlineDisk})
		must(t, "GetDiskState", err)
		if !state.IsOnline {
			t.Error("GetDiskState: still offline after SetDiskState")
		}
	}

	_, err = d.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: dataDisk})
	must(t, "PartitionDisk", err)
	_, err = d.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: missingDisk})
	wantKind(t, "PartitionDisk(missing disk)", err, errdefs.ErrNotFound, "99")
}

func volumeFlow(t *testing.T, n groups.Node, versions map[string]string) {
	ctx := context.Background()
	v := n.Volume()
	// The data disk was partitioned by the disk flow.
	list, err := v.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: dataDisk})
	must(t, "ListVolumesOnDisk", err)
	if len(list.VolumeIDs) != 1 {
		t.Fatalf("ListVolumesOnDisk: %v, want one volume", list.VolumeIDs)
	}
	id := list.VolumeIDs[0]
	_, err = v.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: dataDisk, PartitionNumber: 2})
	if !has(versions, "volume", "v1alpha1", "v1beta1", "v1beta2") {
		// The old versions cannot select a partition: refused, not widened.
		wantKind(t, "ListVolumesOnDisk(partition 2)", err, errdefs.ErrInvalidArgument, "PartitionNumber is 2")
	} else if err == nil {
		t.Error("ListVolumesOnDisk(partition 2): the data disk has one partition, yet it succeeded")
	}

	f, err := v.IsVolumeFormatted(ctx, &volume.IsVolumeFormattedRequest{VolumeID: id})
	must(t, "IsVolumeFormatted", err)
	if f.Formatted {
		t.Error("IsVolumeFormatted: a fresh volume is formatted")
	}
	_, err = v.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: id})
	must(t, "FormatVolume", err)
	if f, err = v.IsVolumeFormatted(ctx, &volume.IsVolumeFormattedRequest{VolumeID: id}); err != nil || !f.Formatted {
		t.Errorf("IsVolumeFormatted after FormatVolume: %v, %v", f, err)
	}

	target := kubelet + `\plugins\neg\globalmount`
	_, err = n.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: kubelet + `\plugins\neg`})
	must(t, "Mkdir", err)
	_, err = v.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: target})
	must(t, "MountVolume", err)

	got, err := v.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: target})
	if !has(versions, "volume", "v1alpha1") {
		unimplemented(t, "volume", "GetVolumeIDFromTargetPath", versions, err)
	} else {
		must(t, "GetVolumeIDFromTargetPath", err)
		if !strings.EqualFold(got.VolumeID, id) {
			t.Errorf("GetVolumeIDFromTargetPath: %s, want %s", got.VolumeID, id)
		}
		_, err = v.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: kubelet + `\plugins\neg`})
		if !errors.Is(err, errdefs.ErrNotFound) {
			t.Errorf("GetVolumeIDFromTargetPath(not a mount): %v, want NotFound", err)
		}
	}
	closest, err := v.GetClosestVolumeIDFromTargetPath(ctx, &volume.GetClosestVolumeIDFromTargetPathRequest{TargetPath: target})
	if versions["volume"] != "v2alpha1" {
		unimplemented(t, "volume", "GetClosestVolumeIDFromTargetPath", versions, err)
	} else {
		must(t, "GetClosestVolumeIDFromTargetPath", err)
		if !strings.EqualFold(closest.VolumeID, id) {
			t.Errorf("GetClosestVolumeIDFromTargetPath: %s, want %s", closest.VolumeID, id)
		}
	}

	num, err := v.GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: id})
	stats, err2 := v.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id})
	if !has(versions, "volume", "v1alpha1") {
		unimplemented(t, "volume", "GetDiskNumberFromVolumeID", versions, err)
		unimplemented(t, "volume", "GetVolumeStats", versions, err2)
	} else {
		must(t, "GetDiskNumberFromVolumeID", err)
		if num.DiskNumber != dataDisk {
			t.Errorf("GetDiskNumberFromVolumeID: disk %d, want %d", num.DiskNumber, dataDisk)
		}
		must(t, "GetVolumeStats", err2)
		// The simulated host's partition spans 1 MiB to the last MiB
		// boundary before the backup GPT of the 1 GiB disk, and a fresh
		// NTFS volume with nothing on it uses its metadata only. Exact
		// values: a conversion that swapped or copied the two fields
		// would not pass.
		want := volume.GetVolumeStatsResponse{TotalBytes: 1<<30 - 2<<20, UsedBytes: simulated.NTFSOverhead(1<<30 - 2<<20)}
		if *stats != want {
			t.Errorf("GetVolumeStats: %+v, want %+v", *stats, want)
		}
	}
	_, err = v.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: id, SizeBytes: 0})
	must(t, "ResizeVolume", err)
	_, err = v.WriteVolumeCache(ctx, &volume.WriteVolumeCacheRequest{VolumeID: id})
	if !has(versions, "volume", "v1alpha1", "v1beta1") {
		unimplemented(t, "volume", "WriteVolumeCache", versions, err)
	} else {
		must(t, "WriteVolumeCache", err)
	}
	_, err = v.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: id, TargetPath: target})
	must(t, "UnmountVolume", err)
	missing := `\\?\Volume{00000000-0000-4000-8000-0000000000e2}\`
	_, err = v.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: missing})
	wantKind(t, "FormatVolume(missing volume)", err, errdefs.ErrNotFound, "")
}

func filesystemFlow(t *testing.T, f filesystem.Interface, versions map[string]string) {
	ctx := context.Background()
	dir := kubelet + `\pods\neg\data`
	_, err := f.Mkdir(ctx, &filesystem.MkdirRequest{Path: dir})
	must(t, "Mkdir", err)
	ex, err := f.PathExists(ctx, &filesystem.PathExistsRequest{Path: dir})
	must(t, "PathExists", err)
	if !ex.Exists {
		t.Error("PathExists: a made directory does not exist")
	}
	link := kubelet + `\pods\neg\link`
	_, err = f.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{SourcePath: dir, TargetPath: link})
	must(t, "CreateSymlink", err)
	is, err := f.IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: link})
	must(t, "IsSymlink", err)
	if !is.IsSymlink {
		t.Error("IsSymlink: a made link is not one")
	}
	_, err = f.Mkdir(ctx, &filesystem.MkdirRequest{Path: dir + `\sub`})
	must(t, "Mkdir sub", err)
	_, err = f.RmdirContents(ctx, &filesystem.RmdirContentsRequest{Path: dir})
	if versions["filesystem"] != "v2alpha1" {
		unimplemented(t, "filesystem", "RmdirContents", versions, err)
	} else {
		must(t, "RmdirContents", err)
		if ex, err := f.PathExists(ctx, &filesystem.PathExistsRequest{Path: dir + `\sub`}); err != nil || ex.Exists {
			t.Errorf("PathExists after RmdirContents: %+v, %v", ex, err)
		}
	}
	_, err = f.Rmdir(ctx, &filesystem.RmdirRequest{Path: link})
	must(t, "Rmdir link", err)
	_, err = f.Rmdir(ctx, &filesystem.RmdirRequest{Path: dir, Force: true})
	must(t, "Rmdir", err)
	_, err = f.PathExists(ctx, &filesystem.PathExistsRequest{Path: `C:\Windows\System32`})
	wantKind(t, "PathExists(outside the working dirs)", err, errdefs.ErrPermissionDenied, "")
}

func smbFlow(t *testing.T, s smb.Interface, f filesystem.Interface) {
	ctx := context.Background()
	local := kubelet + `\pods\neg\smb`
	_, err := f.Mkdir(ctx, &filesystem.MkdirRequest{Path: kubelet + `\pods\neg`})
	must(t, "Mkdir", err)
	_, err = s.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{RemotePath: smbShare + `\pvc-1`, LocalPath: local, Username: smbUser, Password: smbPassword})
	must(t, "NewSmbGlobalMapping", err)
	if is, err := f.IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: local}); err != nil || !is.IsSymlink {
		t.Errorf("IsSymlink(the mapping's local path): %+v, %v", is, err)
	}
	_, err = s.RemoveSmbGlobalMapping(ctx, &smb.RemoveSmbGlobalMappingRequest{RemotePath: smbShare})
	must(t, "RemoveSmbGlobalMapping", err)
	_, err = s.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{RemotePath: smbShare, Username: smbUser, Password: "Not-The-Passw0rd"})
	wantKind(t, "NewSmbGlobalMapping(wrong password)", err, errdefs.ErrPermissionDenied, "")
	if err != nil && strings.Contains(err.Error(), "Not-The-Passw0rd") {
		t.Errorf("the error shows the password: %v", err)
	}
}

func iscsiFlow(t *testing.T, s iscsi.Interface, versions map[string]string) {
	ctx := context.Background()
	p := &iscsi.TargetPortal{TargetAddress: portal, TargetPort: 3260}
	_, err := s.AddTargetPortal(ctx, &iscsi.AddTargetPortalRequest{TargetPortal: p})
	must(t, "AddTargetPortal", err)
	list, err := s.ListTargetPortals(ctx, nil)
	must(t, "ListTargetPortals", err)
	if len(list.TargetPortals) != 1 || list.TargetPortals[0].TargetAddress != portal || list.TargetPortals[0].TargetPort != 3260 {
		t.Errorf("ListTargetPortals: %+v", list.TargetPortals)
	}
	disc, err := s.DiscoverTargetPortal(ctx, &iscsi.DiscoverTargetPortalRequest{TargetPortal: p})
	must(t, "DiscoverTargetPortal", err)
	if len(disc.IQNs) != 1 || disc.IQNs[0] != iqnOpen {
		t.Errorf("DiscoverTargetPortal: %v", disc.IQNs)
	}
	_, err = s.ConnectTarget(ctx, &iscsi.ConnectTargetRequest{TargetPortal: p, IQN: iqnOpen, AuthType: iscsi.AuthNone})
	must(t, "ConnectTarget", err)
	disks, err := s.GetTargetDisks(ctx, &iscsi.GetTargetDisksRequest{TargetPortal: p, IQN: iqnOpen})
	must(t, "GetTargetDisks", err)
	// The LUN is the next disk after the system disk and sim.json's two.
	if !reflect.DeepEqual(disks.DiskIDs, []string{"3"}) {
		t.Errorf("GetTargetDisks: %q, want [\"3\"]", disks.DiskIDs)
	}
	_, err = s.DisconnectTarget(ctx, &iscsi.DisconnectTargetRequest{TargetPortal: p, IQN: iqnOpen})
	must(t, "DisconnectTarget", err)
	_, err = s.SetMutualChapSecret(ctx, &iscsi.SetMutualChapSecretRequest{MutualChapSecret: "mutual-chap-01"})
	if versions["iscsi"] == "v1alpha1" {
		unimplemented(t, "iscsi", "SetMutualChapSecret", versions, err)
	} else {
		must(t, "SetMutualChapSecret", err)
	}
	_, err = s.RemoveTargetPortal(ctx, &iscsi.RemoveTargetPortalRequest{TargetPortal: p})
	must(t, "RemoveTargetPortal", err)
	_, err = s.ConnectTarget(ctx, &iscsi.ConnectTargetRequest{TargetPortal: p, IQN: "iqn.2003-01.org.example:missing"})
	if err == nil {
		t.Error("ConnectTarget to a target that does not exist succeeded")
	}
}

func systemFlow(t *testing.T, s system.Interface) {
	ctx := context.Background()
	bios, err := s.GetBIOSSerialNumber(ctx, nil)
	must(t, "GetBIOSSerialNumber", err)
	if bios.SerialNumber != biosSerial {
		t.Errorf("GetBIOSSerialNumber: %q", bios.SerialNumber)
	}
	svc, err := s.GetService(ctx, &system.GetServiceRequest{Name: "W32Time"})
	must(t, "GetService", err)
	if want := (system.GetServiceResponse{DisplayName: "Windows Time", StartType: system.StartManual, Status: system.StatusRunning}); *svc != want {
		t.Errorf("GetService(W32Time): %+v, want %+v", *svc, want)
	}
	_, err = s.StopService(ctx, &system.StopServiceRequest{Name: "W32Time", Force: true})
	must(t, "StopService", err)
	if svc, err = s.GetService(ctx, &system.GetServiceRequest{Name: "W32Time"}); err != nil || svc.Status != system.StatusStopped {
		t.Errorf("GetService after StopService: %+v, %v", svc, err)
	}
	_, err = s.StartService(ctx, &system.StartServiceRequest{Name: "W32Time"})
	must(t, "StartService", err)
	_, err = s.GetService(ctx, &system.GetServiceRequest{Name: "Ghost"})
	wantKind(t, "GetService(a service not installed)", err, errdefs.ErrNotFound, "Ghost")
	_, err = s.StopService(ctx, &system.StopServiceRequest{Name: "MSiSCSI"})
	wantKind(t, "StopService(a service not on the allow-list)", err, errdefs.ErrPermissionDenied, "MSiSCSI")
}
