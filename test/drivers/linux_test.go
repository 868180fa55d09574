//go:build linux

package drivers_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/test/drivers/flows"
	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

// TestLinuxBackend runs the drivers' node flows against the daemon on its
// Linux backend: cmd/csi-node-proxy built from this module and started
// with --host=linux (test/linuxe2e/linuxnode), reached over its unix
// sockets with our client.Dial, on real loop disks, with a scratch
// directory as the kubelet directory and POSIX paths.
//
// The flows are the drivers' Windows node code; on Linux only the parts
// that do not depend on Windows-only disk identities apply:
//
//   - aws-ebs: every flow. It finds its disk by the SerialNumber holding
//     the volume ID, and a loop disk's SerialNumber is its backing file's
//     path (docs/linux.md, Identities), which the runner names after the
//     fixture's serial.
//   - azuredisk, gcp-pd, vsphere: the unstage flows of a path that was
//     never staged (left behind, already gone), which need no disk. Their
//     other flows find the disk by a SCSI LUN (ListDiskLocations leaves out
//     loop disks, which have no SCSI address) or by page 0x83 (a loop
//     disk's is its GPT disk GUID, and a RAW one has none), so they cannot
//     find a loop disk and skip, saying so.
//   - vsphere's NodeGetInfo reads the machine's BIOS serial, which the
//     runner cannot set; csi-driver-smb's flows need an SMB server per
//     fixture share and kernel CIFS (absent on the CI kernel). They skip.
//
// The same flows then run through the shared mounter (subtest "mounter",
// flows.MounterPlan) on disks of their own; there aws-ebs's disk flows
// skip too (linuxMounterNotApplicable).
//
// The Linux backend numbers disks by the kernel's diskseq, the flows by
// the fixture's numbers: linuxDisks renames between the two, one to one.
func TestLinuxBackend(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "e2fsprogs", "mkfs.ext4", "e2fsck", "resize2fs")
	start := time.Now()
	// TestMain removes the daemon binary once every test is done.
	s := linuxnode.New(t)
	env := flows.Env{Name: "linux", KubeletDir: s.Kubelet, Kubelet: osKubelet{}}
	plan := flows.NewPlan(env)
	// The same flows through the shared mounter run on the same node and
	// daemon, on disks of their own (the mounter plan numbers its disks
	// apart).
	mplan := flows.NewMounterPlan(env)
	all, mall := plan.Fixture(), mplan.Fixture()
	withDisk := map[flows.FlowID]bool{}
	for _, d := range all.Disks {
		withDisk[d.Flow] = true
	}
	na := linuxNotApplicable(withDisk)
	mna := mplan.NotApplicable(linuxMounterNotApplicable(na, withDisk))
	world := all.Only(na)
	world.Disks = append(world.Disks, mall.Only(mna).Disks...)
	var loops []*linuxnode.Loop
	r := &linuxDisks{toLinux: map[uint32]uint32{}, toFixture: map[uint32]uint32{}}
	for _, d := range world.Disks {
		l := s.Attach(d.Serial, d.Size)
		seq, err := l.Diskseq()
		if err != nil {
			t.Fatalf("diskseq of %s: %v", l.Name, err)
		}
		r.toLinux[d.Number], r.toFixture[seq] = seq, d.Number
		if d.Offline {
			// What the Linux backend shows as offline for a disk that
			// is not SCSI (docs/linux.md, Online and offline).
			setReadOnly(t, l)
		}
		loops = append(loops, l)
	}
	// Cleanups run last first: this one after the daemon has stopped
	// and before linuxnode detaches the loop disks.
	t.Cleanup(func() { removePartitions(t, s, loops) })
	d := linuxnode.StartDaemon(t, s, linuxnode.OwnDisks)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, client.Options{SocketDir: d.SocketDir, Groups: []string{"disk", "volume", "filesystem"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	t.Logf("%d loop disks for the flows that apply; daemon serving after %v", len(loops), time.Since(start).Round(time.Millisecond))

	p := flows.Proxy{Disk: linuxDisk{c.Disk(), r}, Volume: linuxVolume{c.Volume(), r}, Filesystem: c.Filesystem()}
	plan.RunApplicable(t, p, na)
	t.Logf("flows done after %v", time.Since(start).Round(time.Millisecond))
	t.Run("mounter", func(t *testing.T) {
		mplan.Run(t, linuxNode{Client: c, r: r}, newFlowsMounter, mna)
	})
	t.Logf("flows through the mounter done after %v", time.Since(start).Round(time.Millisecond))
}

// linuxMounterNotApplicable is na for the flows through the mounter, plus
// aws-ebs's disk flows: the mounter's FindDiskBySerial compares whole
// serial numbers (it never guesses), and a loop disk's SerialNumber is its
// backing file's path, which holds the EBS serial (aws-ebs's own
// strings.Contains finds it) but is not it. An EBS disk on a Linux node
// reports the serial itself (the NVMe serial).
func linuxMounterNotApplicable(na flows.NotApplicable, withDisk map[flows.FlowID]bool) flows.NotApplicable {
	return func(id flows.FlowID) string {
		if why := na(id); why != "" {
			return why
		}
		if id.Driver == "aws-ebs" && withDisk[id] {
			return "the mounter's FindDiskBySerial compares whole serial numbers, and a loop disk's SerialNumber is its backing file's path (aws-ebs's own strings.Contains finds the EBS serial in it; an EBS disk on a Linux node reports the serial itself)"
		}
		return ""
	}
}

// linuxNode is the daemon's node with fixture disk numbers, for the mounter.
type linuxNode struct {
	*client.Client
	r *linuxDisks
}

func (n linuxNode) Disk() disk.Interface     { return linuxDisk{n.Client.Disk(), n.r} }
func (n linuxNode) Volume() volume.Interface { return linuxVolume{n.Client.Volume(), n.r} }

// linuxNotApplicable says which flows cannot find what they look for on a
// Linux node with loop disks; withDisk are the flows that find a disk.
func linuxNotApplicable(withDisk map[flows.FlowID]bool) flows.NotApplicable {
	return func(id flows.FlowID) string {
		switch {
		case id.Driver == "smb":
			return "csi-driver-smb's Windows flow needs an SMB server for each fixture share (\\\\smb-N-NN\\share) and kernel CIFS, which the CI kernel lacks (docs/linux.md); internal/host/linux/cifs tests the SMB group"
		case id.Name == "NodeGetInfo/bios-serial":
			return "the BIOS serial is the machine's (/sys/class/dmi/id/product_serial), which the runner cannot set to the fixture's VMware serial"
		case !withDisk[id]:
			return "" // an unstage of a path never staged: no disk to find
		}
		switch id.Driver {
		case "azuredisk":
			return "azuredisk finds its disk by LUN in ListDiskLocations, which lists only SCSI disks; a loop disk has no SCSI address"
		case "gcp-pd":
			return "gcp-pd finds its disk by the GCE device name as the last word of page 0x83; a loop disk's Page83 is its GPT disk GUID, and a RAW one has none"
		case "vsphere":
			return "vsphere finds its disk by page 0x83 equal to the FCD UUID; a loop disk's Page83 is its GPT disk GUID, and a RAW one has none"
		}
		return ""
	}
}

// osKubelet is the kubelet's own MkdirAll: the test runs on the node.
type osKubelet struct{}

func (osKubelet) MkdirAll(_ context.Context, path string) error { return os.MkdirAll(path, 0o750) }

// setReadOnly sets the kernel's read-only flag of the loop disk (BLKROSET),
// which linuxnode's cleanup clears before detaching it.
func setReadOnly(t *testing.T, l *linuxnode.Loop) {
	t.Helper()
	f, err := os.Open(l.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.IoctlSetPointerInt(int(f.Fd()), unix.BLKROSET, 1); err != nil {
		t.Fatalf("BLKROSET 1 %s: %v", l.Path, err)
	}
}

// removePartitions unmounts what the daemon left mounted of the test and
// deletes the loop disks' partitions (BLKPG_DEL_PARTITION) before the
// disks are detached: partitions added with BLKPG are the kernel's, not the
// backing file's, and a detach is not guaranteed to drop them (on this
// kernel LO_FLAGS_PARTSCAN does; the next user of /dev/loopN must never
// find our partitions). linuxnode's cleanup then detaches the disks and
// fails the test for anything left behind.
func removePartitions(t *testing.T, s *linuxnode.Scratch, loops []*linuxnode.Loop) {
	var mps []string
	for _, m := range s.Mounts() {
		if m.MountPoint != s.Dir { // linuxnode's shared bind mount of the area
			mps = append(mps, m.MountPoint)
		}
	}
	sort.Slice(mps, func(i, j int) bool { return len(mps[i]) > len(mps[j]) })
	for _, mp := range mps {
		if err := unix.Unmount(mp, 0); err != nil {
			t.Errorf("cleanup: unmount %s: %v", mp, err)
		}
	}
	removed := 0
	for _, l := range loops {
		parts, err := filepath.Glob(filepath.Join("/sys/block", l.Name, l.Name+"p*", "partition"))
		if err != nil || len(parts) == 0 {
			continue
		}
		if err := deletePartitions(l.Path, parts); err != nil {
			t.Errorf("cleanup: %v", err)
			continue
		}
		removed += len(parts)
	}
	t.Logf("cleanup: removed %d partitions of %d loop disks before detaching them", removed, len(loops))
}

// deletePartitions removes the partitions whose sysfs "partition" files
// are given from disk dev.
func deletePartitions(dev string, parts []string) error {
	f, err := os.Open(dev)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range parts {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		part := unix.BlkpgPartition{Pno: int32(n)}
		arg := unix.BlkpgIoctlArg{Op: unix.BLKPG_DEL_PARTITION, Datalen: int32(unsafe.Sizeof(part)), Data: (*byte)(unsafe.Pointer(&part))}
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), unix.BLKPG, uintptr(unsafe.Pointer(&arg))); errno != 0 {
			return fmt.Errorf("BLKPG_DEL_PARTITION %s partition %d: %w", dev, n, errno)
		}
	}
	return nil
}

