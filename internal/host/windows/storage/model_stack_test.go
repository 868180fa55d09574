package storage

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// ---- The Services over the backend and the model ----

// modelStack is a Windows node as driver code sees it: the disk, volume
// and filesystem Services over the real Windows storage backend and the
// model's file tree, all on one model world. Driver flows (with narrow
// interfaces matching the group Services' method signatures) run against
// it the way they run against the simulated host.
type modelStack struct {
	Model *winModel
	Disk  *disk.Service
	// DiskHost is the backend under Disk, for a Service with other
	// ServiceOptions.
	DiskHost   disk.Host
	Volume     *volume.Service
	Filesystem *filesystem.Service
}

// newModelStack builds the stack on a model of the same world cfg gives
// the simulated host: the same disks (numbers, sizes, locations, IDs,
// online state, partitions, file systems, drive letters) and working
// directories. Only the volume GUIDs differ.
func newModelStack(t testing.TB, cfg simulated.Config) *modelStack {
	h, err := simulated.New(cfg)
	if err != nil {
		t.Fatalf("simulated world for the model: %v", err)
	}
	m := newWinModel(t, modelDisksLike(h), h.WorkingDirs()...)
	b, err := newBackend(m, Config{})
	if err != nil {
		t.Fatal(err)
	}
	paths, err := hostpath.NewPolicy(hostpath.Windows, h.WorkingDirs())
	if err != nil {
		t.Fatal(err)
	}
	return &modelStack{
		Model:      m,
		Disk:       disk.NewService(b.Disk()),
		DiskHost:   b.Disk(),
		Volume:     volume.NewService(b.Volume(), paths),
		Filesystem: filesystem.NewService(modelFS{m}, paths),
	}
}

// modelDisksLike describes the simulated host's disks for the model.
func modelDisksLike(h *simulated.Host) []modelDiskSpec {
	letters := map[string]byte{}
	fs := map[string]string{}
	for _, v := range h.ListVolumes() {
		fs[v.ID] = v.FileSystem
		if v.DriveLetter != "" {
			letters[v.ID] = v.DriveLetter[0]
		}
	}
	types := map[string]string{"Basic": gptBasicData, "System": modelGPTSystem, "Reserved": gptMicrosoftReserved}
	var out []modelDiskSpec
	for _, d := range h.ListDisks() {
		spec := modelDiskSpec{
			Number: d.Number, Size: d.Size, Location: d.Location, BusType: d.BusType, Page83: d.Page83, Serial: d.Serial,
			NamespaceID: d.NamespaceID, Product: d.Product,
			Offline: !d.Online, ReadOnly: d.ReadOnly, System: d.System, Style: partitionStyleRAW,
		}
		if d.PartitionStyle == "GPT" {
			spec.Style = partitionStyleGPT
		}
		for _, p := range d.Partitions {
			spec.Partitions = append(spec.Partitions, modelPartitionSpec{
				Number: p.Number, Offset: p.Offset, Size: p.Size, GPTType: types[p.Type],
				FileSystem: fs[p.VolumeID], DriveLetter: letters[p.VolumeID],
			})
		}
		out = append(out, spec)
	}
	return out
}

// ---- Tests of the model itself ----

const (
	modelKubelet = `C:\var\lib\kubelet`
	modelStage   = modelKubelet + `\plugins\kubernetes.io\csi\disk.csi.example.com\pv1\globalmount`
	modelPublish = modelKubelet + `\pods\uid1\volumes\kubernetes.io~csi\pv1\mount`
)

// modelTestConfig is a small world: the system disk and two RAW disks.
func modelTestConfig() simulated.Config {
	cfg := simulated.DefaultConfig([]string{modelKubelet})
	cfg.Seed = 1
	return cfg
}

// modelFirstVolume partitions disk n and returns its volume ID.
func modelFirstVolume(t *testing.T, s *modelStack, n uint32) string {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Disk.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: n}); err != nil {
		t.Fatalf("PartitionDisk(%d): %v", n, err)
	}
	r, err := s.Volume.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: n})
	if err != nil || len(r.VolumeIDs) != 1 {
		t.Fatalf("ListVolumesOnDisk(%d) = %v, %v; want one volume", n, r, err)
	}
	return r.VolumeIDs[0]
}

