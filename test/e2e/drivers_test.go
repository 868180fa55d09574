package e2e

import (
	"regexp"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/simtest"
)

// TestPublishLinkNamesTheStagedVolume: a pod's publish path is a link
// (CreateSymlink) to the staging mount point, and drivers call
// GetVolumeIDFromTargetPath on the publish path, then GetVolumeStats
// (azuredisk NodeGetVolumeStats), ResizeVolume (NodeExpandVolume) or
// WriteVolumeCache (azuredisk's unpublish flush, whose failure it only
// logs) on the volume found there (kubernetes-sigs/azuredisk-csi-driver @
// d983d613 pkg/mounter/safe_mounter_windows.go Unmount). Upstream follows
// the link; so must the daemon.
func TestPublishLinkNamesTheStagedVolume(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	staging := kubelet + `\plugins\kubernetes.io\csi\disk.csi.example\e2e\globalmount`
	id := stageVolume(t, e, dataDisk1, staging)
	pod := kubelet + `\pods\0f1e2d3c\volumes\kubernetes.io~csi\pvc-e2e`
	publish := pod + `\mount`
	_, err := e.fs1.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: pod})
	ok(t, "Mkdir pod dir", err)
	_, err = e.fs1.CreateSymlink(ctx, &filesystemv1.CreateSymlinkRequest{SourcePath: staging, TargetPath: publish})
	ok(t, "CreateSymlink(publish -> staging)", err)

	at, err := e.vol1.GetVolumeIDFromTargetPath(ctx, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: publish})
	if err != nil || at.GetVolumeId() != id {
		t.Fatalf("GetVolumeIDFromTargetPath(publish link) = %v, %v; want %s", at, err, id)
	}
	stats, err := e.vol1.GetVolumeStats(ctx, &volumev1.GetVolumeStatsRequest{VolumeId: at.GetVolumeId()})
	if err != nil || stats.GetTotalBytes() <= 0 {
		t.Errorf("GetVolumeStats(volume at the publish link) = %v, %v", stats, err)
	}
	before := simtest.Volume(t, e.host, id).Flushes
	_, err = e.vol1.WriteVolumeCache(ctx, &volumev1.WriteVolumeCacheRequest{VolumeId: at.GetVolumeId()})
	ok(t, "WriteVolumeCache(volume at the publish link)", err)
	if after := simtest.Volume(t, e.host, id).Flushes; after != before+1 {
		t.Errorf("flushes of the staged volume: %d, then %d; want one more", before, after)
	}
}

// notMountedRules are the rules by which drivers tell "not mounted" from a
// failure when GetVolumeIDFromTargetPath answers an error, re-implemented
// here from reading their Windows node code. Each sees err.Error() of the
// gRPC client's error, as the driver does.
//
// Only aws-ebs-csi-driver reads the text (searched: regexp and
// strings.Contains on errors under pkg/ of each driver at the commits in
// /work/shared/facts/driver-flows.md). azuredisk (d983d613), gcp-pd
// (b560165c), csi-driver-smb (95c69680) and vsphere (e1c1bc59) pass any
// error on unchanged, so for them no wording can help or hurt.
var notMountedRules = map[string]func(errText string) bool{
	// kubernetes-sigs/aws-ebs-csi-driver @ 429e202e,
	// pkg/mounter/mount_windows.go handleGetDeviceNameFromMountError: a
	// match means "no device is mounted there", anything else fails
	// NodeStage (first stage on kubelet's fresh staging dir) and
	// NodeUnstage (a staging dir left behind, or gone).
	"aws-ebs-csi-driver": regexp.MustCompile(`(Get-Item -Path \S+).Target, output: , error: <nil>|because it does not exist`).MatchString,
}