// linuxDisks renames disks between the fixture's numbers, which the flows
// use (and compare with what the driver picked), and the Linux backend's,
// the kernel's diskseq. A Linux number the runner did not attach (the
// node's own disk) keeps its number unless that is a fixture number,
// which would make the answer ambiguous: that fails the call.
type linuxDisks struct {
	toLinux   map[uint32]uint32
	toFixture map[uint32]uint32
}

// linux is the daemon's number for fixture disk n.
func (r *linuxDisks) linux(n uint32) (uint32, error) {
	l, ok := r.toLinux[n]
	if !ok {
		return 0, fmt.Errorf("disk %d is not a disk of the fixture the runner built", n)
	}
	return l, nil
}

// fixture is the flows' number for the daemon's disk n.
func (r *linuxDisks) fixture(n uint32) (uint32, error) {
	if f, ok := r.toFixture[n]; ok {
		return f, nil
	}
	if _, clash := r.toLinux[n]; clash {
		return 0, fmt.Errorf("the node's disk %d (diskseq) has a fixture disk's number", n)
	}
	return n, nil
}

// renumberKeys returns m with its disk numbers renamed to the fixture's.
func renumberKeys[V any](r *linuxDisks, m map[uint32]V) (map[uint32]V, error) {
	out := make(map[uint32]V, len(m))
	for n, v := range m {
		f, err := r.fixture(n)
		if err != nil {
			return nil, err
		}
		out[f] = v
	}
	return out, nil
}

