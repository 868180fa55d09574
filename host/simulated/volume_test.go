package simulated_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
)

func TestFormatAndStats(t *testing.T) {
	h := defaultHost(t)
	v := h.Volume()
	id := volumeOf(t, h, 1)
	if ok, err := v.IsVolumeFormatted(ctx, id); ok || err != nil {
		t.Fatalf("IsVolumeFormatted(new volume) = %v, %v", ok, err)
	}
	_, _, err := v.VolumeStats(ctx, id)
	wantErr(t, err, errdefs.ErrFailedPrecondition, "not formatted")

	must(t, v.FormatVolume(ctx, id))
	if ok, err := v.IsVolumeFormatted(ctx, id); !ok || err != nil {
		t.Fatalf("IsVolumeFormatted = %v, %v", ok, err)
	}
	total, used, err := v.VolumeStats(ctx, id)
	must(t, err)
	if size := int64(1022 << 20); total != size || used != simulated.NTFSOverhead(size) {
		t.Errorf("VolumeStats = %d, %d; want %d, %d", total, used, size, simulated.NTFSOverhead(size))
	}
	if info := volumeInfo(t, h, id); info.FileSystem != "NTFS" || info.UsedBytes != used {
		t.Errorf("ListVolumes says %+v", info)
	}

	// Files count in whole 4 KiB clusters.
	must(t, h.Filesystem().Mkdir(ctx, kubelet+`\m`))
	must(t, v.MountVolume(ctx, id, kubelet+`\m`))
	must(t, h.WriteFile(kubelet+`\m\a`, make([]byte, 5000)))
	must(t, h.WriteFile(kubelet+`\m\b`, []byte("x")))
	_, used2, _ := v.VolumeStats(ctx, id)
	if used2-used != 3*4096 {
		t.Errorf("two files (5000 B, 1 B) added %d bytes; want %d", used2-used, 3*4096)
	}
	// Replacing a file frees its old clusters.
	must(t, h.WriteFile(kubelet+`\m\a`, nil))
	if _, used3, _ := v.VolumeStats(ctx, id); used3-used != 4096 {
		t.Errorf("after truncating a, used grew by %d; want 4096", used3-used)
	}
	// A file that does not fit is refused.
	small, err := h.AddDisk(simulated.DiskSpec{Size: 16 << 20, FileSystem: "NTFS", DriveLetter: "F"})
	must(t, err)
	_ = small
	wantErr(t, h.WriteFile(`F:\big`, make([]byte, 10<<20)), errdefs.ErrOutOfRange, "not enough space")

	// Formatting erases.
	must(t, v.FormatVolume(ctx, id))
	if ok, _ := h.Filesystem().PathExists(ctx, kubelet+`\m\b`); ok {
		t.Error("a file survived FormatVolume")
	}

	for _, id := range []string{`\\?\Volume{00000000-0000-4000-8000-000000000000}\`} {
		_, err := v.IsVolumeFormatted(ctx, id)
		wantErr(t, err, errdefs.ErrNotFound, "does not exist")
		wantErr(t, v.FormatVolume(ctx, id), errdefs.ErrNotFound)
		wantErr(t, v.FlushVolume(ctx, id), errdefs.ErrNotFound)
		_, err = v.DiskNumber(ctx, id)
		wantErr(t, err, errdefs.ErrNotFound)
	}
}

func TestVolumeIDsCompareWithoutCase(t *testing.T) {
	h := defaultHost(t)
	id := volumeOf(t, h, 1)
	upper := strings.ToUpper(id)
	n, err := h.Volume().DiskNumber(ctx, upper)
	if err != nil || n != 1 {
		t.Fatalf("DiskNumber(%s) = %d, %v", upper, n, err)
	}
	must(t, h.Volume().FormatVolume(ctx, upper))
	must(t, h.Filesystem().Mkdir(ctx, kubelet+`\m`))
	must(t, h.Volume().MountVolume(ctx, upper, kubelet+`\m`))
	got, err := h.Volume().VolumeAt(ctx, kubelet+`\m`)
	if err != nil || got != id {
		t.Errorf("VolumeAt = %q, %v; want the canonical %q", got, err, id)
	}
	if got, _ := h.Volume().ClosestVolume(ctx, kubelet+`\m`); got != id {
		t.Errorf("ClosestVolume = %q; want the canonical %q", got, id)
	}
}

func TestMountVolume(t *testing.T) {
	h := defaultHost(t)
	v, fs := h.Volume(), h.Filesystem()
	a, b := formatted(t, h, 1), formatted(t, h, 2)

	// Not an empty directory: refused.
	must(t, fs.Mkdir(ctx, kubelet+`\full`))
	must(t, h.WriteFile(kubelet+`\full\f`, []byte("x")))
	wantErr(t, v.MountVolume(ctx, a, kubelet+`\full`), errdefs.ErrFailedPrecondition, "is not an empty directory")
	wantErr(t, v.MountVolume(ctx, a, kubelet+`\full\f`), errdefs.ErrFailedPrecondition, "is a file")
	must(t, fs.CreateSymlink(ctx, kubelet+`\full`, kubelet+`\link`))
	wantErr(t, v.MountVolume(ctx, a, kubelet+`\link`), errdefs.ErrFailedPrecondition, "symbolic link")
	// Missing parent: not found. Missing target with a parent: created.
	wantErr(t, v.MountVolume(ctx, a, kubelet+`\no\such`), errdefs.ErrNotFound)
	must(t, v.MountVolume(ctx, a, kubelet+`\new`))
	// Same volume again: success; another volume there: refused.
	must(t, v.MountVolume(ctx, a, kubelet+`\new`))
	wantErr(t, v.MountVolume(ctx, b, kubelet+`\NEW`), errdefs.ErrFailedPrecondition, "already in use by volume "+a)

	if got, err := v.VolumeAt(ctx, kubelet+`\New`); err != nil || got != a {
		t.Errorf("VolumeAt = %q, %v", got, err)
	}
	if info := volumeInfo(t, h, a); !reflect.DeepEqual(info.MountPoints, []string{kubelet + `\new`}) {
		t.Errorf("MountPoints = %v", info.MountPoints)
	}
	// A volume can have several mount points.
	must(t, fs.Mkdir(ctx, kubelet+`\second`))
	must(t, v.MountVolume(ctx, a, kubelet+`\second`))
	if info := volumeInfo(t, h, a); len(info.MountPoints) != 2 {
		t.Errorf("MountPoints = %v; want two", info.MountPoints)
	}

	// A RAW volume can be mounted but not entered.
	raw, err := h.AddDisk(simulated.DiskSpec{Size: 1 << 30, Partitioned: true})
	must(t, err)
	rawID := volumeOf(t, h, raw)
	must(t, v.MountVolume(ctx, rawID, kubelet+`\raw`))
	wantErr(t, fs.Mkdir(ctx, kubelet+`\raw\sub`), errdefs.ErrFailedPrecondition, "does not contain a recognized file system")
	wantErr(t, v.MountVolume(ctx, rawID, `C:\`), errdefs.ErrFailedPrecondition, "drive root")
}

func TestUnmountVolume(t *testing.T) {
	h := defaultHost(t)
	v, fs := h.Volume(), h.Filesystem()
	a, b := formatted(t, h, 1), formatted(t, h, 2)
	target := kubelet + `\stage`
	must(t, v.MountVolume(ctx, a, target))
	before := volumeInfo(t, h, a).Flushes

	wantErr(t, v.UnmountVolume(ctx, b, target), errdefs.ErrFailedPrecondition, "mount point of volume "+a)
	must(t, v.UnmountVolume(ctx, a, target))
	if info := volumeInfo(t, h, a); info.Flushes <= before || len(info.MountPoints) != 0 {
		t.Errorf("after unmount: %+v; want a flush and no mount points", info)
	}
	// The directory stays, empty, as after DeleteVolumeMountPoint.
	if ok, _ := fs.PathExists(ctx, target); !ok {
		t.Error("the mount directory is gone")
	}
	if ok, _ := fs.IsSymlink(ctx, target); ok {
		t.Error("the former mount point is still a link")
	}
	must(t, fs.Rmdir(ctx, target, false)) // empty
	_, err := v.VolumeAt(ctx, target)
	wantErr(t, err, errdefs.ErrNotFound, "because it does not exist")
	wantErr(t, v.UnmountVolume(ctx, a, target), errdefs.ErrNotFound)
	must(t, fs.Mkdir(ctx, target))
	_, err = v.VolumeAt(ctx, target)
	wantErr(t, err, errdefs.ErrNotFound, "not a mounted folder")
	wantErr(t, v.UnmountVolume(ctx, a, target), errdefs.ErrNotFound, "not a mounted folder")
}

func TestVolumeContentFollowsTheVolume(t *testing.T) {
	h := defaultHost(t)
	v := h.Volume()
	id := formatted(t, h, 1)
	must(t, v.MountVolume(ctx, id, kubelet+`\a`))
	must(t, h.Filesystem().Mkdir(ctx, kubelet+`\a\dir`))
	must(t, h.WriteFile(kubelet+`\a\dir\data`, []byte("payload")))
	must(t, v.UnmountVolume(ctx, id, kubelet+`\a`))
	if ok, _ := h.Filesystem().PathExists(ctx, kubelet+`\a\dir`); ok {
		t.Error("the volume's files are visible after unmounting")
	}
	must(t, v.MountVolume(ctx, id, kubelet+`\b`))
	got, err := h.ReadFile(kubelet + `\B\DIR\Data`)
	if err != nil || !bytes.Equal(got, []byte("payload")) {
		t.Errorf("ReadFile after remount = %q, %v", got, err)
	}
}

func TestResizeVolume(t *testing.T) {
	h := defaultHost(t)
	v := h.Volume()
	id := formatted(t, h, 1)
	must(t, h.ResizeDisk(1, 2<<30))
	cur, maximum, err := v.VolumeSizes(ctx, id)
	if err != nil || cur != 1022<<20 || maximum != 2046<<20 {
		t.Fatalf("VolumeSizes = %d, %d, %v", cur, maximum, err)
	}
	wantErr(t, v.ResizeVolume(ctx, id, maximum+1), errdefs.ErrOutOfRange, "larger than")
	wantErr(t, v.ResizeVolume(ctx, id, 1<<20), errdefs.ErrOutOfRange, "smaller than")
	must(t, v.ResizeVolume(ctx, id, maximum))
	if total, used, _ := v.VolumeStats(ctx, id); total != maximum || used != simulated.NTFSOverhead(maximum) {
		t.Errorf("VolumeStats after resize = %d, %d", total, used)
	}
}

func TestClosestVolume(t *testing.T) {
	h := defaultHost(t)
	v, fs := h.Volume(), h.Filesystem()
	c := systemVolume(t, h)
	id := formatted(t, h, 1)
	must(t, fs.Mkdir(ctx, kubelet+`\plain\nested`))
	must(t, v.MountVolume(ctx, id, kubelet+`\mnt`))
	must(t, fs.Mkdir(ctx, kubelet+`\mnt\deep\er`))
	must(t, fs.CreateSymlink(ctx, kubelet+`\mnt\deep`, kubelet+`\link`))

	cases := map[string]string{
		`C:\`:                         c,
		kubelet + `\plain\nested`:     c,
		kubelet + `\mnt`:              id,
		kubelet + `\mnt\deep\er`:      id,
		kubelet + `\link`:             id, // a link to a directory on the volume
		kubelet + `\link\er`:          id,
		`C:\var\LIB\kubelet\PLAIN`:    c,
		`C:\var\lib\kubelet\mnt\deep`: id,
	}
	for p, want := range cases {
		if got, err := v.ClosestVolume(ctx, p); err != nil || got != want {
			t.Errorf("ClosestVolume(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
	_, err := v.ClosestVolume(ctx, kubelet+`\missing`)
	wantErr(t, err, errdefs.ErrNotFound)
	// A link loop is cut off.
	must(t, fs.CreateSymlink(ctx, kubelet+`\loop2`, kubelet+`\loop1`))
	must(t, fs.CreateSymlink(ctx, kubelet+`\loop1`, kubelet+`\loop2`))
	_, err = v.ClosestVolume(ctx, kubelet+`\loop1`)
	wantErr(t, err, errdefs.ErrFailedPrecondition, "256 steps")
	// VolumeAt of a drive root is the drive's volume.
	if got, err := v.VolumeAt(ctx, `C:\`); err != nil || got != c {
		t.Errorf("VolumeAt(C:\\) = %q, %v", got, err)
	}
}

func TestListVolumesOnDiskPartitions(t *testing.T) {
	h := defaultHost(t)
	id := volumeOf(t, h, 1)
	for _, part := range []uint32{0, 1} {
		if ids, err := h.Volume().ListVolumesOnDisk(ctx, 1, part); err != nil || !reflect.DeepEqual(ids, []string{id}) {
			t.Errorf("ListVolumesOnDisk(1, %d) = %v, %v", part, ids, err)
		}
	}
	_, err := h.Volume().ListVolumesOnDisk(ctx, 1, 2)
	wantErr(t, err, errdefs.ErrNotFound, "disk 1 has no partition 2")
}

func TestFlushCounts(t *testing.T) {
	h := defaultHost(t)
	id := volumeOf(t, h, 1)
	must(t, h.Volume().FlushVolume(ctx, id))
	must(t, h.Volume().FlushVolume(ctx, id))
	if n := volumeInfo(t, h, id).Flushes; n != 2 {
		t.Errorf("Flushes = %d; want 2", n)
	}
}

// A volume that disappears under its mount point (a disk removed, an
// iSCSI target disconnected) leaves a dangling mount point; UnmountVolume
// must still remove it, as DeleteVolumeMountPoint does on Windows.
func TestUnmountDanglingMountPoint(t *testing.T) {
	h := defaultHost(t)
	n, err := h.AddDisk(simulated.DiskSpec{Size: 1 << 30})
	must(t, err)
	id := volumeOf(t, h, n)
	target := simulated.DefaultKubeletDir + `\staging`
	must(t, h.Volume().MountVolume(ctx, id, target))
	must(t, h.RemoveDisk(n))
	if err := h.Volume().UnmountVolume(ctx, id, target); err != nil {
		t.Fatalf("unmount of a dangling mount point: %v", err)
	}
	_, err = h.Volume().VolumeAt(ctx, target)
	wantErr(t, err, errdefs.ErrNotFound)
	if ok, err := h.Filesystem().PathExists(ctx, target); err != nil || !ok {
		t.Fatalf("the directory should stay: %v %v", ok, err)
	}
}

// TestVolumeAtFollowsLinks: a pod's publish path is a link (CreateSymlink)
// to the staging mount point, and drivers ask for the volume there
// (azuredisk NodeGetVolumeStats, NodeExpandVolume, unpublish's flush).
// VolumeAt follows links as the Windows backend does
// (internal/host/windows/storage/volume.go): through a chain of links to a mount
// point or a drive root it names that volume; a link to a plain folder,
// into a folder inside a volume or to an SMB share is not a mount; a loop
// is cut off.
func TestVolumeAtFollowsLinks(t *testing.T) {
	h := defaultHost(t)
	v, fs := h.Volume(), h.Filesystem()
	id := formatted(t, h, 1)
	stage, publish := kubelet+`\plugins\stage`, kubelet+`\pods\p\mount`
	must(t, fs.Mkdir(ctx, kubelet+`\pods\p`))
	must(t, fs.Mkdir(ctx, kubelet+`\plugins`))
	must(t, v.MountVolume(ctx, id, stage))
	must(t, fs.CreateSymlink(ctx, stage, publish))
	must(t, fs.CreateSymlink(ctx, publish, kubelet+`\pods\p\again`))
	must(t, fs.CreateSymlink(ctx, `C:\`, kubelet+`\root`))
	must(t, fs.Mkdir(ctx, stage+`\data`))
	must(t, fs.CreateSymlink(ctx, stage+`\data`, kubelet+`\inside`))
	must(t, fs.Mkdir(ctx, kubelet+`\plain`))
	must(t, fs.CreateSymlink(ctx, kubelet+`\plain`, kubelet+`\toplain`))
	must(t, fs.CreateSymlink(ctx, kubelet+`\loop2`, kubelet+`\loop1`))
	must(t, fs.CreateSymlink(ctx, kubelet+`\loop1`, kubelet+`\loop2`))

	for p, want := range map[string]string{
		publish:                   id,
		kubelet + `\pods\p\again`: id,
		kubelet + `\root`:         systemVolume(t, h),
	} {
		if got, err := v.VolumeAt(ctx, p); err != nil || got != want {
			t.Errorf("VolumeAt(%s) = %q, %v; want %s", p, got, err, want)
		}
	}
	for _, p := range []string{kubelet + `\inside`, kubelet + `\toplain`} {
		_, err := v.VolumeAt(ctx, p)
		wantErr(t, err, errdefs.ErrNotFound)
	}
	_, err := v.VolumeAt(ctx, kubelet+`\loop1`)
	wantErr(t, err, errdefs.ErrFailedPrecondition, "links")
	// The volume found through the link is usable as any other.
	got, err := v.VolumeAt(ctx, publish)
	must(t, err)
	if _, _, err := v.VolumeStats(ctx, got); err != nil {
		t.Errorf("VolumeStats(volume at the publish link) = %v", err)
	}
	must(t, v.FlushVolume(ctx, got))
}

// TestVolumeAtSMBLink: a link to an SMB share (as NewSmbGlobalMapping
// makes one) leads to no volume.
func TestVolumeAtSMBLink(t *testing.T) {
	h := smbHost(t)
	local := kubelet + `\plugins\smb\pv1`
	must(t, h.SMB().NewSmbGlobalMapping(ctx, mapping(t, `\\fileserver\share\pvc-1`, local, `CONTOSO\csi`, secret)))
	_, err := h.Volume().VolumeAt(ctx, local)
	wantErr(t, err, errdefs.ErrNotFound, "SMB")
}
