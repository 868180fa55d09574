package blocktopo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/blockfixture"
)

// fixture is a private copy of testdata/sysfs plus a dev directory with a
// sparse file per disk and partition, as large as sysfs says: the node a
// Read of the fixture sees. Tests write what they need into both.
type fixture struct {
	sysfs, dev string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	fx := &fixture{sysfs: filepath.Join(root, "sys"), dev: filepath.Join(root, "dev")}
	if err := blockfixture.CopyTree(filepath.Join("testdata", "sysfs"), fx.sysfs); err != nil {
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
