package wirecompat

import (
	"strings"
	"testing"

	diskv1 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1"
	fsv1 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v1"
	fsv2alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v2alpha1"
	volumev1 "github.com/kubernetes-csi/csi-proxy/client/api/volume/v1"
	volumev2alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/volume/v2alpha1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ---------------------------------------------------------------- volume v1 + filesystem v1

// TestStageFlowV1 is a CSI block-volume node lifecycle as a Windows driver
// (azuredisk, gcp-pd, aws-ebs) performs it through csi-proxy v1: disk 1 is
// brought online, partitioned, formatted, staged, published, unpublished,
// unstaged and taken offline.
func TestStageFlowV1(t *testing.T) {
	const n = 1
	dc := diskv1.NewDiskClient(conn(t, "disk/v1"))
	vc := volumev1.NewVolumeClient(conn(t, "volume/v1"))
	fc := fsv1.NewFilesystemClient(conn(t, "filesystem/v1"))
	x := ctx(t)
	staging := kubelet + `\plugins\kubernetes.io\csi\disk.csi.example.com\0a1b2c\globalmount`
	podDir := kubelet + `\pods\5c8a0e0e-0000-4000-8000-000000000001\volumes\kubernetes.io~csi\pvc-1`
	publish := podDir + `\mount`

	// Offline, then online: SetDiskState and GetDiskState both ways.
	must[*diskv1.SetDiskStateResponse](t, "SetDiskState offline")(dc.SetDiskState(x, &diskv1.SetDiskStateRequest{DiskNumber: n, IsOnline: false}))
	if must[*diskv1.GetDiskStateResponse](t, "GetDiskState")(dc.GetDiskState(x, &diskv1.GetDiskStateRequest{DiskNumber: n})).IsOnline {
		t.Fatal("disk 1 still online after SetDiskState(offline)")
	}
	_, err := vc.ListVolumesOnDisk(x, &volumev1.ListVolumesOnDiskRequest{DiskNumber: n})
	wantCode(t, "ListVolumesOnDisk offline disk", err, codes.FailedPrecondition)
	must[*diskv1.SetDiskStateResponse](t, "SetDiskState online")(dc.SetDiskState(x, &diskv1.SetDiskStateRequest{DiskNumber: n, IsOnline: true}))
	if !must[*diskv1.GetDiskStateResponse](t, "GetDiskState")(dc.GetDiskState(x, &diskv1.GetDiskStateRequest{DiskNumber: n})).IsOnline {
		t.Fatal("disk 1 offline after SetDiskState(online)")
	}

	// A RAW disk has no volumes; PartitionDisk makes one; a second call
	// is a no-op.
	vols := must[*volumev1.ListVolumesOnDiskResponse](t, "ListVolumesOnDisk raw")(vc.ListVolumesOnDisk(x, &volumev1.ListVolumesOnDiskRequest{DiskNumber: n}))
	if len(vols.VolumeIds) != 0 {
		t.Fatalf("RAW disk %d has volumes %v", n, vols.VolumeIds)
	}
	must[*diskv1.PartitionDiskResponse](t, "PartitionDisk")(dc.PartitionDisk(x, &diskv1.PartitionDiskRequest{DiskNumber: n}))
	must[*diskv1.PartitionDiskResponse](t, "PartitionDisk again")(dc.PartitionDisk(x, &diskv1.PartitionDiskRequest{DiskNumber: n}))
	vols = must[*volumev1.ListVolumesOnDiskResponse](t, "ListVolumesOnDisk")(vc.ListVolumesOnDisk(x, &volumev1.ListVolumesOnDiskRequest{DiskNumber: n}))
	if len(vols.VolumeIds) != 1 || !volumeIDPattern.MatchString(vols.VolumeIds[0]) {
		t.Fatalf("ListVolumesOnDisk(%d) = %q, want one \\\\?\\Volume{guid}\\ ID", n, vols.VolumeIds)
	}
	vol := vols.VolumeIds[0]
	one := must[*volumev1.ListVolumesOnDiskResponse](t, "ListVolumesOnDisk partition 1")(vc.ListVolumesOnDisk(x, &volumev1.ListVolumesOnDiskRequest{DiskNumber: n, PartitionNumber: 1}))
	if len(one.VolumeIds) != 1 || one.VolumeIds[0] != vol {
		t.Errorf("ListVolumesOnDisk(%d, partition 1) = %q, want [%s]", n, one.VolumeIds, vol)
	}
	_, err = vc.ListVolumesOnDisk(x, &volumev1.ListVolumesOnDiskRequest{DiskNumber: n, PartitionNumber: 7})
	wantCode(t, "ListVolumesOnDisk missing partition", err, codes.NotFound)
	_, err = vc.ListVolumesOnDisk(x, &volumev1.ListVolumesOnDiskRequest{DiskNumber: noDisk})
	wantCode(t, "ListVolumesOnDisk missing disk", err, codes.NotFound)

	// Format.
	if must[*volumev1.IsVolumeFormattedResponse](t, "IsVolumeFormatted")(vc.IsVolumeFormatted(x, &volumev1.IsVolumeFormattedRequest{VolumeId: vol})).Formatted {
		t.Fatal("new volume reported formatted")
	}
	_, err = vc.GetVolumeStats(x, &volumev1.GetVolumeStatsRequest{VolumeId: vol})
	wantCode(t, "GetVolumeStats on a RAW volume", err, codes.FailedPrecondition)
	must[*volumev1.FormatVolumeResponse](t, "FormatVolume")(vc.FormatVolume(x, &volumev1.FormatVolumeRequest{VolumeId: vol}))
	if !must[*volumev1.IsVolumeFormattedResponse](t, "IsVolumeFormatted")(vc.IsVolumeFormatted(x, &volumev1.IsVolumeFormattedRequest{VolumeId: vol})).Formatted {
		t.Fatal("volume not formatted after FormatVolume")
	}
	_, err = vc.FormatVolume(x, &volumev1.FormatVolumeRequest{VolumeId: vol})
	wantCode(t, "second FormatVolume", err, codes.FailedPrecondition)

	// Stage: mkdir + mount; a repeated mount is a no-op.
	must[*fsv1.MkdirResponse](t, "Mkdir staging")(fc.Mkdir(x, &fsv1.MkdirRequest{Path: staging}))
	if !must[*fsv1.PathExistsResponse](t, "PathExists staging")(fc.PathExists(x, &fsv1.PathExistsRequest{Path: staging})).Exists {
		t.Fatal("staging dir missing after Mkdir")
	}
	// aws-ebs-csi-driver's NodeStage asks this of kubelet's empty staging
	// dir and reads the answer as "not mounted" only with this phrase.
	_, err = vc.GetVolumeIDFromTargetPath(x, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: staging})
	wantCode(t, "GetVolumeIDFromTargetPath before mount", err, codes.NotFound)
	if err != nil && !strings.Contains(status.Convert(err).Message(), "because it does not exist") {
		t.Errorf("GetVolumeIDFromTargetPath(empty dir): message %q lacks %q, which aws-ebs-csi-driver matches", status.Convert(err).Message(), "because it does not exist")
	}
	must[*volumev1.MountVolumeResponse](t, "MountVolume")(vc.MountVolume(x, &volumev1.MountVolumeRequest{VolumeId: vol, TargetPath: staging}))
	must[*volumev1.MountVolumeResponse](t, "MountVolume again")(vc.MountVolume(x, &volumev1.MountVolumeRequest{VolumeId: vol, TargetPath: staging}))
	got := must[*volumev1.GetVolumeIDFromTargetPathResponse](t, "GetVolumeIDFromTargetPath")(vc.GetVolumeIDFromTargetPath(x, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: staging}))
	if got.VolumeId != vol {
		t.Errorf("GetVolumeIDFromTargetPath(staging) = %q, want %q", got.VolumeId, vol)
	}
	stats := must[*volumev1.GetVolumeStatsResponse](t, "GetVolumeStats")(vc.GetVolumeStats(x, &volumev1.GetVolumeStatsRequest{VolumeId: vol}))
	// PartitionDisk leaves 1 MiB at each end of a 1 GiB disk.
	if want := int64(1<<30 - 2<<20); stats.TotalBytes != want || stats.UsedBytes <= 0 || stats.UsedBytes >= stats.TotalBytes {
		t.Errorf("GetVolumeStats = total %d used %d, want total %d and 0 < used < total", stats.TotalBytes, stats.UsedBytes, want)
	}
	if dn := must[*volumev1.GetDiskNumberFromVolumeIDResponse](t, "GetDiskNumberFromVolumeID")(vc.GetDiskNumberFromVolumeID(x, &volumev1.GetDiskNumberFromVolumeIDRequest{VolumeId: vol})); dn.DiskNumber != n {
		t.Errorf("GetDiskNumberFromVolumeID = %d, want %d", dn.DiskNumber, n)
	}
	must[*volumev1.WriteVolumeCacheResponse](t, "WriteVolumeCache")(vc.WriteVolumeCache(x, &volumev1.WriteVolumeCacheRequest{VolumeId: vol}))
	// The partition already fills the disk: growing to "maximum" is a
	// successful no-op, as upstream skips gains under 100 MiB.
	must[*volumev1.ResizeVolumeResponse](t, "ResizeVolume 0")(vc.ResizeVolume(x, &volumev1.ResizeVolumeRequest{VolumeId: vol, SizeBytes: 0}))
	if s := must[*volumev1.GetVolumeStatsResponse](t, "GetVolumeStats")(vc.GetVolumeStats(x, &volumev1.GetVolumeStatsRequest{VolumeId: vol})); s.TotalBytes != stats.TotalBytes {
		t.Errorf("ResizeVolume(0) changed the size from %d to %d", stats.TotalBytes, s.TotalBytes)
	}
	_, err = vc.ResizeVolume(x, &volumev1.ResizeVolumeRequest{VolumeId: vol, SizeBytes: 64 << 30})
	wantCode(t, "ResizeVolume beyond the disk", err, codes.OutOfRange)
	_, err = vc.ResizeVolume(x, &volumev1.ResizeVolumeRequest{VolumeId: vol, SizeBytes: -1})
	wantCode(t, "ResizeVolume negative size", err, codes.InvalidArgument)

	// Another volume at the occupied staging path: C: from disk 0.
	sys := must[*volumev1.ListVolumesOnDiskResponse](t, "ListVolumesOnDisk 0")(vc.ListVolumesOnDisk(x, &volumev1.ListVolumesOnDiskRequest{DiskNumber: 0}))
	if len(sys.VolumeIds) != 2 { // EFI and C:; the MSR partition has none
		t.Errorf("system disk volumes = %q, want 2", sys.VolumeIds)
	}
	if len(sys.VolumeIds) > 0 {
		other := sys.VolumeIds[len(sys.VolumeIds)-1]
		_, err = vc.MountVolume(x, &volumev1.MountVolumeRequest{VolumeId: other, TargetPath: staging})
		wantCode(t, "MountVolume another volume at an occupied path", err, codes.FailedPrecondition)
		_, err = vc.UnmountVolume(x, &volumev1.UnmountVolumeRequest{VolumeId: other, TargetPath: staging})
		wantCode(t, "UnmountVolume of a volume not mounted there", err, codes.FailedPrecondition)
		_, err = vc.FormatVolume(x, &volumev1.FormatVolumeRequest{VolumeId: other})
		wantCode(t, "FormatVolume C:", err, codes.FailedPrecondition)
	}

	// Publish: a symlink from the pod's volume dir to the staging path.
	must[*fsv1.MkdirResponse](t, "Mkdir pod dir")(fc.Mkdir(x, &fsv1.MkdirRequest{Path: podDir}))
	must[*fsv1.CreateSymlinkResponse](t, "CreateSymlink publish")(fc.CreateSymlink(x, &fsv1.CreateSymlinkRequest{SourcePath: staging, TargetPath: publish}))
	if !must[*fsv1.IsSymlinkResponse](t, "IsSymlink publish")(fc.IsSymlink(x, &fsv1.IsSymlinkRequest{Path: publish})).IsSymlink {
		t.Error("IsSymlink(publish) = false after CreateSymlink")
	}
	if !must[*fsv1.IsSymlinkResponse](t, "IsSymlink staging")(fc.IsSymlink(x, &fsv1.IsSymlinkRequest{Path: staging})).IsSymlink {
		t.Error("IsSymlink(staging) = false for a volume mount point (upstream: a mounted folder counts)")
	}
	if must[*fsv1.IsSymlinkResponse](t, "IsSymlink pod dir")(fc.IsSymlink(x, &fsv1.IsSymlinkRequest{Path: podDir})).IsSymlink {
		t.Error("IsSymlink(plain directory) = true")
	}
	_, err = fc.CreateSymlink(x, &fsv1.CreateSymlinkRequest{SourcePath: podDir, TargetPath: publish})
	wantCode(t, "CreateSymlink over an existing link", err, codes.AlreadyExists)
	// The publish link leads to the staging mount point, and drivers ask
	// for the volume there, then use it (azuredisk NodeGetVolumeStats and
	// its unpublish flush): upstream follows the link (v1.3.0's reparse-tag
	// test accepts symlinks), so must we.
	if got := must[*volumev1.GetVolumeIDFromTargetPathResponse](t, "GetVolumeIDFromTargetPath on the publish link")(vc.GetVolumeIDFromTargetPath(x, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: publish})); got.VolumeId != vol {
		t.Errorf("GetVolumeIDFromTargetPath(publish link) = %q, want %q", got.VolumeId, vol)
	}
	must[*volumev1.GetVolumeStatsResponse](t, "GetVolumeStats through the publish link")(vc.GetVolumeStats(x, &volumev1.GetVolumeStatsRequest{VolumeId: vol}))
	must[*volumev1.WriteVolumeCacheResponse](t, "WriteVolumeCache through the publish link")(vc.WriteVolumeCache(x, &volumev1.WriteVolumeCacheRequest{VolumeId: vol}))

	// Unpublish: Rmdir(force) removes the link, not the volume's files.
	must[*fsv1.RmdirResponse](t, "Rmdir publish")(fc.Rmdir(x, &fsv1.RmdirRequest{Path: publish, Force: true}))
	if must[*fsv1.PathExistsResponse](t, "PathExists publish")(fc.PathExists(x, &fsv1.PathExistsRequest{Path: publish})).Exists {
		t.Error("publish path still exists after Rmdir")
	}
	if got := must[*volumev1.GetVolumeIDFromTargetPathResponse](t, "GetVolumeIDFromTargetPath after unpublish")(vc.GetVolumeIDFromTargetPath(x, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: staging})); got.VolumeId != vol {
		t.Errorf("staging mount lost after removing the publish link: %q", got.VolumeId)
	}

	// Unstage; a repeated unmount is a no-op.
	must[*volumev1.UnmountVolumeResponse](t, "UnmountVolume")(vc.UnmountVolume(x, &volumev1.UnmountVolumeRequest{VolumeId: vol, TargetPath: staging}))
	must[*volumev1.UnmountVolumeResponse](t, "UnmountVolume again")(vc.UnmountVolume(x, &volumev1.UnmountVolumeRequest{VolumeId: vol, TargetPath: staging}))
	_, err = vc.GetVolumeIDFromTargetPath(x, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: staging})
	wantCode(t, "GetVolumeIDFromTargetPath after unmount", err, codes.NotFound)
	// aws-ebs-csi-driver reads this text as "not mounted".
	_, err = vc.GetVolumeIDFromTargetPath(x, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: staging + `\missing`})
	wantCode(t, "GetVolumeIDFromTargetPath missing path", err, codes.NotFound)
	if err != nil && !strings.Contains(status.Convert(err).Message(), "because it does not exist") {
		t.Errorf("GetVolumeIDFromTargetPath missing path: message %q lacks %q, which aws-ebs-csi-driver matches", status.Convert(err).Message(), "because it does not exist")
	}
	must[*fsv1.RmdirResponse](t, "Rmdir staging")(fc.Rmdir(x, &fsv1.RmdirRequest{Path: staging}))

	// Detach.
	if dn := must[*volumev1.GetDiskNumberFromVolumeIDResponse](t, "GetDiskNumberFromVolumeID")(vc.GetDiskNumberFromVolumeID(x, &volumev1.GetDiskNumberFromVolumeIDRequest{VolumeId: vol})); dn.DiskNumber != n {
		t.Errorf("GetDiskNumberFromVolumeID = %d, want %d", dn.DiskNumber, n)
	}
	must[*diskv1.SetDiskStateResponse](t, "SetDiskState offline")(dc.SetDiskState(x, &diskv1.SetDiskStateRequest{DiskNumber: n, IsOnline: false}))
	_, err = vc.IsVolumeFormatted(x, &volumev1.IsVolumeFormattedRequest{VolumeId: vol})
	// The volume is gone while its disk is offline, as on Windows.
	wantCode(t, "IsVolumeFormatted on an offline disk", err, codes.NotFound)
	must[*diskv1.SetDiskStateResponse](t, "SetDiskState online")(dc.SetDiskState(x, &diskv1.SetDiskStateRequest{DiskNumber: n, IsOnline: true}))
}

