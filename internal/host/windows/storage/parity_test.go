package storage

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/simtest"
)

// The parity test: the simulated host is what driver authors test
// against, so it must answer like the Windows backend. Each scenario runs
// through the group Services (validation, locks, idempotency included)
// against (a) the simulated host and (b) the real Windows backend over
// winModel, both built from one simulated.Config, and the two transcripts
// are compared step by step: the gRPC code of every error and the values
// a driver reads. Volume IDs differ between the two (random GUIDs on one
// side, the model's on the other), so they are compared structurally:
// each is written as the disk and partition it lives on.

// parityAllowed lists the differences the test tolerates, keyed
// "scenario/step", each with its reason; docs/simulated-host.md ("How
// closely it follows Windows") explains each one. An entry that matches
// no difference fails the test, so the list only holds differences that
// still exist.
var parityAllowed = map[string]string{
	// Empty: every scenario answers alike on both sides. An entry reads
	//	"scenario/step": "why the two sides may differ here",
	// and goes with its paragraph in docs/simulated-host.md.
}

const (
	parityStage   = modelStage
	parityStage2  = modelStage + "2"
	parityPublish = modelPublish
	parityPlain   = modelKubelet + `\plugins\plain`
	parityMissing = modelKubelet + `\plugins\missing`
)

// parityPathNames shortens the paths in step names.
var parityPathNames = strings.NewReplacer(parityStage2, "staging2", parityStage, "staging", parityPublish, "publish",
	parityPlain, "plain", parityMissing, "missing", modelKubelet, "kubelet")

// parityNVMeDisk is the number of the parity world's NVMe disk.
var parityNVMeDisk uint32 = 7

// parityReadOnlyDisk is the number of the parity world's read-only disk.
var parityReadOnlyDisk uint32 = 8

// parityConfig is the world every scenario starts from: the system disk
// 0 (C:) and data disks covering the states drivers meet.
func parityConfig() simulated.Config {
	return simulated.Config{
		WorkingDirs: []string{modelKubelet},
		Seed:        7,
		Disks: []simulated.DiskSpec{
			// 1, 2: RAW and online, as a new cloud disk arrives.
			{Size: 1 << 30, Location: "1:0:0:0", Page83: "60022480000000000000000000000001", Serial: "SIM-DATA-0001"},
			{Size: 2 << 30, Location: "1:0:0:1", Page83: "60022480000000000000000000000002", Serial: "SIM-DATA-0002"},
			// 3: partitioned and offline, as a re-staged disk that a previous
			// NodeUnstage took offline; an ASCII page 0x83 ID as GCE PDs give.
			{Size: 1 << 30, Location: "1:0:0:2", Page83: "Google  pvc-3", Serial: "SIM-DATA-0003", Offline: true, Partitioned: true},
			// 4: RAW and offline, as under the SAN policy OfflineShared.
			{Size: 1 << 30, Location: "1:0:0:3", Serial: "SIM-DATA-0004", Offline: true},
			// 5: no SCSI address and no IDs.
			{Size: 1 << 30},
			// 7: an NVMe namespace (Azure's NVMe disks) on PCI bus 2:
			// upstream's Location parse gives it no LUN, so azuredisk's
			// FindDiskByLun("0") cannot pick it; its namespace ID and
			// product (model only) let library mode's mounter find it by
			// Azure's rule.
			{Number: &parityNVMeDisk, Size: 1 << 30, BusType: "NVMe", Location: "2", NamespaceID: 3, Product: "msft_nvme_accele",
				Page83: "eui.0025385b71b0ae2b", Serial: "0025_385B_71B0_AE2B."},
			// 8: formatted, offline and read-only, as a vSphere PVSCSI disk
			// comes back after re-attach (kubernetes-csi/csi-proxy#437).
			{Number: &parityReadOnlyDisk, Size: 1 << 30, Location: "1:0:0:8", Serial: "SIM-DATA-0008", Offline: true, ReadOnly: true, FileSystem: "NTFS"},
		},
	}
}

// parityWorld is one side of the comparison.
type parityWorld struct {
	disks *disk.Service
	// disksClearRO is the disk group with the daemon's opt-in
	// ClearReadOnlyOnOnline, over the same host.
	disksClearRO *disk.Service
	vols         *volume.Service
	fs           *filesystem.Service
	// label names a volume ID structurally: "disk1/part1".
	label      func(id string) string
	writeFile  func(path string, size int) error
	resizeDisk func(n uint32, size int64) error
}

