package e2e

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	filesystemv2alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v2alpha1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	volumev2alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v2alpha1"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/simtest"
)

// volumeAPI is what volume v1 and v2alpha1 have in common, so one suite
// exercises both wire versions. Each method is one gRPC call.
type volumeAPI interface {
	ListVolumesOnDisk(ctx context.Context, disk, partition uint32) ([]string, error)
	MountVolume(ctx context.Context, id, path string) error
	UnmountVolume(ctx context.Context, id, path string) error
	IsVolumeFormatted(ctx context.Context, id string) (bool, error)
	FormatVolume(ctx context.Context, id string) error
	ResizeVolume(ctx context.Context, id string, size int64) error
	GetVolumeStats(ctx context.Context, id string) (total, used int64, err error)
	GetDiskNumberFromVolumeID(ctx context.Context, id string) (uint32, error)
	GetVolumeIDFromTargetPath(ctx context.Context, path string) (string, error)
	WriteVolumeCache(ctx context.Context, id string) error
}

type volumeV1 struct{ c volumev1.VolumeClient }

func (v volumeV1) ListVolumesOnDisk(ctx context.Context, disk, partition uint32) ([]string, error) {
	r, err := v.c.ListVolumesOnDisk(ctx, &volumev1.ListVolumesOnDiskRequest{DiskNumber: disk, PartitionNumber: partition})
	return r.GetVolumeIds(), err
}

func (v volumeV1) MountVolume(ctx context.Context, id, path string) error {
	_, err := v.c.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: id, TargetPath: path})
	return err
}

func (v volumeV1) UnmountVolume(ctx context.Context, id, path string) error {
	_, err := v.c.UnmountVolume(ctx, &volumev1.UnmountVolumeRequest{VolumeId: id, TargetPath: path})
	return err
}

func (v volumeV1) IsVolumeFormatted(ctx context.Context, id string) (bool, error) {
	r, err := v.c.IsVolumeFormatted(ctx, &volumev1.IsVolumeFormattedRequest{VolumeId: id})
	return r.GetFormatted(), err
}

func (v volumeV1) FormatVolume(ctx context.Context, id string) error {
	_, err := v.c.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: id})
	return err
}

func (v volumeV1) ResizeVolume(ctx context.Context, id string, size int64) error {
	_, err := v.c.ResizeVolume(ctx, &volumev1.ResizeVolumeRequest{VolumeId: id, SizeBytes: size})
	return err
}

func (v volumeV1) GetVolumeStats(ctx context.Context, id string) (int64, int64, error) {
	r, err := v.c.GetVolumeStats(ctx, &volumev1.GetVolumeStatsRequest{VolumeId: id})
	return r.GetTotalBytes(), r.GetUsedBytes(), err
}

func (v volumeV1) GetDiskNumberFromVolumeID(ctx context.Context, id string) (uint32, error) {
	r, err := v.c.GetDiskNumberFromVolumeID(ctx, &volumev1.GetDiskNumberFromVolumeIDRequest{VolumeId: id})
	return r.GetDiskNumber(), err
}

func (v volumeV1) GetVolumeIDFromTargetPath(ctx context.Context, path string) (string, error) {
	r, err := v.c.GetVolumeIDFromTargetPath(ctx, &volumev1.GetVolumeIDFromTargetPathRequest{TargetPath: path})
	return r.GetVolumeId(), err
}

func (v volumeV1) WriteVolumeCache(ctx context.Context, id string) error {
	_, err := v.c.WriteVolumeCache(ctx, &volumev1.WriteVolumeCacheRequest{VolumeId: id})
	return err
}

type volumeV2alpha1 struct{ c volumev2alpha1.VolumeClient }

func (v volumeV2alpha1) ListVolumesOnDisk(ctx context.Context, disk, partition uint32) ([]string, error) {
	r, err := v.c.ListVolumesOnDisk(ctx, &volumev2alpha1.ListVolumesOnDiskRequest{DiskNumber: disk, PartitionNumber: partition})
	return r.GetVolumeIds(), err
}

func (v volumeV2alpha1) MountVolume(ctx context.Context, id, path string) error {
	_, err := v.c.MountVolume(ctx, &volumev2alpha1.MountVolumeRequest{VolumeId: id, TargetPath: path})
	return err
}