// linuxDisk is the disk group with fixture disk numbers.
type linuxDisk struct {
	disk.Interface
	r *linuxDisks
}

func (d linuxDisk) ListDiskLocations(ctx context.Context, req *disk.ListDiskLocationsRequest) (*disk.ListDiskLocationsResponse, error) {
	resp, err := d.Interface.ListDiskLocations(ctx, req)
	if err != nil {
		return nil, err
	}
	locs, err := renumberKeys(d.r, resp.DiskLocations)
	if err != nil {
		return nil, err
	}
	return &disk.ListDiskLocationsResponse{DiskLocations: locs}, nil
}

func (d linuxDisk) ListDiskIDs(ctx context.Context, req *disk.ListDiskIDsRequest) (*disk.ListDiskIDsResponse, error) {
	resp, err := d.Interface.ListDiskIDs(ctx, req)
	if err != nil {
		return nil, err
	}
	ids, err := renumberKeys(d.r, resp.DiskIDs)
	if err != nil {
		return nil, err
	}
	return &disk.ListDiskIDsResponse{DiskIDs: ids}, nil
}

func (d linuxDisk) PartitionDisk(ctx context.Context, req *disk.PartitionDiskRequest) (*disk.PartitionDiskResponse, error) {
	n, err := d.r.linux(req.DiskNumber)
	if err != nil {
		return nil, err
	}
	return d.Interface.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: n})
}

func (d linuxDisk) GetDiskStats(ctx context.Context, req *disk.GetDiskStatsRequest) (*disk.GetDiskStatsResponse, error) {
	n, err := d.r.linux(req.DiskNumber)
	if err != nil {
		return nil, err
	}
	return d.Interface.GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: n})
}

func (d linuxDisk) SetDiskState(ctx context.Context, req *disk.SetDiskStateRequest) (*disk.SetDiskStateResponse, error) {
	n, err := d.r.linux(req.DiskNumber)
	if err != nil {
		return nil, err
	}
	return d.Interface.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: n, IsOnline: req.IsOnline})
}

func (d linuxDisk) GetDiskState(ctx context.Context, req *disk.GetDiskStateRequest) (*disk.GetDiskStateResponse, error) {
	n, err := d.r.linux(req.DiskNumber)
	if err != nil {
		return nil, err
	}
	return d.Interface.GetDiskState(ctx, &disk.GetDiskStateRequest{DiskNumber: n})
}

// linuxVolume is the volume group with fixture disk numbers.
type linuxVolume struct {
	volume.Interface
	r *linuxDisks
}

func (v linuxVolume) ListVolumesOnDisk(ctx context.Context, req *volume.ListVolumesOnDiskRequest) (*volume.ListVolumesOnDiskResponse, error) {
	n, err := v.r.linux(req.DiskNumber)
	if err != nil {
		return nil, err
	}
	return v.Interface.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: n, PartitionNumber: req.PartitionNumber})
}

func (v linuxVolume) GetDiskNumberFromVolumeID(ctx context.Context, req *volume.GetDiskNumberFromVolumeIDRequest) (*volume.GetDiskNumberFromVolumeIDResponse, error) {
	resp, err := v.Interface.GetDiskNumberFromVolumeID(ctx, req)
	if err != nil {
		return nil, err
	}
	n, err := v.r.fixture(resp.DiskNumber)
	if err != nil {
		return nil, err
	}
	return &volume.GetDiskNumberFromVolumeIDResponse{DiskNumber: n}, nil
}
