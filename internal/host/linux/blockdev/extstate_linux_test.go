package blockdev

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

// debugfs runs debugfs -w with one request on an unmounted filesystem;
// it rewrites the superblock with a correct checksum, as the kernel would.
func debugfs(t *testing.T, dev, request string) {
	t.Helper()
	if out, err := exec.Command("debugfs", "-w", "-R", request, dev).CombinedOutput(); err != nil {
		t.Fatalf("debugfs -w -R %q %s: %v\n%s", request, dev, err, out)
	}
}

// readSuperblock returns the 1024 bytes of dev's ext superblock.
func readSuperblock(t *testing.T, dev string) []byte {
	t.Helper()
	f, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sb := make([]byte, 1024)
	if _, err := f.ReadAt(sb, 1024); err != nil {
		t.Fatal(err)
	}
	return sb
}

// TestExtCheckReasonOfRealFilesystems reads superblocks mkfs.ext4 and
// debugfs wrote into an image file: a fresh filesystem needs no check,
// and each state e2fsck -p checks for is seen (no root needed).
func TestExtCheckReasonOfRealFilesystems(t *testing.T) {
	testutil.RequireTool(t, "e2fsprogs", "mkfs.ext4", "debugfs")
	now := time.Now()
	for _, tc := range []struct {
		name, request, want string
	}{
		{"fresh", "", ""},
		{"not cleanly unmounted", "ssv state 0", "not cleanly unmounted"},
		{"errors recorded", "ssv state 3", "recorded errors"},
		{"error count", "ssv error_count 1", "recorded errors"},
		{"orphans", "ssv last_orphan 12", "orphan"},
		{"journal to replay", "feature needs_recovery", "journal needs recovery"},
		{"mount count not reached", "ssv max_mnt_count 3", ""}, // mnt_count 0
		{"check interval passed", "ssv checkinterval 60", "check interval"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := filepath.Join(t.TempDir(), "fs.img")
			makeSparse(t, img, 32<<20)
			if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=1,lazy_journal_init=1", img).CombinedOutput(); err != nil {
				t.Fatalf("mkfs.ext4: %v\n%s", err, out)
			}
			if tc.request != "" {
				debugfs(t, img, tc.request)
			}
			// A check interval counts from the last check: mkfs's.
			at := now
			if strings.Contains(tc.request, "checkinterval") {
				at = now.Add(2 * time.Minute)
			}
			got := extCheckReason(readSuperblock(t, img), at)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("extCheckReason after %q = %q, want %q", tc.request, got, tc.want)
			}
		})
	}
	t.Run("mount count reached", func(t *testing.T) {
		img := filepath.Join(t.TempDir(), "fs.img")
		makeSparse(t, img, 32<<20)
		if out, err := exec.Command("mkfs.ext4", "-q", "-F", img).CombinedOutput(); err != nil {
			t.Fatalf("mkfs.ext4: %v\n%s", err, out)
		}
		debugfs(t, img, "ssv max_mnt_count 3")
		debugfs(t, img, "ssv mnt_count 3")
		if got := extCheckReason(readSuperblock(t, img), now); !strings.Contains(got, "mounted 3 times") {
			t.Fatalf("extCheckReason = %q, want the mount count", got)
		}
	})
	t.Run("checksum", func(t *testing.T) {
		img := filepath.Join(t.TempDir(), "fs.img")
		makeSparse(t, img, 32<<20)
		if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-O", "metadata_csum", img).CombinedOutput(); err != nil {
			t.Fatalf("mkfs.ext4: %v\n%s", err, out)
		}
		sb := readSuperblock(t, img)
		if got := extCheckReason(sb, now); got != "" {
			t.Fatalf("extCheckReason of a fresh metadata_csum filesystem = %q", got)
		}
		sb[0x78] ^= 1 // the volume name, without updating the checksum
		if got := extCheckReason(sb, now); !strings.Contains(got, "checksum") {
			t.Fatalf("extCheckReason of a superblock changed behind its checksum = %q", got)
		}
	})
}

// TestMountChecksDirtyExt4OnLoopDisk: on a real loop disk, a filesystem
// left not cleanly unmounted, with a wrong free-blocks count, is checked
// and repaired by MountVolume's e2fsck -p before it is mounted (its last
// check time moves and the count is right again); a clean one is mounted
// without e2fsck (its last check time stays). Needs root and e2fsprogs.
func TestMountChecksDirtyExt4OnLoopDisk(t *testing.T) {
	testutil.RequireTool(t, "e2fsprogs", "mkfs.ext4", "debugfs", "e2fsck", "dumpe2fs")
	ctx := context.Background()
	for _, dirty := range []bool{true, false} {
		name := map[bool]string{true: "dirty", false: "clean"}[dirty]
		t.Run(name, func(t *testing.T) {
			v := newLoopVolume(t, "csi-test-fsck-"+name+".img", 64<<20)
			v.format(t)
			dev := v.l.path + "p1"
			const oldCheck = "20200101000000"
			debugfs(t, dev, "ssv lastcheck "+oldCheck)
			if dirty {
				debugfs(t, dev, "ssv state 0")
				debugfs(t, dev, "ssv free_blocks_count 7")
			}
			target := filepath.Join(v.h.root, "m-"+name)
			if _, err := v.vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: v.id, TargetPath: target}); err != nil {
				t.Fatal(err)
			}
			if _, err := v.vs.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: v.id, TargetPath: target}); err != nil {
				t.Fatal(err)
			}
			dump := exec.Command("dumpe2fs", "-h", dev)
			dump.Env = append(os.Environ(), "TZ=UTC") // the time debugfs set, as written below
			out, err := dump.CombinedOutput()
			if err != nil {
				t.Fatalf("dumpe2fs: %v\n%s", err, out)
			}
			header := string(out)
			checked := !strings.Contains(header, "Last checked:             Wed Jan  1 00:00:00 2020")
			if checked != dirty {
				t.Fatalf("%s filesystem: e2fsck ran = %v, want %v\n%s", name, checked, dirty, header)
			}
			if !strings.Contains(header, "Filesystem state:         clean") || strings.Contains(header, "Free blocks:              7\n") {
				t.Fatalf("%s filesystem left unrepaired by the mount:\n%s", name, header)
			}
		})
	}
}
