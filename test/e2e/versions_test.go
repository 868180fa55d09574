package e2e

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	filesystemv2alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v2alpha1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	volumev2alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v2alpha1"
)

// TestVersionsShareState checks that the v1 and v2alpha1 endpoints of a
// group are two views of one Service and one host: what one version does,
// the other sees.
func TestVersionsShareState(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	staging := kubelet + `\plugins\kubernetes.io\csi\disk.csi.e2e\versions\globalmount`

	// Staged entirely through the v1 endpoints...
	vol := stageVolume(t, e, dataDisk1, staging)

	// ...and seen through the v2alpha1 ones.
	l2, err := e.vol2.ListVolumesOnDisk(ctx, &volumev2alpha1.ListVolumesOnDiskRequest{DiskNumber: dataDisk1})
	if err != nil || len(l2.GetVolumeIds()) != 1 || l2.GetVolumeIds()[0] != vol {
		t.Errorf("volume v2alpha1 ListVolumesOnDisk = %q, %v; want [%s] as v1 listed", l2.GetVolumeIds(), err, vol)
	}
	f2, err := e.vol2.IsVolumeFormatted(ctx, &volumev2alpha1.IsVolumeFormattedRequest{VolumeId: vol})
	if err != nil || !f2.GetFormatted() {
		t.Errorf("volume v2alpha1 IsVolumeFormatted = %v, %v; want true after v1 formatted it", f2.GetFormatted(), err)
	}
	at, err := e.vol2.GetVolumeIDFromTargetPath(ctx, &volumev2alpha1.GetVolumeIDFromTargetPathRequest{TargetPath: staging})
	if err != nil || at.GetVolumeId() != vol {
		t.Errorf("volume v2alpha1 GetVolumeIDFromTargetPath = %q, %v; want %s mounted through v1", at.GetVolumeId(), err, vol)
	}
	closest, err := e.vol2.GetClosestVolumeIDFromTargetPath(ctx, &volumev2alpha1.GetClosestVolumeIDFromTargetPathRequest{TargetPath: staging})
	if err != nil || closest.GetVolumeId() != vol {
		t.Errorf("volume v2alpha1 GetClosestVolumeIDFromTargetPath = %q, %v; want %s", closest.GetVolumeId(), err, vol)
	}
	_, err = e.vol2.FormatVolume(ctx, &volumev2alpha1.FormatVolumeRequest{VolumeId: vol})
	wantErr(t, "volume v2alpha1 FormatVolume of a volume v1 formatted", err, codes.FailedPrecondition, "is already formatted")
	ex, err := e.fs2.PathExists(ctx, &filesystemv2alpha1.PathExistsRequest{Path: staging})
	if err != nil || !ex.GetExists() {
		t.Errorf("filesystem v2alpha1 PathExists(staging) = %v, %v; want true after filesystem v1 Mkdir", ex.GetExists(), err)
	}
	link, err := e.fs2.IsSymlink(ctx, &filesystemv2alpha1.IsSymlinkRequest{Path: staging})
	if err != nil || !link.GetIsSymlink() {
		t.Errorf("filesystem v2alpha1 IsSymlink(mount point) = %v, %v; want true", link.GetIsSymlink(), err)
	}

	// The other way round: v2alpha1 unmounts and empties, v1 sees it.
	_, err = e.vol2.UnmountVolume(ctx, &volumev2alpha1.UnmountVolumeRequest{VolumeId: vol, TargetPath: staging})
	ok(t, "volume v2alpha1 UnmountVolume", err)
	_, err = e.vol1.GetVolumeIDFromTargetPath(ctx, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: staging})
	wantErr(t, "volume v1 GetVolumeIDFromTargetPath after a v2alpha1 unmount", err, codes.NotFound, "it is not a mounted folder")
	// A mount through v1 at the path v2alpha1 mounted is the idempotent
	// retry, not a conflict.
	_, err = e.vol2.MountVolume(ctx, &volumev2alpha1.MountVolumeRequest{VolumeId: vol, TargetPath: staging})
	ok(t, "volume v2alpha1 MountVolume", err)
	_, err = e.vol1.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: vol, TargetPath: staging})
	ok(t, "volume v1 MountVolume of the same volume at the same path", err)

	dir := kubelet + `\pods\versions\cache`
	_, err = e.fs1.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: dir + `\sub`})
	ok(t, "filesystem v1 Mkdir", err)
	_, err = e.fs2.RmdirContents(ctx, &filesystemv2alpha1.RmdirContentsRequest{Path: dir})
	ok(t, "filesystem v2alpha1 RmdirContents", err)
	for p, want := range map[string]bool{dir: true, dir + `\sub`: false} {
		r, err := e.fs1.PathExists(ctx, &filesystemv1.PathExistsRequest{Path: p})
		if err != nil || r.GetExists() != want {
			t.Errorf("filesystem v1 PathExists(%s) after v2alpha1 RmdirContents = %v, %v; want %v", p, r.GetExists(), err, want)
		}
	}
}

