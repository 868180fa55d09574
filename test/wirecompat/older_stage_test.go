package wirecompat

import (
	"fmt"
	"strings"
	"testing"

	diskv1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1alpha1"
	diskv1beta1 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1beta1"
	diskv1beta2 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1beta2"
	diskv1beta3 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1beta3"
	fsv1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v1alpha1"
	fsv1beta1 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v1beta1"
	fsv1beta2 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v1beta2"
	volumev1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/volume/v1alpha1"
	volumev1beta1 "github.com/kubernetes-csi/csi-proxy/client/api/volume/v1beta1"
	volumev1beta2 "github.com/kubernetes-csi/csi-proxy/client/api/volume/v1beta2"
	volumev1beta3 "github.com/kubernetes-csi/csi-proxy/client/api/volume/v1beta3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ---------------------------------------------------------------- stage flows

// stagePaths are where the older flows stage and publish disk n's volume,
// as kubelet lays them out for PV pvc-<n>: the staging directory, the
// pod's volume directory and the publish link in it.
func stagePaths(n int) (staging, podDir, publish string) {
	staging = fmt.Sprintf(`%s\plugins\kubernetes.io\csi\pv\pvc-%d\globalmount`, kubelet, n)
	podDir = fmt.Sprintf(`%s\pods\5c8a0e0e-0000-4000-8000-0000000000%02d\volumes\kubernetes.io~csi\pvc-%d`, kubelet, n, n)
	return staging, podDir, podDir + `\mount`
}

// TestStageFlowV1alpha1 stages disk 11 with the first versions: disk,
// volume and filesystem v1alpha1 (which has no disk state RPCs, so the disk
// is online as configured).
func TestStageFlowV1alpha1(t *testing.T) {
	const n = 11
	dc := diskv1alpha1.NewDiskClient(conn(t, "disk/v1alpha1"))
	vc := volumev1alpha1.NewVolumeClient(conn(t, "volume/v1alpha1"))
	fc := fsv1alpha1.NewFilesystemClient(conn(t, "filesystem/v1alpha1"))
	x := ctx(t)
	staging, podDir, publish := stagePaths(n)

	vols := must[*volumev1alpha1.ListVolumesOnDiskResponse](t, "ListVolumesOnDisk raw")(vc.ListVolumesOnDisk(x, &volumev1alpha1.ListVolumesOnDiskRequest{DiskId: diskID(n)}))
	if len(vols.VolumeIds) != 0 {
		t.Fatalf("RAW disk %d has volumes %v", n, vols.VolumeIds)
	}
	must[*diskv1alpha1.PartitionDiskResponse](t, "PartitionDisk")(dc.PartitionDisk(x, &diskv1alpha1.PartitionDiskRequest{DiskID: diskID(n)}))
	must[*diskv1alpha1.PartitionDiskResponse](t, "PartitionDisk again")(dc.PartitionDisk(x, &diskv1alpha1.PartitionDiskRequest{DiskID: diskID(n)}))
	vols = must[*volumev1alpha1.ListVolumesOnDiskResponse](t, "ListVolumesOnDisk")(vc.ListVolumesOnDisk(x, &volumev1alpha1.ListVolumesOnDiskRequest{DiskId: diskID(n)}))
	if len(vols.VolumeIds) != 1 || !volumeIDPattern.MatchString(vols.VolumeIds[0]) {
		t.Fatalf("ListVolumesOnDisk(%d) = %q, want one volume ID", n, vols.VolumeIds)
	}
	vol := vols.VolumeIds[0]
	_, err := vc.ListVolumesOnDisk(x, &volumev1alpha1.ListVolumesOnDiskRequest{DiskId: notANumber})
	wantCode(t, "ListVolumesOnDisk not a number", err, codes.InvalidArgument)
	_, err = vc.ListVolumesOnDisk(x, &volumev1alpha1.ListVolumesOnDiskRequest{DiskId: diskID(noDisk)})
	wantCode(t, "ListVolumesOnDisk missing disk", err, codes.NotFound)

	if must[*volumev1alpha1.IsVolumeFormattedResponse](t, "IsVolumeFormatted")(vc.IsVolumeFormatted(x, &volumev1alpha1.IsVolumeFormattedRequest{VolumeId: vol})).Formatted {
		t.Fatal("new volume reported formatted")
	}
	must[*volumev1alpha1.FormatVolumeResponse](t, "FormatVolume")(vc.FormatVolume(x, &volumev1alpha1.FormatVolumeRequest{VolumeId: vol}))
	if !must[*volumev1alpha1.IsVolumeFormattedResponse](t, "IsVolumeFormatted")(vc.IsVolumeFormatted(x, &volumev1alpha1.IsVolumeFormattedRequest{VolumeId: vol})).Formatted {
		t.Fatal("volume not formatted after FormatVolume")
	}

	// The path context is ignored: a plugin path with POD is fine.
	mk := must[*fsv1alpha1.MkdirResponse](t, "Mkdir staging")(fc.Mkdir(x, &fsv1alpha1.MkdirRequest{Path: staging, Context: fsv1alpha1.PathContext_POD}))
	wantEmptyError(t, "Mkdir", mk.Error)
	ex := must[*fsv1alpha1.PathExistsResponse](t, "PathExists staging")(fc.PathExists(x, &fsv1alpha1.PathExistsRequest{Path: staging, Context: fsv1alpha1.PathContext_PLUGIN}))
	wantEmptyError(t, "PathExists", ex.Error)
	if !ex.Exists {
		t.Fatal("staging dir missing after Mkdir")
	}
	must[*volumev1alpha1.MountVolumeResponse](t, "MountVolume")(vc.MountVolume(x, &volumev1alpha1.MountVolumeRequest{VolumeId: vol, Path: staging}))
	must[*volumev1alpha1.MountVolumeResponse](t, "MountVolume again")(vc.MountVolume(x, &volumev1alpha1.MountVolumeRequest{VolumeId: vol, Path: staging}))
	_, err = vc.MountVolume(x, &volumev1alpha1.MountVolumeRequest{VolumeId: vol, Path: outside})
	wantCode(t, "MountVolume outside the working dirs", err, codes.PermissionDenied)
	must[*volumev1alpha1.ResizeVolumeResponse](t, "ResizeVolume 0")(vc.ResizeVolume(x, &volumev1alpha1.ResizeVolumeRequest{VolumeId: vol, Size: 0}))
	_, err = vc.ResizeVolume(x, &volumev1alpha1.ResizeVolumeRequest{VolumeId: vol, Size: 64 << 30})
	wantCode(t, "ResizeVolume beyond the disk", err, codes.OutOfRange)
	_, err = vc.FormatVolume(x, &volumev1alpha1.FormatVolumeRequest{VolumeId: unknownVolume})
	wantCode(t, "FormatVolume unknown volume", err, codes.NotFound)

	// Publish with LinkPath; IsMountPoint is true for the link and for the
	// mount point.
	must[*fsv1alpha1.MkdirResponse](t, "Mkdir pod dir")(fc.Mkdir(x, &fsv1alpha1.MkdirRequest{Path: podDir, Context: fsv1alpha1.PathContext_POD}))
	lp := must[*fsv1alpha1.LinkPathResponse](t, "LinkPath")(fc.LinkPath(x, &fsv1alpha1.LinkPathRequest{SourcePath: staging, TargetPath: publish}))
	wantEmptyError(t, "LinkPath", lp.Error)
	for _, p := range []string{publish, staging} {
		mp := must[*fsv1alpha1.IsMountPointResponse](t, "IsMountPoint")(fc.IsMountPoint(x, &fsv1alpha1.IsMountPointRequest{Path: p}))
		wantEmptyError(t, "IsMountPoint", mp.Error)
		if !mp.IsMountPoint {
			t.Errorf("IsMountPoint(%s) = false", p)
		}
	}
	if must[*fsv1alpha1.IsMountPointResponse](t, "IsMountPoint pod dir")(fc.IsMountPoint(x, &fsv1alpha1.IsMountPointRequest{Path: podDir})).IsMountPoint {
		t.Error("IsMountPoint(plain directory) = true")
	}
	_, err = fc.LinkPath(x, &fsv1alpha1.LinkPathRequest{SourcePath: staging, TargetPath: outside})
	wantCode(t, "LinkPath link outside", err, codes.PermissionDenied)
	_, err = fc.LinkPath(x, &fsv1alpha1.LinkPathRequest{SourcePath: podDir, TargetPath: publish})
	wantCode(t, "LinkPath over an existing link", err, codes.AlreadyExists)

	// Unpublish and unstage.
	rm := must[*fsv1alpha1.RmdirResponse](t, "Rmdir publish")(fc.Rmdir(x, &fsv1alpha1.RmdirRequest{Path: publish, Context: fsv1alpha1.PathContext_POD, Force: true}))
	wantEmptyError(t, "Rmdir", rm.Error)
	must[*volumev1alpha1.DismountVolumeResponse](t, "DismountVolume")(vc.DismountVolume(x, &volumev1alpha1.DismountVolumeRequest{VolumeId: vol, Path: staging}))
	must[*volumev1alpha1.DismountVolumeResponse](t, "DismountVolume again")(vc.DismountVolume(x, &volumev1alpha1.DismountVolumeRequest{VolumeId: vol, Path: staging}))
	_, err = vc.DismountVolume(x, &volumev1alpha1.DismountVolumeRequest{VolumeId: vol, Path: outside})
	wantCode(t, "DismountVolume outside", err, codes.PermissionDenied)
	if must[*fsv1alpha1.IsMountPointResponse](t, "IsMountPoint staging")(fc.IsMountPoint(x, &fsv1alpha1.IsMountPointRequest{Path: staging})).IsMountPoint {
		t.Error("IsMountPoint(staging) = true after DismountVolume")
	}
	must[*fsv1alpha1.RmdirResponse](t, "Rmdir staging")(fc.Rmdir(x, &fsv1alpha1.RmdirRequest{Path: staging}))
	if must[*fsv1alpha1.PathExistsResponse](t, "PathExists staging")(fc.PathExists(x, &fsv1alpha1.PathExistsRequest{Path: staging})).Exists {
		t.Error("staging dir still exists after Rmdir")
	}
	must[*fsv1alpha1.RmdirResponse](t, "Rmdir pod dir")(fc.Rmdir(x, &fsv1alpha1.RmdirRequest{Path: podDir, Force: true}))

	wantCodes(t, []codeCase{
		{"PathExists outside", errOf(fc.PathExists(x, &fsv1alpha1.PathExistsRequest{Path: outside})), codes.PermissionDenied},
		{"Mkdir outside", errOf(fc.Mkdir(x, &fsv1alpha1.MkdirRequest{Path: outside, Context: fsv1alpha1.PathContext_PLUGIN})), codes.PermissionDenied},
		{"Rmdir outside", errOf(fc.Rmdir(x, &fsv1alpha1.RmdirRequest{Path: outside, Force: true})), codes.PermissionDenied},
		{"IsMountPoint outside", errOf(fc.IsMountPoint(x, &fsv1alpha1.IsMountPointRequest{Path: outside})), codes.PermissionDenied},
		{"Mkdir relative", errOf(fc.Mkdir(x, &fsv1alpha1.MkdirRequest{Path: `var\lib\kubelet\a`})), codes.InvalidArgument},
	})
}

// TestStageFlowV1beta1 stages disk 12 as gcp-pd does when the v1 pipes are
// missing: disk v1beta2 for the disk state, volume v1beta1, filesystem
// v1beta1; PartitionDisk and DiskStats through disk v1beta1.
func TestStageFlowV1beta1(t *testing.T) {
	const n = 12
	d1 := diskv1beta1.NewDiskClient(conn(t, "disk/v1beta1"))
	d2 := diskv1beta2.NewDiskClient(conn(t, "disk/v1beta2"))
	vc := volumev1beta1.NewVolumeClient(conn(t, "volume/v1beta1"))
	fc := fsv1beta1.NewFilesystemClient(conn(t, "filesystem/v1beta1"))
	x := ctx(t)
	staging, podDir, publish := stagePaths(n)

	must[*diskv1beta2.SetAttachStateResponse](t, "SetAttachState online")(d2.SetAttachState(x, &diskv1beta2.SetAttachStateRequest{DiskID: diskID(n), IsOnline: true}))
	must[*diskv1beta1.PartitionDiskResponse](t, "PartitionDisk")(d1.PartitionDisk(x, &diskv1beta1.PartitionDiskRequest{DiskID: diskID(n)}))
	vols := must[*volumev1beta1.ListVolumesOnDiskResponse](t, "ListVolumesOnDisk")(vc.ListVolumesOnDisk(x, &volumev1beta1.ListVolumesOnDiskRequest{DiskId: diskID(n)}))
	if len(vols.VolumeIds) != 1 || !volumeIDPattern.MatchString(vols.VolumeIds[0]) {
		t.Fatalf("ListVolumesOnDisk(%d) = %q, want one volume ID", n, vols.VolumeIds)
	}
	vol := vols.VolumeIds[0]
	if must[*volumev1beta1.IsVolumeFormattedResponse](t, "IsVolumeFormatted")(vc.IsVolumeFormatted(x, &volumev1beta1.IsVolumeFormattedRequest{VolumeId: vol})).Formatted {
		t.Fatal("new volume reported formatted")
	}
	must[*volumev1beta1.FormatVolumeResponse](t, "FormatVolume")(vc.FormatVolume(x, &volumev1beta1.FormatVolumeRequest{VolumeId: vol}))
	_, err := vc.FormatVolume(x, &volumev1beta1.FormatVolumeRequest{VolumeId: vol})
	wantCode(t, "second FormatVolume", err, codes.FailedPrecondition)

	must[*fsv1beta1.MkdirResponse](t, "Mkdir staging")(fc.Mkdir(x, &fsv1beta1.MkdirRequest{Path: staging}))
	_, err = vc.GetVolumeIDFromMount(x, &volumev1beta1.VolumeIDFromMountRequest{Mount: staging})
	wantCode(t, "GetVolumeIDFromMount before mount", err, codes.NotFound)
	must[*volumev1beta1.MountVolumeResponse](t, "MountVolume")(vc.MountVolume(x, &volumev1beta1.MountVolumeRequest{VolumeId: vol, Path: staging}))
	if got := must[*volumev1beta1.VolumeIDFromMountResponse](t, "GetVolumeIDFromMount")(vc.GetVolumeIDFromMount(x, &volumev1beta1.VolumeIDFromMountRequest{Mount: staging})); got.VolumeId != vol {
		t.Errorf("GetVolumeIDFromMount(staging) = %q, want %q", got.VolumeId, vol)
	}
	stats := must[*volumev1beta1.VolumeStatsResponse](t, "VolumeStats")(vc.VolumeStats(x, &volumev1beta1.VolumeStatsRequest{VolumeId: vol}))
	if want := int64(1<<30 - 2<<20); stats.VolumeSize != want || stats.VolumeUsedSize <= 0 || stats.VolumeUsedSize >= stats.VolumeSize {
		t.Errorf("VolumeStats = size %d used %d, want size %d and 0 < used < size", stats.VolumeSize, stats.VolumeUsedSize, want)
	}
	if dn := must[*volumev1beta1.VolumeDiskNumberResponse](t, "GetVolumeDiskNumber")(vc.GetVolumeDiskNumber(x, &volumev1beta1.VolumeDiskNumberRequest{VolumeId: vol})); dn.DiskNumber != n {
		t.Errorf("GetVolumeDiskNumber = %d, want %d", dn.DiskNumber, n)
	}
	if st := must[*diskv1beta1.DiskStatsResponse](t, "DiskStats")(d1.DiskStats(x, &diskv1beta1.DiskStatsRequest{DiskID: diskID(n)})); st.DiskSize != 1<<30 {
		t.Errorf("DiskStats(%d) = %d", n, st.DiskSize)
	}
	must[*volumev1beta1.ResizeVolumeResponse](t, "ResizeVolume 0")(vc.ResizeVolume(x, &volumev1beta1.ResizeVolumeRequest{VolumeId: vol}))

	must[*fsv1beta1.MkdirResponse](t, "Mkdir pod dir")(fc.Mkdir(x, &fsv1beta1.MkdirRequest{Path: podDir}))
	must[*fsv1beta1.LinkPathResponse](t, "LinkPath")(fc.LinkPath(x, &fsv1beta1.LinkPathRequest{SourcePath: staging, TargetPath: publish}))
	if mp := must[*fsv1beta1.IsMountPointResponse](t, "IsMountPoint")(fc.IsMountPoint(x, &fsv1beta1.IsMountPointRequest{Path: publish})); !mp.IsMountPoint || mp.Error != "" {
		t.Errorf("IsMountPoint(publish) = %v, %q", mp.IsMountPoint, mp.Error)
	}
	// The publish link leads to the staging mount point: upstream follows
	// it (the PowerShell era with Get-Item ... .Target), and drivers ask
	// for the volume there (azuredisk's v1beta fallback in
	// NodeGetVolumeStats).
	if got := must[*volumev1beta1.VolumeIDFromMountResponse](t, "GetVolumeIDFromMount on the publish link")(vc.GetVolumeIDFromMount(x, &volumev1beta1.VolumeIDFromMountRequest{Mount: publish})); got.VolumeId != vol {
		t.Errorf("GetVolumeIDFromMount(publish link) = %q, want %q", got.VolumeId, vol)
	}
	if ex := must[*fsv1beta1.PathExistsResponse](t, "PathExists")(fc.PathExists(x, &fsv1beta1.PathExistsRequest{Path: publish})); !ex.Exists || ex.Error != "" {
		t.Errorf("PathExists(publish) = %v, %q", ex.Exists, ex.Error)
	}

	// gcp-pd's unstage: unmount, find the disk, take it offline.
	must[*fsv1beta1.RmdirResponse](t, "Rmdir publish")(fc.Rmdir(x, &fsv1beta1.RmdirRequest{Path: publish, Force: true}))
	must[*volumev1beta1.DismountVolumeResponse](t, "DismountVolume")(vc.DismountVolume(x, &volumev1beta1.DismountVolumeRequest{VolumeId: vol, Path: staging}))
	// aws-ebs-csi-driver reads this text as "not mounted"; the v1beta1
	// fallback must keep it.
	_, err = vc.GetVolumeIDFromMount(x, &volumev1beta1.VolumeIDFromMountRequest{Mount: staging + `\missing`})
	wantCode(t, "GetVolumeIDFromMount missing path", err, codes.NotFound)
	if err != nil && !strings.Contains(status.Convert(err).Message(), "because it does not exist") {
		t.Errorf("GetVolumeIDFromMount missing path: message %q lacks %q", status.Convert(err).Message(), "because it does not exist")
	}
	must[*fsv1beta1.RmdirResponse](t, "Rmdir staging")(fc.Rmdir(x, &fsv1beta1.RmdirRequest{Path: staging, Force: true}))
	must[*fsv1beta1.RmdirResponse](t, "Rmdir pod dir")(fc.Rmdir(x, &fsv1beta1.RmdirRequest{Path: podDir, Force: true}))
	must[*diskv1beta2.SetAttachStateResponse](t, "SetAttachState offline")(d2.SetAttachState(x, &diskv1beta2.SetAttachStateRequest{DiskID: diskID(n)}))
	if must[*diskv1beta2.GetAttachStateResponse](t, "GetAttachState")(d2.GetAttachState(x, &diskv1beta2.GetAttachStateRequest{DiskID: diskID(n)})).IsOnline {
		t.Error("disk still online after SetAttachState(offline)")
	}
	_, err = vc.IsVolumeFormatted(x, &volumev1beta1.IsVolumeFormattedRequest{VolumeId: vol})
	// The volume is gone while its disk is offline, as on Windows.
	wantCode(t, "IsVolumeFormatted on an offline disk", err, codes.NotFound)
	must[*diskv1beta2.SetAttachStateResponse](t, "SetAttachState online")(d2.SetAttachState(x, &diskv1beta2.SetAttachStateRequest{DiskID: diskID(n), IsOnline: true}))

	wantCodes(t, []codeCase{
		{"ListVolumesOnDisk not a number", errOf(vc.ListVolumesOnDisk(x, &volumev1beta1.ListVolumesOnDiskRequest{DiskId: tooLarge})), codes.InvalidArgument},
		{"ListVolumesOnDisk missing disk", errOf(vc.ListVolumesOnDisk(x, &volumev1beta1.ListVolumesOnDiskRequest{DiskId: diskID(noDisk)})), codes.NotFound},
		{"VolumeStats unknown volume", errOf(vc.VolumeStats(x, &volumev1beta1.VolumeStatsRequest{VolumeId: unknownVolume})), codes.NotFound},
		{"VolumeStats malformed ID", errOf(vc.VolumeStats(x, &volumev1beta1.VolumeStatsRequest{VolumeId: "vol-1"})), codes.InvalidArgument},
		{"GetVolumeDiskNumber unknown volume", errOf(vc.GetVolumeDiskNumber(x, &volumev1beta1.VolumeDiskNumberRequest{VolumeId: unknownVolume})), codes.NotFound},
		{"GetVolumeIDFromMount outside", errOf(vc.GetVolumeIDFromMount(x, &volumev1beta1.VolumeIDFromMountRequest{Mount: outside})), codes.PermissionDenied},
		{"MountVolume outside", errOf(vc.MountVolume(x, &volumev1beta1.MountVolumeRequest{VolumeId: vol, Path: outside})), codes.PermissionDenied},
		{"DismountVolume outside", errOf(vc.DismountVolume(x, &volumev1beta1.DismountVolumeRequest{VolumeId: vol, Path: outside})), codes.PermissionDenied},
		{"LinkPath source outside", errOf(fc.LinkPath(x, &fsv1beta1.LinkPathRequest{SourcePath: `C:\Windows`, TargetPath: kubelet + `\wc-win`})), codes.PermissionDenied},
		{"Mkdir outside", errOf(fc.Mkdir(x, &fsv1beta1.MkdirRequest{Path: outside})), codes.PermissionDenied},
		{"IsMountPoint missing", errOf(fc.IsMountPoint(x, &fsv1beta1.IsMountPointRequest{Path: kubelet + `\wc-nothing`})), codes.NotFound},
	})
}

// TestStageFlowV1beta2 stages disk 13 as azuredisk does when the v1 pipes
// are missing: disk v1beta2, volume v1beta2, filesystem v1beta1, and
// unstages the azuredisk way: WriteVolumeCache, then Rmdir of the mount
// point without DismountVolume.
func TestStageFlowV1beta2(t *testing.T) {
	const n = 13
	dc := diskv1beta2.NewDiskClient(conn(t, "disk/v1beta2"))
	vc := volumev1beta2.NewVolumeClient(conn(t, "volume/v1beta2"))
	fc := fsv1beta1.NewFilesystemClient(conn(t, "filesystem/v1beta1"))
	x := ctx(t)
	staging, podDir, publish := stagePaths(n)

	// azuredisk finds the disk by LUN.
	locs := must[*diskv1beta2.ListDiskLocationsResponse](t, "ListDiskLocations")(dc.ListDiskLocations(x, &diskv1beta2.ListDiskLocationsRequest{}))
	id := ""
	for k, l := range locs.DiskLocations {
		if l.Adapter == "3" && l.LUNID == "3" {
			id = k
		}
	}
	if id != diskID(n) {
		t.Fatalf("disk at LUN 3:0:0:3 = %q, want %q", id, diskID(n))
	}
	must[*diskv1beta2.SetAttachStateResponse](t, "SetAttachState online")(dc.SetAttachState(x, &diskv1beta2.SetAttachStateRequest{DiskID: id, IsOnline: true}))
	must[*diskv1beta2.PartitionDiskResponse](t, "PartitionDisk")(dc.PartitionDisk(x, &diskv1beta2.PartitionDiskRequest{DiskID: id}))
	vols := must[*volumev1beta2.ListVolumesOnDiskResponse](t, "ListVolumesOnDisk")(vc.ListVolumesOnDisk(x, &volumev1beta2.ListVolumesOnDiskRequest{DiskId: id}))
	if len(vols.VolumeIds) != 1 {
		t.Fatalf("ListVolumesOnDisk(%s) = %q, want one volume", id, vols.VolumeIds)
	}
	vol := vols.VolumeIds[0]
	if must[*volumev1beta2.IsVolumeFormattedResponse](t, "IsVolumeFormatted")(vc.IsVolumeFormatted(x, &volumev1beta2.IsVolumeFormattedRequest{VolumeId: vol})).Formatted {
		t.Fatal("new volume reported formatted")
	}
	must[*volumev1beta2.FormatVolumeResponse](t, "FormatVolume")(vc.FormatVolume(x, &volumev1beta2.FormatVolumeRequest{VolumeId: vol}))
	must[*fsv1beta1.MkdirResponse](t, "Mkdir staging")(fc.Mkdir(x, &fsv1beta1.MkdirRequest{Path: staging}))
	must[*volumev1beta2.MountVolumeResponse](t, "MountVolume")(vc.MountVolume(x, &volumev1beta2.MountVolumeRequest{VolumeId: vol, Path: staging}))
	if got := must[*volumev1beta2.VolumeIDFromMountResponse](t, "GetVolumeIDFromMount")(vc.GetVolumeIDFromMount(x, &volumev1beta2.VolumeIDFromMountRequest{Mount: staging})); got.VolumeId != vol {
		t.Errorf("GetVolumeIDFromMount = %q, want %q", got.VolumeId, vol)
	}
	if s := must[*volumev1beta2.VolumeStatsResponse](t, "VolumeStats")(vc.VolumeStats(x, &volumev1beta2.VolumeStatsRequest{VolumeId: vol})); s.VolumeSize != 1<<30-2<<20 {
		t.Errorf("VolumeStats size = %d", s.VolumeSize)
	}
	if dn := must[*volumev1beta2.VolumeDiskNumberResponse](t, "GetVolumeDiskNumber")(vc.GetVolumeDiskNumber(x, &volumev1beta2.VolumeDiskNumberRequest{VolumeId: vol})); dn.DiskNumber != n {
		t.Errorf("GetVolumeDiskNumber = %d, want %d", dn.DiskNumber, n)
	}
	must[*volumev1beta2.ResizeVolumeResponse](t, "ResizeVolume 0")(vc.ResizeVolume(x, &volumev1beta2.ResizeVolumeRequest{VolumeId: vol}))
	_, err := vc.ResizeVolume(x, &volumev1beta2.ResizeVolumeRequest{VolumeId: vol, Size: -1})
	wantCode(t, "ResizeVolume negative size", err, codes.InvalidArgument)

	must[*fsv1beta1.MkdirResponse](t, "Mkdir pod dir")(fc.Mkdir(x, &fsv1beta1.MkdirRequest{Path: podDir}))
	must[*fsv1beta1.LinkPathResponse](t, "LinkPath")(fc.LinkPath(x, &fsv1beta1.LinkPathRequest{SourcePath: staging, TargetPath: publish}))
	must[*fsv1beta1.RmdirResponse](t, "Rmdir publish")(fc.Rmdir(x, &fsv1beta1.RmdirRequest{Path: publish, Force: true}))

	must[*volumev1beta2.WriteVolumeCacheResponse](t, "WriteVolumeCache")(vc.WriteVolumeCache(x, &volumev1beta2.WriteVolumeCacheRequest{VolumeId: vol}))
	_, err = vc.WriteVolumeCache(x, &volumev1beta2.WriteVolumeCacheRequest{VolumeId: unknownVolume})
	wantCode(t, "WriteVolumeCache unknown volume", err, codes.NotFound)
	// Rmdir(force) of the mount point removes the mount, not the files.
	must[*fsv1beta1.RmdirResponse](t, "Rmdir staging")(fc.Rmdir(x, &fsv1beta1.RmdirRequest{Path: staging, Force: true}))
	_, err = vc.GetVolumeIDFromMount(x, &volumev1beta2.VolumeIDFromMountRequest{Mount: staging})
	wantCode(t, "GetVolumeIDFromMount after Rmdir", err, codes.NotFound)
	must[*volumev1beta2.DismountVolumeResponse](t, "DismountVolume of a removed mount")(vc.DismountVolume(x, &volumev1beta2.DismountVolumeRequest{VolumeId: vol, Path: staging}))
	must[*fsv1beta1.RmdirResponse](t, "Rmdir pod dir")(fc.Rmdir(x, &fsv1beta1.RmdirRequest{Path: podDir, Force: true}))

	_, err = vc.ListVolumesOnDisk(x, &volumev1beta2.ListVolumesOnDiskRequest{DiskId: ""})
	wantCode(t, "ListVolumesOnDisk empty disk ID", err, codes.InvalidArgument)
	_, err = vc.ListVolumesOnDisk(x, &volumev1beta2.ListVolumesOnDiskRequest{DiskId: diskID(noDisk)})
	wantCode(t, "ListVolumesOnDisk missing disk", err, codes.NotFound)
	_, err = vc.MountVolume(x, &volumev1beta2.MountVolumeRequest{VolumeId: vol, Path: outside})
	wantCode(t, "MountVolume outside", err, codes.PermissionDenied)
	_, err = vc.GetVolumeIDFromMount(x, &volumev1beta2.VolumeIDFromMountRequest{Mount: outside})
	wantCode(t, "GetVolumeIDFromMount outside", err, codes.PermissionDenied)
	_, err = vc.VolumeStats(x, &volumev1beta2.VolumeStatsRequest{VolumeId: unknownVolume})
	wantCode(t, "VolumeStats unknown volume", err, codes.NotFound)
}

// TestStageFlowV1beta3 stages disk 14 with disk and volume v1beta3 and
// filesystem v1beta2: the v1 messages under their beta packages.
func TestStageFlowV1beta3(t *testing.T) {
	const n = 14
	dc := diskv1beta3.NewDiskClient(conn(t, "disk/v1beta3"))
	vc := volumev1beta3.NewVolumeClient(conn(t, "volume/v1beta3"))
	fc := fsv1beta2.NewFilesystemClient(conn(t, "filesystem/v1beta2"))
	x := ctx(t)
	staging, podDir, publish := stagePaths(n)

	must[*diskv1beta3.SetDiskStateResponse](t, "SetDiskState offline")(dc.SetDiskState(x, &diskv1beta3.SetDiskStateRequest{DiskNumber: n}))
	if must[*diskv1beta3.GetDiskStateResponse](t, "GetDiskState")(dc.GetDiskState(x, &diskv1beta3.GetDiskStateRequest{DiskNumber: n})).IsOnline {
		t.Fatal("disk online after SetDiskState(offline)")
	}
	_, err := vc.ListVolumesOnDisk(x, &volumev1beta3.ListVolumesOnDiskRequest{DiskNumber: n})
	wantCode(t, "ListVolumesOnDisk offline disk", err, codes.FailedPrecondition)
	must[*diskv1beta3.SetDiskStateResponse](t, "SetDiskState online")(dc.SetDiskState(x, &diskv1beta3.SetDiskStateRequest{DiskNumber: n, IsOnline: true}))
	must[*diskv1beta3.PartitionDiskResponse](t, "PartitionDisk")(dc.PartitionDisk(x, &diskv1beta3.PartitionDiskRequest{DiskNumber: n}))
	vols := must[*volumev1beta3.ListVolumesOnDiskResponse](t, "ListVolumesOnDisk")(vc.ListVolumesOnDisk(x, &volumev1beta3.ListVolumesOnDiskRequest{DiskNumber: n, PartitionNumber: 1}))
	if len(vols.VolumeIds) != 1 {
		t.Fatalf("ListVolumesOnDisk(%d, 1) = %q, want one volume", n, vols.VolumeIds)
	}
	vol := vols.VolumeIds[0]
	if must[*volumev1beta3.IsVolumeFormattedResponse](t, "IsVolumeFormatted")(vc.IsVolumeFormatted(x, &volumev1beta3.IsVolumeFormattedRequest{VolumeId: vol})).Formatted {
		t.Fatal("new volume reported formatted")
	}
	must[*volumev1beta3.FormatVolumeResponse](t, "FormatVolume")(vc.FormatVolume(x, &volumev1beta3.FormatVolumeRequest{VolumeId: vol}))

	must[*fsv1beta2.MkdirResponse](t, "Mkdir staging")(fc.Mkdir(x, &fsv1beta2.MkdirRequest{Path: staging}))
	if !must[*fsv1beta2.PathExistsResponse](t, "PathExists")(fc.PathExists(x, &fsv1beta2.PathExistsRequest{Path: staging})).Exists {
		t.Fatal("staging dir missing after Mkdir")
	}
	must[*volumev1beta3.MountVolumeResponse](t, "MountVolume")(vc.MountVolume(x, &volumev1beta3.MountVolumeRequest{VolumeId: vol, TargetPath: staging}))
	if got := must[*volumev1beta3.GetVolumeIDFromTargetPathResponse](t, "GetVolumeIDFromTargetPath")(vc.GetVolumeIDFromTargetPath(x, &volumev1beta3.GetVolumeIDFromTargetPathRequest{TargetPath: staging})); got.VolumeId != vol {
		t.Errorf("GetVolumeIDFromTargetPath = %q, want %q", got.VolumeId, vol)
	}
	if s := must[*volumev1beta3.GetVolumeStatsResponse](t, "GetVolumeStats")(vc.GetVolumeStats(x, &volumev1beta3.GetVolumeStatsRequest{VolumeId: vol})); s.TotalBytes != 1<<30-2<<20 || s.UsedBytes <= 0 {
		t.Errorf("GetVolumeStats = %d/%d", s.TotalBytes, s.UsedBytes)
	}
	if dn := must[*volumev1beta3.GetDiskNumberFromVolumeIDResponse](t, "GetDiskNumberFromVolumeID")(vc.GetDiskNumberFromVolumeID(x, &volumev1beta3.GetDiskNumberFromVolumeIDRequest{VolumeId: vol})); dn.DiskNumber != n {
		t.Errorf("GetDiskNumberFromVolumeID = %d, want %d", dn.DiskNumber, n)
	}
	must[*volumev1beta3.WriteVolumeCacheResponse](t, "WriteVolumeCache")(vc.WriteVolumeCache(x, &volumev1beta3.WriteVolumeCacheRequest{VolumeId: vol}))
	must[*volumev1beta3.ResizeVolumeResponse](t, "ResizeVolume 0")(vc.ResizeVolume(x, &volumev1beta3.ResizeVolumeRequest{VolumeId: vol}))

	must[*fsv1beta2.MkdirResponse](t, "Mkdir pod dir")(fc.Mkdir(x, &fsv1beta2.MkdirRequest{Path: podDir}))
	must[*fsv1beta2.CreateSymlinkResponse](t, "CreateSymlink")(fc.CreateSymlink(x, &fsv1beta2.CreateSymlinkRequest{SourcePath: staging, TargetPath: publish}))
	if !must[*fsv1beta2.IsSymlinkResponse](t, "IsSymlink")(fc.IsSymlink(x, &fsv1beta2.IsSymlinkRequest{Path: publish})).IsSymlink {
		t.Error("IsSymlink(publish) = false")
	}
	must[*fsv1beta2.RmdirResponse](t, "Rmdir publish")(fc.Rmdir(x, &fsv1beta2.RmdirRequest{Path: publish, Force: true}))
	must[*volumev1beta3.UnmountVolumeResponse](t, "UnmountVolume")(vc.UnmountVolume(x, &volumev1beta3.UnmountVolumeRequest{VolumeId: vol, TargetPath: staging}))
	must[*fsv1beta2.RmdirResponse](t, "Rmdir staging")(fc.Rmdir(x, &fsv1beta2.RmdirRequest{Path: staging}))
	must[*fsv1beta2.RmdirResponse](t, "Rmdir pod dir")(fc.Rmdir(x, &fsv1beta2.RmdirRequest{Path: podDir, Force: true}))

	wantCodes(t, []codeCase{
		{"ListVolumesOnDisk missing disk", errOf(vc.ListVolumesOnDisk(x, &volumev1beta3.ListVolumesOnDiskRequest{DiskNumber: noDisk})), codes.NotFound},
		{"MountVolume outside", errOf(vc.MountVolume(x, &volumev1beta3.MountVolumeRequest{VolumeId: vol, TargetPath: outside})), codes.PermissionDenied},
		{"GetVolumeIDFromTargetPath outside", errOf(vc.GetVolumeIDFromTargetPath(x, &volumev1beta3.GetVolumeIDFromTargetPathRequest{TargetPath: outside})), codes.PermissionDenied},
		{"UnmountVolume dotdot path", errOf(vc.UnmountVolume(x, &volumev1beta3.UnmountVolumeRequest{VolumeId: vol, TargetPath: kubelet + `\..\x`})), codes.InvalidArgument},
		{"GetVolumeStats unknown volume", errOf(vc.GetVolumeStats(x, &volumev1beta3.GetVolumeStatsRequest{VolumeId: unknownVolume})), codes.NotFound},
		{"CreateSymlink link outside", errOf(fc.CreateSymlink(x, &fsv1beta2.CreateSymlinkRequest{SourcePath: staging, TargetPath: outside})), codes.PermissionDenied},
		{"PathExists outside", errOf(fc.PathExists(x, &fsv1beta2.PathExistsRequest{Path: outside})), codes.PermissionDenied},
		{"Rmdir missing", errOf(fc.Rmdir(x, &fsv1beta2.RmdirRequest{Path: kubelet + `\wc-nothing`})), codes.NotFound},
	})
}
