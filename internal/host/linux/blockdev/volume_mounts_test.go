package blockdev

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/blockfixture"
)

// mountTable parses mountinfo text, one mount per line in the format of
// proc(5) ("/proc/pid/mountinfo"): mount ID, parent ID, major:minor,
// root, mount point, mount options, optional fields, "-", filesystem
// type, mount source, super options; paths octal-escaped (\040 a space).
func mountTable(t *testing.T, lines ...string) []mountinfo.Mount {
	t.Helper()
	ms, err := mountinfo.Parse(strings.NewReader(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestVolumeMounts: every mount of a volume's device is reported, by
// device number, wherever it is (/boot, outside the working directories),
// whatever its source says, bind mounts of a subdirectory included, from
// the proxy's table and the host's; a mount of another device whose
// source text names the volume's device is not; btrfs (anonymous device
// numbers) is matched by resolving its source below /dev only.
func TestVolumeMounts(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	hostTable := filepath.Join(t.TempDir(), "mountinfo")
	if err := os.WriteFile(hostTable, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	b := fx.backend(t, Config{HostMountTable: hostTable})
	id := loop3Volume(t, b)
	// The fake kernel gave loop3p1 259:100.
	if d := fx.k.devOf("loop3p1"); d != (blocktopo.DevNum{Major: 259, Minor: 100}) {
		t.Fatalf("loop3p1 is %v, want 259:100", d)
	}
	p1 := filepath.Join(fx.dev, "loop3p1")

	// Mounted nowhere: a fresh partition, as FormatVolume finds it.
	if got, err := b.VolumeMounts(ctx, id); err != nil || len(got) != 0 {
		t.Fatalf("VolumeMounts of an unmounted volume = %v, %v; want none", got, err)
	}

	byUUID := filepath.Join(fx.dev, "disk", "by-uuid", "0b5e1c9e")
	if err := os.MkdirAll(filepath.Dir(byUUID), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../loop3p1", byUUID); err != nil {
		t.Fatal(err)
	}
	fx.k.mountTable = mountTable(t,
		"29 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw",
		// The staging mount, beneath a driver's directory.
		"612 29 259:100 / /var/lib/kubelet/plugins/a/staging/pv1 rw,relatime shared:300 - ext4 "+p1+" rw",
		// A bind mount of a subdirectory of it (the publish mount).
		"613 29 259:100 /data /var/lib/kubelet/pods/uid/volumes/kubernetes.io~csi/pv1/mount rw,relatime shared:300 - ext4 "+p1+" rw",
		// The same device mounted by another name, at /boot.
		"614 29 259:100 / /boot rw,relatime shared:301 - ext4 "+byUUID+" rw",
		// A mount point with a space, octal-escaped.
		`615 29 259:100 / /mnt/with\040space rw,relatime - ext4 `+p1+" rw",
		// Another device whose source text names the volume's device:
		// not the volume.
		"616 29 7:5 / /mnt/not-it rw,relatime - ext4 "+p1+" rw",
		// btrfs: anonymous device numbers, matched by resolving the
		// source; a subvolume by a by-uuid link.
		"617 29 0:57 /@home /home rw,relatime shared:302 - btrfs "+byUUID+" rw,subvol=/@home",
		// Anonymous devices whose sources are not below /dev: never
		// resolved (a fuse path could hang).
		"618 29 0:58 / /mnt/fuse rw,nosuid - fuse.bindfs /srv"+p1+" rw",
		"619 29 0:59 / /tmp rw - tmpfs tmpfs rw",
	)
	if err := os.WriteFile(hostTable, []byte(strings.Join([]string{
		"1 0 254:0 / / rw shared:1 - ext4 /dev/vda rw",
		// The staging mount again: the same mount seen from the host.
		"700 1 259:100 / /var/lib/kubelet/plugins/a/staging/pv1 rw shared:300 - ext4 " + p1 + " rw",
		// Mounted only in the host's namespace.
		"701 1 259:100 / /mnt/host-only rw - ext4 " + p1 + " rw",
	}, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fx.k.takeCalls()
	got, err := b.VolumeMounts(ctx, strings.ToUpper(id))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/var/lib/kubelet/plugins/a/staging/pv1",
		"/var/lib/kubelet/pods/uid/volumes/kubernetes.io~csi/pv1/mount",
		"/boot",
		"/mnt/with space",
		"/home",
		"/mnt/host-only",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("VolumeMounts =\n  %q\nwant\n  %q", got, want)
	}
	for _, c := range fx.k.takeCalls() {
		if strings.HasPrefix(c, "stat ") && c != "stat "+byUUID {
			t.Errorf("resolved a source it should not have: %s", c)
		}
	}

	// Unknown volumes.
	_, err = b.VolumeMounts(ctx, "0fc63daf-8483-4772-8e79-3d69d8477de4")
	wantErr(t, err, errdefs.ErrNotFound, "does not exist")
	_, err = b.VolumeMounts(ctx, "not-a-blocktopo.GUID")
	wantErr(t, err, errdefs.ErrNotFound, "does not exist")
}

// TestVolumeMountsWholeDiskAndClone: a whole-disk filesystem's mounts are
// those of the disk's device; an ID a clone shares with its original
// answers with the mounts of both.
func TestVolumeMountsWholeDiskAndClone(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	b := fx.backend(t, Config{})

	// vdb (254:16) holds ext4 with no partition table.
	for _, p := range blockfixture.ExtSuperblock(1000, 0x4, 0x40, 0) {
		patchFile(t, filepath.Join(fx.dev, "vdb"), int64(p.Off), p.Data)
	}
	patchFile(t, filepath.Join(fx.dev, "vdb"), 1024+0x68, []byte("\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb\xcc\xdd\xee\xff\x01"))
	whole, err := b.ListVolumesOnDisk(ctx, blockfixture.VDB, 0)
	if err != nil || len(whole) != 1 {
		t.Fatalf("ListVolumesOnDisk(vdb) = %v, %v", whole, err)
	}
	fx.k.mountTable = mountTable(t,
		"29 1 254:0 / / rw - ext4 /dev/vda rw",
		"40 29 254:16 / /srv/whole rw - ext4 "+filepath.Join(fx.dev, "vdb")+" rw",
	)
	if got, err := b.VolumeMounts(ctx, whole[0]); err != nil || !reflect.DeepEqual(got, []string{"/srv/whole"}) {
		t.Errorf("VolumeMounts(whole disk) = %q, %v; want [/srv/whole]", got, err)
	}

	// loop3 partitioned and mounted, then cloned onto sdb, whose copy of
	// the partition is mounted elsewhere.
	id := loop3Volume(t, b)
	fx.cloneDisk(t, "loop3", "sdb")
	if err := b.Rescan(ctx); err != nil { // gives sdb1 a device
		t.Fatal(err)
	}
	sdb1 := fx.k.devOf("sdb1")
	if sdb1 == (blocktopo.DevNum{}) {
		t.Fatal("the clone's partition got no device")
	}
	fx.k.mountTable = append(fx.k.mountTable, mountTable(t,
		"41 29 259:100 / /var/lib/kubelet/plugins/a/staging/pv1 rw - ext4 "+filepath.Join(fx.dev, "loop3p1")+" rw",
		"42 29 "+sdb1.String()+" / /var/lib/kubelet/plugins/b/staging/pv9 rw - ext4 "+filepath.Join(fx.dev, "sdb1")+" rw",
	)...)
	got, err := b.VolumeMounts(ctx, id)
	want := []string{"/var/lib/kubelet/plugins/a/staging/pv1", "/var/lib/kubelet/plugins/b/staging/pv9"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("VolumeMounts(cloned ID) = %q, %v; want %q", got, err, want)
	}
}

// TestVolumeMountsChangesNothing: answering where a volume is mounted
// reads the partition tables but never gives a partition a kernel device
// (BLKPG), nor does a listing: the policy asks them before deciding a
// call, and a question must not touch the node.
func TestVolumeMountsChangesNothing(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	b := fx.backend(t, Config{})
	id := loop3Volume(t, b)
	// The kernel drops the partition (a re-read of the table would).
	if err := fx.k.deletePartition(filepath.Join(fx.dev, "loop3"), 1); err != nil {
		t.Fatal(err)
	}
	fx.k.takeCalls()
	if got, err := b.VolumeMounts(ctx, id); err != nil || len(got) != 0 {
		t.Fatalf("VolumeMounts of a volume without a kernel device = %q, %v; want none", got, err)
	}
	for _, c := range fx.k.takeCalls() {
		if strings.HasPrefix(c, "add ") || strings.HasPrefix(c, "resize ") || strings.HasPrefix(c, "delete ") {
			t.Errorf("VolumeMounts changed the kernel's partitions: %s", c)
		}
	}
	// A listing does not give it its device back either; a call that
	// changes the disk does.
	if _, err := b.ListVolumesOnDisk(ctx, blockfixture.Loop3, 0); err != nil {
		t.Fatal(err)
	}
	if calls := fx.k.takeCalls(); len(calls) != 0 {
		t.Errorf("ListVolumesOnDisk reached the kernel: %q", calls)
	}
	if err := b.PartitionDisk(ctx, blockfixture.Loop3); err != nil {
		t.Fatal(err)
	}
	if calls := fx.k.takeCalls(); !slices.ContainsFunc(calls, func(c string) bool { return strings.HasPrefix(c, "add loop3 1 ") }) {
		t.Errorf("PartitionDisk did not re-add the partition: %q", calls)
	}
}
