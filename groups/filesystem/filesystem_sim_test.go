package filesystem_test

import (
	"context"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/simtest"
)

var ctx = context.Background()

const kubelet = `C:\var\lib\kubelet`

func simService(t *testing.T) (*filesystem.Service, *simulated.Host) {
	t.Helper()
	h := simtest.Node(t, simulated.DefaultConfig(nil))
	return filesystem.NewService(h.Filesystem(), simtest.Paths(t, h)), h
}

func TestSimPathPolicy(t *testing.T) {
	s, h := simService(t)
	// C:\var\lib\kubelet-x shares a prefix with the working dir but is
	// outside it (upstream's plain prefix check let it through).
	simtest.Must(t, h.MkdirAll(`C:\var\lib\kubelet-x`))
	for _, p := range []string{`C:\var\lib\kubelet-x`, `C:\var\lib\kubelet-x\pods`, `C:\Windows`, `C:\`} {
		_, err := s.PathExists(ctx, &filesystem.PathExistsRequest{Path: p})
		simtest.WantKind(t, err, errdefs.ErrPermissionDenied)
		_, err = s.Mkdir(ctx, &filesystem.MkdirRequest{Path: p})
		simtest.WantKind(t, err, errdefs.ErrPermissionDenied)
		_, err = s.Rmdir(ctx, &filesystem.RmdirRequest{Path: p, Force: true})
		simtest.WantKind(t, err, errdefs.ErrPermissionDenied)
	}
	if ok, _ := h.Filesystem().PathExists(ctx, `C:\var\lib\kubelet-x`); !ok {
		t.Error("a denied Rmdir removed the directory")
	}
	_, err := s.Rmdir(ctx, &filesystem.RmdirRequest{Path: `c:\VAR\lib\kubelet`, Force: true})
	simtest.WantKind(t, err, errdefs.ErrPermissionDenied)
	// A working directory itself is not emptied, and no link replaces it.
	_, err = s.RmdirContents(ctx, &filesystem.RmdirContentsRequest{Path: kubelet + `\`})
	simtest.WantKind(t, err, errdefs.ErrPermissionDenied)
	_, err = s.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{SourcePath: kubelet + `\pods`, TargetPath: kubelet})
	simtest.WantKind(t, err, errdefs.ErrPermissionDenied)
	_, err = s.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{SourcePath: `C:\Windows`, TargetPath: kubelet + `\evil`})
	simtest.WantKind(t, err, errdefs.ErrPermissionDenied)
	_, err = s.PathExists(ctx, &filesystem.PathExistsRequest{Path: kubelet + `\..\x`})
	simtest.WantKind(t, err, errdefs.ErrInvalidArgument)
}

// TestSimPublishUnpublish follows azuredisk: stage dir mounted, pod path
// linked to it, then Rmdir(force) on the pod path and on the staging
// mount point, which must keep the volume's data.
func TestSimPublishUnpublish(t *testing.T) {
	s, h := simService(t)
	staging := kubelet + `\plugins\disk.csi.azure.com\staging\pv1`
	pod := kubelet + `\pods\uid\volumes\kubernetes.io~csi\pv1\mount`
	simtest.Must(t, h.Disk().PartitionDisk(ctx, 1))
	ids, err := h.Volume().ListVolumesOnDisk(ctx, 1, 0)
	simtest.Must(t, err)
	simtest.Must(t, h.Volume().FormatVolume(ctx, ids[0]))
	_, err = s.Mkdir(ctx, &filesystem.MkdirRequest{Path: staging})
	simtest.Must(t, err)
	simtest.Must(t, h.Volume().MountVolume(ctx, ids[0], staging))
	simtest.Must(t, h.WriteFile(staging+`\data`, []byte("x")))

	_, err = s.Mkdir(ctx, &filesystem.MkdirRequest{Path: kubelet + `\pods\uid\volumes\kubernetes.io~csi\pv1`})
	simtest.Must(t, err)
	_, err = s.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{SourcePath: staging, TargetPath: pod})
	simtest.Must(t, err)
	_, err = s.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{SourcePath: staging, TargetPath: pod})
	simtest.Must(t, err) // retried: same link
	for _, p := range []string{pod, staging} {
		r, err := s.IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: p})
		if err != nil || !r.IsSymlink {
			t.Errorf("IsSymlink(%q) = %+v, %v; want true", p, r, err)
		}
	}
	r, err := s.PathExists(ctx, &filesystem.PathExistsRequest{Path: pod})
	if err != nil || !r.Exists {
		t.Errorf("PathExists(pod) = %+v, %v", r, err)
	}

	_, err = s.Rmdir(ctx, &filesystem.RmdirRequest{Path: pod, Force: true})
	simtest.Must(t, err)
	_, err = s.Rmdir(ctx, &filesystem.RmdirRequest{Path: staging, Force: true})
	simtest.Must(t, err)
	if v := h.ListVolumes(); len(v) != 3 {
		t.Fatalf("%d volumes; Rmdir must not remove volumes", len(v))
	}
	simtest.Must(t, h.Volume().MountVolume(ctx, ids[0], kubelet+`\again`))
	if _, err := h.ReadFile(kubelet + `\again\data`); err != nil {
		t.Errorf("Rmdir(force) of the mount point lost the volume's data: %v", err)
	}
	_, err = s.IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: pod})
	simtest.WantKind(t, err, errdefs.ErrNotFound)
}

func TestSimRmdirAndContents(t *testing.T) {
	s, h := simService(t)
	dir := kubelet + `\d`
	_, err := s.Mkdir(ctx, &filesystem.MkdirRequest{Path: dir + `\a`})
	simtest.Must(t, err)
	simtest.Must(t, h.WriteFile(dir+`\a\f`, nil))
	_, err = s.Rmdir(ctx, &filesystem.RmdirRequest{Path: dir})
	simtest.WantKind(t, err, errdefs.ErrFailedPrecondition)
	_, err = s.RmdirContents(ctx, &filesystem.RmdirContentsRequest{Path: dir})
	simtest.Must(t, err)
	_, err = s.Rmdir(ctx, &filesystem.RmdirRequest{Path: dir})
	simtest.Must(t, err)
	_, err = s.Rmdir(ctx, &filesystem.RmdirRequest{Path: dir})
	simtest.WantKind(t, err, errdefs.ErrNotFound)
	simtest.Must(t, h.WriteFile(kubelet+`\file`, nil))
	_, err = s.Mkdir(ctx, &filesystem.MkdirRequest{Path: kubelet + `\file`})
	simtest.WantKind(t, err, errdefs.ErrAlreadyExists)
	_, err = s.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{SourcePath: kubelet + `\a\b`, TargetPath: kubelet + `\a`})
	simtest.WantKind(t, err, errdefs.ErrInvalidArgument)
}
