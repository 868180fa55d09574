package server

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/objecthost"
)

// Over the wire, on the simulated host: a driver confined to its plugin
// directory by onlyMountedBeneathPathRoots runs its whole flow on a fresh
// disk (partition, format, mount, stats) with no rule line for the disk,
// and is refused PermissionDenied when it formats or mounts the volume
// another driver mounted beneath its own directory, or touches the
// system disk; the host is left as it was.
func TestObjectConfinementOverTheWire(t *testing.T) {
	const kubelet = simulated.DefaultKubeletDir
	set, err := hostset.New(hostset.Config{Host: hostset.Simulated, WorkingDirs: []string{kubelet}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	svc, err := set.Services(nil)
	if err != nil {
		t.Fatal(err)
	}
	h := set.Simulated
	ctx := callCtx(t)

	// Driver b's volume on disk 2, staged beneath b's plugin directory.
	const theirTarget = kubelet + `\plugins\b\staging\pv2`
	if err := h.MkdirAll(kubelet + `\plugins\b\staging`); err != nil {
		t.Fatal(err)
	}
	if err := set.Disk.PartitionDisk(ctx, 2); err != nil {
		t.Fatal(err)
	}
	theirs, err := set.Volume.ListVolumesOnDisk(ctx, 2, 0)
	if err != nil || len(theirs) != 1 {
		t.Fatal(theirs, err)
	}
	if err := set.Volume.FormatVolume(ctx, theirs[0]); err != nil {
		t.Fatal(err)
	}
	if err := set.Volume.MountVolume(ctx, theirs[0], theirTarget); err != nil {
		t.Fatal(err)
	}
	if err := h.MkdirAll(kubelet + `\plugins\a\staging`); err != nil {
		t.Fatal(err)
	}

	cfg := testConfig(t)
	cfg.Policy = writePolicy(t, `
rules:
- name: driver-a
  callers: [{any: true}]
  allow: [{groups: [disk, volume], methods: ["*"]}]
  pathRoots: ['`+kubelet+`\plugins\a']
  objects: {onlyMountedBeneathPathRoots: true}
`)
	cfg.Objects = objecthost.NewHostObjects(set.Volume, set.Disk, set.Simulated)
	var apis []adapter.API
	for _, a := range adapter.All() {
		if (a.Group == "disk" || a.Group == "volume") && a.Version == "v1" {
			apis = append(apis, a)
		}
	}
	s, err := New(cfg, groups.Set{Disk: svc.Disk, Volume: svc.Volume}, apis)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(callCtx(t)) })
	var dc diskv1.DiskClient
	var vc volumev1.VolumeClient
	for _, ep := range s.Endpoints() {
		switch ep.API.Group {
		case "disk":
			dc = diskv1.NewDiskClient(dial(t, ep.Address))
		case "volume":
			vc = volumev1.NewVolumeClient(dial(t, ep.Address))
		}
	}

	// The driver's own flow on disk 1.
	const mine = kubelet + `\plugins\a\staging\pv1`
	if _, err := dc.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: 1}); err != nil {
		t.Fatalf("PartitionDisk(1): %v", err)
	}
	lv, err := vc.ListVolumesOnDisk(ctx, &volumev1.ListVolumesOnDiskRequest{DiskNumber: 1})
	if err != nil || len(lv.VolumeIds) != 1 {
		t.Fatalf("ListVolumesOnDisk(1): %v, %v", lv, err)
	}
	v := lv.VolumeIds[0]
	if _, err := vc.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: v}); err != nil {
		t.Fatalf("FormatVolume(own): %v", err)
	}
	if _, err := vc.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: v, TargetPath: mine}); err != nil {
		t.Fatalf("MountVolume(own): %v", err)
	}
	if _, err := vc.GetVolumeStats(ctx, &volumev1.GetVolumeStatsRequest{VolumeId: v}); err != nil {
		t.Fatalf("GetVolumeStats(own, mounted): %v", err)
	}
	if _, err := dc.GetDiskStats(ctx, &diskv1.GetDiskStatsRequest{DiskNumber: 1}); err != nil {
		t.Fatalf("GetDiskStats(own disk): %v", err)
	}

	// Another driver's volume and disk, and the node's own.
	sys, err := set.Volume.ListVolumesOnDisk(ctx, 0, 0)
	if err != nil || len(sys) == 0 {
		t.Fatal(sys, err)
	}
	for name, call := range map[string]func() error{
		"FormatVolume(theirs)": func() error {
			_, err := vc.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: theirs[0]})
			return err
		},
		"MountVolume(theirs) into my root": func() error {
			_, err := vc.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: theirs[0], TargetPath: kubelet + `\plugins\a\staging\steal`})
			return err
		},
		"PartitionDisk(theirs)": func() error {
			_, err := dc.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: 2})
			return err
		},
		"SetDiskState(system disk)": func() error {
			_, err := dc.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: 0, IsOnline: false})
			return err
		},
		"ResizeVolume(system volume)": func() error {
			_, err := vc.ResizeVolume(ctx, &volumev1.ResizeVolumeRequest{VolumeId: sys[len(sys)-1]})
			return err
		},
	} {
		err := call()
		if status.Code(err) != codes.PermissionDenied || !strings.Contains(status.Convert(err).Message(), "outside the path roots") {
			t.Errorf("%s: %v, want PermissionDenied naming the roots", name, err)
		}
	}
	for _, vi := range h.ListVolumes() {
		if vi.ID == theirs[0] && (len(vi.MountPoints) != 1 || vi.MountPoints[0] != theirTarget) {
			t.Errorf("their volume's mounts changed: %v", vi.MountPoints)
		}
	}
}
