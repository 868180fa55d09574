package e2e

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"

	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	filesystemv2alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v2alpha1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/simtest"
)

// filesystemAPI is what filesystem v1 and v2alpha1 have in common, so one
// suite exercises both wire versions. Each method is one gRPC call.
type filesystemAPI interface {
	PathExists(ctx context.Context, path string) (bool, error)
	Mkdir(ctx context.Context, path string) error
	Rmdir(ctx context.Context, path string, force bool) error
	CreateSymlink(ctx context.Context, source, target string) error
	IsSymlink(ctx context.Context, path string) (bool, error)
}

type filesystemV1 struct{ c filesystemv1.FilesystemClient }

func (f filesystemV1) PathExists(ctx context.Context, path string) (bool, error) {
	r, err := f.c.PathExists(ctx, &filesystemv1.PathExistsRequest{Path: path})
	return r.GetExists(), err
}

func (f filesystemV1) Mkdir(ctx context.Context, path string) error {
	_, err := f.c.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: path})
	return err
}

func (f filesystemV1) Rmdir(ctx context.Context, path string, force bool) error {
	_, err := f.c.Rmdir(ctx, &filesystemv1.RmdirRequest{Path: path, Force: force})
	return err
}

func (f filesystemV1) CreateSymlink(ctx context.Context, source, target string) error {
	_, err := f.c.CreateSymlink(ctx, &filesystemv1.CreateSymlinkRequest{SourcePath: source, TargetPath: target})
	return err
}

func (f filesystemV1) IsSymlink(ctx context.Context, path string) (bool, error) {
	r, err := f.c.IsSymlink(ctx, &filesystemv1.IsSymlinkRequest{Path: path})
	return r.GetIsSymlink(), err
}

type filesystemV2alpha1 struct {
	c filesystemv2alpha1.FilesystemClient
}

func (f filesystemV2alpha1) PathExists(ctx context.Context, path string) (bool, error) {
	r, err := f.c.PathExists(ctx, &filesystemv2alpha1.PathExistsRequest{Path: path})
	return r.GetExists(), err
}

func (f filesystemV2alpha1) Mkdir(ctx context.Context, path string) error {
	_, err := f.c.Mkdir(ctx, &filesystemv2alpha1.MkdirRequest{Path: path})
	return err
}

func (f filesystemV2alpha1) Rmdir(ctx context.Context, path string, force bool) error {
	_, err := f.c.Rmdir(ctx, &filesystemv2alpha1.RmdirRequest{Path: path, Force: force})
	return err
}

func (f filesystemV2alpha1) CreateSymlink(ctx context.Context, source, target string) error {
	_, err := f.c.CreateSymlink(ctx, &filesystemv2alpha1.CreateSymlinkRequest{SourcePath: source, TargetPath: target})
	return err
}

func (f filesystemV2alpha1) IsSymlink(ctx context.Context, path string) (bool, error) {
	r, err := f.c.IsSymlink(ctx, &filesystemv2alpha1.IsSymlinkRequest{Path: path})
	return r.GetIsSymlink(), err
}

// TestFilesystemV1 calls every method of filesystem v1.
func TestFilesystemV1(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	filesystemSuite(t, e, filesystemV1{e.fs1})
}

// TestFilesystemV2alpha1 calls every method of filesystem v2alpha1: the v1
// suite and RmdirContents.
func TestFilesystemV2alpha1(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	api := filesystemV2alpha1{e.fs2}
	filesystemSuite(t, e, api)

	ctx := t.Context()
	rmdirContents := func(p string) error {
		_, err := e.fs2.RmdirContents(ctx, &filesystemv2alpha1.RmdirContentsRequest{Path: p})
		return err
	}
	dir := kubelet + `\pods\9e1d\volumes\kubernetes.io~empty-dir\cache`
	ok(t, "Mkdir", api.Mkdir(ctx, dir+`\a\b`))
	ok(t, "WriteFile", e.host.WriteFile(dir+`\top.txt`, []byte("top")))
	ok(t, "WriteFile", e.host.WriteFile(dir+`\a\inner.txt`, []byte("inner")))
	// A mount point and a symlink inside are unlinked, never entered.
	staging := kubelet + `\plugins\e2e\rc-staging`
	vol := stageVolume(t, e, dataDisk2, staging)
	ok(t, "WriteFile", e.host.WriteFile(staging+`\keep.txt`, []byte("keep")))
	ok(t, "CreateSymlink", api.CreateSymlink(ctx, staging, dir+`\link`))
	_, err := e.vol1.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: vol, TargetPath: dir + `\mnt`})
	ok(t, "MountVolume", err)

	twice(t, "RmdirContents", func() error { return rmdirContents(dir) })
	if exists, err := api.PathExists(ctx, dir); err != nil || !exists {
		t.Errorf("PathExists(dir) after RmdirContents = %v, %v; want the directory kept", exists, err)
	}
	for _, gone := range []string{`\a`, `\a\b`, `\top.txt`, `\link`, `\mnt`} {
		if exists, err := api.PathExists(ctx, dir+gone); err != nil || exists {
			t.Errorf("PathExists(%s) after RmdirContents = %v, %v; want false", dir+gone, exists, err)
		}
	}
	if got, err := e.host.ReadFile(staging + `\keep.txt`); err != nil || string(got) != "keep" {
		t.Errorf("file on the volume mounted inside after RmdirContents = %q, %v; want it kept", got, err)
	}

	ok(t, "WriteFile", e.host.WriteFile(dir+`\file.txt`, nil))
	wantErr(t, "RmdirContents(file)", rmdirContents(dir+`\file.txt`), codes.FailedPrecondition, "is not a directory")
	wantErr(t, "RmdirContents(missing)", rmdirContents(dir+`\missing`), codes.NotFound, "does not exist")
	wantErr(t, "RmdirContents(working dir)", rmdirContents(kubelet), codes.PermissionDenied, "is a working directory itself")
	for _, bp := range badPaths {
		wantErr(t, "RmdirContents("+bp.path+")", rmdirContents(bp.path), bp.code, bp.substr)
	}
}