// TestVersionsUnimplemented checks that a method a version lacks, or a
// service another endpoint serves, is codes.Unimplemented on the wire and
// does nothing.
func TestVersionsUnimplemented(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	dir := kubelet + `\pods\unimplemented`
	_, err := e.fs1.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: dir + `\keep`})
	ok(t, "Mkdir", err)

	for _, c := range []struct {
		endpoint, method string
		req, resp        any
		substr           string
	}{
		// RmdirContents is new in filesystem v2alpha1.
		{"csi-proxy-filesystem-v1", "/v1.Filesystem/RmdirContents",
			&filesystemv2alpha1.RmdirContentsRequest{Path: dir}, &filesystemv2alpha1.RmdirContentsResponse{}, "RmdirContents"},
		// GetClosestVolumeIDFromTargetPath is new in volume v2alpha1.
		{"csi-proxy-volume-v1", "/v1.Volume/GetClosestVolumeIDFromTargetPath",
			&volumev2alpha1.GetClosestVolumeIDFromTargetPathRequest{TargetPath: kubelet}, &volumev2alpha1.GetClosestVolumeIDFromTargetPathResponse{}, "GetClosestVolumeIDFromTargetPath"},
		// Each endpoint serves only its own group-version: the v2alpha1
		// service is not on the v1 endpoint...
		{"csi-proxy-filesystem-v1", "/v2alpha1.Filesystem/RmdirContents",
			&filesystemv2alpha1.RmdirContentsRequest{Path: dir}, &filesystemv2alpha1.RmdirContentsResponse{}, "v2alpha1.Filesystem"},
		// ...and four groups share package v1, so the endpoint alone tells
		// them apart: the disk endpoint has no v1.Filesystem.
		{"csi-proxy-disk-v1", "/v1.Filesystem/Rmdir",
			&filesystemv1.RmdirRequest{Path: dir, Force: true}, &filesystemv1.RmdirResponse{}, "v1.Filesystem"},
	} {
		err := e.conns[c.endpoint].Invoke(ctx, c.method, c.req, c.resp)
		if st, _ := status.FromError(err); st.Code() != codes.Unimplemented {
			t.Errorf("%s on %s: got %v %q, want Unimplemented", c.method, c.endpoint, st.Code(), st.Message())
		} else {
			wantErr(t, c.method+" on "+c.endpoint, err, codes.Unimplemented, c.substr)
		}
	}
	r, err := e.fs2.PathExists(ctx, &filesystemv2alpha1.PathExistsRequest{Path: dir + `\keep`})
	if err != nil || !r.GetExists() {
		t.Errorf("PathExists(%s) after the unimplemented calls = %v, %v; want it untouched", dir+`\keep`, r.GetExists(), err)
	}
}