// TestModelStageFlow runs a first NodeStage, publish and unstage through
// the backend over the model, and checks the model's state and the bytes
// it answers with after each step.
func TestModelStageFlow(t *testing.T) {
	ctx := context.Background()
	s := newModelStack(t, modelTestConfig())
	m := s.Model
	vol := modelFirstVolume(t, s, 1)

	d := m.disks[1]
	if d.style != partitionStyleGPT || len(d.parts) != 1 || d.parts[0].offset != modelMiB || d.parts[0].size != 1022*modelMiB {
		t.Fatalf("disk 1 after PartitionDisk: style %d, partitions %+v; want GPT with one 1022 MiB partition at 1 MiB", d.style, d.parts)
	}
	l, err := parseDriveLayout(d.layoutBuf())
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := l.dataPartition(); !ok || p.GPTType.String() != gptBasicData || p.Number != 1 {
		t.Errorf("layout bytes read back as %+v; want partition 1 of type basic data", l)
	}

	if _, err := s.Volume.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: vol}); err != nil {
		t.Fatal(err)
	}
	if v := m.findVolume(vol); v.fs != "NTFS" {
		t.Errorf("file system after FormatVolume = %q, want NTFS", v.fs)
	}
	if _, err := s.Filesystem.Mkdir(ctx, &filesystem.MkdirRequest{Path: hostpath.Windows.Dir(modelStage)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Volume.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: vol, TargetPath: modelStage}); err != nil {
		t.Fatal(err)
	}
	b, err := func() ([]byte, error) {
		h, err := m.open(modelStage, modeReparse)
		if err != nil {
			return nil, err
		}
		defer m.close(h)
		return m.ioctl(h, fsctlGetReparsePoint, nil, maxReparseDataSize)
	}()
	if err != nil {
		t.Fatal(err)
	}
	rp, err := parseReparsePoint(b)
	if err != nil || rp.Tag != reparseTagMountPoint || !strings.EqualFold(rp.Substitute, `\??\`+strings.TrimPrefix(vol, `\\?\`)) {
		t.Errorf("mount point reparse data = %+v, %v; want a mount point to %s", rp, err, vol)
	}

	if _, err := s.Filesystem.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{SourcePath: modelStage, TargetPath: modelPublish}); err == nil {
		t.Fatal("CreateSymlink with a missing parent succeeded")
	}
	if _, err := s.Filesystem.Mkdir(ctx, &filesystem.MkdirRequest{Path: hostpath.Windows.Dir(modelPublish)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Filesystem.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{SourcePath: modelStage, TargetPath: modelPublish}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{modelStage, modelPublish} {
		r, err := s.Volume.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: p})
		if err != nil || !strings.EqualFold(r.VolumeID, vol) {
			t.Errorf("GetVolumeIDFromTargetPath(%s) = %v, %v; want %s", p, r, err, vol)
		}
	}
	if err := m.writeFile(modelPublish+`\data`, 10<<20); err != nil {
		t.Fatal(err)
	}
	st, err := s.Volume.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: vol})
	if want := simulated.NTFSOverhead(1022*modelMiB) + 10<<20; err != nil || st.TotalBytes != 1022*modelMiB || st.UsedBytes != want {
		t.Errorf("GetVolumeStats = %+v, %v; want 1022 MiB total, %d used", st, err, want)
	}

	if _, err := s.Filesystem.Rmdir(ctx, &filesystem.RmdirRequest{Path: modelPublish}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Volume.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: vol, TargetPath: modelStage}); err != nil {
		t.Fatal(err)
	}
	if v := m.findVolume(vol); v.flushes != 1 || v.root.children["data"] == nil {
		t.Errorf("after unmount: %d flushes, files %v; want one flush and the file kept on the volume", v.flushes, v.root.children)
	}
	if a, err := m.attributes(modelStage); err != nil || a != fileAttributeDirectory {
		t.Errorf("staging dir after unmount: attributes %#x, %v; want a plain directory", a, err)
	}
	if _, err := s.Disk.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: 1, IsOnline: false}); err != nil {
		t.Fatal(err)
	}
	if !d.offline {
		t.Error("disk 1 is online after SetDiskState(offline)")
	}
}

// TestModelWin32Errors checks that seam calls fail with the codes Windows
// gives, so the backend's error mapping is exercised by real codes.
func TestModelWin32Errors(t *testing.T) {
	s := newModelStack(t, modelTestConfig())
	m := s.Model
	vol := modelFirstVolume(t, s, 1)
	dir := modelKubelet + `\d`
	if err := m.mkdir(dir); err != nil {
		t.Fatal(err)
	}
	if err := m.mkdir(dir + `\x`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		err  error
		want uint32
	}{
		{"mkdir of an existing directory", m.mkdir(dir), modelErrAlreadyExists},
		{"mkdir under a missing parent", m.mkdir(dir + `\no\x`), errPathNotFound},
		{"mount on a non-empty folder", m.setVolumeMountPoint(dir+`\`, vol), errDirNotEmpty},
		{"mount without the trailing backslash", m.setVolumeMountPoint(dir+`\x`, vol), modelErrInvalidName},
		{"unmount a plain folder", m.deleteVolumeMountPoint(dir + `\x\`), errNotAReparsePoint},
		{"unmount a missing folder", m.deleteVolumeMountPoint(dir + `\y\`), errFileNotFound},
		{"file system of a RAW volume", second(m.fileSystemName(vol)), errUnrecognizedVolume},
		{"free space of a RAW volume", third(m.diskFreeSpace(vol)), errUnrecognizedVolume},
		{"volume name of a plain folder", second(m.volumeNameForMountPoint(dir + `\`)), errNotAReparsePoint},
		{"attributes under a missing parent", second(m.attributes(dir + `\no\x`)), errPathNotFound},
		{"attributes of a missing file", second(m.attributes(dir + `\no`)), errFileNotFound},
		{"open a missing volume", second(m.open(`\\?\Volume{00000000-0000-4000-8000-000000000000}`, modeQuery)), errFileNotFound},
	} {
		if n, ok := errnoOf(c.err); !ok || n != c.want {
			t.Errorf("%s: %v, want Win32 error %d", c.name, c.err, c.want)
		}
	}
	h, err := m.open(dir, modeReparse)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.ioctl(h, fsctlGetReparsePoint, nil, maxReparseDataSize); !isErrno(err, errNotAReparsePoint) {
		t.Errorf("FSCTL_GET_REPARSE_POINT on a plain folder: %v, want ERROR_NOT_A_REPARSE_POINT", err)
	}
	m.close(h)
	if err := m.setVolumeMountPoint(dir+`\x\`, vol); err != nil {
		t.Fatal(err)
	}
	if err := m.setVolumeMountPoint(dir+`\x\`, vol); !isErrno(err, errDirNotEmpty) {
		t.Errorf("mount on a mounted folder: %v, want ERROR_DIR_NOT_EMPTY", err)
	}
	if _, err := m.attributes(dir + `\x\inside`); !isErrno(err, errUnrecognizedVolume) {
		t.Errorf("a path into a RAW volume: %v, want ERROR_UNRECOGNIZED_VOLUME", err)
	}
}

func second[T any](_ T, err error) error        { return err }
func third[T, U any](_ T, _ U, err error) error { return err }

// TestModelStorageCodes checks the Storage Management return codes the
// model's WMI methods give.
func TestModelStorageCodes(t *testing.T) {
	ctx := context.Background()
	s := newModelStack(t, modelTestConfig())
	m := s.Model
	for _, c := range []struct {
		name   string
		q      *wmi.WQL
		method string
		args   []wmi.Param
		want   wmi.ReturnCode
	}{
		{"partition a RAW disk", diskQuery(2), "CreatePartition", []wmi.Param{wmi.Arg("UseMaximumSize", true)}, wmi.DiskNotInitialized},
		{"initialise as GPT", diskQuery(2), "Initialize", []wmi.Param{wmi.Arg("PartitionStyle", uint16(2))}, wmi.Success},
		{"initialise twice", diskQuery(2), "Initialize", []wmi.Param{wmi.Arg("PartitionStyle", uint16(2))}, wmi.DiskAlreadyInitialized},
		{"neither Size nor UseMaximumSize", diskQuery(2), "CreatePartition", nil, modelSizeOrMaximum},
		{"an MBR type on GPT", diskQuery(2), "CreatePartition", []wmi.Param{wmi.Arg("UseMaximumSize", true), wmi.Arg("MbrType", uint16(7))}, wmi.ParameterNotValidForPartitionType},
		{"more than the disk", diskQuery(2), "CreatePartition", []wmi.Param{wmi.Arg("Size", uint64(3<<30))}, modelNotEnoughCapacity},
		{"a 1 GiB partition", diskQuery(2), "CreatePartition", []wmi.Param{wmi.Arg("Size", uint64(1<<30))}, wmi.Success},
		{"grow past the free space", partitionQuery(2, 1), "Resize", []wmi.Param{wmi.Arg("Size", uint64(3<<30))}, wmi.SizeNotSupported},
		{"grow by less than 1 MiB", partitionQuery(2, 1), "Resize", []wmi.Param{wmi.Arg("Size", uint64(1<<30+4096))}, wmi.SizeNotSupported},
		{"grow by 512 MiB", partitionQuery(2, 1), "Resize", []wmi.Param{wmi.Arg("Size", uint64(1536<<20))}, wmi.Success},
		{"take the system disk offline", diskQuery(0), "Offline", nil, modelCriticalDisk},
		{"take disk 2 offline", diskQuery(2), "Offline", nil, wmi.Success},
		{"partition an offline disk", diskQuery(2), "CreatePartition", []wmi.Param{wmi.Arg("UseMaximumSize", true)}, wmi.DiskOffline},
	} {
		_, err := m.call(ctx, c.q, c.method, c.args...)
		got := wmi.Success
		var me *wmi.MethodError
		if errors.As(err, &me) {
			got = me.Code
		} else if err != nil {
			t.Errorf("%s: %v, want a method result", c.name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: %s.%s returned %d, want %d", c.name, c.q.Class(), c.method, got, c.want)
		}
	}
	if p := m.disks[2].parts[0]; p.size != 1536<<20 {
		t.Errorf("partition size after Resize = %d, want 1.5 GiB", p.size)
	}
	// The offline disk's partition is listed, its volume is not.
	rows, err := m.query(ctx, wmi.Query(classPartition).Where("DiskNumber", 2).Select("Size", "GptType"))
	if err != nil || len(rows) != 1 || len(rows[0]) != 2 || rows[0]["GptType"] != "{"+gptBasicData+"}" {
		t.Errorf("partitions of offline disk 2: %v, %v; want its one basic data partition", rows, err)
	}
	if rows, err := m.query(ctx, wmi.Query(classVolume).Where("FileSystemType", 0)); err != nil || len(rows) != 0 {
		t.Errorf("RAW volumes: %v, %v; want none (disk 1 has no partition, disk 2 is offline)", rows, err)
	}
	if _, err := m.call(ctx, wmi.Query(classVolume).Where("UniqueId", volumeRoot(`\\?\Volume{00000000-0000-4000-8000-000000000000}`)), "Format"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("Format of a missing volume: %v, want not found", err)
	}
}

// TestModelMBRDisk checks MBR layouts: a disk with a data partition is
// already partitioned; an empty MBR disk gets a partition of the default
// type, without GptType.
func TestModelMBRDisk(t *testing.T) {
	ctx := context.Background()
	m := newWinModel(t, []modelDiskSpec{
		{Number: 0, Size: 4 << 30, System: true, Style: partitionStyleMBR, Partitions: []modelPartitionSpec{
			{Number: 1, Offset: modelMiB, Size: 3 << 30, MBRType: 0x07, FileSystem: "NTFS", DriveLetter: 'C'},
		}},
		{Number: 1, Size: 1 << 30, Style: partitionStyleMBR},
	}, modelKubelet)
	b, err := newBackend(m, Config{})
	if err != nil {
		t.Fatal(err)
	}
	disks := disk.NewService(b.Disk())
	paths, _ := hostpath.NewPolicy(hostpath.Windows, []string{modelKubelet})
	vols := volume.NewService(b.Volume(), paths)
	for _, n := range []uint32{0, 1} {
		if _, err := disks.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: n}); err != nil {
			t.Fatalf("PartitionDisk(%d): %v", n, err)
		}
	}
	if p := m.disks[0].parts; len(p) != 1 {
		t.Errorf("disk 0 has %d partitions after PartitionDisk, want its one", len(p))
	}
	if p := m.disks[1].parts; len(p) != 1 || p[0].mbrType != modelMBRHuge || p[0].offset != modelMiB {
		t.Errorf("disk 1 partitions = %+v; want one of type %#x at 1 MiB", p, modelMBRHuge)
	}
	r, err := vols.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: 1, PartitionNumber: 1})
	if err != nil || len(r.VolumeIDs) != 1 {
		t.Fatalf("ListVolumesOnDisk(1, 1) = %v, %v; want the new volume", r, err)
	}
	n, err := vols.GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: r.VolumeIDs[0]})
	if err != nil || n.DiskNumber != 1 {
		t.Errorf("GetDiskNumberFromVolumeID = %v, %v; want disk 1", n, err)
	}
	c, err := vols.GetClosestVolumeIDFromTargetPath(ctx, &volume.GetClosestVolumeIDFromTargetPathRequest{TargetPath: modelKubelet})
	if err != nil || !strings.EqualFold(c.VolumeID, m.letters['C'].guid) {
		t.Errorf("GetClosestVolumeIDFromTargetPath(%s) = %v, %v; want C:", modelKubelet, c, err)
	}
}

// TestModelLinks checks links the way Windows stores them: a junction is
// followed to a mounted folder, a file link cannot be walked through, a
// link loop ends, and removing a link leaves its target alone.
func TestModelLinks(t *testing.T) {
	ctx := context.Background()
	s := newModelStack(t, modelTestConfig())
	m := s.Model
	vol := modelFirstVolume(t, s, 1)
	if _, err := s.Volume.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: vol}); err != nil {
		t.Fatal(err)
	}
	if err := m.mkdirAll(hostpath.Windows.Dir(modelStage)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Volume.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: vol, TargetPath: modelStage}); err != nil {
		t.Fatal(err)
	}
	junction := modelKubelet + `\junction`
	if err := m.link(junction, modelStage, true, true); err != nil {
		t.Fatal(err)
	}
	r, err := s.Volume.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: junction})
	if err != nil || !strings.EqualFold(r.VolumeID, vol) {
		t.Errorf("GetVolumeIDFromTargetPath(junction) = %v, %v; want %s", r, err, vol)
	}
	if ok, err := s.Filesystem.IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: junction}); err != nil || !ok.IsSymlink {
		t.Errorf("IsSymlink(junction) = %v, %v; want true", ok, err)
	}
	loopA, loopB := modelKubelet+`\a`, modelKubelet+`\b`
	if err := m.link(loopA, loopB, true, false); err != nil {
		t.Fatal(err)
	}
	if err := m.link(loopB, loopA, true, false); err != nil {
		t.Fatal(err)
	}
	if _, err := m.attributes(loopA + `\x`); !isErrno(err, modelErrCantResolve) {
		t.Errorf("a path through a link loop: %v, want ERROR_CANT_RESOLVE_FILENAME", err)
	}
	if _, err := s.Volume.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: loopA}); errgrpc.Code(err) != errgrpc.Code(errdefs.ErrFailedPrecondition) {
		t.Errorf("GetVolumeIDFromTargetPath(loop) = %v, want FailedPrecondition", err)
	}
	file := modelKubelet + `\f`
	if err := m.writeFile(file, 1); err != nil {
		t.Fatal(err)
	}
	fileLink := modelKubelet + `\fl`
	if _, err := s.Filesystem.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{SourcePath: file, TargetPath: fileLink}); err != nil {
		t.Fatal(err)
	}
	if a, err := m.attributes(fileLink); err != nil || a&fileAttributeReparsePoint == 0 || a&fileAttributeDirectory != 0 {
		t.Errorf("attributes of a file link = %#x, %v; want a reparse point that is no directory", a, err)
	}
	if _, err := m.attributes(fileLink + `\x`); !isErrno(err, errDirectory) {
		t.Errorf("a path through a file link: %v, want ERROR_DIRECTORY", err)
	}
	if _, err := s.Filesystem.Rmdir(ctx, &filesystem.RmdirRequest{Path: junction}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Filesystem.PathExists(ctx, &filesystem.PathExistsRequest{Path: modelStage}); err != nil || !ok.Exists {
		t.Errorf("the mounted folder after removing a junction to it: exists %v, %v", ok, err)
	}
	if _, err := s.Filesystem.Rmdir(ctx, &filesystem.RmdirRequest{Path: modelKubelet + `\plugins`}); errgrpc.Code(err) != errgrpc.Code(errdefs.ErrFailedPrecondition) {
		t.Errorf("Rmdir of a non-empty directory without force: %v, want FailedPrecondition", err)
	}
}