// TestNotMountedAnswersMatchDrivers: every "nothing is mounted here"
// answer of GetVolumeIDFromTargetPath is NotFound and passes each
// driver's own "not mounted" rule: a plain empty directory (kubelet's new
// staging dir), a missing directory, a publish link to a plain directory
// and a staging directory left behind after an unmount. v1 is what
// drivers use; v2alpha1 shares the Service.
func TestNotMountedAnswersMatchDrivers(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	plain := kubelet + `\plugins\kubernetes.io\csi\ebs.csi.aws.com\abc\globalmount`
	_, err := e.fs1.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: plain})
	ok(t, "Mkdir staging", err)
	pod := kubelet + `\pods\p1\volumes\kubernetes.io~csi\pvc-1`
	_, err = e.fs1.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: pod})
	ok(t, "Mkdir pod dir", err)
	link := pod + `\mount`
	_, err = e.fs1.CreateSymlink(ctx, &filesystemv1.CreateSymlinkRequest{SourcePath: plain, TargetPath: link})
	ok(t, "CreateSymlink(publish -> plain dir)", err)
	leftBehind := kubelet + `\plugins\kubernetes.io\csi\ebs.csi.aws.com\def\globalmount`
	id := stageVolume(t, e, dataDisk1, leftBehind)
	_, err = e.vol1.UnmountVolume(ctx, &volumev1.UnmountVolumeRequest{VolumeId: id, TargetPath: leftBehind})
	ok(t, "UnmountVolume", err)

	for what, p := range map[string]string{
		"plain empty directory":        plain,
		"missing directory":            kubelet + `\plugins\kubernetes.io\csi\ebs.csi.aws.com\gone\globalmount`,
		"publish link to a plain dir":  link,
		"staging dir left behind":      leftBehind,
		"link whose target is missing": kubelet + `\pods\p1\dangling`,
	} {
		if what == "link whose target is missing" {
			_, err := e.fs1.CreateSymlink(ctx, &filesystemv1.CreateSymlinkRequest{SourcePath: kubelet + `\nowhere`, TargetPath: p})
			ok(t, "CreateSymlink(dangling)", err)
		}
		_, err := e.vol1.GetVolumeIDFromTargetPath(ctx, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: p})
		if code := status.Code(err); code != codes.NotFound {
			t.Errorf("%s: GetVolumeIDFromTargetPath(%s) = %v; want NotFound", what, p, err)
			continue
		}
		for driver, notMounted := range notMountedRules {
			if !notMounted(err.Error()) {
				t.Errorf("%s: %s does not read %q as \"not mounted\"", what, driver, err.Error())
			}
		}
	}
}

// TestDriveLessKubeletPaths: EKS kubelets use a root dir without a drive
// letter (\var\lib\kubelet, aws-ebs-csi-driver#2100), and gcp-pd
// (@ b560165c pkg/mount-manager/safe-mounter-v1_windows.go) and azuredisk
// (@ d983d613 pkg/mounter/safe_mounter_windows.go Unmount) pass such
// paths on to MountVolume, IsSymlink and GetVolumeIDFromTargetPath. They
// name the kubelet directory's drive; outside the working directories
// they are still refused.
func TestDriveLessKubeletPaths(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	staging := `\var\lib\kubelet\plugins\kubernetes.io\csi\pd.csi.storage.gke.io\x\globalmount`
	id := stageVolume(t, e, dataDisk1, staging)
	if mps := simtest.Volume(t, e.host, id).MountPoints; len(mps) != 1 || mps[0] != `C:`+staging {
		t.Errorf("the volume is mounted at %q, want [C:%s]", mps, staging)
	}
	at, err := e.vol1.GetVolumeIDFromTargetPath(ctx, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: staging})
	if err != nil || at.GetVolumeId() != id {
		t.Errorf("GetVolumeIDFromTargetPath(%s) = %v, %v; want %s", staging, at, err, id)
	}
	link, err := e.fs1.IsSymlink(ctx, &filesystemv1.IsSymlinkRequest{Path: staging})
	if err != nil || !link.GetIsSymlink() {
		t.Errorf("IsSymlink(%s) = %v, %v; want true (a mount point)", staging, link, err)
	}
	_, err = e.fs1.PathExists(ctx, &filesystemv1.PathExistsRequest{Path: `\Windows\System32`})
	wantErr(t, "PathExists(drive-less path outside)", err, codes.PermissionDenied, "outside the working directories")
	_, err = e.fs1.PathExists(ctx, &filesystemv1.PathExistsRequest{Path: `\\fileserver\share\pvc-1`})
	wantErr(t, "PathExists(UNC path)", err, codes.InvalidArgument, "UNC or device path")
}
