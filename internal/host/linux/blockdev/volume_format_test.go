package blockdev

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/blockfixture"
)

// Formatting and mounting on the fake kernel: which filesystems and sizes,
// mount targets, blkid's second opinion, e2fsck before mounting.

func TestFormatChoicesAndLimits(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	b := fx.backend(t, Config{Filesystem: "xfs"})
	wantErr(t, b.FormatVolume(ctx, loop3Volume(t, b)), errdefs.ErrOutOfRange, "XFS needs at least 300 MiB")

	// A larger disk, and mkfs.xfs missing from the host.
	fx2 := newFixture(t)
	fx2.growDisk(t, "loop3", 512<<20)
	fx2.exec.Respond = func(argv []string) ([]byte, error) {
		return nil, &ExitError{Argv: argv, Code: -1, Err: fmt.Errorf("exec: %q: %w", argv[0], exec.ErrNotFound)}
	}
	b2 := fx2.backend(t, Config{Filesystem: "xfs"})
	id := loop3Volume(t, b2)
	wantErr(t, b2.FormatVolume(ctx, id), errdefs.ErrFailedPrecondition, "Debian package xfsprogs")
	// blkid is missing too: the built-in probe decides alone.
	if calls := fx2.exec.Calls(); !reflect.DeepEqual(calls, [][]string{{"blkid", "-p", "-o", "export", "--", filepath.Join(fx2.dev, "loop3p1")}, {"mkfs.xfs", "-q", filepath.Join(fx2.dev, "loop3p1")}}) {
		t.Fatalf("mkfs.xfs argv = %q", calls)
	}

	// A formatted XFS volume grows with xfs_growfs: on a private temporary
	// mount when it is not mounted.
	fx2.exec = &FakeExec{Respond: fakeMkfs(t)}
	b3 := fx2.backend(t, Config{Filesystem: "xfs"})
	if err := b3.FormatVolume(ctx, id); err != nil {
		t.Fatal(err)
	}
	fx2.growDisk(t, "loop3", 1<<30)
	_ = fx2.k.takeCalls()
	if err := b3.ResizeVolume(ctx, id, (1023-1)<<20); err != nil {
		t.Fatal(err)
	}
	calls := fx2.k.takeCalls()
	if len(calls) != 3 || !strings.HasPrefix(calls[0], "resize loop3 1 ") || !strings.HasPrefix(calls[1], "mount loop3p1 ") ||
		!strings.HasSuffix(calls[1], " xfs nouuid") || !strings.HasPrefix(calls[2], "unmount ") {
		t.Fatalf("offline XFS grow kernel calls = %q", calls)
	}
	tmp := strings.TrimPrefix(calls[2], "unmount ")
	if ex := fx2.exec.Calls(); !reflect.DeepEqual(ex[len(ex)-1], []string{"xfs_growfs", "-d", tmp}) {
		t.Fatalf("xfs_growfs argv = %q", ex)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary mount point %s left behind: %v", tmp, err)
	}
	_, _, err := b3.VolumeSizes(ctx, "0fc63daf-8483-4772-8e79-000000000000")
	wantErr(t, err, errdefs.ErrNotFound, "does not exist")
}