func (v volumeV2alpha1) UnmountVolume(ctx context.Context, id, path string) error {
	_, err := v.c.UnmountVolume(ctx, &volumev2alpha1.UnmountVolumeRequest{VolumeId: id, TargetPath: path})
	return err
}

func (v volumeV2alpha1) IsVolumeFormatted(ctx context.Context, id string) (bool, error) {
	r, err := v.c.IsVolumeFormatted(ctx, &volumev2alpha1.IsVolumeFormattedRequest{VolumeId: id})
	return r.GetFormatted(), err
}

func (v volumeV2alpha1) FormatVolume(ctx context.Context, id string) error {
	_, err := v.c.FormatVolume(ctx, &volumev2alpha1.FormatVolumeRequest{VolumeId: id})
	return err
}

func (v volumeV2alpha1) ResizeVolume(ctx context.Context, id string, size int64) error {
	_, err := v.c.ResizeVolume(ctx, &volumev2alpha1.ResizeVolumeRequest{VolumeId: id, SizeBytes: size})
	return err
}

func (v volumeV2alpha1) GetVolumeStats(ctx context.Context, id string) (int64, int64, error) {
	r, err := v.c.GetVolumeStats(ctx, &volumev2alpha1.GetVolumeStatsRequest{VolumeId: id})
	return r.GetTotalBytes(), r.GetUsedBytes(), err
}

func (v volumeV2alpha1) GetDiskNumberFromVolumeID(ctx context.Context, id string) (uint32, error) {
	r, err := v.c.GetDiskNumberFromVolumeID(ctx, &volumev2alpha1.GetDiskNumberFromVolumeIDRequest{VolumeId: id})
	return r.GetDiskNumber(), err
}

func (v volumeV2alpha1) GetVolumeIDFromTargetPath(ctx context.Context, path string) (string, error) {
	r, err := v.c.GetVolumeIDFromTargetPath(ctx, &volumev2alpha1.GetVolumeIDFromTargetPathRequest{TargetPath: path})
	return r.GetVolumeId(), err
}

func (v volumeV2alpha1) WriteVolumeCache(ctx context.Context, id string) error {
	_, err := v.c.WriteVolumeCache(ctx, &volumev2alpha1.WriteVolumeCacheRequest{VolumeId: id})
	return err
}

// TestVolumeV1 calls every method of volume v1.
func TestVolumeV1(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	volumeSuite(t, e, volumeV1{e.vol1})
}

// TestVolumeV2alpha1 calls every method of volume v2alpha1: the v1 suite
// and GetClosestVolumeIDFromTargetPath.
func TestVolumeV2alpha1(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	vol1, staging := volumeSuite(t, e, volumeV2alpha1{e.vol2})

	ctx := t.Context()
	closest := func(p string) (string, error) {
		r, err := e.vol2.GetClosestVolumeIDFromTargetPath(ctx, &volumev2alpha1.GetClosestVolumeIDFromTargetPathRequest{TargetPath: p})
		return r.GetVolumeId(), err
	}
	ok(t, "MountVolume", volumeV2alpha1{e.vol2}.MountVolume(ctx, vol1, staging))
	nested := staging + `\nested\deeper`
	_, err := e.fs2.Mkdir(ctx, &filesystemv2alpha1.MkdirRequest{Path: nested})
	ok(t, "Mkdir nested", err)
	publishDir := kubelet + `\pods\5f0c\volumes\kubernetes.io~csi\pvc-e2e`
	publish := publishDir + `\mount`
	_, err = e.fs2.Mkdir(ctx, &filesystemv2alpha1.MkdirRequest{Path: publishDir})
	ok(t, "Mkdir publish dir", err)
	_, err = e.fs2.CreateSymlink(ctx, &filesystemv2alpha1.CreateSymlinkRequest{SourcePath: staging, TargetPath: publish})
	ok(t, "CreateSymlink", err)

	cVol := cVolume(t, e.host)
	for _, c := range []struct{ path, want string }{
		{staging, vol1},                    // the mount point itself
		{nested, vol1},                     // a nested path under the mount point
		{staging + `\nested`, vol1},        // ...at every level
		{publish, vol1},                    // through the symlink
		{publish + `\nested\deeper`, vol1}, // below the symlink
		{kubelet, cVol},                    // no mount point on the way: the drive's volume
		{kubelet + `\pods\5f0c`, cVol},     // a plain directory on C:
	} {
		got, err := closest(c.path)
		if err != nil || !strings.EqualFold(got, c.want) {
			t.Errorf("GetClosestVolumeIDFromTargetPath(%s) = %q, %v; want %s", c.path, got, err, c.want)
		}
	}

	_, err = closest(kubelet + `\pods\missing`)
	wantErr(t, "GetClosestVolumeIDFromTargetPath(missing path)", err, codes.NotFound, "does not exist")
	for _, bp := range badPaths {
		_, err := closest(bp.path)
		wantErr(t, "GetClosestVolumeIDFromTargetPath("+bp.path+")", err, bp.code, bp.substr)
	}
	// A link to an SMB path leads to no local volume.
	_, err = e.smb.NewSmbGlobalMapping(ctx, smbMapping(smbShare+`\pvc-1`, kubelet+`\pods\5f0c\smb`))
	ok(t, "NewSmbGlobalMapping", err)
	_, err = closest(kubelet + `\pods\5f0c\smb`)
	wantErr(t, "GetClosestVolumeIDFromTargetPath(SMB link)", err, codes.FailedPrecondition, "which is on no local volume")
	// The volume's disk offline: the volume is gone, as on Windows, so a
	// path below its mount point does not exist.
	_, err = e.disk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: dataDisk1, IsOnline: false})
	ok(t, "SetDiskState(offline)", err)
	_, err = closest(nested)
	wantErr(t, "GetClosestVolumeIDFromTargetPath(under an offline volume)", err, codes.NotFound, "is offline")
}