// filesystemSuite calls every filesystem v1 method through api, on success
// and failure paths, around a volume staged on disk 1.
func filesystemSuite(t *testing.T, e *env, api filesystemAPI) {
	ctx := t.Context()
	pod := kubelet + `\pods\7c1e\volumes\kubernetes.io~csi\pvc-e2e`
	publish := pod + `\mount`
	staging := kubelet + `\plugins\kubernetes.io\csi\disk.csi.e2e\7c1e\globalmount`
	file := kubelet + `\plain-file.txt`
	ok(t, "WriteFile", e.host.WriteFile(file, []byte("plain")))

	// PathExists
	for p, want := range map[string]bool{kubelet: true, file: true, kubelet + `\nope`: false, kubelet + `\nope\deeper`: false, `c:/VAR/lib/Kubelet/`: true} {
		got, err := api.PathExists(ctx, p)
		if err != nil || got != want {
			t.Errorf("PathExists(%s) = %v, %v; want %v", p, got, err, want)
		}
	}
	for _, bp := range badPaths {
		_, err := api.PathExists(ctx, bp.path)
		wantErr(t, "PathExists("+bp.path+")", err, bp.code, bp.substr)
	}

	// Mkdir
	twice(t, "Mkdir", func() error { return api.Mkdir(ctx, pod) })
	if exists, err := api.PathExists(ctx, pod); err != nil || !exists {
		t.Errorf("PathExists after Mkdir = %v, %v; want true", exists, err)
	}
	wantErr(t, "Mkdir(over a file)", api.Mkdir(ctx, file), codes.AlreadyExists, "exists and is not a directory")
	wantErr(t, "Mkdir(below a file)", api.Mkdir(ctx, file+`\sub`), codes.AlreadyExists, "exists and is not a directory")
	for _, bp := range badPaths {
		wantErr(t, "Mkdir("+bp.path+")", api.Mkdir(ctx, bp.path), bp.code, bp.substr)
	}

	// A staged volume with a file on it.
	vol := stageVolume(t, e, dataDisk1, staging)
	payload := []byte("on the volume")
	ok(t, "WriteFile", e.host.WriteFile(staging+`\data.txt`, payload))

	// CreateSymlink: publish the staged volume.
	twice(t, "CreateSymlink", func() error { return api.CreateSymlink(ctx, staging, publish) })
	if got, err := e.host.ReadFile(publish + `\data.txt`); err != nil || string(got) != string(payload) {
		t.Errorf("file through the symlink = %q, %v; want %q", got, err, payload)
	}
	wantErr(t, "CreateSymlink(same link, other source)", api.CreateSymlink(ctx, kubelet+`\plugins`, publish), codes.AlreadyExists, "already exists")
	wantErr(t, "CreateSymlink(over a directory)", api.CreateSymlink(ctx, staging, pod), codes.AlreadyExists, "already exists")
	wantErr(t, "CreateSymlink(link above its source)", api.CreateSymlink(ctx, pod+`\loop\inner`, pod+`\loop`), codes.InvalidArgument, "would contain its own source")
	wantErr(t, "CreateSymlink(missing parent)", api.CreateSymlink(ctx, staging, kubelet+`\no\such\parent\link`), codes.NotFound, "does not exist")
	for _, bp := range badPaths {
		wantErr(t, "CreateSymlink(target "+bp.path+")", api.CreateSymlink(ctx, staging, bp.path), bp.code, bp.substr)
		wantErr(t, "CreateSymlink(source "+bp.path+")", api.CreateSymlink(ctx, bp.path, pod+`\link2`), bp.code, bp.substr)
	}
	wantErr(t, "CreateSymlink(source outside)", api.CreateSymlink(ctx, `C:\Windows`, pod+`\win`), codes.PermissionDenied, "source_path")

	// IsSymlink
	for p, want := range map[string]bool{staging: true, publish: true, pod: false, file: false} {
		got, err := api.IsSymlink(ctx, p)
		if err != nil || got != want {
			t.Errorf("IsSymlink(%s) = %v, %v; want %v", p, got, err, want)
		}
	}
	_, err := api.IsSymlink(ctx, kubelet+`\pods\missing`)
	wantErr(t, "IsSymlink(missing)", err, codes.NotFound, "does not exist")
	for _, bp := range badPaths {
		_, err := api.IsSymlink(ctx, bp.path)
		wantErr(t, "IsSymlink("+bp.path+")", err, bp.code, bp.substr)
	}

	// Rmdir of a tree.
	tree := kubelet + `\tree`
	ok(t, "Mkdir", api.Mkdir(ctx, tree+`\a\b`))
	ok(t, "WriteFile", e.host.WriteFile(tree+`\a\f.txt`, []byte("f")))
	wantErr(t, "Rmdir(non-empty, no force)", api.Rmdir(ctx, tree, false), codes.FailedPrecondition, "is not empty")
	if exists, _ := api.PathExists(ctx, tree+`\a\f.txt`); !exists {
		t.Error("Rmdir without force removed part of the tree")
	}
	ok(t, "Rmdir(empty dir)", api.Rmdir(ctx, tree+`\a\b`, false))
	ok(t, "Rmdir(force)", api.Rmdir(ctx, tree, true))
	if exists, err := api.PathExists(ctx, tree); err != nil || exists {
		t.Errorf("PathExists after Rmdir(force) = %v, %v; want false", exists, err)
	}
	ok(t, "Rmdir(missing, force) is success, as upstream's os.RemoveAll", api.Rmdir(ctx, tree, true))
	wantErr(t, "Rmdir(missing, no force)", api.Rmdir(ctx, tree, false), codes.NotFound, "does not exist")
	wantErr(t, "Rmdir(working dir)", api.Rmdir(ctx, kubelet, true), codes.PermissionDenied, "is a working directory itself")
	wantErr(t, "Rmdir(working dir, other spelling)", api.Rmdir(ctx, `c:\VAR\LIB\KUBELET\`, true), codes.PermissionDenied, "is a working directory itself")
	for _, bp := range badPaths {
		wantErr(t, "Rmdir("+bp.path+")", api.Rmdir(ctx, bp.path, true), bp.code, bp.substr)
	}

	// Unpublish: Rmdir of the symlink removes the link, not its target.
	ok(t, "Rmdir(symlink)", api.Rmdir(ctx, publish, false))
	if exists, err := api.PathExists(ctx, publish); err != nil || exists {
		t.Errorf("PathExists(symlink) after Rmdir = %v, %v; want false", exists, err)
	}
	if got, err := e.host.ReadFile(staging + `\data.txt`); err != nil || string(got) != string(payload) {
		t.Errorf("file after removing the symlink = %q, %v; want %q", got, err, payload)
	}

	// Unstage the way some drivers do: Rmdir(force) of the mount point. It
	// unlinks the mount point; the volume and its data stay.
	ok(t, "Rmdir(force) of the mount point", api.Rmdir(ctx, staging, true))
	if exists, err := api.PathExists(ctx, staging); err != nil || exists {
		t.Errorf("PathExists(mount point) after Rmdir = %v, %v; want false", exists, err)
	}
	info := simtest.Volume(t, e.host, vol)
	if info.FileSystem != "NTFS" || len(info.MountPoints) != 0 || info.UsedBytes != simulated.NTFSOverhead(info.Size)+4096 {
		t.Errorf("volume after Rmdir(force) of its mount point: %+v; want NTFS, no mount points, its file still counted", info)
	}
	again := kubelet + `\plugins\again`
	_, err = e.vol1.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: vol, TargetPath: again})
	ok(t, "MountVolume again", err)
	if got, err := e.host.ReadFile(again + `\data.txt`); err != nil || string(got) != string(payload) {
		t.Errorf("file after Rmdir(force) of the old mount point = %q, %v; want %q", got, err, payload)
	}
	if isLink, err := api.IsSymlink(ctx, again); err != nil || !isLink {
		t.Errorf("IsSymlink(new mount point) = %v, %v; want true", isLink, err)
	}
}
