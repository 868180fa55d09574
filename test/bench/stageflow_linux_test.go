//go:build linux

package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

// stageDiskSize is each iteration's fresh loop disk.
const stageDiskSize = 256 << 20

// BenchmarkStageFlowRatio stages a fresh loop disk (partition, format ext4,
// mount) once through csi-node-proxy on the Linux backend (the daemon as a
// subprocess, gRPC over its unix sockets: PartitionDisk, ListVolumesOnDisk,
// FormatVolume, MountVolume) and once directly with the standard tools
// (sfdisk --no-reread --no-tell-kernel, partx -a, mkfs.ext4 with the
// proxy's options, mount(8)), alternating which goes first. Attaching and
// detaching the loop disks, and checking the result, are outside both
// timings. It reports the proxy's time per stage over the tools': target at
// most 1.0, because the proxy writes the GPT in Go, adds the partition with
// BLKPG and mounts with mount(2) instead of spawning sfdisk, partx and
// mount; both spawn mkfs.
//
// Needs root, and fdisk (sfdisk), util-linux (partx), mount and e2fsprogs.
func BenchmarkStageFlowRatio(b *testing.B) {
	testutil.RequireRoot(b)
	testutil.RequireTool(b, "fdisk", "sfdisk")
	testutil.RequireTool(b, "util-linux", "partx")
	testutil.RequireTool(b, "mount", "mount")
	testutil.RequireTool(b, "e2fsprogs", "mkfs.ext4")
	s := linuxnode.New(b)
	// The daemon sees the root disk and the benchmark's loop disks only,
	// so it never touches the loop disks of tests running meanwhile (see
	// linuxnode.OwnDisks); exposing each fresh disk is part of the
	// untimed setup.
	d := linuxnode.StartDaemon(b, s, linuxnode.OwnDisks, "--linux-filesystem=ext4")
	disk := diskv1.NewDiskClient(d.Dial(b, "disk-v1"))
	vol := volumev1.NewVolumeClient(d.Dial(b, "volume-v1"))
	parent := filepath.Join(s.Kubelet, "plugins", "kubernetes.io", "csi", "bench.csi.io")
	if err := os.MkdirAll(parent, 0o750); err != nil {
		b.Fatal(err)
	}
	// Connect both clients before timing.
	if _, err := disk.ListDiskIDs(context.Background(), &diskv1.ListDiskIDsRequest{}); err != nil {
		b.Fatal(err)
	}
	if _, err := vol.ListVolumesOnDisk(context.Background(), &volumev1.ListVolumesOnDiskRequest{DiskNumber: 0}); err == nil {
		b.Fatal("ListVolumesOnDisk(disk 0) succeeded; there is no disk 0")
	}

	sides := []struct {
		name  string
		stage func(l *linuxnode.Loop, target string) error
		total time.Duration
	}{
		{name: "proxy", stage: func(l *linuxnode.Loop, target string) error { return proxyStage(disk, vol, l, target) }},
		{name: "direct", stage: directStage},
	}
	b.ResetTimer()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		for k := range sides {
			side := &sides[(i+k)%2] // alternate which side goes first
			l := s.Attach(fmt.Sprintf("%s-%d.img", side.name, i), stageDiskSize)
			target := filepath.Join(parent, fmt.Sprintf("%s-%d", side.name, i), "globalmount")
			if err := os.Mkdir(filepath.Dir(target), 0o750); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			t0 := time.Now()
			err := side.stage(l, target)
			side.total += time.Since(t0)
			b.StopTimer()
			if err != nil {
				b.Fatalf("%s: %v", side.name, err)
			}
			if err := checkStaged(l, target); err != nil {
				b.Fatalf("%s: %v", side.name, err)
			}
			if err := s.Detach(l); err != nil {
				b.Fatal(err)
			}
		}
	}
	proxy, direct := sides[0].total, sides[1].total
	b.ReportMetric(float64(proxy.Microseconds())/1000/float64(b.N), "proxy-ms/stage")
	b.ReportMetric(float64(direct.Microseconds())/1000/float64(b.N), "direct-ms/stage")
	b.ReportMetric(float64(proxy)/float64(direct), "ratio")
}

// proxyStage is what a CSI node plugin's NodeStageVolume asks the proxy.
func proxyStage(disk diskv1.DiskClient, vol volumev1.VolumeClient, l *linuxnode.Loop, target string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	num, err := l.Diskseq()
	if err != nil {
		return err
	}
	if _, err := disk.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: num}); err != nil {
		return err
	}
	r, err := vol.ListVolumesOnDisk(ctx, &volumev1.ListVolumesOnDiskRequest{DiskNumber: num})
	if err != nil {
		return err
	}
	if len(r.VolumeIds) != 1 {
		return fmt.Errorf("disk %d has volumes %v, want one", num, r.VolumeIds)
	}
	if _, err := vol.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: r.VolumeIds[0]}); err != nil {
		return err
	}
	_, err = vol.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: r.VolumeIds[0], TargetPath: target})
	return err
}

// directStage does the same with the standard tools: a GPT with one Linux
// partition over the whole disk (sfdisk without its slow re-read, which
// this kernel ignores anyway), the kernel told with BLKPG (partx -a),
// mkfs.ext4 with the proxy's options, mount(8).
func directStage(l *linuxnode.Loop, target string) error {
	sfdisk := exec.Command("sfdisk", "--quiet", "--no-reread", "--no-tell-kernel", l.Path)
	sfdisk.Stdin = strings.NewReader("label: gpt\n,,L\n")
	part := l.Path + "p1"
	for _, cmd := range []*exec.Cmd{
		sfdisk,
		exec.Command("partx", "-a", l.Path),
		exec.Command("mkfs.ext4", "-q", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1", part),
	} {
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w\n%s", strings.Join(cmd.Args, " "), err, out)
		}
	}
	if err := os.Mkdir(target, 0o750); err != nil {
		return err
	}
	if out, err := exec.Command("mount", "-t", "ext4", part, target).CombinedOutput(); err != nil {
		return fmt.Errorf("mount %s %s: %w\n%s", part, target, err, out)
	}
	return nil
}

// checkStaged confirms both sides did the same work: one GPT partition of
// the Linux filesystem type, holding ext4, mounted at target. Without it
// the ratio could compare nothing.
func checkStaged(l *linuxnode.Loop, target string) error {
	g, err := linuxnode.ReadGPT(l.Path)
	if err != nil {
		return err
	}
	if len(g.Partitions) != 1 || g.Partitions[0].TypeGUID != "0fc63daf-8483-4772-8e79-3d69d8477de4" {
		return fmt.Errorf("partitions %+v, want one Linux filesystem partition", g.Partitions)
	}
	mounts, err := mountinfo.Read()
	if err != nil {
		return err
	}
	at := mountinfo.At(mounts, target)
	if len(at) != 1 || at[0].Source != l.Path+"p1" || at[0].FSType != "ext4" {
		return fmt.Errorf("mounts at %s: %+v, want %sp1 as ext4", target, at, l.Path)
	}
	return nil
}