// volumeSuite calls every volume v1 method through api, on success and
// failure paths. It leaves disk 1's formatted volume (returned) unmounted
// and its staging directory (returned) empty.
func volumeSuite(t *testing.T, e *env, api volumeAPI) (vol1, staging string) {
	ctx := t.Context()
	staging = kubelet + `\plugins\kubernetes.io\csi\disk.csi.e2e\0a1b2c\globalmount`
	mkdir := func(p string) {
		t.Helper()
		_, err := e.fs1.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: p})
		ok(t, "Mkdir "+p, err)
	}
	setOnline := func(n uint32, online bool) {
		t.Helper()
		_, err := e.disk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: n, IsOnline: online})
		ok(t, "SetDiskState", err)
	}
	for _, n := range []uint32{dataDisk1, dataDisk2} {
		_, err := e.disk.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: n})
		ok(t, "PartitionDisk", err)
	}
	badIDs := []string{"", "C:", `\\?\Volume{not-a-guid}\`, `Volume{00000000-0000-4000-8000-0000000000e2}`, `\\?\Volume{00000000-0000-4000-8000-0000000000e2}`}
	checkBadIDs := func(method string, call func(id string) error) {
		t.Helper()
		for _, id := range badIDs {
			wantErr(t, method+"("+id+")", call(id), codes.InvalidArgument, "is not a Windows volume ID")
		}
	}

	// ListVolumesOnDisk
	sys, err := api.ListVolumesOnDisk(ctx, 0, 0)
	ok(t, "ListVolumesOnDisk(0)", err)
	cVol := cVolume(t, e.host)
	if len(sys) != 2 || !isVolumeID(sys[0]) || sys[1] != cVol {
		t.Errorf("ListVolumesOnDisk(0) = %q, want the EFI volume and C: (%s); the MSR partition has none", sys, cVol)
	}
	if got, err := api.ListVolumesOnDisk(ctx, 0, 3); err != nil || !slices.Equal(got, []string{cVol}) {
		t.Errorf("ListVolumesOnDisk(0, partition 3) = %q, %v; want [%s]", got, err, cVol)
	}
	if got, err := api.ListVolumesOnDisk(ctx, 0, 2); err != nil || len(got) != 0 {
		t.Errorf("ListVolumesOnDisk(0, MSR partition 2) = %q, %v; want none", got, err)
	}
	ids1, err := api.ListVolumesOnDisk(ctx, dataDisk1, 0)
	ok(t, "ListVolumesOnDisk(1)", err)
	ids2, err := api.ListVolumesOnDisk(ctx, dataDisk2, 1)
	ok(t, "ListVolumesOnDisk(2, 1)", err)
	if len(ids1) != 1 || len(ids2) != 1 || !isVolumeID(ids1[0]) || !isVolumeID(ids2[0]) || ids1[0] == ids2[0] {
		t.Fatalf("ListVolumesOnDisk: disk 1 %q, disk 2 %q; want one distinct volume each", ids1, ids2)
	}
	vol1, vol2 := ids1[0], ids2[0]
	_, err = api.ListVolumesOnDisk(ctx, dataDisk1, 7)
	wantErr(t, "ListVolumesOnDisk(1, partition 7)", err, codes.NotFound, "disk 1 has no partition 7")
	_, err = api.ListVolumesOnDisk(ctx, missingDisk, 0)
	wantErr(t, "ListVolumesOnDisk(missing disk)", err, codes.NotFound, "disk 99 does not exist")
	_, err = api.ListVolumesOnDisk(ctx, offlineDisk, 0)
	wantErr(t, "ListVolumesOnDisk(offline disk)", err, codes.FailedPrecondition, "disk 3 is offline")

	// IsVolumeFormatted
	for id, want := range map[string]bool{vol1: false, cVol: true, strings.ToUpper(vol2): false} {
		got, err := api.IsVolumeFormatted(ctx, id)
		if err != nil || got != want {
			t.Errorf("IsVolumeFormatted(%s) = %v, %v; want %v", id, got, err, want)
		}
	}
	checkBadIDs("IsVolumeFormatted", func(id string) error { _, err := api.IsVolumeFormatted(ctx, id); return err })
	_, err = api.IsVolumeFormatted(ctx, missingVolume)
	wantErr(t, "IsVolumeFormatted(missing volume)", err, codes.NotFound, "does not exist")

	// GetVolumeStats of a RAW volume, then FormatVolume
	_, _, err = api.GetVolumeStats(ctx, vol1)
	wantErr(t, "GetVolumeStats(RAW volume)", err, codes.FailedPrecondition, "is not formatted")
	ok(t, "FormatVolume", api.FormatVolume(ctx, vol1))
	if f, err := api.IsVolumeFormatted(ctx, vol1); err != nil || !f {
		t.Errorf("IsVolumeFormatted after FormatVolume = %v, %v; want true", f, err)
	}
	wantErr(t, "FormatVolume(formatted volume)", api.FormatVolume(ctx, vol1), codes.FailedPrecondition, "is already formatted; refusing to erase it")
	wantErr(t, "FormatVolume(C:)", api.FormatVolume(ctx, cVol), codes.FailedPrecondition, "is already formatted")
	wantErr(t, "FormatVolume(missing volume)", api.FormatVolume(ctx, missingVolume), codes.NotFound, "does not exist")
	checkBadIDs("FormatVolume", func(id string) error { return api.FormatVolume(ctx, id) })
	ok(t, "FormatVolume", api.FormatVolume(ctx, strings.ToUpper(vol2))) // IDs compare without case

	// GetVolumeStats
	const partSize = 1<<30 - 2<<20 // 1 GiB less the first MiB and the backup GPT's
	total, used, err := api.GetVolumeStats(ctx, vol1)
	ok(t, "GetVolumeStats", err)
	if total != partSize || used != simulated.NTFSOverhead(partSize) {
		t.Errorf("GetVolumeStats(fresh volume) = %d total, %d used; want %d, %d", total, used, int64(partSize), simulated.NTFSOverhead(partSize))
	}
	if total, used, err := api.GetVolumeStats(ctx, cVol); err != nil || total < 100<<30 || used < 12<<30 || used >= total {
		t.Errorf("GetVolumeStats(C:) = %d total, %d used, %v; want about 128 GiB with the 12 GiB installation used", total, used, err)
	}
	_, _, err = api.GetVolumeStats(ctx, missingVolume)
	wantErr(t, "GetVolumeStats(missing volume)", err, codes.NotFound, "does not exist")
	checkBadIDs("GetVolumeStats", func(id string) error { _, _, err := api.GetVolumeStats(ctx, id); return err })

	// GetDiskNumberFromVolumeID
	for id, want := range map[string]uint32{vol1: dataDisk1, strings.ToUpper(vol2): dataDisk2, cVol: 0, sys[0]: 0} {
		got, err := api.GetDiskNumberFromVolumeID(ctx, id)
		if err != nil || got != want {
			t.Errorf("GetDiskNumberFromVolumeID(%s) = %d, %v; want %d", id, got, err, want)
		}
	}
	_, err = api.GetDiskNumberFromVolumeID(ctx, missingVolume)
	wantErr(t, "GetDiskNumberFromVolumeID(missing volume)", err, codes.NotFound, "does not exist")
	checkBadIDs("GetDiskNumberFromVolumeID", func(id string) error { _, err := api.GetDiskNumberFromVolumeID(ctx, id); return err })

	// MountVolume
	mkdir(staging)
	twice(t, "MountVolume", func() error { return api.MountVolume(ctx, vol1, staging) })
	ok(t, "MountVolume(other spelling of ID and path)", api.MountVolume(ctx, strings.ToUpper(vol1), strings.ToLower(staging)))
	if got, err := api.GetVolumeIDFromTargetPath(ctx, staging); err != nil || got != vol1 {
		t.Errorf("GetVolumeIDFromTargetPath(staging) = %q, %v; want %s", got, err, vol1)
	}
	if mps := simtest.Volume(t, e.host, vol1).MountPoints; !slices.Equal(mps, []string{staging}) {
		t.Errorf("the host shows volume 1 mounted at %q, want [%s]", mps, staging)
	}
	wantErr(t, "MountVolume(another volume at the occupied path)", api.MountVolume(ctx, vol2, staging),
		codes.FailedPrecondition, "is already the mount point of volume "+vol1)
	for _, bp := range badPaths {
		wantErr(t, "MountVolume("+bp.path+")", api.MountVolume(ctx, vol2, bp.path), bp.code, bp.substr)
	}
	wantErr(t, "MountVolume(missing volume)", api.MountVolume(ctx, missingVolume, kubelet+`\mnt-missing`), codes.NotFound, "does not exist")
	checkBadIDs("MountVolume", func(id string) error { return api.MountVolume(ctx, id, kubelet+`\mnt-bad`) })
	wantErr(t, "MountVolume(missing parent)", api.MountVolume(ctx, vol2, kubelet+`\no\such\parent\mnt`), codes.NotFound, "does not exist")
	full := kubelet + `\full`
	mkdir(full + `\child`)
	wantErr(t, "MountVolume(non-empty directory)", api.MountVolume(ctx, vol2, full), codes.FailedPrecondition, "is not an empty directory")
	// Leniently, a missing mount directory whose parent exists is created.
	lenient := kubelet + `\lenient-mnt`
	ok(t, "MountVolume(missing leaf)", api.MountVolume(ctx, vol2, lenient))
	ok(t, "UnmountVolume", api.UnmountVolume(ctx, vol2, lenient))

	// Files written through the mount point land on the volume.
	payload := []byte("written through the mount point")
	ok(t, "WriteFile", e.host.WriteFile(staging+`\data.txt`, payload))
	if _, used2, err := api.GetVolumeStats(ctx, vol1); err != nil || used2 != used+4096 {
		t.Errorf("GetVolumeStats after writing one small file: used %d, %v; want %d", used2, err, used+4096)
	}

	// WriteVolumeCache
	flushes := simtest.Volume(t, e.host, vol1).Flushes
	ok(t, "WriteVolumeCache", api.WriteVolumeCache(ctx, vol1))
	if got := simtest.Volume(t, e.host, vol1).Flushes; got != flushes+1 {
		t.Errorf("the volume was flushed %d times after WriteVolumeCache, want %d", got, flushes+1)
	}
	wantErr(t, "WriteVolumeCache(missing volume)", api.WriteVolumeCache(ctx, missingVolume), codes.NotFound, "does not exist")
	checkBadIDs("WriteVolumeCache", func(id string) error { return api.WriteVolumeCache(ctx, id) })

	// ResizeVolume
	ok(t, "ResizeVolume(0) with no room to grow", api.ResizeVolume(ctx, vol1, 0))
	ok(t, "ResizeVolume(a shrink: skipped)", api.ResizeVolume(ctx, vol1, 512<<20))
	if total, _, _ := api.GetVolumeStats(ctx, vol1); total != partSize {
		t.Errorf("volume size after no-op resizes = %d, want %d", total, int64(partSize))
	}
	wantErr(t, "ResizeVolume(beyond the disk)", api.ResizeVolume(ctx, vol1, 10<<30), codes.OutOfRange, "is larger than volume")
	wantErr(t, "ResizeVolume(negative)", api.ResizeVolume(ctx, vol1, -1), codes.InvalidArgument, "size_bytes -1 is negative")
	wantErr(t, "ResizeVolume(missing volume)", api.ResizeVolume(ctx, missingVolume, 0), codes.NotFound, "does not exist")
	checkBadIDs("ResizeVolume", func(id string) error { return api.ResizeVolume(ctx, id, 0) })
	// The cloud disk grows; the volume follows on request.
	ok(t, "ResizeDisk", e.host.ResizeDisk(dataDisk1, 2<<30))
	ok(t, "ResizeVolume(0) after the disk grew", api.ResizeVolume(ctx, vol1, 0))
	if total, _, err := api.GetVolumeStats(ctx, vol1); err != nil || total != 2<<30-2<<20 {
		t.Errorf("volume size after growing = %d, %v; want %d", total, err, int64(2<<30-2<<20))
	}
	if got, err := e.host.ReadFile(staging + `\data.txt`); err != nil || string(got) != string(payload) {
		t.Errorf("file after resize = %q, %v; want %q", got, err, payload)
	}

	// GetVolumeIDFromTargetPath
	_, err = api.GetVolumeIDFromTargetPath(ctx, kubelet+`\full`)
	wantErr(t, "GetVolumeIDFromTargetPath(plain directory)", err, codes.NotFound, "it is not a mounted folder")
	_, err = api.GetVolumeIDFromTargetPath(ctx, kubelet+`\pods\missing`)
	wantErr(t, "GetVolumeIDFromTargetPath(missing path)", err, codes.NotFound, "because it does not exist")
	for _, bp := range badPaths {
		_, err := api.GetVolumeIDFromTargetPath(ctx, bp.path)
		wantErr(t, "GetVolumeIDFromTargetPath("+bp.path+")", err, bp.code, bp.substr)
	}

	// A volume whose disk goes offline while mounted.
	setOnline(offlineDisk, true)
	ids3, err := api.ListVolumesOnDisk(ctx, offlineDisk, 0)
	ok(t, "ListVolumesOnDisk(3)", err)
	if len(ids3) != 1 {
		t.Fatalf("disk 3 has volumes %q, want one", ids3)
	}
	vol3, mnt3 := ids3[0], kubelet+`\offline-mnt`
	ok(t, "FormatVolume(3)", api.FormatVolume(ctx, vol3))
	ok(t, "MountVolume(3)", api.MountVolume(ctx, vol3, mnt3))
	// Offline, the volume is gone, as on Windows (and as the Windows
	// backend answers): volume calls are NotFound.
	setOnline(offlineDisk, false)
	wantErr(t, "MountVolume(offline volume)", api.MountVolume(ctx, vol3, kubelet+`\offline-mnt2`), codes.NotFound, "disk 3 is offline")
	wantErr(t, "WriteVolumeCache(offline volume)", api.WriteVolumeCache(ctx, vol3), codes.NotFound, "disk 3 is offline")
	wantErr(t, "ResizeVolume(offline volume)", api.ResizeVolume(ctx, vol3, 0), codes.NotFound, "disk 3 is offline")
	_, err = api.IsVolumeFormatted(ctx, vol3)
	wantErr(t, "IsVolumeFormatted(offline volume)", err, codes.NotFound, "disk 3 is offline")
	_, _, err = api.GetVolumeStats(ctx, vol3)
	wantErr(t, "GetVolumeStats(offline volume)", err, codes.NotFound, "disk 3 is offline")
	_, err = api.GetDiskNumberFromVolumeID(ctx, vol3)
	wantErr(t, "GetDiskNumberFromVolumeID(offline volume)", err, codes.NotFound, "disk 3 is offline")
	// The mount point itself is still there and names its volume.
	if got, err := api.GetVolumeIDFromTargetPath(ctx, mnt3); err != nil || got != vol3 {
		t.Errorf("GetVolumeIDFromTargetPath(mount point of an offline volume) = %q, %v; want %s", got, err, vol3)
	}
	// Unmounting needs no volume (DeleteVolumeMountPoint): NodeUnstage
	// after the disk went offline can finish.
	ok(t, "UnmountVolume(offline volume)", api.UnmountVolume(ctx, vol3, mnt3))
	if got, err := api.GetVolumeIDFromTargetPath(ctx, mnt3); err == nil {
		t.Errorf("GetVolumeIDFromTargetPath(%s) after UnmountVolume = %q, want NotFound", mnt3, got)
	}
	setOnline(offlineDisk, true)

	// UnmountVolume
	wantErr(t, "UnmountVolume(another volume's mount point)", api.UnmountVolume(ctx, vol2, staging),
		codes.FailedPrecondition, "is the mount point of volume "+vol1)
	for _, bp := range badPaths {
		wantErr(t, "UnmountVolume("+bp.path+")", api.UnmountVolume(ctx, vol1, bp.path), bp.code, bp.substr)
	}
	checkBadIDs("UnmountVolume", func(id string) error { return api.UnmountVolume(ctx, id, staging) })
	flushes = simtest.Volume(t, e.host, vol1).Flushes
	twice(t, "UnmountVolume", func() error { return api.UnmountVolume(ctx, vol1, staging) })
	if info := simtest.Volume(t, e.host, vol1); len(info.MountPoints) != 0 || info.Flushes != flushes+1 {
		t.Errorf("after UnmountVolume the host shows mount points %q and %d flushes; want none and %d", info.MountPoints, info.Flushes, flushes+1)
	}
	_, err = api.GetVolumeIDFromTargetPath(ctx, staging)
	wantErr(t, "GetVolumeIDFromTargetPath(unmounted)", err, codes.NotFound, "it is not a mounted folder")
	ok(t, "UnmountVolume(nothing mounted, missing volume)", api.UnmountVolume(ctx, missingVolume, staging))
	if r, err := e.fs1.PathExists(ctx, &filesystemv1.PathExistsRequest{Path: staging}); err != nil || !r.GetExists() {
		t.Errorf("PathExists(staging) after unmount = %v, %v; want the empty directory", r.GetExists(), err)
	}

	// The volume's files follow it to another mount point.
	remount := kubelet + `\remount`
	ok(t, "MountVolume elsewhere", api.MountVolume(ctx, vol1, remount))
	if got, err := e.host.ReadFile(remount + `\data.txt`); err != nil || string(got) != string(payload) {
		t.Errorf("file at the new mount point = %q, %v; want %q", got, err, payload)
	}
	ok(t, "UnmountVolume", api.UnmountVolume(ctx, vol1, remount))
	return vol1, staging
}

// TestVolumeConcurrentRetries checks the idempotency drivers depend on when
// kubelet's retries overlap: concurrent MountVolume calls of one volume at
// one path all succeed, while another volume racing for the same path
// always loses with FailedPrecondition; concurrent UnmountVolume calls all
// succeed. Calls alternate between the v1 and v2alpha1 endpoints.
func TestVolumeConcurrentRetries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	apis := []volumeAPI{volumeV1{e.vol1}, volumeV2alpha1{e.vol2}}
	var vols []string
	for _, n := range []uint32{dataDisk1, dataDisk2} {
		_, err := e.disk.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: n})
		ok(t, "PartitionDisk", err)
		ids, err := apis[0].ListVolumesOnDisk(ctx, n, 0)
		ok(t, "ListVolumesOnDisk", err)
		vols = append(vols, ids...)
	}
	if len(vols) != 2 {
		t.Fatalf("volumes %q, want two", vols)
	}
	target := kubelet + `\race\globalmount`
	_, err := e.fs1.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: target})
	ok(t, "Mkdir", err)

	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = apis[i%2].MountVolume(ctx, vols[i/(n/2)], target) })
	}
	wg.Wait()
	winner, err := apis[0].GetVolumeIDFromTargetPath(ctx, target)
	ok(t, "GetVolumeIDFromTargetPath", err)
	for i, err := range errs {
		if vols[i/(n/2)] == winner {
			ok(t, "concurrent MountVolume of the winning volume", err)
		} else {
			wantErr(t, "concurrent MountVolume of the losing volume", err, codes.FailedPrecondition, "is already the mount point of volume "+winner)
		}
	}

	for i := range n {
		wg.Go(func() { errs[i] = apis[i%2].UnmountVolume(ctx, winner, target) })
	}
	wg.Wait()
	for _, err := range errs {
		ok(t, "concurrent UnmountVolume", err)
	}
	_, err = apis[1].GetVolumeIDFromTargetPath(ctx, target)
	wantErr(t, "GetVolumeIDFromTargetPath after unmounting", err, codes.NotFound, "it is not a mounted folder")
	if info := simtest.Volume(t, e.host, winner); len(info.MountPoints) != 0 {
		t.Errorf("the host still shows mount points %q", info.MountPoints)
	}
}