func simulatedWorld(t *testing.T, cfg simulated.Config) *parityWorld {
	h := simtest.Node(t, cfg)
	paths := simtest.Paths(t, h)
	return &parityWorld{
		disks:        disk.NewService(h.Disk()),
		disksClearRO: disk.NewServiceWith(h.Disk(), disk.ServiceOptions{ClearReadOnlyOnOnline: true}),
		vols:         volume.NewService(h.Volume(), paths),
		fs:           filesystem.NewService(h.Filesystem(), paths),
		label: func(id string) string {
			for _, v := range h.ListVolumes() {
				if strings.EqualFold(v.ID, id) {
					return fmt.Sprintf("disk%d/part%d", v.Disk, v.Partition)
				}
			}
			return "unknown volume " + id
		},
		writeFile:  func(path string, size int) error { return h.WriteFile(path, make([]byte, size)) },
		resizeDisk: h.ResizeDisk,
	}
}

func windowsWorld(t *testing.T, cfg simulated.Config) *parityWorld {
	s := newModelStack(t, cfg)
	m := s.Model
	return &parityWorld{
		disks:        s.Disk,
		disksClearRO: disk.NewServiceWith(s.DiskHost, disk.ServiceOptions{ClearReadOnlyOnOnline: true}),
		vols:         s.Volume,
		fs:           s.Filesystem,
		label: func(id string) string {
			m.mu.Lock()
			defer m.mu.Unlock()
			if v := m.findVolume(id); v != nil {
				return fmt.Sprintf("disk%d/part%d", v.disk.number, v.part.number)
			}
			return "unknown volume " + id
		},
		writeFile: func(path string, size int) error { return m.writeFile(path, int64(size)) },
		resizeDisk: func(n uint32, size int64) error {
			m.resizeDisk(n, size)
			return nil
		},
	}
}

// parityRun records one scenario on one world.
type parityRun struct {
	t     *testing.T
	side  string
	w     *parityWorld
	ctx   context.Context
	steps []parityStep
}

type parityStep struct {
	name    string
	outcome string // the gRPC code, and for success the values
}

// record adds a step: its code and, on success, its value.
func (r *parityRun) record(name, value string, err error) error {
	out := errgrpc.Code(err).String()
	if err == nil && value != "" {
		out += " " + value
	}
	r.steps = append(r.steps, parityStep{parityPathNames.Replace(name), out})
	return err
}

// setup records a step the rest of the scenario depends on; its failure
// fails the test on either side, so a broken scenario cannot pass by
// failing the same way twice.
func (r *parityRun) setup(name string, err error) {
	if r.record(name, "", err) != nil {
		r.t.Errorf("%s: setup step %s failed: %v", r.side, parityPathNames.Replace(name), err)
	}
}

// value formats what get reads from a response, or "" when the call
// failed and there is no response.
func value[R any, V any](resp *R, get func() V) string {
	if resp == nil {
		return ""
	}
	return fmt.Sprint(get())
}

func (r *parityRun) labels(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = r.w.label(id)
	}
	return "[" + strings.Join(out, " ") + "]"
}

func (r *parityRun) partition(n uint32) error {
	_, err := r.w.disks.PartitionDisk(r.ctx, &disk.PartitionDiskRequest{DiskNumber: n})
	return r.record(fmt.Sprintf("PartitionDisk(%d)", n), "", err)
}

func (r *parityRun) setOnline(n uint32, online bool) {
	_, err := r.w.disks.SetDiskState(r.ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: online})
	r.record(fmt.Sprintf("SetDiskState(%d, %v)", n, online), "", err)
}

func (r *parityRun) diskState(n uint32) {
	s, err := r.w.disks.GetDiskState(r.ctx, &disk.GetDiskStateRequest{DiskNumber: n})
	r.record(fmt.Sprintf("GetDiskState(%d)", n), value(s, func() bool { return s.IsOnline }), err)
}

func (r *parityRun) readOnly(n uint32) {
	s, err := r.w.disks.GetDiskReadOnly(r.ctx, &disk.GetDiskReadOnlyRequest{DiskNumber: n})
	r.record(fmt.Sprintf("GetDiskReadOnly(%d)", n), value(s, func() bool { return s.IsReadOnly }), err)
}

