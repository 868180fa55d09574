// Package v2mounters is the node code of the two drivers that use upstream
// csi-proxy's v2 library (aws-ebs-csi-driver's CSIProxyMounterV2 and
// vsphere-csi-driver's csiProxyMounter, each cited in its file) written
// against this repository's upstreamv2 tree, and their node flows
// (RunAWSEBS, RunVSphere) on any node the tree's hostapi constructors
// reach: the simulated host through library mode (flows_test.go), the
// Windows storage backend over its model (internal/host/windows/storage),
// and, with the import prefix rewritten back to upstream's, through the
// v2compat module by a replace line (test/v2compat).
//
// The driver files (awsebs.go, vsphere.go) import nothing of this
// repository but the upstreamv2 tree, as the drivers import nothing of
// csi-proxy but its v2 library.
package v2mounters

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	diskv2 "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/disk"
)

// World is the node a flow runs on, as the kubelet and the hypervisor
// change it; the hostapi constructors reach its groups.
type World struct {
	// KubeletDir is the kubelet's directory, C:\var\lib\kubelet.
	KubeletDir string
	// Grow grows disk n to size bytes, as expanding a cloud disk does.
	Grow func(n uint32, size int64) error
	// ReattachReadOnly sets disk n's read-only attribute, as a vSphere
	// PVSCSI disk coming back after re-attach can have it
	// (kubernetes-csi/csi-proxy#437).
	ReattachReadOnly func(n uint32) error
}

// The disks the flows expect (Config gives them).
const (
	awsDisk       uint32 = 11
	awsVolumeID          = "vol-0a1b2c3d4e5f60718"
	awsLUN               = "3"
	vsphereDisk   uint32 = 12
	vspherePage83        = "6000c2951b4e2f3a9d8c7b6a5f4e3d2c"
	diskSize             = int64(1 << 30)
	grownSize            = int64(2 << 30)
	biosSerial           = "VMware-42 1a 2b 3c 4d 5e 6f 70-81 92 a3 b4 c5 d6 e7 f8"
)

// Config is the simulated node the flows expect: the system disk and one
// RAW data disk per driver, attached as each cloud attaches them (aws-ebs:
// an NVMe-less EBS disk whose serial holds the volume ID, at LUN 3;
// vSphere: a PVSCSI disk identified by its page 0x83 UUID).
func Config(kubeletDir string) simulated.Config {
	a, v := awsDisk, vsphereDisk
	return simulated.Config{
		WorkingDirs: []string{kubeletDir},
		BIOSSerial:  biosSerial,
		Seed:        24,
		Disks: []simulated.DiskSpec{
			{Number: &a, Size: simulated.Size(diskSize), Location: "0:0:0:" + awsLUN, Serial: strings.ReplaceAll(awsVolumeID, "-", "")},
			{Number: &v, Size: simulated.Size(diskSize), Location: "1:0:1:0", Page83: vspherePage83, Serial: "6000c2951b4e2f3a"},
		},
	}
}

// must fails the flow at step when err is set.
func must(t *testing.T, step string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
}

// paths are a volume's kubelet paths.
type paths struct{ staging, publishParent, publish string }

