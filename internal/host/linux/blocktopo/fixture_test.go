package blocktopo

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fixture is a private copy of testdata/sysfs plus a dev directory with a
// sparse file per disk and partition, as large as sysfs says: the node a
// Read of the fixture sees. Tests write what they need into both.
type fixture struct {
	sysfs, dev string
}

// colonsOK tells whether the OS allows ':' in file names (the SCSI
// addresses of the fixture tree, stored as %3A).
var colonsOK = runtime.GOOS != "windows"

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	fx := &fixture{sysfs: filepath.Join(root, "sys"), dev: filepath.Join(root, "dev")}
	if err := copyTree(filepath.Join("testdata", "sysfs"), fx.sysfs); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(fx.dev, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sda", "sdb", "vdb", "nvme0n1", "loop3", "sda/sda1"} {
		size, err := ReadSectors(filepath.Join(fx.sysfs, "block", filepath.FromSlash(name)), "size")
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(fx.dev, filepath.Base(name)))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return fx
}

// copyTree copies a fixture tree, turning %3A in names back into ':'.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if colonsOK {
			rel = strings.ReplaceAll(rel, "%3A", ":")
		}
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
}

// writeFile writes a fixture file, creating directories.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