func (r *parityRun) setReadOnly(n uint32, readOnly bool) {
	_, err := r.w.disks.SetDiskReadOnly(r.ctx, &disk.SetDiskReadOnlyRequest{DiskNumber: n, IsReadOnly: readOnly})
	r.record(fmt.Sprintf("SetDiskReadOnly(%d, %v)", n, readOnly), "", err)
}

func (r *parityRun) diskStats(n uint32) {
	s, err := r.w.disks.GetDiskStats(r.ctx, &disk.GetDiskStatsRequest{DiskNumber: n})
	r.record(fmt.Sprintf("GetDiskStats(%d)", n), value(s, func() int64 { return s.TotalBytes }), err)
}

// volumesOn lists the volumes of a disk (or one partition) and returns
// them for the scenario's next steps.
func (r *parityRun) volumesOn(n, part uint32) []string {
	v, err := r.w.vols.ListVolumesOnDisk(r.ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: n, PartitionNumber: part})
	if err != nil {
		r.record(fmt.Sprintf("ListVolumesOnDisk(%d, %d)", n, part), "", err)
		return nil
	}
	r.record(fmt.Sprintf("ListVolumesOnDisk(%d, %d)", n, part), r.labels(v.VolumeIDs), nil)
	return v.VolumeIDs
}

// newVolume partitions a RAW disk and formats its volume, as a first
// NodeStage does, and returns the volume.
func (r *parityRun) newVolume(n uint32) string {
	if err := r.partition(n); err != nil {
		r.t.Errorf("%s: setup step PartitionDisk(%d) failed: %v", r.side, n, err)
	}
	ids := r.volumesOn(n, 0)
	if len(ids) != 1 {
		r.t.Fatalf("%s: disk %d has volumes %v after PartitionDisk, want one", r.side, n, ids)
	}
	_, err := r.w.vols.FormatVolume(r.ctx, &volume.FormatVolumeRequest{VolumeID: ids[0]})
	r.setup("FormatVolume("+r.w.label(ids[0])+")", err)
	return ids[0]
}

func (r *parityRun) isFormatted(id string) {
	f, err := r.w.vols.IsVolumeFormatted(r.ctx, &volume.IsVolumeFormattedRequest{VolumeID: id})
	r.record("IsVolumeFormatted("+r.w.label(id)+")", value(f, func() bool { return f.Formatted }), err)
}

func (r *parityRun) format(id string) {
	_, err := r.w.vols.FormatVolume(r.ctx, &volume.FormatVolumeRequest{VolumeID: id})
	r.record("FormatVolume("+r.w.label(id)+")", "", err)
}

func (r *parityRun) mount(id, path string) {
	_, err := r.w.vols.MountVolume(r.ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: path})
	r.record(fmt.Sprintf("MountVolume(%s, %s)", r.w.label(id), path), "", err)
}

func (r *parityRun) unmount(id, path string) {
	_, err := r.w.vols.UnmountVolume(r.ctx, &volume.UnmountVolumeRequest{VolumeID: id, TargetPath: path})
	r.record(fmt.Sprintf("UnmountVolume(%s, %s)", r.w.label(id), path), "", err)
}

// volumeAt records the volume at a path and, for NotFound, whether the
// message keeps the phrase aws-ebs-csi-driver matches to mean "not
// mounted" (issue 11 item 3): drivers read that text.
func (r *parityRun) volumeAt(path string) {
	v, err := r.w.vols.GetVolumeIDFromTargetPath(r.ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: path})
	r.record("GetVolumeIDFromTargetPath("+path+")", value(v, func() string { return r.w.label(v.VolumeID) }), err)
	if errgrpc.Code(err) == errgrpc.Code(errdefs.ErrNotFound) {
		last := &r.steps[len(r.steps)-1]
		last.outcome += fmt.Sprintf(" (says 'because it does not exist': %v)", strings.Contains(err.Error(), "because it does not exist"))
	}
}

func (r *parityRun) closest(path string) {
	v, err := r.w.vols.GetClosestVolumeIDFromTargetPath(r.ctx, &volume.GetClosestVolumeIDFromTargetPathRequest{TargetPath: path})
	r.record("GetClosestVolumeIDFromTargetPath("+path+")", value(v, func() string { return r.w.label(v.VolumeID) }), err)
}