// TestVolumeV1Errors covers the volume group's argument checks.
func TestVolumeV1Errors(t *testing.T) {
	vc := volumev1.NewVolumeClient(conn(t, "volume/v1"))
	x := ctx(t)
	wantCodes(t, []codeCase{
		{"IsVolumeFormatted malformed ID", errOf(vc.IsVolumeFormatted(x, &volumev1.IsVolumeFormattedRequest{VolumeId: "vol-1"})), codes.InvalidArgument},
		{"IsVolumeFormatted empty ID", errOf(vc.IsVolumeFormatted(x, &volumev1.IsVolumeFormattedRequest{})), codes.InvalidArgument},
		{"IsVolumeFormatted unknown volume", errOf(vc.IsVolumeFormatted(x, &volumev1.IsVolumeFormattedRequest{VolumeId: unknownVolume})), codes.NotFound},
		{"FormatVolume unknown volume", errOf(vc.FormatVolume(x, &volumev1.FormatVolumeRequest{VolumeId: unknownVolume})), codes.NotFound},
		{"GetVolumeStats unknown volume", errOf(vc.GetVolumeStats(x, &volumev1.GetVolumeStatsRequest{VolumeId: unknownVolume})), codes.NotFound},
		{"GetDiskNumberFromVolumeID malformed ID", errOf(vc.GetDiskNumberFromVolumeID(x, &volumev1.GetDiskNumberFromVolumeIDRequest{VolumeId: `\\?\Volume{xyz}\`})), codes.InvalidArgument},
		{"WriteVolumeCache unknown volume", errOf(vc.WriteVolumeCache(x, &volumev1.WriteVolumeCacheRequest{VolumeId: unknownVolume})), codes.NotFound},
		{"ResizeVolume unknown volume", errOf(vc.ResizeVolume(x, &volumev1.ResizeVolumeRequest{VolumeId: unknownVolume})), codes.NotFound},
		{"MountVolume outside the working dirs", errOf(vc.MountVolume(x, &volumev1.MountVolumeRequest{VolumeId: unknownVolume, TargetPath: outside})), codes.PermissionDenied},
		{"MountVolume relative path", errOf(vc.MountVolume(x, &volumev1.MountVolumeRequest{VolumeId: unknownVolume, TargetPath: `var\lib\kubelet\a`})), codes.InvalidArgument},
		{"MountVolume unknown volume", errOf(vc.MountVolume(x, &volumev1.MountVolumeRequest{VolumeId: unknownVolume, TargetPath: kubelet + `\wc-unknown-mount`})), codes.NotFound},
		{"UnmountVolume dotdot path", errOf(vc.UnmountVolume(x, &volumev1.UnmountVolumeRequest{VolumeId: unknownVolume, TargetPath: kubelet + `\..\..\x`})), codes.InvalidArgument},
		{"GetVolumeIDFromTargetPath outside", errOf(vc.GetVolumeIDFromTargetPath(x, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: outside})), codes.PermissionDenied},
		{"GetVolumeIDFromTargetPath UNC", errOf(vc.GetVolumeIDFromTargetPath(x, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: `\\server\share\x`})), codes.InvalidArgument},
		{"GetVolumeIDFromTargetPath plain directory", errOf(vc.GetVolumeIDFromTargetPath(x, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: kubelet})), codes.NotFound},
	})
}

// ---------------------------------------------------------------- volume v2alpha1 + filesystem v2alpha1

// TestStageFlowV2alpha1 repeats the node lifecycle with the v2alpha1
// clients on disk 2 and adds what v2alpha1 brings:
// GetClosestVolumeIDFromTargetPath and RmdirContents.
func TestStageFlowV2alpha1(t *testing.T) {
	const n = 2
	dc := diskv1.NewDiskClient(conn(t, "disk/v1"))
	vc := volumev2alpha1.NewVolumeClient(conn(t, "volume/v2alpha1"))
	fc := fsv2alpha1.NewFilesystemClient(conn(t, "filesystem/v2alpha1"))
	x := ctx(t)
	staging := kubelet + `\plugins\kubernetes.io\csi\disk.csi.example.com\3d4e5f\globalmount`
	podDir := kubelet + `\pods\5c8a0e0e-0000-4000-8000-000000000002\volumes\kubernetes.io~csi\pvc-2`
	publish := podDir + `\mount`

	must[*diskv1.SetDiskStateResponse](t, "SetDiskState online")(dc.SetDiskState(x, &diskv1.SetDiskStateRequest{DiskNumber: n, IsOnline: true}))
	must[*diskv1.PartitionDiskResponse](t, "PartitionDisk")(dc.PartitionDisk(x, &diskv1.PartitionDiskRequest{DiskNumber: n}))
	vols := must[*volumev2alpha1.ListVolumesOnDiskResponse](t, "ListVolumesOnDisk")(vc.ListVolumesOnDisk(x, &volumev2alpha1.ListVolumesOnDiskRequest{DiskNumber: n}))
	if len(vols.VolumeIds) != 1 || !volumeIDPattern.MatchString(vols.VolumeIds[0]) {
		t.Fatalf("ListVolumesOnDisk(%d) = %q, want one volume ID", n, vols.VolumeIds)
	}
	vol := vols.VolumeIds[0]
	if must[*volumev2alpha1.IsVolumeFormattedResponse](t, "IsVolumeFormatted")(vc.IsVolumeFormatted(x, &volumev2alpha1.IsVolumeFormattedRequest{VolumeId: vol})).Formatted {
		t.Fatal("new volume reported formatted")
	}
	must[*volumev2alpha1.FormatVolumeResponse](t, "FormatVolume")(vc.FormatVolume(x, &volumev2alpha1.FormatVolumeRequest{VolumeId: vol}))
	_, err := vc.FormatVolume(x, &volumev2alpha1.FormatVolumeRequest{VolumeId: vol})
	wantCode(t, "second FormatVolume", err, codes.FailedPrecondition)

	must[*fsv2alpha1.MkdirResponse](t, "Mkdir staging")(fc.Mkdir(x, &fsv2alpha1.MkdirRequest{Path: staging}))
	must[*volumev2alpha1.MountVolumeResponse](t, "MountVolume")(vc.MountVolume(x, &volumev2alpha1.MountVolumeRequest{VolumeId: vol, TargetPath: staging}))
	if got := must[*volumev2alpha1.GetVolumeIDFromTargetPathResponse](t, "GetVolumeIDFromTargetPath")(vc.GetVolumeIDFromTargetPath(x, &volumev2alpha1.GetVolumeIDFromTargetPathRequest{TargetPath: staging})); got.VolumeId != vol {
		t.Errorf("GetVolumeIDFromTargetPath = %q, want %q", got.VolumeId, vol)
	}
	stats := must[*volumev2alpha1.GetVolumeStatsResponse](t, "GetVolumeStats")(vc.GetVolumeStats(x, &volumev2alpha1.GetVolumeStatsRequest{VolumeId: vol}))
	if want := int64(2<<30 - 2<<20); stats.TotalBytes != want || stats.UsedBytes <= 0 || stats.UsedBytes >= stats.TotalBytes {
		t.Errorf("GetVolumeStats = total %d used %d, want total %d and 0 < used < total", stats.TotalBytes, stats.UsedBytes, want)
	}
	if dn := must[*volumev2alpha1.GetDiskNumberFromVolumeIDResponse](t, "GetDiskNumberFromVolumeID")(vc.GetDiskNumberFromVolumeID(x, &volumev2alpha1.GetDiskNumberFromVolumeIDRequest{VolumeId: vol})); dn.DiskNumber != n {
		t.Errorf("GetDiskNumberFromVolumeID = %d, want %d", dn.DiskNumber, n)
	}
	must[*volumev2alpha1.WriteVolumeCacheResponse](t, "WriteVolumeCache")(vc.WriteVolumeCache(x, &volumev2alpha1.WriteVolumeCacheRequest{VolumeId: vol}))
	must[*volumev2alpha1.ResizeVolumeResponse](t, "ResizeVolume")(vc.ResizeVolume(x, &volumev2alpha1.ResizeVolumeRequest{VolumeId: vol, SizeBytes: stats.TotalBytes}))
	_, err = vc.ResizeVolume(x, &volumev2alpha1.ResizeVolumeRequest{VolumeId: vol, SizeBytes: 3 << 30})
	wantCode(t, "ResizeVolume beyond the disk", err, codes.OutOfRange)

	// Directories on the mounted volume, then RmdirContents empties one.
	data := staging + `\data`
	for _, d := range []string{data + `\a\b`, data + `\c`} {
		must[*fsv2alpha1.MkdirResponse](t, "Mkdir on volume")(fc.Mkdir(x, &fsv2alpha1.MkdirRequest{Path: d}))
	}
	_, err = fc.Rmdir(x, &fsv2alpha1.RmdirRequest{Path: data})
	wantCode(t, "Rmdir non-empty without force", err, codes.FailedPrecondition)
	must[*fsv2alpha1.RmdirContentsResponse](t, "RmdirContents")(fc.RmdirContents(x, &fsv2alpha1.RmdirContentsRequest{Path: data}))
	if must[*fsv2alpha1.PathExistsResponse](t, "PathExists a")(fc.PathExists(x, &fsv2alpha1.PathExistsRequest{Path: data + `\a`})).Exists {
		t.Error("RmdirContents left a child behind")
	}
	if !must[*fsv2alpha1.PathExistsResponse](t, "PathExists data")(fc.PathExists(x, &fsv2alpha1.PathExistsRequest{Path: data})).Exists {
		t.Error("RmdirContents removed the directory itself")
	}
	_, err = fc.RmdirContents(x, &fsv2alpha1.RmdirContentsRequest{Path: data + `\gone`})
	wantCode(t, "RmdirContents missing dir", err, codes.NotFound)
	_, err = fc.RmdirContents(x, &fsv2alpha1.RmdirContentsRequest{Path: outside})
	wantCode(t, "RmdirContents outside", err, codes.PermissionDenied)
	_, err = fc.RmdirContents(x, &fsv2alpha1.RmdirContentsRequest{Path: kubelet})
	wantCode(t, "RmdirContents of the kubelet dir", err, codes.PermissionDenied)

	// Publish and find the closest volume through the link.
	must[*fsv2alpha1.MkdirResponse](t, "Mkdir pod dir")(fc.Mkdir(x, &fsv2alpha1.MkdirRequest{Path: podDir}))
	must[*fsv2alpha1.CreateSymlinkResponse](t, "CreateSymlink")(fc.CreateSymlink(x, &fsv2alpha1.CreateSymlinkRequest{SourcePath: staging, TargetPath: publish}))
	if !must[*fsv2alpha1.IsSymlinkResponse](t, "IsSymlink")(fc.IsSymlink(x, &fsv2alpha1.IsSymlinkRequest{Path: publish})).IsSymlink {
		t.Error("IsSymlink(publish) = false")
	}
	for _, p := range []string{staging, data, publish, publish + `\data`} {
		got := must[*volumev2alpha1.GetClosestVolumeIDFromTargetPathResponse](t, "GetClosestVolumeIDFromTargetPath")(vc.GetClosestVolumeIDFromTargetPath(x, &volumev2alpha1.GetClosestVolumeIDFromTargetPathRequest{TargetPath: p}))
		if got.VolumeId != vol {
			t.Errorf("GetClosestVolumeIDFromTargetPath(%s) = %q, want %q", p, got.VolumeId, vol)
		}
	}
	sys := must[*volumev2alpha1.ListVolumesOnDiskResponse](t, "ListVolumesOnDisk 0 partition 3")(vc.ListVolumesOnDisk(x, &volumev2alpha1.ListVolumesOnDiskRequest{DiskNumber: 0, PartitionNumber: 3}))
	if len(sys.VolumeIds) == 1 {
		got := must[*volumev2alpha1.GetClosestVolumeIDFromTargetPathResponse](t, "GetClosestVolumeIDFromTargetPath kubelet")(vc.GetClosestVolumeIDFromTargetPath(x, &volumev2alpha1.GetClosestVolumeIDFromTargetPathRequest{TargetPath: podDir}))
		if got.VolumeId != sys.VolumeIds[0] {
			t.Errorf("GetClosestVolumeIDFromTargetPath(pod dir) = %q, want C: %q", got.VolumeId, sys.VolumeIds[0])
		}
		_, err = vc.MountVolume(x, &volumev2alpha1.MountVolumeRequest{VolumeId: sys.VolumeIds[0], TargetPath: staging})
		wantCode(t, "MountVolume another volume at an occupied path", err, codes.FailedPrecondition)
	} else {
		t.Errorf("ListVolumesOnDisk(0, partition 3) = %q, want C:", sys.VolumeIds)
	}
	_, err = vc.GetClosestVolumeIDFromTargetPath(x, &volumev2alpha1.GetClosestVolumeIDFromTargetPathRequest{TargetPath: podDir + `\nope`})
	wantCode(t, "GetClosestVolumeIDFromTargetPath missing path", err, codes.NotFound)
	_, err = vc.GetClosestVolumeIDFromTargetPath(x, &volumev2alpha1.GetClosestVolumeIDFromTargetPathRequest{TargetPath: outside})
	wantCode(t, "GetClosestVolumeIDFromTargetPath outside", err, codes.PermissionDenied)
	_, err = vc.GetClosestVolumeIDFromTargetPath(x, &volumev2alpha1.GetClosestVolumeIDFromTargetPathRequest{TargetPath: "C:"})
	wantCode(t, "GetClosestVolumeIDFromTargetPath drive-relative", err, codes.InvalidArgument)

	// Tear down.
	must[*fsv2alpha1.RmdirResponse](t, "Rmdir publish")(fc.Rmdir(x, &fsv2alpha1.RmdirRequest{Path: publish, Force: true}))
	must[*volumev2alpha1.UnmountVolumeResponse](t, "UnmountVolume")(vc.UnmountVolume(x, &volumev2alpha1.UnmountVolumeRequest{VolumeId: vol, TargetPath: staging}))
	_, err = vc.GetVolumeIDFromTargetPath(x, &volumev2alpha1.GetVolumeIDFromTargetPathRequest{TargetPath: staging})
	wantCode(t, "GetVolumeIDFromTargetPath after unmount", err, codes.NotFound)
	must[*fsv2alpha1.RmdirResponse](t, "Rmdir staging")(fc.Rmdir(x, &fsv2alpha1.RmdirRequest{Path: staging, Force: true}))
	must[*diskv1.SetDiskStateResponse](t, "SetDiskState offline")(dc.SetDiskState(x, &diskv1.SetDiskStateRequest{DiskNumber: n, IsOnline: false}))
	must[*diskv1.SetDiskStateResponse](t, "SetDiskState online")(dc.SetDiskState(x, &diskv1.SetDiskStateRequest{DiskNumber: n, IsOnline: true}))
}

// ---------------------------------------------------------------- filesystem

// TestFilesystemV1 covers path handling: the sandbox, malformed paths,
// Rmdir rules and symlink checks.
func TestFilesystemV1(t *testing.T) {
	fc := fsv1.NewFilesystemClient(conn(t, "filesystem/v1"))
	x := ctx(t)
	base := kubelet + `\wc-fs`
	must[*fsv1.MkdirResponse](t, "Mkdir")(fc.Mkdir(x, &fsv1.MkdirRequest{Path: base + `\src\sub`}))
	must[*fsv1.MkdirResponse](t, "Mkdir existing")(fc.Mkdir(x, &fsv1.MkdirRequest{Path: base + `\src\sub`}))
	// Windows paths compare without case; / is accepted for \.
	if !must[*fsv1.PathExistsResponse](t, "PathExists")(fc.PathExists(x, &fsv1.PathExistsRequest{Path: strings.ToUpper(base) + `/SRC`})).Exists {
		t.Error(`PathExists is case-sensitive or rejects "/"`)
	}
	if must[*fsv1.PathExistsResponse](t, "PathExists missing")(fc.PathExists(x, &fsv1.PathExistsRequest{Path: base + `\nothing`})).Exists {
		t.Error("PathExists(missing) = true")
	}
	must[*fsv1.CreateSymlinkResponse](t, "CreateSymlink")(fc.CreateSymlink(x, &fsv1.CreateSymlinkRequest{SourcePath: base + `\src`, TargetPath: base + `\link`}))
	if !must[*fsv1.IsSymlinkResponse](t, "IsSymlink")(fc.IsSymlink(x, &fsv1.IsSymlinkRequest{Path: base + `\link`})).IsSymlink {
		t.Error("IsSymlink(link) = false")
	}
	// Rmdir(force) on a link removes the link only.
	must[*fsv1.RmdirResponse](t, "Rmdir link")(fc.Rmdir(x, &fsv1.RmdirRequest{Path: base + `\link`, Force: true}))
	if !must[*fsv1.PathExistsResponse](t, "PathExists sub")(fc.PathExists(x, &fsv1.PathExistsRequest{Path: base + `\src\sub`})).Exists {
		t.Error("Rmdir(force) of a link removed its target's contents")
	}
	// A dangling link still exists (Lstat) but is not a symlink to
	// upstream's IsSymlink (its target must exist).
	must[*fsv1.CreateSymlinkResponse](t, "CreateSymlink dangling")(fc.CreateSymlink(x, &fsv1.CreateSymlinkRequest{SourcePath: base + `\ghost`, TargetPath: base + `\dangling`}))
	if !must[*fsv1.PathExistsResponse](t, "PathExists dangling")(fc.PathExists(x, &fsv1.PathExistsRequest{Path: base + `\dangling`})).Exists {
		t.Error("PathExists(dangling link) = false; upstream uses Lstat")
	}
	if must[*fsv1.IsSymlinkResponse](t, "IsSymlink dangling")(fc.IsSymlink(x, &fsv1.IsSymlinkRequest{Path: base + `\dangling`})).IsSymlink {
		t.Error("IsSymlink(dangling link) = true; upstream requires the target to exist")
	}

	wantCodes(t, []codeCase{
		{"Mkdir outside the working dirs", errOf(fc.Mkdir(x, &fsv1.MkdirRequest{Path: outside})), codes.PermissionDenied},
		{"Mkdir on another drive", errOf(fc.Mkdir(x, &fsv1.MkdirRequest{Path: `D:\var\lib\kubelet\a`})), codes.PermissionDenied},
		{"PathExists outside", errOf(fc.PathExists(x, &fsv1.PathExistsRequest{Path: `C:\Windows\System32`})), codes.PermissionDenied},
		{"PathExists dotdot escape", errOf(fc.PathExists(x, &fsv1.PathExistsRequest{Path: kubelet + `\..\..\..\Windows`})), codes.InvalidArgument},
		{"Mkdir relative", errOf(fc.Mkdir(x, &fsv1.MkdirRequest{Path: `var\lib\kubelet\a`})), codes.InvalidArgument},
		{"Mkdir empty", errOf(fc.Mkdir(x, &fsv1.MkdirRequest{})), codes.InvalidArgument},
		{"Mkdir UNC", errOf(fc.Mkdir(x, &fsv1.MkdirRequest{Path: `\\server\share\a`})), codes.InvalidArgument},
		{"Mkdir device path", errOf(fc.Mkdir(x, &fsv1.MkdirRequest{Path: `\\?\C:\var\lib\kubelet\a`})), codes.InvalidArgument},
		{"Mkdir bad character", errOf(fc.Mkdir(x, &fsv1.MkdirRequest{Path: kubelet + `\a|b`})), codes.InvalidArgument},
		{"Rmdir missing", errOf(fc.Rmdir(x, &fsv1.RmdirRequest{Path: base + `\nothing`})), codes.NotFound},
		{"Rmdir non-empty without force", errOf(fc.Rmdir(x, &fsv1.RmdirRequest{Path: base + `\src`})), codes.FailedPrecondition},
		{"Rmdir the kubelet dir", errOf(fc.Rmdir(x, &fsv1.RmdirRequest{Path: kubelet, Force: true})), codes.PermissionDenied},
		{"Rmdir outside", errOf(fc.Rmdir(x, &fsv1.RmdirRequest{Path: outside, Force: true})), codes.PermissionDenied},
		{"CreateSymlink source outside", errOf(fc.CreateSymlink(x, &fsv1.CreateSymlinkRequest{SourcePath: `C:\Windows`, TargetPath: base + `\win`})), codes.PermissionDenied},
		{"CreateSymlink link outside", errOf(fc.CreateSymlink(x, &fsv1.CreateSymlinkRequest{SourcePath: base + `\src`, TargetPath: outside})), codes.PermissionDenied},
		{"CreateSymlink link above its own source", errOf(fc.CreateSymlink(x, &fsv1.CreateSymlinkRequest{SourcePath: base + `\src\sub`, TargetPath: base + `\src`})), codes.InvalidArgument},
		{"CreateSymlink missing parent", errOf(fc.CreateSymlink(x, &fsv1.CreateSymlinkRequest{SourcePath: base + `\src`, TargetPath: base + `\no\such\link`})), codes.NotFound},
		{"CreateSymlink over a directory", errOf(fc.CreateSymlink(x, &fsv1.CreateSymlinkRequest{SourcePath: base + `\elsewhere`, TargetPath: base + `\src\sub`})), codes.AlreadyExists},
		{"IsSymlink missing", errOf(fc.IsSymlink(x, &fsv1.IsSymlinkRequest{Path: base + `\nothing`})), codes.NotFound},
		{"IsSymlink malformed", errOf(fc.IsSymlink(x, &fsv1.IsSymlinkRequest{Path: "relative"})), codes.InvalidArgument},
	})

	must[*fsv1.RmdirResponse](t, "Rmdir base")(fc.Rmdir(x, &fsv1.RmdirRequest{Path: base, Force: true}))
	if must[*fsv1.PathExistsResponse](t, "PathExists base")(fc.PathExists(x, &fsv1.PathExistsRequest{Path: base})).Exists {
		t.Error("Rmdir(force) left the tree")
	}
}
