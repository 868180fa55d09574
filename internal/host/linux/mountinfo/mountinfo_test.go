package mountinfo

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// captured from the development VM (Debian 12, kernel 6.18) with a loop
// partition mounted at a path containing a space.
const table = `22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:2 - proc proc rw
24 22 0:5 / /dev rw,nosuid shared:3 - devtmpfs devtmpfs rw,size=12288k,nr_inodes=3069k,mode=755
61 22 259:1 / /tmp/csi\040test/stage rw,relatime shared:30 - ext4 /dev/loop0p1 rw
62 61 259:1 /sub /var/lib/kubelet/pods/x rw,relatime shared:30 - ext4 /dev/loop0p1 rw
`

func TestParse(t *testing.T) {
	ms, err := Parse(strings.NewReader(table))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 5 {
		t.Fatalf("got %d mounts, want 5", len(ms))
	}
	m := ms[3]
	if m.MountPoint != "/tmp/csi test/stage" || m.Source != "/dev/loop0p1" || m.FSType != "ext4" ||
		m.Major != 259 || m.Minor != 1 || m.ID != 61 || m.ParentID != 22 || m.Root != "/" || m.Options != "rw,relatime" {
		t.Errorf("mount 3 = %+v", m)
	}
	if ms[4].Root != "/sub" {
		t.Errorf("bind mount root = %q", ms[4].Root)
	}
	if got := At(ms, "/tmp/csi test/stage"); len(got) != 1 || got[0].ID != 61 {
		t.Errorf("At = %+v", got)
	}
}

func TestParseRejectsMalformed(t *testing.T) {
	// moby's parser takes a non-numeric mount ID as 0 rather than refusing
	// the line (see the package doc), so that case is not here.
	for _, bad := range []string{"1 2 3", "1 2 81 / / rw - ext4 /dev/x rw", "1 2 8:1 / / rw shared:1 ext4 /dev/x rw", "1 2 8:-1 / / rw - ext4 /dev/x rw"} {
		if _, err := Parse(strings.NewReader(bad + "\n")); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

func TestReadLive(t *testing.T) {
	ms, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(At(ms, "/")) == 0 {
		t.Error("the live table has no mount at /")
	}
}

// TestReadFile: another namespace's table is read from its file; a missing
// one is an error.
func TestReadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mountinfo")
	if err := os.WriteFile(p, []byte(table), 0o600); err != nil {
		t.Fatal(err)
	}
	ms, err := ReadFile(p)
	if err != nil || len(ms) != 5 || ms[3].Source != "/dev/loop0p1" {
		t.Fatalf("ReadFile = %+v, %v", ms, err)
	}
	if _, err := ReadFile(p + ".missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadFile(missing) = %v", err)
	}
}

// BenchmarkParseHostTable parses this machine's own mount table: the figure
// the package doc quotes for choosing moby's parser.
func BenchmarkParseHostTable(b *testing.B) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		b.Skip(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