func kubeletPaths(w World, driver, pv string) paths {
	k := strings.TrimSuffix(w.KubeletDir, `\`)
	pub := k + `\pods\0f3c-` + pv + `\volumes\kubernetes.io~csi\` + pv
	return paths{
		staging:       k + `\plugins\kubernetes.io\csi\` + driver + `\` + pv + `\globalmount`,
		publishParent: pub,
		publish:       pub + `\mount`,
	}
}

// RunAWSEBS runs aws-ebs-csi-driver's Windows node flow through its v2
// mounter: stage (find the disk by serial and by LUN, partition, online,
// format, mount), publish by link, stats, expand, unpublish, unstage
// (flush, unmount, offline), and a re-stage of the offline, formatted
// disk, which must not format it again.
func RunAWSEBS(t *testing.T, w World) {
	m, err := NewCSIProxyMounterV2()
	must(t, "NewSafeMounterV2", err)
	p := kubeletPaths(w, "ebs.csi.aws.com", "pvc-aws")

	must(t, "Rescan", m.Rescan())
	dev, err := m.FindDevicePath("/dev/xvdba", awsVolumeID)
	must(t, "FindDevicePath", err)
	byLUN, err := m.FindDiskByLun(awsLUN)
	must(t, "FindDiskByLun", err)
	if dev != fmt.Sprint(awsDisk) || byLUN != dev {
		t.Fatalf("FindDevicePath = %s, FindDiskByLun = %s; want disk %d", dev, byLUN, awsDisk)
	}
	stage := func() {
		t.Helper()
		must(t, "kubelet: mkdir staging", m.MakeDir(p.staging))
		must(t, "FormatAndMount", m.FormatAndMount(dev, p.staging))
		name, err := m.GetDeviceNameFromMount(p.staging)
		must(t, "GetDeviceNameFromMount", err)
		if name != dev {
			t.Fatalf("GetDeviceNameFromMount(staging) = %s; want %s", name, dev)
		}
	}
	stage()

	must(t, "MakeDir(publish parent)", m.MakeDir(p.publishParent))
	must(t, "Mount(publish)", m.Mount(p.staging, p.publish, "ntfs", nil))
	notMnt, err := m.IsLikelyNotMountPoint(p.publish)
	must(t, "IsLikelyNotMountPoint", err)
	if notMnt {
		t.Fatal("the publish link is not a mount point")
	}

	size, err := m.GetVolumeSizeInBytes(p.staging)
	must(t, "GetVolumeSizeInBytes", err)
	devSize, err := m.GetDeviceSize(dev)
	must(t, "GetDeviceSize", err)
	if devSize != diskSize || size <= 0 || size > devSize {
		t.Fatalf("volume %d bytes on a disk of %d; want a volume within a disk of %d", size, devSize, diskSize)
	}

	must(t, "grow the disk", w.Grow(awsDisk, grownSize))
	must(t, "Rescan", m.Rescan())
	ok, err := m.ResizeVolume(p.staging)
	must(t, "ResizeVolume", err)
	grown, err := m.GetVolumeSizeInBytes(p.staging)
	must(t, "GetVolumeSizeInBytes after resize", err)
	if !ok || grown <= size {
		t.Fatalf("after ResizeVolume (%v) the volume is %d bytes, was %d", ok, grown, size)
	}

	must(t, "Unpublish: Rmdir(publish)", m.Rmdir(p.publish))
	if ex, err := m.ExistsPath(p.publish); err != nil || ex {
		t.Fatalf("publish path after unpublish: exists %v, %v", ex, err)
	}
	must(t, "WriteVolumeCache", m.WriteVolumeCache(p.staging))
	must(t, "Unmount(staging)", m.Unmount(p.staging))
	st, err := m.DiskClient.GetDiskState(context.Background(), &diskv2.GetDiskStateRequest{DiskNumber: awsDisk})
	must(t, "GetDiskState", err)
	if st.IsOnline {
		t.Fatal("the disk is online after NodeUnstage")
	}

	// Re-stage: the disk is offline and formatted; FormatAndMount must
	// bring it online and mount it without formatting it again.
	stage()
	must(t, "Unmount(staging) again", m.Unmount(p.staging))
}

// RunVSphere runs vsphere-csi-driver's Windows node flow through its v2
// mounter: NodeGetInfo's BIOS serial, stage (rescan, find the disk by its
// page 0x83 UUID, partition, online, format, mount), publish by link,
// stats and expand by volume ID, unpublish, unstage; then the disk comes
// back read-only after a re-attach (kubernetes-csi/csi-proxy#437) and the
// re-stage clears the attribute with PR #438's calls.
func RunVSphere(t *testing.T, w World) {
	ctx := context.Background()
	m, err := NewVSphereMounter(ctx)
	must(t, "newCSIProxyMounter", err)
	p := kubeletPaths(w, "csi.vsphere.vmware.com", "pvc-vsphere")

	serial, err := m.GetBIOSSerialNumber(ctx)
	must(t, "GetBIOSSerialNumber", err)
	if serial != biosSerial {
		t.Fatalf("GetBIOSSerialNumber = %q; want %q", serial, biosSerial)
	}
	must(t, "Rescan", m.Rescan(ctx))
	num, err := m.GetDiskNumber(ctx, vspherePage83)
	must(t, "GetDiskNumber", err)
	if num != strconv.FormatUint(uint64(vsphereDisk), 10) {
		t.Fatalf("GetDiskNumber = %s; want %d", num, vsphereDisk)
	}
	stage := func() string {
		t.Helper()
		must(t, "kubelet: mkdir staging", m.MakeDir(ctx, p.staging))
		must(t, "FormatAndMount", m.FormatAndMount(ctx, num, p.staging))
		id, err := m.GetDeviceNameFromMount(ctx, p.staging)
		must(t, "GetDeviceNameFromMount", err)
		return id
	}
	volumeID := stage()

	must(t, "MakeDir(publish parent)", m.MakeDir(ctx, p.publishParent))
	must(t, "Mount(publish)", m.Mount(p.staging, p.publish, "ntfs", nil))
	if ex, err := m.ExistsPath(ctx, p.publish); err != nil || !ex {
		t.Fatalf("publish path: exists %v, %v", ex, err)
	}
	avail, capacity, used, err := m.StatFS(ctx, vsphereNormalize(p.staging))
	must(t, "StatFS", err)
	if capacity <= 0 || avail+used != capacity {
		t.Fatalf("StatFS = %d available, %d capacity, %d used", avail, capacity, used)
	}
	total, err := m.GetDiskTotalBytes(ctx, volumeID)
	must(t, "GetDiskTotalBytes", err)
	size, err := m.GetVolumeSizeInBytes(ctx, volumeID)
	must(t, "GetVolumeSizeInBytes", err)
	if total != diskSize || size <= 0 || size > total {
		t.Fatalf("volume %d bytes on a disk of %d; want within %d", size, total, diskSize)
	}
	must(t, "grow the disk", w.Grow(vsphereDisk, grownSize))
	must(t, "Rescan", m.Rescan(ctx))
	must(t, "ResizeVolume", m.ResizeVolume(ctx, volumeID, grownSize))
	grown, err := m.GetVolumeSizeInBytes(ctx, volumeID)
	must(t, "GetVolumeSizeInBytes after resize", err)
	if grown <= size {
		t.Fatalf("after ResizeVolume the volume is %d bytes, was %d", grown, size)
	}

	must(t, "Unpublish: Rmdir(publish)", m.Rmdir(ctx, p.publish))
	must(t, "Unmount(staging)", m.Unmount(p.staging))
	must(t, "Unmount(staging) again: gone, done", m.Unmount(p.staging))

	// The disk is detached and attached again and comes back read-only.
	must(t, "re-attach read-only", w.ReattachReadOnly(vsphereDisk))
	if again := stage(); again != volumeID {
		t.Fatalf("re-staged volume %s; want %s", again, volumeID)
	}
	wasRO, err := m.ClearDiskReadOnly(ctx, vsphereDisk)
	must(t, "ClearDiskReadOnly", err)
	if !wasRO {
		t.Fatal("the re-attached disk was not read-only after SetDiskState(online): the flow tests nothing")
	}
	if wasRO, err = m.ClearDiskReadOnly(ctx, vsphereDisk); err != nil || wasRO {
		t.Fatalf("ClearDiskReadOnly again = %v, %v; want not read-only", wasRO, err)
	}
	must(t, "Unmount(staging)", m.Unmount(p.staging))

}
