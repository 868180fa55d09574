package simulated_test

import (
	"bytes"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

func TestPathExistsAndMkdir(t *testing.T) {
	h := defaultHost(t)
	fs := h.Filesystem()
	p := kubelet + `\plugins\x.csi.io\Staging`
	if ok, err := fs.PathExists(ctx, p); ok || err != nil {
		t.Fatalf("PathExists(missing) = %v, %v", ok, err)
	}
	must(t, fs.Mkdir(ctx, p)) // MkdirAll
	must(t, fs.Mkdir(ctx, p)) // existing: success
	for _, q := range []string{p, kubelet + `\PLUGINS\X.CSI.IO\staging`, `c:\VAR`} {
		if ok, err := fs.PathExists(ctx, q); !ok || err != nil {
			t.Errorf("PathExists(%q) = %v, %v; want true (case-insensitive)", q, ok, err)
		}
	}
	// A path below a file does not exist; Mkdir there and over a file fail.
	must(t, h.WriteFile(kubelet+`\file`, []byte("x")))
	if ok, err := fs.PathExists(ctx, kubelet+`\file\below`); ok || err != nil {
		t.Errorf("PathExists(below a file) = %v, %v; want false", ok, err)
	}
	wantErr(t, fs.Mkdir(ctx, kubelet+`\file`), errdefs.ErrAlreadyExists, "not a directory")
	wantErr(t, fs.Mkdir(ctx, kubelet+`\file\below`), errdefs.ErrAlreadyExists)
	// A path on a drive that does not exist.
	if ok, err := fs.PathExists(ctx, `Q:\x`); ok || err != nil {
		t.Errorf("PathExists(Q:) = %v, %v", ok, err)
	}
	wantErr(t, fs.Mkdir(ctx, `Q:\x`), errdefs.ErrNotFound, "drive Q:")
	// Malformed paths from direct callers are refused.
	_, err := fs.PathExists(ctx, `relative\path`)
	wantErr(t, err, errdefs.ErrInvalidArgument)
}

func TestNamesKeepTheirCase(t *testing.T) {
	h := defaultHost(t)
	id := formatted(t, h, 1)
	must(t, h.Filesystem().Mkdir(ctx, kubelet+`\MixedCase`))
	must(t, h.Volume().MountVolume(ctx, id, kubelet+`\mixedcase`))
	if mp := volumeInfo(t, h, id).MountPoints; len(mp) != 1 || mp[0] != kubelet+`\MixedCase` {
		t.Errorf("MountPoints = %v; want the name as created", mp)
	}
}

func TestMkdirFollowsLinks(t *testing.T) {
	h := defaultHost(t)
	fs := h.Filesystem()
	must(t, fs.Mkdir(ctx, kubelet+`\real`))
	must(t, fs.CreateSymlink(ctx, kubelet+`\real`, kubelet+`\link`))
	must(t, fs.Mkdir(ctx, kubelet+`\link`)) // a link to a directory: success
	must(t, fs.Mkdir(ctx, kubelet+`\link\sub\deeper`))
	if ok, _ := fs.PathExists(ctx, kubelet+`\real\sub\deeper`); !ok {
		t.Error("Mkdir through a link did not create in the target")
	}
	must(t, fs.CreateSymlink(ctx, kubelet+`\nowhere`, kubelet+`\dangling`))
	wantErr(t, fs.Mkdir(ctx, kubelet+`\dangling`), errdefs.ErrAlreadyExists, "link")
}

func TestRmdir(t *testing.T) {
	h := defaultHost(t)
	fs := h.Filesystem()
	dir := kubelet + `\pods\p1`
	must(t, fs.Mkdir(ctx, dir+`\sub`))
	must(t, h.WriteFile(dir+`\sub\f`, []byte("x")))

	wantErr(t, fs.Rmdir(ctx, dir, false), errdefs.ErrFailedPrecondition, "is not empty")
	must(t, fs.Rmdir(ctx, dir, true))
	if ok, _ := fs.PathExists(ctx, dir); ok {
		t.Error("Rmdir(force) left the tree")
	}
	wantErr(t, fs.Rmdir(ctx, dir, true), errdefs.ErrNotFound)
	wantErr(t, fs.Rmdir(ctx, kubelet+`\no\such\dir`, false), errdefs.ErrNotFound)
	must(t, fs.Mkdir(ctx, dir))
	must(t, fs.Rmdir(ctx, dir, false)) // empty
	// A file is removed, as os.Remove does.
	must(t, h.WriteFile(kubelet+`\f`, nil))
	must(t, fs.Rmdir(ctx, kubelet+`\f`, false))
	wantErr(t, fs.Rmdir(ctx, `C:\`, true), errdefs.ErrFailedPrecondition, "root")
}

func TestRmdirForceSparesMountedVolumesAndLinkTargets(t *testing.T) {
	h := defaultHost(t)
	fs, v := h.Filesystem(), h.Volume()
	id := formatted(t, h, 1)
	staging := kubelet + `\plugins\staging`
	must(t, fs.Mkdir(ctx, staging))
	must(t, v.MountVolume(ctx, id, staging))
	must(t, h.WriteFile(staging+`\data`, []byte("keep me")))
	must(t, fs.Mkdir(ctx, kubelet+`\keep\inner`))
	must(t, h.WriteFile(kubelet+`\keep\inner\f`, []byte("keep me too")))

	pod := kubelet + `\pods\p1\volumes`
	must(t, fs.Mkdir(ctx, pod))
	must(t, fs.CreateSymlink(ctx, staging, pod+`\pv`))
	must(t, fs.CreateSymlink(ctx, kubelet+`\keep`, pod+`\alt`))
	must(t, fs.Mkdir(ctx, pod+`\mnt`))
	must(t, v.MountVolume(ctx, formatted(t, h, 2), pod+`\mnt`))

	// Removing a link removes the link only.
	must(t, fs.Rmdir(ctx, pod+`\pv`, false))
	if got, err := h.ReadFile(staging + `\data`); err != nil || string(got) != "keep me" {
		t.Fatalf("link removal touched the target: %q, %v", got, err)
	}
	must(t, fs.CreateSymlink(ctx, staging, pod+`\pv`))

	// A tree with links and a mount point inside: only the entries go.
	must(t, fs.Rmdir(ctx, kubelet+`\pods`, true))
	if got, err := h.ReadFile(staging + `\data`); err != nil || string(got) != "keep me" {
		t.Errorf("Rmdir(force) reached through a link: %q, %v", got, err)
	}
	if got, err := h.ReadFile(kubelet + `\keep\inner\f`); err != nil || string(got) != "keep me too" {
		t.Errorf("Rmdir(force) reached through a link: %q, %v", got, err)
	}
	if n := len(h.ListVolumes()); n != 4 { // EFI, C:, disk 1, disk 2
		t.Errorf("%d volumes; want 4: Rmdir must not remove volumes", n)
	}

	// Removing the mount point itself (azuredisk's NodeUnstage) keeps the
	// volume and its data.
	must(t, fs.Rmdir(ctx, staging, true))
	if info := volumeInfo(t, h, id); len(info.MountPoints) != 0 {
		t.Errorf("MountPoints = %v after Rmdir of the mount point", info.MountPoints)
	}
	must(t, v.MountVolume(ctx, id, kubelet+`\again`))
	if got, err := h.ReadFile(kubelet + `\again\data`); err != nil || string(got) != "keep me" {
		t.Errorf("the volume lost its data: %q, %v", got, err)
	}
}

func TestRmdirContents(t *testing.T) {
	h := defaultHost(t)
	fs := h.Filesystem()
	id := formatted(t, h, 1)
	must(t, h.Volume().MountVolume(ctx, id, kubelet+`\m`))
	must(t, h.WriteFile(kubelet+`\m\keep`, []byte("x")))
	d := kubelet + `\d`
	must(t, fs.Mkdir(ctx, d+`\a\b`))
	must(t, h.WriteFile(d+`\f`, []byte("x")))
	must(t, fs.CreateSymlink(ctx, kubelet+`\m`, d+`\link`))
	must(t, fs.RmdirContents(ctx, d))
	if ok, _ := fs.PathExists(ctx, d); !ok {
		t.Fatal("RmdirContents removed the directory itself")
	}
	for _, p := range []string{d + `\a`, d + `\f`, d + `\link`} {
		if ok, _ := fs.PathExists(ctx, p); ok {
			t.Errorf("%s survived RmdirContents", p)
		}
	}
	if _, err := h.ReadFile(kubelet + `\m\keep`); err != nil {
		t.Errorf("RmdirContents followed a link: %v", err)
	}
	wantErr(t, fs.RmdirContents(ctx, kubelet+`\missing`), errdefs.ErrNotFound)
	must(t, h.WriteFile(kubelet+`\file`, nil))
	wantErr(t, fs.RmdirContents(ctx, kubelet+`\file`), errdefs.ErrFailedPrecondition, "not a directory")
}

func TestCreateSymlinkAndIsSymlink(t *testing.T) {
	h := defaultHost(t)
	fs := h.Filesystem()
	src, link := kubelet+`\src`, kubelet+`\pods\link`
	must(t, fs.Mkdir(ctx, src))
	wantErr(t, fs.CreateSymlink(ctx, src, link), errdefs.ErrNotFound) // parent missing
	must(t, fs.Mkdir(ctx, kubelet+`\pods`))
	must(t, fs.CreateSymlink(ctx, src, link))
	must(t, fs.CreateSymlink(ctx, `C:\VAR\lib\kubelet\SRC`, link)) // same source again
	must(t, fs.Mkdir(ctx, kubelet+`\alt`))
	wantErr(t, fs.CreateSymlink(ctx, kubelet+`\alt`, link), errdefs.ErrAlreadyExists)
	wantErr(t, fs.CreateSymlink(ctx, kubelet+`\alt`, src), errdefs.ErrAlreadyExists) // a directory

	is := func(p string) bool {
		t.Helper()
		ok, err := fs.IsSymlink(ctx, p)
		must(t, err)
		return ok
	}
	if !is(link) || is(src) {
		t.Errorf("IsSymlink(link) = %v, IsSymlink(dir) = %v", is(link), is(src))
	}
	_, err := fs.IsSymlink(ctx, kubelet+`\missing`)
	wantErr(t, err, errdefs.ErrNotFound)

	// A link whose target disappears: still there (Lstat), no longer a
	// symlink for IsSymlink.
	must(t, fs.Rmdir(ctx, src, false))
	if ok, _ := fs.PathExists(ctx, link); !ok {
		t.Error("PathExists must not follow the last link")
	}
	if is(link) {
		t.Error("IsSymlink is true for a dangling link")
	}

	// Mount points count as links while their volume is present.
	id := formatted(t, h, 1)
	must(t, h.Volume().MountVolume(ctx, id, kubelet+`\mnt`))
	if !is(kubelet + `\mnt`) {
		t.Error("IsSymlink(mount point) = false")
	}
	must(t, h.RemoveDisk(1))
	if is(kubelet + `\mnt`) {
		t.Error("IsSymlink(mount point of a removed volume) = true")
	}
}

func TestDanglingLinkIsAFileLink(t *testing.T) {
	h := defaultHost(t)
	fs := h.Filesystem()
	// Created before its source exists: a file link, as Go's os.Symlink
	// makes it on Windows, which cannot be used as a directory later.
	must(t, fs.CreateSymlink(ctx, kubelet+`\later`, kubelet+`\early`))
	must(t, fs.Mkdir(ctx, kubelet+`\later`))
	if ok, _ := fs.IsSymlink(ctx, kubelet+`\early`); !ok {
		t.Error("IsSymlink = false once the target exists")
	}
	wantErr(t, h.WriteFile(kubelet+`\early\f`, nil), errdefs.ErrFailedPrecondition, "file symbolic link")
	// Created after: a directory link.
	must(t, fs.CreateSymlink(ctx, kubelet+`\later`, kubelet+`\late`))
	must(t, h.WriteFile(kubelet+`\late\f`, []byte("ok")))
	if got, _ := h.ReadFile(kubelet + `\later\f`); !bytes.Equal(got, []byte("ok")) {
		t.Errorf("read %q through the directory link", got)
	}
}

func TestLinkLoop(t *testing.T) {
	h := defaultHost(t)
	fs := h.Filesystem()
	must(t, fs.Mkdir(ctx, kubelet+`\d`))
	must(t, fs.CreateSymlink(ctx, kubelet+`\d`, kubelet+`\a`))
	must(t, fs.Rmdir(ctx, kubelet+`\d`, false))
	// a -> d is a directory link; make d a link back to a.
	must(t, fs.CreateSymlink(ctx, kubelet+`\a`, kubelet+`\d`))
	_, err := fs.PathExists(ctx, kubelet+`\a\x`)
	wantErr(t, err, errdefs.ErrFailedPrecondition, "too many levels of symbolic links")
	if ok, _ := fs.IsSymlink(ctx, kubelet+`\a`); ok {
		t.Error("IsSymlink is true for a link loop")
	}
}