func (r *parityRun) volumeStats(id string) {
	s, err := r.w.vols.GetVolumeStats(r.ctx, &volume.GetVolumeStatsRequest{VolumeID: id})
	r.record("GetVolumeStats("+r.w.label(id)+")", value(s, func() string { return fmt.Sprintf("total=%d used=%d", s.TotalBytes, s.UsedBytes) }), err)
}

func (r *parityRun) resize(id string, size int64) {
	_, err := r.w.vols.ResizeVolume(r.ctx, &volume.ResizeVolumeRequest{VolumeID: id, SizeBytes: size})
	r.record(fmt.Sprintf("ResizeVolume(%s, %d)", r.w.label(id), size), "", err)
}

func (r *parityRun) diskNumber(id string) {
	n, err := r.w.vols.GetDiskNumberFromVolumeID(r.ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: id})
	r.record("GetDiskNumberFromVolumeID("+r.w.label(id)+")", value(n, func() uint32 { return n.DiskNumber }), err)
}

func (r *parityRun) mkdir(path string) {
	_, err := r.w.fs.Mkdir(r.ctx, &filesystem.MkdirRequest{Path: path})
	r.setup("Mkdir("+path+")", err)
}

// parityScenario is one node flow, run from parityConfig on each side.
type parityScenario struct {
	name string
	run  func(r *parityRun)
}

