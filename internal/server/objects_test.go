package server

import (
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	diskv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1alpha1"
	diskv1beta1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1beta1"
	diskv1beta2 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1beta2"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/objecthost"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
)

// Over the wire, on the simulated host: a driver confined to its plugin
// directory by onlyMountedBeneathPathRoots runs its whole flow on a fresh
// disk (partition, format, mount, stats) with no rule line for the disk,
// and is refused PermissionDenied when it formats or mounts the volume
// another driver mounted beneath its own directory, or touches the
// system disk; the host is left as it was.
func TestObjectConfinementOverTheWire(t *testing.T) {
	const kubelet = simulated.DefaultKubeletDir
	set, svc, theirs := twoDriverNode(t)
	h := set.Simulated
	ctx := callCtx(t)
	const theirTarget = kubelet + `\plugins\b\staging\pv2`

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
			_, err := vc.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: theirs})
			return err
		},
		"MountVolume(theirs) into my root": func() error {
			_, err := vc.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: theirs, TargetPath: kubelet + `\plugins\a\staging\steal`})
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
		if vi.ID == theirs && (len(vi.MountPoints) != 1 || vi.MountPoints[0] != theirTarget) {
			t.Errorf("their volume's mounts changed: %v", vi.MountPoints)
		}
	}
}

// simNode returns a fresh simulated node whose one working directory is
// the simulated host's default kubelet directory (closed when t ends),
// and its group Services, ungated: the node the server's tests serve or
// gate.
func simNode(t *testing.T) (hostset.Set, groups.Set) {
	t.Helper()
	set, err := hostset.New(hostset.Config{Host: hostset.Simulated, WorkingDirs: []string{simulated.DefaultKubeletDir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	svc, err := set.Services(nil)
	if err != nil {
		t.Fatal(err)
	}
	return set, svc
}

// twoDriverNode is a simulated node where driver b has staged its volume
// (returned) on disk 2 beneath its own plugin directory, and driver a has
// a plugin directory of its own, empty; with its group Services.
func twoDriverNode(t *testing.T) (hostset.Set, groups.Set, string) {
	t.Helper()
	const kubelet = simulated.DefaultKubeletDir
	set, svc := simNode(t)
	h := set.Simulated
	ctx := callCtx(t)
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
	if err := set.Volume.MountVolume(ctx, theirs[0], kubelet+`\plugins\b\staging\pv2`); err != nil {
		t.Fatal(err)
	}
	if err := h.MkdirAll(kubelet + `\plugins\a\staging`); err != nil {
		t.Fatal(err)
	}
	return set, svc, theirs[0]
}

// TestOldDiskVersionsConfinedOverTheWire replays the bypass found with
// the shipped rule shape, against the daemon's sockets: the disk versions
// before v1beta3 name the disk "diskID", a string, which the gate's old
// wire walker did not know, so SetAttachState took another driver's
// staged disk offline and PartitionDisk and DiskStats on it (and on the
// system disk) were audited as allowed. Each is now refused
// PermissionDenied, like v1's SetDiskState, and recorded as a denial of
// the version called; the other driver's disk stays online and its
// volume mounted.
func TestOldDiskVersionsConfinedOverTheWire(t *testing.T) {
	const kubelet = simulated.DefaultKubeletDir
	set, svc, theirs := twoDriverNode(t)
	cfg := testConfig(t)
	cfg.Policy = writePolicy(t, `
rules:
- name: driver-a
  callers: [{any: true}]
  allow: [{groups: [disk], methods: ["*"]}]
  pathRoots: ['`+kubelet+`\plugins\a']
  objects: {onlyMountedBeneathPathRoots: true}
`)
	cfg.Objects = objecthost.NewHostObjects(set.Volume, set.Disk, set.Simulated)
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	al, err := audit.Open(auditPath, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { al.Close() })
	cfg.Audit = al
	var apis []adapter.API
	for _, a := range adapter.All() {
		if a.Group == "disk" {
			apis = append(apis, a)
		}
	}
	s, err := New(cfg, groups.Set{Disk: svc.Disk}, apis)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(callCtx(t)) })
	conns := map[string]*grpc.ClientConn{}
	for _, ep := range s.Endpoints() {
		conns[ep.API.Version] = dial(t, ep.Address)
	}
	ctx := callCtx(t)
	for _, c := range []struct {
		version, method string
		call            func() error
	}{
		{"v1", "SetDiskState", func() error {
			_, err := diskv1.NewDiskClient(conns["v1"]).SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: 2, IsOnline: false})
			return err
		}},
		{"v1beta2", "SetAttachState", func() error {
			_, err := diskv1beta2.NewDiskClient(conns["v1beta2"]).SetAttachState(ctx, &diskv1beta2.SetAttachStateRequest{DiskID: "2", IsOnline: false})
			return err
		}},
		{"v1beta1", "PartitionDisk", func() error {
			_, err := diskv1beta1.NewDiskClient(conns["v1beta1"]).PartitionDisk(ctx, &diskv1beta1.PartitionDiskRequest{DiskID: "2"})
			return err
		}},
		{"v1alpha1", "PartitionDisk", func() error {
			_, err := diskv1alpha1.NewDiskClient(conns["v1alpha1"]).PartitionDisk(ctx, &diskv1alpha1.PartitionDiskRequest{DiskID: "2"})
			return err
		}},
		{"v1beta1", "DiskStats", func() error {
			_, err := diskv1beta1.NewDiskClient(conns["v1beta1"]).DiskStats(ctx, &diskv1beta1.DiskStatsRequest{DiskID: "0"})
			return err
		}},
	} {
		err := c.call()
		if status.Code(err) != codes.PermissionDenied || !strings.Contains(status.Convert(err).Message(), "outside the path roots") {
			t.Errorf("%s %s: %v, want PermissionDenied naming the roots", c.version, c.method, err)
		}
		recs := auditlog.Read(t, auditPath)
		if r := recs[len(recs)-1]; r.Version != c.version || r.Method != c.method || r.Decision != "deny" || r.Code != "PermissionDenied" {
			t.Errorf("%s %s: last audit record %+v, want its denial", c.version, c.method, r)
		}
	}
	online, err := set.Disk.IsDiskOnline(ctx, 2)
	if err != nil || !online {
		t.Errorf("their disk: online %v, %v; want still online", online, err)
	}
	for _, vi := range set.Simulated.ListVolumes() {
		if vi.ID == theirs && (len(vi.MountPoints) != 1 || vi.MountPoints[0] != kubelet+`\plugins\b\staging\pv2`) {
			t.Errorf("their volume's mounts changed: %v", vi.MountPoints)
		}
	}
}