func TestMountTargetRules(t *testing.T) {
	fx := newFixture(t)
	fx.exec.Respond = fakeMkfs(t)
	ds, vs, root := services(t, fx, Config{})
	ctx := context.Background()
	id := partitionOne(t, ds, vs, blockfixture.Loop3)
	mount := func(target string) error {
		_, err := vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: target})
		return err
	}
	wantErr(t, mount(filepath.Join(root, "m")), errdefs.ErrFailedPrecondition, "not formatted")
	if _, err := vs.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: id}); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(root, "full")
	blockfixture.WriteFile(t, filepath.Join(full, "data"), "x")
	wantErr(t, mount(full), errdefs.ErrFailedPrecondition, "not empty")
	file := filepath.Join(root, "file")
	blockfixture.WriteFile(t, file, "x")
	wantErr(t, mount(file), errdefs.ErrFailedPrecondition, "not a directory")
	// A link as the target: refused either way, PermissionDenied when it
	// leads out of the working directory (the caller tried to reach
	// outside), FailedPrecondition when it stays inside (a mount point is
	// the directory at the path, never a link to it).
	link := filepath.Join(root, "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	wantErr(t, mount(link), errdefs.ErrPermissionDenied, "resolves outside")
	inside := filepath.Join(root, "inside")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	innerLink := filepath.Join(root, "inner-link")
	if err := os.Symlink(inside, innerLink); err != nil {
		t.Fatal(err)
	}
	wantErr(t, mount(innerLink), errdefs.ErrFailedPrecondition, "symlink")
	wantErr(t, mount(link+"/sub"), errdefs.ErrPermissionDenied, "resolves outside")

	// Something else mounted at the target: never stacked on.
	other := filepath.Join(root, "tmpfs")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	fx.k.mountTable = append(fx.k.mountTable, mountinfo.Mount{ID: 9, Major: 0, Minor: 55, Root: "/", MountPoint: other, FSType: "tmpfs", Source: "tmpfs"})
	wantErr(t, mount(other), errdefs.ErrFailedPrecondition, "not a volume the proxy manages")
	_, err := vs.GetClosestVolumeIDFromTargetPath(ctx, &volume.GetClosestVolumeIDFromTargetPathRequest{TargetPath: other + "/x"})
	wantErr(t, err, errdefs.ErrNotFound, "tmpfs (tmpfs at "+other+")")
	if got := fx.k.takeCalls(); len(got) != 1 || !strings.HasPrefix(got[0], "add ") {
		t.Fatalf("refused mounts reached the kernel: %q", got)
	}
}

// TestFormatAsksBlkid: a signature only libblkid knows (the built-in probe
// reads nothing) stops FormatVolume before mkfs runs, and so does blkid's
// "ambivalent result" (several signatures); a partition blkid finds empty
// (exit status 2) is formatted.
func TestFormatAsksBlkid(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		out    string
		code   int
		refuse string
	}{
		{"jfs", "DEVNAME=/dev/loop3p1\nUUID=1234\nTYPE=jfs\nPART_ENTRY_SCHEME=gpt\n", 0, "already holds TYPE=jfs (blkid -p)"},
		{"ambivalent", "", 8, "more than one signature"},
		{"nothing", "", 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fx := newFixture(t)
			fx.exec.Respond = func(argv []string) ([]byte, error) {
				if argv[0] != "blkid" || tc.code == 0 {
					if argv[0] == "blkid" {
						return []byte(tc.out), nil
					}
					return nil, nil
				}
				return nil, &ExitError{Argv: argv, Code: tc.code, Stderr: "ambivalent result (probably more filesystems on the device)"}
			}
			b := fx.backend(t, Config{})
			err := b.FormatVolume(ctx, loop3Volume(t, b))
			calls := fx.exec.Calls()
			if tc.refuse == "" {
				if err != nil || len(calls) != 2 || calls[1][0] != "mkfs.ext4" {
					t.Fatalf("FormatVolume = %v, calls %q; want mkfs after blkid", err, calls)
				}
				return
			}
			wantErr(t, err, errdefs.ErrFailedPrecondition, tc.refuse)
			if len(calls) != 1 {
				t.Fatalf("calls = %q; want blkid only", calls)
			}
		})
	}
}

