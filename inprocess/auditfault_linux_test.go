//go:build linux

package inprocess

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
)

// smallTmpfs mounts a tmpfs of the given size on a temporary directory,
// unmounted when the test ends. Mounting needs root.
func smallTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs to fill needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillUp writes to a new file in dir until the file system is full, and
// returns the file's path.
func fillUp(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 512)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatalf("filling %s: %v", dir, err)
			}
			return path
		}
	}
}

// TestLibraryAuditFaultsChangeNothing is the daemon's
// TestAuditFaultsChangeNothing in library mode: with the audit log on
// /dev/full, on a full tmpfs, or removed with its path made unopenable,
// no change reaches the simulated host, every change fails
// errdefs.ErrUnavailable, reads go on, the file holds only complete
// records, and every change made has its intent and outcome.
func TestLibraryAuditFaultsChangeNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) (path string, brk, repair func())
	}{
		{"dev-full", func(*testing.T) (string, func(), func()) { return "/dev/full", func() {}, nil }},
		{"full-tmpfs", func(t *testing.T) (string, func(), func()) {
			dir := smallTmpfs(t, "64k")
			var filler string
			return filepath.Join(dir, "audit.log"), func() { filler = fillUp(t, dir) }, func() {
				if err := os.Remove(filler); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"removed-unopenable", func(t *testing.T) (string, func(), func()) {
			path := filepath.Join(t.TempDir(), "audit.log")
			return path, func() {
					if err := os.Remove(path); err != nil {
						t.Fatal(err)
					}
					if err := os.Mkdir(path, 0o700); err != nil {
						t.Fatal(err)
					}
				}, func() {
					if err := os.Remove(path); err != nil {
						t.Fatal(err)
					}
				}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, brk, repair := tc.setup(t)
			n := simNode(t, Options{AuditLog: path})
			ctx := t.Context()
			exists := func(name string) bool {
				r, err := n.Filesystem().PathExists(ctx, &filesystem.PathExistsRequest{Path: kubelet + `\` + name})
				if err != nil {
					t.Fatalf("read with the audit log broken: %v", err)
				}
				return r.Exists
			}
			mkdir := func(name string) error {
				_, err := n.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: kubelet + `\` + name})
				return err
			}
			regular := path != "/dev/full"
			if regular {
				if err := mkdir("before"); err != nil || !exists("before") {
					t.Fatalf("Mkdir with a working audit log: %v", err)
				}
			}
			brk()
			// On a full tmpfs the audit file's last page may still hold
			// a few records: those changes are made, and audited.
			made := 0
			for i := range 20 {
				name := "x" + string(rune('a'+i))
				err := mkdir(name)
				switch {
				case err == nil:
					made++
					if tc.name != "full-tmpfs" {
						t.Errorf("Mkdir %s with the audit log broken succeeded", name)
					}
				case !errors.Is(err, errdefs.ErrUnavailable):
					t.Errorf("Mkdir %s with the audit log broken = %v, want Unavailable", name, err)
				case exists(name):
					t.Errorf("a refused Mkdir %s changed the host", name)
				}
			}
			if made == 20 {
				t.Error("every change was made on a full file system")
			}
			if regular && tc.name != "removed-unopenable" {
				if got := readAudit(t, path); len(got) != 1+made {
					t.Errorf("%d records while broken, want %d (the changes made)", len(got), 1+made)
				}
			}
			if repair == nil {
				return
			}
			repair()
			if err := mkdir("after"); err != nil || !exists("after") {
				t.Fatalf("Mkdir after the repair: %v", err)
			}
			got := readAudit(t, path)
			if last := got[len(got)-1]; last.Method != "Mkdir" || last.Code != "OK" {
				t.Errorf("records after the repair: %+v", got)
			}
		})
	}
}
