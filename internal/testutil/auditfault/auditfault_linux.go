//go:build linux

package auditfault

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// Fault is one way to break an audit log.
type Fault struct {
	// Name names the fault, for t.Run.
	Name string
	// Setup returns the audit log's path, a function that breaks it and
	// one that repairs it (nil: it cannot be repaired). The log is not
	// broken until brk is called, so a test can show a change going
	// through first.
	Setup func(t *testing.T) (path string, brk, repair func())
}

// Faults returns the three faults: dev-full (the log is /dev/full from the
// start, no repair), full-tmpfs (the log on a 64 KiB tmpfs that brk
// fills; repair removes the filler) and removed-unopenable (brk removes
// the log and puts a directory at its path; repair removes the
// directory). afterFill, if not nil, runs after full-tmpfs's brk has
// filled the file system, with the log's path: a test whose log keeps a
// partly written page fills that too.
func Faults(afterFill func(t *testing.T, path string)) []Fault {
	return []Fault{
		{"dev-full", func(*testing.T) (string, func(), func()) { return "/dev/full", func() {}, nil }},
		{"full-tmpfs", func(t *testing.T) (string, func(), func()) {
			dir := SmallTmpfs(t, "64k")
			path := filepath.Join(dir, "audit.log")
			var filler string
			return path, func() {
					filler = fill(t, dir)
					if afterFill != nil {
						afterFill(t, path)
					}
				}, func() {
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
	}
}

// SmallTmpfs mounts a tmpfs of the given size on a temporary directory,
// unmounted when the test ends. Mounting needs root: without it the test
// is skipped.
func SmallTmpfs(t *testing.T, size string) string {
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

// fill writes to a new file in dir until the file system is full, and
// returns the file's path. It writes in 512-byte pieces, so little room is
// left over.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // written data is not read back; a full disk may fail the close
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