// readAt reads n bytes of a file at off.
func readAt(t *testing.T, path string, off int64, n int) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestProtectiveMBRFollowsGrowth: when a disk grows and a volume grows
// with it, the protective MBR's 0xEE entry covers the new size too (else
// sfdisk and fdisk complain that it does not).
func TestProtectiveMBRFollowsGrowth(t *testing.T) {
	ctx := context.Background()
	fx := newFixture(t)
	b := fx.backend(t, Config{})
	id := loop3Volume(t, b)
	fx.growDisk(t, "loop3", 512<<20)
	_, maxSize, err := b.VolumeSizes(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ResizeVolume(ctx, id, maxSize); err != nil {
		t.Fatal(err)
	}
	sector0 := readAt(t, filepath.Join(fx.dev, "loop3"), 0, 512)
	if blocktopo.ClassifyMBR(sector0) != blocktopo.MBRProtective {
		t.Fatal("sector 0 is no longer a protective MBR")
	}
	if got, want := binary.LittleEndian.Uint32(sector0[446+12:]), uint32(512<<20/512-1); got != want {
		t.Fatalf("the protective MBR covers %d sectors after growth, want %d", got, want)
	}
}

// TestMountChecksExt4: MountVolume runs e2fsck -p (what mount-utils' fsck
// -a runs) on an ext4 volume before mounting it, as mount-utils'
// FormatAndMount does: errors it corrects (exit 1) mount, errors it cannot
// correct (exit 4) are FailedPrecondition and nothing is mounted; XFS is
// not checked (fsck.xfs does nothing; XFS replays its log when mounted).
func TestMountChecksExt4(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		fs     string
		code   int
		refuse string
	}{
		{"ext4", 0, ""},
		{"ext4", 1, ""},
		{"ext4", 4, "e2fsck found errors it could not correct"},
		{"xfs", 0, ""},
	} {
		t.Run(fmt.Sprintf("%s exit %d", tc.fs, tc.code), func(t *testing.T) {
			fx := newFixture(t)
			fx.growDisk(t, "loop3", 512<<20)
			mkfs := fakeMkfs(t)
			fx.exec.Respond = func(argv []string) ([]byte, error) {
				if argv[0] == "e2fsck" && tc.code != 0 {
					return nil, &ExitError{Argv: argv, Code: tc.code, Stderr: "UNEXPECTED INCONSISTENCY; RUN fsck MANUALLY."}
				}
				return mkfs(argv)
			}
			_, vs, root := services(t, fx, Config{Filesystem: tc.fs})
			b := fx.backend(t, Config{Filesystem: tc.fs, MountRoots: []string{root}})
			id := loop3Volume(t, b)
			if err := b.FormatVolume(ctx, id); err != nil {
				t.Fatal(err)
			}
			_ = fx.k.takeCalls()
			dev := filepath.Join(fx.dev, "loop3p1")
			_, err := vs.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: filepath.Join(root, "m")})
			calls := fx.exec.Calls()
			last := calls[len(calls)-1]
			if tc.fs == "xfs" {
				if err != nil || last[0] == "e2fsck" {
					t.Fatalf("MountVolume(xfs) = %v, last tool %q", err, last)
				}
				return
			}
			if !reflect.DeepEqual(last, []string{"e2fsck", "-p", dev}) {
				t.Fatalf("last tool before the mount = %q, want e2fsck -p", last)
			}
			mounts := fx.k.takeCalls()
			if tc.refuse != "" {
				wantErr(t, err, errdefs.ErrFailedPrecondition, tc.refuse)
				if len(mounts) != 0 {
					t.Fatalf("mounted after a failed check: %q", mounts)
				}
				return
			}
			if err != nil || len(mounts) != 1 {
				t.Fatalf("MountVolume = %v, kernel calls %q", err, mounts)
			}
		})
	}
}

// TestFormatRefusesBusyVolume: a volume something holds (an O_EXCL open
// fails: an mkfs left running by a killed daemon, a mount in another
// namespace) is not formatted: the answer is Unavailable, retryable, and
// no tool runs, so a format never starts while another may be writing.
func TestFormatRefusesBusyVolume(t *testing.T) {
	fx := newFixture(t)
	fx.exec.Respond = fakeMkfs(t)
	ctx := context.Background()
	b := fx.backend(t, Config{})
	id := loop3Volume(t, b)
	fx.k.mu.Lock()
	fx.k.busy = map[string]bool{"loop3p1": true}
	fx.k.mu.Unlock()
	wantErr(t, b.FormatVolume(ctx, id), errdefs.ErrUnavailable, "a previous format may still be running; retry")
	if calls := fx.exec.Calls(); len(calls) != 0 {
		t.Fatalf("tools ran on a busy volume: %q", calls)
	}
	fx.k.mu.Lock()
	fx.k.busy = nil
	fx.k.mu.Unlock()
	if err := b.FormatVolume(ctx, id); err != nil {
		t.Fatalf("FormatVolume once the volume is free: %v", err)
	}
}