// parityScenarios are the node flows drivers run, one world each.
var parityScenarios = []parityScenario{
	{"disks", func(r *parityRun) {
		locs, err := r.w.disks.ListDiskLocations(r.ctx, &disk.ListDiskLocationsRequest{})
		var ltr, bus, nvme []string
		var all map[uint32]*disk.DiskLocation
		if locs != nil {
			all = locs.DiskLocations
		}
		for n, l := range all {
			ltr = append(ltr, fmt.Sprintf("%d=%s:%s:%s", n, l.Adapter, l.Target, l.LUNID))
			bus = append(bus, fmt.Sprintf("%d=%q", n, l.Bus))
			if l.NVMeNamespaceID != 0 || l.Product != "" {
				nvme = append(nvme, fmt.Sprintf("%d=%d/%s", n, l.NVMeNamespaceID, l.Product))
			}
		}
		sort.Strings(ltr)
		sort.Strings(bus)
		sort.Strings(nvme)
		r.record("ListDiskLocations adapter:target:lun", strings.Join(ltr, " "), err)
		r.record("ListDiskLocations bus", strings.Join(bus, " "), err)
		r.record("ListDiskLocations NVMe namespace/product (model only)", strings.Join(nvme, " "), err)
		ids, err := r.w.disks.ListDiskIDs(r.ctx, &disk.ListDiskIDsRequest{})
		var idList []string
		var allIDs map[uint32]*disk.DiskIDs
		if ids != nil {
			allIDs = ids.DiskIDs
		}
		for n, id := range allIDs {
			idList = append(idList, fmt.Sprintf("%d=%q/%q", n, id.Page83, id.SerialNumber))
		}
		sort.Strings(idList)
		r.record("ListDiskIDs", strings.Join(idList, " "), err)
		for n := uint32(0); n <= 6; n++ { // 6 does not exist
			r.diskStats(n)
			r.diskState(n)
		}
		r.volumesOn(0, 0)
		r.volumesOn(0, 2) // the Microsoft Reserved partition: no volume
		r.volumesOn(0, 9)
		r.volumesOn(1, 0)
		r.volumesOn(3, 0) // offline
		r.volumesOn(6, 0)
	}},
	{"partition raw disk", func(r *parityRun) {
		r.partition(1)
		ids := r.volumesOn(1, 0)
		r.volumesOn(1, 1)
		r.diskStats(1)
		for _, id := range ids {
			r.isFormatted(id)
			r.volumeStats(id) // RAW
			r.diskNumber(id)
		}
	}},
	{"partition twice", func(r *parityRun) {
		r.partition(2)
		r.partition(2)
		r.volumesOn(2, 0)
		r.partition(0) // the system disk: already partitioned
		r.volumesOn(0, 0)
	}},
	{"offline partitioned disk", func(r *parityRun) {
		r.diskState(3)
		r.partition(3) // upstream: success, the disk has a data partition
		r.setOnline(3, true)
		r.partition(3)
		ids := r.volumesOn(3, 0)
		for _, id := range ids {
			r.isFormatted(id)
		}
	}},
	{"offline raw disk", func(r *parityRun) {
		r.setOnline(4, false) // already offline
		r.diskState(4)
		r.partition(4)
		r.setOnline(4, true)
		r.diskState(4)
		r.partition(4)
		r.volumesOn(4, 0)
		r.setOnline(1, false)
		r.diskState(1)
		r.setOnline(0, false) // the system disk
		r.diskState(0)
	}},
	{"format", func(r *parityRun) {
		if err := r.partition(1); err != nil {
			r.t.Errorf("%s: setup step PartitionDisk(1) failed: %v", r.side, err)
		}
		ids := r.volumesOn(1, 0)
		for _, id := range ids {
			r.isFormatted(id)
			r.format(id)
			r.isFormatted(id)
			r.format(id) // refused: it would erase the volume
			r.volumeStats(id)
		}
		c := r.volumesOn(0, 3) // C:
		for _, id := range c {
			r.isFormatted(id)
			r.format(id)
		}
	}},
	{"mount", func(r *parityRun) {
		a, b := r.newVolume(1), r.newVolume(2)
		r.mkdir(hostpath.Windows.Dir(parityStage))
		r.volumeAt(parityStage) // missing: not mounted
		r.mount(a, parityStage)
		r.mount(a, parityStage) // kubelet retries NodeStage
		r.mount(b, parityStage) // another volume at the same folder
		r.volumeAt(parityStage)
		r.closest(parityStage)
		r.closest(parityStage + `\sub`) // missing below the mount
		r.mount(a, parityStage2)        // a second mount point of one volume
		r.volumeAt(parityStage2)
		r.unmount(a, parityStage2)
		r.unmount(a, parityStage)
		r.unmount(a, parityStage) // twice: nothing mounted is success
		r.volumeAt(parityStage)   // a plain directory now
		r.mount(b, parityStage)
		r.unmount(a, parityStage) // the wrong volume
		r.volumeAt(parityStage)
		r.mount(a, parityMissing+`\deeper`) // parent missing
	}},
	{"volume at paths", func(r *parityRun) {
		r.mkdir(parityPlain)
		r.volumeAt(parityPlain)
		r.volumeAt(parityMissing)
		r.volumeAt(modelKubelet)
		r.closest(parityPlain)
		r.closest(parityMissing)
	}},
	{"publish link", func(r *parityRun) {
		a := r.newVolume(1)
		r.mkdir(hostpath.Windows.Dir(parityStage))
		r.mount(a, parityStage)
		r.mkdir(hostpath.Windows.Dir(parityPublish))
		_, err := r.w.fs.CreateSymlink(r.ctx, &filesystem.CreateSymlinkRequest{SourcePath: parityStage, TargetPath: parityPublish})
		r.setup("CreateSymlink(staging, publish)", err)
		l, err := r.w.fs.IsSymlink(r.ctx, &filesystem.IsSymlinkRequest{Path: parityPublish})
		r.record("IsSymlink(publish)", value(l, func() bool { return l.IsSymlink }), err)
		r.volumeAt(parityPublish)
		r.closest(parityPublish)
		r.closest(parityPublish + `\sub`)
	}},
	{"stats", func(r *parityRun) {
		a := r.newVolume(1)
		r.mkdir(hostpath.Windows.Dir(parityStage))
		r.mount(a, parityStage)
		r.volumeStats(a)
		r.setup(`write staging\data`, r.w.writeFile(parityStage+`\data`, 3<<20+1))
		r.volumeStats(a)
		r.volumeStats(`\\?\Volume{00000000-0000-4000-8000-000000000000}\`) // no such volume
	}},
	{"resize", func(r *parityRun) {
		a := r.newVolume(2)
		r.resize(a, 0) // right after format: nothing to gain
		r.volumeStats(a)
		r.setup("grow disk 2 to 3 GiB", r.w.resizeDisk(2, 3<<30))
		_, err := r.w.disks.Rescan(r.ctx, &disk.RescanRequest{})
		r.record("Rescan", "", err)
		r.diskStats(2)
		r.resize(a, 100<<30) // beyond the disk
		r.resize(a, 1<<30)   // a shrink: skipped
		r.resize(a, 0)       // all of it
		r.volumeStats(a)
		r.resize(a, 0) // again: nothing to gain
		r.resize(a, -1)
	}},
	{"offline with a mounted volume", func(r *parityRun) {
		a := r.newVolume(1)
		r.mkdir(hostpath.Windows.Dir(parityStage))
		r.mount(a, parityStage)
		r.setOnline(1, false) // NodeUnstage of gcp-pd, aws-ebs, vsphere
		r.diskState(1)
		r.volumesOn(1, 0)
		r.volumeAt(parityStage)
		r.isFormatted(a)
		r.volumeStats(a)
		r.diskNumber(a)
		r.partition(1) // re-stage: PartitionDisk before SetDiskState(online)
		r.setOnline(1, true)
		r.volumeAt(parityStage)
		r.volumeStats(a)
		r.setOnline(1, false)
		r.unmount(a, parityStage) // azuredisk-style unstage after offline
	}},
	{"read-only after re-attach", func(r *parityRun) {
		n := parityReadOnlyDisk
		r.readOnly(n)
		r.setOnline(n, true) // without the opt-in: online, still read-only
		r.diskState(n)
		r.readOnly(n)
		r.setReadOnly(n, false) // what vsphere's mounter can call in library mode (PR #438)
		r.readOnly(n)
		r.setReadOnly(n, false) // again: nothing to do
		r.setReadOnly(n, true)
		r.readOnly(n)
		r.setOnline(n, false)
		r.setReadOnly(n, false) // an offline disk's attribute changes too
		r.readOnly(n)
		r.setReadOnly(n, true)
		_, err := r.w.disksClearRO.SetDiskState(r.ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: true})
		r.record(fmt.Sprintf("SetDiskState(%d, true) with ClearReadOnlyOnOnline", n), "", err)
		r.diskState(n)
		r.readOnly(n)
		r.readOnly(1)
		r.setReadOnly(99, true) // no such disk
		r.readOnly(99)
	}},
	{"disk number", func(r *parityRun) {
		a := r.newVolume(2)
		r.diskNumber(a)
		for _, id := range r.volumesOn(0, 0) {
			r.diskNumber(id)
		}
		r.diskNumber(`\\?\Volume{00000000-0000-4000-8000-000000000000}\`)
		r.diskNumber("not a volume")
	}},
}

// TestParitySimulatedAndWindows runs every scenario on the simulated host
// and on the Windows backend over the model and compares the transcripts.
func TestParitySimulatedAndWindows(t *testing.T) {
	used := map[string]bool{}     // allow-list entries that matched
	compared := map[string]bool{} // scenarios compared to the end
	for _, sc := range parityScenarios {
		t.Run(sc.name, func(t *testing.T) {
			ctx := context.Background()
			sim := &parityRun{t: t, side: "simulated", w: simulatedWorld(t, parityConfig()), ctx: ctx}
			win := &parityRun{t: t, side: "windows", w: windowsWorld(t, parityConfig()), ctx: ctx}
			sc.run(sim)
			sc.run(win)
			if len(sim.steps) != len(win.steps) {
				t.Fatalf("the scenario took %d steps on the simulated host and %d on the Windows backend", len(sim.steps), len(win.steps))
			}
			for i, s := range sim.steps {
				w := win.steps[i]
				if s.name != w.name {
					t.Fatalf("step %d is %q on the simulated host and %q on the Windows backend", i, s.name, w.name)
				}
				if s.outcome == w.outcome {
					t.Logf("%-70s %s", s.name, s.outcome)
					continue
				}
				key := sc.name + "/" + s.name
				if reason, ok := parityAllowed[key]; ok {
					used[key] = true
					t.Logf("%-70s allowed difference (%s):\n\tsimulated: %s\n\twindows:   %s", s.name, reason, s.outcome, w.outcome)
					continue
				}
				t.Errorf("%s differs:\n\tsimulated: %s\n\twindows:   %s", s.name, s.outcome, w.outcome)
			}
			compared[sc.name] = true
		})
	}
	// An entry that matches no difference is an error, not a note: a
	// difference that was fixed must leave the list (and the docs), or
	// the list would go on excusing it should it come back. Entries of a
	// scenario that did not finish its comparison (filtered out with
	// -run, or stopped by t.Fatal) are not judged; an entry naming no
	// scenario always is.
	for key, reason := range parityAllowed {
		scenario, _, _ := strings.Cut(key, "/")
		known := slices.ContainsFunc(parityScenarios, func(sc parityScenario) bool { return sc.name == scenario })
		if used[key] || known && !compared[scenario] {
			continue
		}
		t.Errorf("allow-list entry %q (%s) matched no difference: remove it, and its entry in docs/simulated-host.md", key, reason)
	}
}
