//go:build linux

package blockdev

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

// blkidExport runs `blkid -p -o export` on path and returns its TYPE= and
// PTTYPE= lines.
func blkidExport(t *testing.T, path string) []string {
	t.Helper()
	out, err := exec.Command("blkid", "-p", "-o", "export", path).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 2 {
		return nil
	}
	var got []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "TYPE=") || strings.HasPrefix(l, "PTTYPE=") {
			got = append(got, l)
		}
	}
	if err != nil && len(got) == 0 {
		t.Fatalf("blkid -p %s: %v: %s", path, err, out)
	}
	return got
}

// TestSignatureFixtures: each image of the table is what blkid -p, the
// reference, calls it, and the probe finds it too.
func TestSignatureFixtures(t *testing.T) {
	testutil.RequireTool(t, "util-linux", "blkid")
	dir := t.TempDir()
	for _, c := range signatureCases() {
		t.Run(c.name, func(t *testing.T) {
			img := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".img")
			makeSparse(t, img, c.minSize)
			c.write(t, img, c.minSize)
			if got := blkidExport(t, img); len(got) != 1 || got[0] != c.blkid {
				t.Fatalf("blkid -p reads %v on the %s image, want [%s]", got, c.name, c.blkid)
			}
			f, err := os.Open(img)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			info, err := blocktopo.ProbeVolume(f, c.minSize)
			if err != nil || info.Type != c.probe {
				t.Fatalf("probe = %+v, %v; want %s", info, err, c.probe)
			}
		})
	}
}

// TestFormatRefusesSignatures: FormatVolume on a real partition holding
// any signature of the table is refused and leaves the partition as it
// was, whether the proxy is set to create ext4 or XFS. mke2fs asks before
// overwriting only on a terminal, so without this check a minix or md
// member partition was silently formatted.
func TestFormatRefusesSignatures(t *testing.T) {
	testutil.RequireRoot(t)
	ctx := context.Background()
	h := newHarness(t)
	l := h.attach("csi-signatures.img", 400<<20)
	byFS := map[string]*Backend{}
	for _, fs := range []string{"ext4", "xfs"} {
		b, err := New(Config{Filesystem: fs, DiskFilter: []string{l.name}, MountRoots: []string{h.root}})
		if err != nil {
			t.Fatal(err)
		}
		byFS[fs] = b
	}
	ds, _, _ := realServices(t, h, "ext4", l.name)
	n := findLoop(t, ds, l)
	if _, err := ds.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: n}); err != nil {
		t.Fatal(err)
	}
	ids, err := byFS["ext4"].ListVolumesOnDisk(ctx, n, 0)
	if err != nil || len(ids) != 1 {
		t.Fatalf("ListVolumesOnDisk = %v, %v", ids, err)
	}
	id, part := ids[0], l.path+"p1"
	size := sizeOf(t, part)
	for _, c := range signatureCases() {
		t.Run(c.name, func(t *testing.T) {
			zeroEnds(t, part, size)
			c.write(t, part, size)
			before := ends(t, part, size)
			for _, fs := range []string{"ext4", "xfs"} {
				if ok, err := byFS[fs].IsVolumeFormatted(ctx, id); err != nil || !ok {
					t.Fatalf("IsVolumeFormatted(%s) = %v, %v; want true", c.name, ok, err)
				}
				err := byFS[fs].FormatVolume(ctx, id)
				wantErr(t, err, errdefs.ErrFailedPrecondition, "already holds "+c.probe)
				if !bytes.Equal(before, ends(t, part, size)) {
					t.Fatalf("a refused %s FormatVolume changed the partition holding %s", fs, c.name)
				}
			}
		})
	}
}

// sizeOf returns a block device's size.
func sizeOf(t *testing.T, dev string) int64 {
	t.Helper()
	f, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// endsSize is how much of each end of a device ends and zeroEnds cover:
// every signature of the table lies there.
const endsSize = 1 << 20

// ends returns the first and last MiB of a device.
func ends(t *testing.T, dev string, size int64) []byte {
	t.Helper()
	f, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 2*endsSize)
	if _, err := f.ReadAt(b[:endsSize], 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAt(b[endsSize:], size-endsSize); err != nil {
		t.Fatal(err)
	}
	return b
}

// zeroEnds zeroes the first and last MiB of a device, removing what the
// previous case wrote there.
func zeroEnds(t *testing.T, dev string, size int64) {
	t.Helper()
	f, err := os.OpenFile(dev, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z := make([]byte, endsSize)
	for _, off := range []int64{0, size - endsSize} {
		if _, err := f.WriteAt(z, off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}
