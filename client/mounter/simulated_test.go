// These tests run the mounter on the simulated Windows host in both modes
// a driver runs it in: library mode (inprocess.New) and the daemon's real
// server code reached through client.Dial. They are external tests
// (package mounter_test) because they link the daemon, which the mounter
// itself must never link (client/deps_test.go): a test's imports are not
// the package's. mounter_test.go has the tests of its pure parts.

package mounter_test

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	mount "k8s.io/mount-utils"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/client/mounter"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonserver"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/simtest"
)

// The node: the Windows kubelet directory, the simulated host's two
// default data disks (LUN 0 and 1) and these.
const (
	kubelet   = `C:\var\lib\kubelet`
	gceName   = "pd-data-1"          // disk A's GCE device name
	gcePage83 = "Google  " + gceName // how GCE reports it in page 0x83
	serialA   = "SN-A-0001"          // disk A's serial
	nguidB    = "0123456789abcdef0011223344556677"
	serialC   = "1111_2222_3333_4444_5555_6666_7777_8888." // Windows' NVMe serial form
	share     = `\\fileserver\share`
	smbUser   = `CONTOSO\csi`
	smbPass   = "S3cr3t-pw!x"
	gib       = int64(1) << 30
)

// config describes the node: disk A (SCSI LUN 3, GCE page 0x83, serial),
// B (NVMe, page 0x83 eui.), C (NVMe, serial in Windows' form, no
// location), D and E (both LUN 7, as Azure's NVMe disks all report one
// LUN), and an SMB share with two volume directories.
func config() simulated.Config {
	cfg := simulated.DefaultConfig([]string{kubelet})
	cfg.Disks = append(cfg.Disks,
		simulated.DiskSpec{Size: simulated.Size(8 * gib), Location: "1:0:0:3", Page83: gcePage83, Serial: serialA},
		simulated.DiskSpec{Size: simulated.Size(4 * gib), Location: "1:0:0:4", Page83: "eui." + strings.ToUpper(nguidB)},
		simulated.DiskSpec{Size: simulated.Size(4 * gib), Serial: serialC},
		simulated.DiskSpec{Size: simulated.Size(2 * gib), Location: "2:0:0:7"},
		simulated.DiskSpec{Size: simulated.Size(2 * gib), Location: "3:0:0:7"},
	)
	cfg.SMBShares = []simulated.SMBShare{{Path: share, Username: smbUser, Password: smbPass, Dirs: []string{"pvc-1", "pvc-2"}}}
	return cfg
}

// modes runs f in library mode and through the daemon, each on a fresh
// node of config().
func modes(t *testing.T, f func(t *testing.T, node groups.Node, sim *simulated.Host)) {
	modesWith(t, nil, f)
}

// modesWith is modes on config() changed by mod (nil: unchanged).
func modesWith(t *testing.T, mod func(*simulated.Config), f func(t *testing.T, node groups.Node, sim *simulated.Host)) {
	t.Run("inprocess", func(t *testing.T) {
		cfg := config()
		if mod != nil {
			mod(&cfg)
		}
		node, err := inprocess.New(t.Context(), inprocess.Options{Host: inprocess.HostSimulated, KubeletPath: kubelet, Simulated: &cfg})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = node.Close() })
		f(t, node, node.Simulated())
	})
	t.Run("daemon", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("this test serves unix sockets; on Windows the client dials named pipes")
		}
		dir, sim := startDaemon(t, mod)
		c, err := client.Dial(t.Context(), client.Options{SocketDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		f(t, c, sim)
	})
}

// startDaemon serves every group-version on the simulated host of
// config(), built by hostset as the daemon builds it, on unix sockets in a
// fresh directory until the test ends.
func startDaemon(t *testing.T, mod func(*simulated.Config)) (string, *simulated.Host) {
	t.Helper()
	cfg := config()
	if mod != nil {
		mod(&cfg)
	}
	n := daemonserver.Start(t, daemonserver.Options{
		Host: hostset.Config{Host: hostset.Simulated, WorkingDirs: []string{kubelet}, RequirePrivacy: true, Simulated: &cfg},
	})
	return n.SocketDir, n.Sim
}

// diskWith returns the number of the simulated disk whose location, page
// 0x83 or serial is id, read from the host itself (not through the
// mounter under test).
func diskWith(t *testing.T, sim *simulated.Host, id string) uint32 {
	t.Helper()
	for _, d := range sim.ListDisks() {
		if d.Location == id || d.Page83 == id || d.Serial == id {
			return d.Number
		}
	}
	t.Fatalf("no simulated disk with %q", id)
	return 0
}

// TestFindDisk: every form drivers identify a disk by finds exactly that
// disk; nothing matching is NotFound; two disks matching is refused, never
// a guess; input that cannot be an ID is InvalidArgument.
func TestFindDisk(t *testing.T) {
	modes(t, func(t *testing.T, node groups.Node, sim *simulated.Host) {
		ctx := t.Context()
		m := mounter.New(node, mounter.Options{})
		a, b, c := diskWith(t, sim, "1:0:0:3"), diskWith(t, sim, "1:0:0:4"), diskWith(t, sim, serialC)
		d, e := diskWith(t, sim, "2:0:0:7"), diskWith(t, sim, "3:0:0:7")
		for _, tc := range []struct {
			name string
			find func() (uint32, error)
			want uint32
			kind error
		}{
			{"LUN 3", func() (uint32, error) { return m.FindDiskByLUN(ctx, "3") }, a, nil},
			{"LUN 03", func() (uint32, error) { return m.FindDiskByLUN(ctx, "03") }, a, nil},
			{"LUN 9 (not attached)", func() (uint32, error) { return m.FindDiskByLUN(ctx, "9") }, 0, errdefs.ErrNotFound},
			{"LUN 7 (two disks)", func() (uint32, error) { return m.FindDiskByLUN(ctx, "7") }, 0, errdefs.ErrFailedPrecondition},
			{"LUN x", func() (uint32, error) { return m.FindDiskByLUN(ctx, "x") }, 0, errdefs.ErrInvalidArgument},
			{"page83 whole", func() (uint32, error) { return m.FindDiskByPage83(ctx, strings.ToLower(gcePage83)) }, a, nil},
			{"page83 GCE device name", func() (uint32, error) { return m.FindDiskByPage83(ctx, gceName) }, a, nil},
			{"page83 other", func() (uint32, error) { return m.FindDiskByPage83(ctx, "pd-data-2") }, 0, errdefs.ErrNotFound},
			{"serial", func() (uint32, error) { return m.FindDiskBySerial(ctx, " "+serialA+"  ") }, a, nil},
			{"serial prefix only", func() (uint32, error) { return m.FindDiskBySerial(ctx, "SN-A") }, 0, errdefs.ErrNotFound},
			{"NVMe page83 eui", func() (uint32, error) { return m.FindDiskByNVMeEUI(ctx, nguidB) }, b, nil},
			{"NVMe page83 eui, eui. form", func() (uint32, error) { return m.FindDiskByNVMeEUI(ctx, "eui."+strings.ToUpper(nguidB)) }, b, nil},
			{"NVMe serial form", func() (uint32, error) { return m.FindDiskByNVMeEUI(ctx, "11112222333344445555666677778888") }, c, nil},
			{"NVMe serial, its own form", func() (uint32, error) { return m.FindDiskByNVMeEUI(ctx, serialC) }, c, nil},
			{"NVMe GCE namespace ID", func() (uint32, error) {
				return m.FindDiskByNVMeEUI(ctx, fmt.Sprintf("%016x", uint64(0x1111222233334444)))
			}, c, nil},
			{"NVMe absent", func() (uint32, error) { return m.FindDiskByNVMeEUI(ctx, "ffffffffffffffff") }, 0, errdefs.ErrNotFound},
			{"NVMe not hex", func() (uint32, error) { return m.FindDiskByNVMeEUI(ctx, "vol-0123") }, 0, errdefs.ErrInvalidArgument},
		} {
			got, err := tc.find()
			switch {
			case tc.kind == nil && (err != nil || got != tc.want):
				t.Errorf("%s: disk %d, %v; want disk %d", tc.name, got, err, tc.want)
			case tc.kind != nil && !errors.Is(err, tc.kind):
				t.Errorf("%s: disk %d, %v; want %v", tc.name, got, err, tc.kind)
			}
		}
		_, err := m.FindDiskByLUN(ctx, "7")
		if want := fmt.Sprintf("disks %v all have LUN 7", []uint32{min(d, e), max(d, e)}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("two disks at LUN 7: %v; want it to name both (%s)", err, want)
		}
	})
}

// Kubelet's paths for one block volume.
const (
	staging = kubelet + `\plugins\kubernetes.io\csi\pd.csi.example.com\abc123\globalmount`
	podVols = kubelet + `\pods\0f1e2d3c\volumes\kubernetes.io~csi`
	publish = podVols + `\pv-1\mount`
)

// TestBlockVolumeLifecycle runs a block driver's node calls through the
// mounter, each the way kubelet retries it, checking the node after each:
// stage (format-and-mount), publish (Mount), stats, expand, unpublish
// (Unmount, with a flush), unstage (UnmountDevice, disk offline), and a
// re-stage that finds the data.
func TestBlockVolumeLifecycle(t *testing.T) {
	modes(t, func(t *testing.T, node groups.Node, sim *simulated.Host) {
		ctx := t.Context()
		m := mounter.New(node, mounter.Options{})
		var _ mount.Interface = m // what drivers hand to mount.SafeFormatAndMount
		n, err := m.FindDiskByPage83(ctx, gceName)
		if err != nil {
			t.Fatal(err)
		}
		// kubelet makes the staging directory before NodeStage.
		if _, err := node.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: staging}); err != nil {
			t.Fatal(err)
		}
		if notMnt, err := m.IsLikelyNotMountPoint(staging); !notMnt || err != nil {
			t.Errorf("IsLikelyNotMountPoint(empty staging dir) = %v, %v; want true, nil", notMnt, err)
		}
		if _, err := m.VolumeIDFromMount(ctx, staging); !errors.Is(err, errdefs.ErrNotFound) {
			t.Errorf("VolumeIDFromMount(empty staging dir): %v; want NotFound", err)
		}
		var volID string
		for range 2 {
			id, err := m.FormatAndMount(ctx, n, staging)
			if err != nil {
				t.Fatalf("FormatAndMount: %v", err)
			}
			if volID != "" && id != volID {
				t.Errorf("staged again as %s, first as %s", id, volID)
			}
			volID = id
		}
		v := simtest.Volume(t, sim, volID)
		if v.Disk != n || v.FileSystem != "NTFS" || !slices.ContainsFunc(v.MountPoints, func(p string) bool { return strings.EqualFold(p, staging) }) {
			t.Errorf("after staging the volume is %+v; want NTFS on disk %d mounted at %s", v, n, staging)
		}
		if notMnt, err := m.IsLikelyNotMountPoint(staging); notMnt || err != nil {
			t.Errorf("IsLikelyNotMountPoint(staging) = %v, %v; want false, nil", notMnt, err)
		}
		if err := sim.WriteFile(staging+`\data.txt`, []byte("kept")); err != nil {
			t.Fatal(err)
		}

		// Publish. A missing path is "not mounted" with an error
		// os.IsNotExist recognises, as kubelet's callers expect.
		notMnt, err := m.IsLikelyNotMountPoint(publish)
		if !notMnt || !os.IsNotExist(err) {
			t.Errorf("IsLikelyNotMountPoint(missing) = %v, %v; want true and a not-exist error", notMnt, err)
		}
		if mp, err := m.IsMountPoint(publish); mp || !os.IsNotExist(err) {
			t.Errorf("IsMountPoint(missing) = %v, %v", mp, err)
		}
		// kubelet may leave an empty directory at the target: replaced.
		if _, err := node.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: publish}); err != nil {
			t.Fatal(err)
		}
		if err := m.Mount(staging, publish, "", []string{"bind"}); err != nil {
			t.Fatalf("Mount: %v", err)
		}
		if mp, err := m.IsMountPoint(publish); !mp || err != nil {
			t.Errorf("IsMountPoint(publish) = %v, %v; want true", mp, err)
		}
		if refs, err := m.GetMountRefs(publish); err != nil || len(refs) != 1 || refs[0] != publish {
			t.Errorf("GetMountRefs(publish) = %v, %v", refs, err)
		}
		if data, err := sim.ReadFile(publish + `\data.txt`); err != nil || string(data) != "kept" {
			t.Errorf("the file through the publish link: %q, %v", data, err)
		}
		// A target holding data is never replaced.
		other := podVols + `\pv-2\mount`
		if err := sim.MkdirAll(other); err != nil {
			t.Fatal(err)
		}
		if err := sim.WriteFile(other+`\precious`, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := m.Mount(staging, other, "", nil); err == nil {
			t.Errorf("Mount over a directory holding a file succeeded")
		}
		if _, err := sim.ReadFile(other + `\precious`); err != nil {
			t.Errorf("the refused Mount lost the file: %v", err)
		}

		// Stats and expansion through the publish path (azuredisk asks there).
		st, err := m.VolumeStats(ctx, publish)
		if err != nil || st.Total < 7*gib || st.Total > 8*gib || st.Used < 0 || st.Available != st.Total-st.Used {
			t.Errorf("VolumeStats = %+v, %v; want about 8 GiB", st, err)
		}
		if got, err := m.DiskNumberFromMount(ctx, publish); err != nil || got != n {
			t.Errorf("DiskNumberFromMount(publish) = %d, %v; want %d", got, err, n)
		}
		if err := sim.ResizeDisk(n, 16*gib); err != nil {
			t.Fatal(err)
		}
		rescans := sim.RescanCount()
		size, err := m.ResizeToFill(ctx, publish)
		if err != nil || size < 15*gib || size > 16*gib {
			t.Errorf("ResizeToFill = %d, %v; want about 16 GiB", size, err)
		}
		if sim.RescanCount() <= rescans {
			t.Errorf("ResizeToFill did not rescan first")
		}
		if ds, err := m.DiskSize(ctx, n); err != nil || ds != 16*gib {
			t.Errorf("DiskSize = %d, %v; want 16 GiB", ds, err)
		}
		if again, err := m.ResizeToFill(ctx, publish); err != nil || again != size {
			t.Errorf("ResizeToFill again = %d, %v; want %d unchanged", again, err, size)
		}

		// Unpublish: the volume is flushed, the link goes, the data stays.
		flushes := simtest.Volume(t, sim, volID).Flushes
		for range 2 {
			if err := m.Unmount(publish); err != nil {
				t.Fatalf("Unmount(publish): %v", err)
			}
		}
		if got := simtest.Volume(t, sim, volID).Flushes; got != flushes+1 {
			t.Errorf("Unmount flushed the volume %d times, want once", got-flushes)
		}
		if ex, err := node.Filesystem().PathExists(ctx, &filesystem.PathExistsRequest{Path: publish}); err != nil || ex.Exists {
			t.Errorf("publish path after Unmount: %+v, %v; want gone", ex, err)
		}
		if data, err := sim.ReadFile(staging + `\data.txt`); err != nil || string(data) != "kept" {
			t.Errorf("the staged data after Unmount(publish): %q, %v", data, err)
		}

		// Unstage, taking the disk offline.
		flushes = simtest.Volume(t, sim, volID).Flushes
		for range 2 {
			if err := m.UnmountDevice(ctx, staging, mounter.UnmountDeviceOptions{Offline: true}); err != nil {
				t.Fatalf("UnmountDevice: %v", err)
			}
		}
		if got := simtest.Volume(t, sim, volID).Flushes; got <= flushes {
			t.Errorf("UnmountDevice did not flush the volume")
		}
		if ex, err := node.Filesystem().PathExists(ctx, &filesystem.PathExistsRequest{Path: staging}); err != nil || ex.Exists {
			t.Errorf("staging path after UnmountDevice: %+v, %v; want gone", ex, err)
		}
		for _, d := range sim.ListDisks() {
			if d.Number == n && d.Online {
				t.Errorf("disk %d is still online after UnmountDevice with Offline", n)
			}
		}

		// Re-stage the offline disk: same volume, not formatted again.
		if _, err := node.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: staging}); err != nil {
			t.Fatal(err)
		}
		id, err := m.FormatAndMount(ctx, n, staging)
		if err != nil || id != volID {
			t.Fatalf("re-stage: %s, %v; want %s", id, err, volID)
		}
		if data, err := sim.ReadFile(staging + `\data.txt`); err != nil || string(data) != "kept" {
			t.Errorf("the data after re-staging: %q, %v; want it kept", data, err)
		}
		if err := m.UnmountDevice(ctx, staging, mounter.UnmountDeviceOptions{}); err != nil {
			t.Errorf("final UnmountDevice: %v", err)
		}
	})
}

// logSink collects every log line a Mounter writes, at any verbosity.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (s *logSink) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.lines = append(s.lines, prefix+" "+args)
	}, funcr.Options{Verbosity: 10})
}

func (s *logSink) all() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// mappings returns the simulated host's SMB mappings by share.
func mappings(sim *simulated.Host) []string {
	var out []string
	for _, m := range sim.SMBMappings() {
		out = append(out, m.Share)
	}
	return out
}

// TestSMB: two volumes on one share share its global mapping; removing
// the first link keeps the mapping, removing the last removes it; the
// record survives a driver restart (a new Mounter on the same state
// directory); without a state directory the mapping is never removed; the
// password appears in no log line and no error.
func TestSMB(t *testing.T) {
	modes(t, func(t *testing.T, node groups.Node, sim *simulated.Host) {
		ctx := t.Context()
		logs := &logSink{}
		state := t.TempDir()
		m := mounter.New(node, mounter.Options{Logger: logs.logger(), SMBStateDir: state})
		target1 := podVols + `\smb-1\mount`
		target2 := podVols + `\smb-2\mount`
		var errs []error

		// A wrong password fails, and says nothing of what was tried.
		err := m.SMBMount(ctx, share+`\pvc-1`, target1, mounter.SMBCredentials{Username: smbUser, Password: "wrong-" + smbPass})
		if err == nil {
			t.Fatal("SMBMount with a wrong password succeeded")
		}
		errs = append(errs, err)
		// Too few options: refused without echoing them.
		err = m.MountSensitive("//fileserver/share/pvc-1", target1, "smb", nil, []string{smbPass})
		if !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("MountSensitive with one option: %v; want InvalidArgument", err)
		}
		errs = append(errs, err)

		// Two volumes: one through mount.Interface with the password in
		// sensitiveOptions, one through SMBMount.
		if err := m.MountSensitive("//fileserver/share/pvc-1", target1, "smb", []string{smbUser}, []string{smbPass}); err != nil {
			t.Fatalf("MountSensitive: %v", err)
		}
		if err := m.SMBMount(ctx, share+`\pvc-2\`, target2, mounter.SMBCredentials{Username: smbUser, Password: smbPass}); err != nil {
			t.Fatalf("SMBMount: %v", err)
		}
		if got := mappings(sim); len(got) != 1 || got[0] != share {
			t.Errorf("mappings %v, want one of %s", got, share)
		}
		if mp, err := m.IsMountPoint(target2); !mp || err != nil {
			t.Errorf("IsMountPoint(SMB link) = %v, %v", mp, err)
		}

		// A driver restart: a new Mounter on the same state directory.
		m = mounter.New(node, mounter.Options{Logger: logs.logger(), SMBStateDir: state})
		if err := m.Unmount(target1); err != nil {
			t.Fatalf("Unmount(first link): %v", err)
		}
		if got := mappings(sim); len(got) != 1 {
			t.Errorf("after removing one of two links the mappings are %v; want the share's kept", got)
		}
		if ex, err := node.Filesystem().PathExists(ctx, &filesystem.PathExistsRequest{Path: target1}); err != nil || ex.Exists {
			t.Errorf("first link after Unmount: %+v, %v; want gone", ex, err)
		}
		for range 2 {
			if err := m.SMBUnmount(ctx, target2); err != nil {
				t.Fatalf("SMBUnmount(last link): %v", err)
			}
		}
		if got := mappings(sim); len(got) != 0 {
			t.Errorf("after the last link the mappings are %v; want none", got)
		}

		// No state directory: the link goes, the mapping stays.
		plain := mounter.New(node, mounter.Options{Logger: logs.logger()})
		if err := plain.SMBMount(ctx, share+`\pvc-1`, target1, mounter.SMBCredentials{Username: smbUser, Password: smbPass}); err != nil {
			t.Fatal(err)
		}
		if err := plain.Unmount(target1); err != nil {
			t.Fatal(err)
		}
		if got := mappings(sim); len(got) != 1 {
			t.Errorf("without a state directory the mappings are %v after Unmount; want the share's kept", got)
		}

		all := logs.all()
		if !strings.Contains(all, "SMB share mapped") || !strings.Contains(all, "SMB link and mapping removed") {
			t.Errorf("the log lacks the SMB steps:\n%s", all)
		}
		if strings.Contains(all, smbPass) {
			t.Errorf("the password is in the log:\n%s", all)
		}
		for _, err := range errs {
			if err != nil && strings.Contains(err.Error(), smbPass) {
				t.Errorf("the password is in an error: %v", err)
			}
		}
		if s := fmt.Sprintf("%v %+v %#v", mounter.SMBCredentials{Password: smbPass}, mounter.SMBCredentials{Password: smbPass}, mounter.SMBCredentials{Password: smbPass}); strings.Contains(s, smbPass) {
			t.Errorf("printing SMBCredentials shows the password: %s", s)
		}
	})
}

// TestSMBMountAtKubeletStagingDir: the kubelet makes the staging directory
// before NodeStageVolume (kubernetes pkg/volume/csi csi_attacher.go
// MountDevice, MkdirAll), so SMBMount finds an empty directory at its
// target; csi-driver-smb removes it before mapping (@ 95c69680
// pkg/smb/smb_common_windows.go prepareStagePath). The mount must replace
// it, and must not replace a directory holding data.
func TestSMBMountAtKubeletStagingDir(t *testing.T) {
	modes(t, func(t *testing.T, node groups.Node, sim *simulated.Host) {
		ctx := t.Context()
		m := mounter.New(node, mounter.Options{SMBStateDir: t.TempDir()})
		staging := kubelet + `\plugins\kubernetes.io\csi\smb.csi.k8s.io\vol\globalmount`
		if err := sim.MkdirAll(staging); err != nil {
			t.Fatal(err)
		}
		if err := m.MountSensitive("//fileserver/share/pvc-1", staging, "smb", []string{smbUser}, []string{smbPass}); err != nil {
			t.Fatalf("MountSensitive at the kubelet's empty staging dir: %v", err)
		}
		if mp, err := m.IsMountPoint(staging); !mp || err != nil {
			t.Errorf("IsMountPoint(staging) = %v, %v; want the SMB link", mp, err)
		}
		if err := m.SMBUnmount(ctx, staging); err != nil {
			t.Fatalf("SMBUnmount: %v", err)
		}

		full := kubelet + `\plugins\smb.example\globalmount`
		if err := sim.MkdirAll(full + `\data`); err != nil {
			t.Fatal(err)
		}
		if err := m.SMBMount(ctx, share+`\pvc-2`, full, mounter.SMBCredentials{Username: smbUser, Password: smbPass}); err == nil {
			t.Errorf("SMBMount over a directory holding data succeeded")
		}
		if ex, err := node.Filesystem().PathExists(ctx, &filesystem.PathExistsRequest{Path: full + `\data`}); err != nil || !ex.Exists {
			t.Errorf("the directory's data after a refused SMBMount: %+v, %v; want kept", ex, err)
		}
	})
}

// TestFindDiskByLUNAzureNVMe: on Azure's NVMe controller ("MSFT NVMe
// Accelerator", product "msft_nvme_accele" in the device instance ID)
// every disk's SCSI LUN reads 0 and upstream's LUNID is "", so azuredisk
// maps a data disk's LUN as the namespace ID − 1
// (kubernetes-sigs/azuredisk-csi-driver @ d983d613 pkg/os/disk/disk.go,
// getNVMeLunFromPath). Library mode's mounter applies that rule to
// Azure's NVMe disks alone: another vendor's NVMe disk with a namespace ID
// is no LUN, and namespace ID 2 is LUN 1, which the SCSI disk at LUN 1
// also answers, so that lookup is refused rather than guessed. Through
// the daemon the namespace ID is not on upstream's wire, so the lookup
// finds nothing (NotFound, never a wrong disk).
func TestFindDiskByLUNAzureNVMe(t *testing.T) {
	cfg := config()
	cfg.Disks = append(cfg.Disks,
		simulated.DiskSpec{Size: simulated.Size(2 * gib), BusType: "NVMe", Location: "1", NamespaceID: 6, Product: "msft_nvme_accele", Serial: "AZ-NVME-6"},
		simulated.DiskSpec{Size: simulated.Size(2 * gib), BusType: "NVMe", Location: "1", NamespaceID: 2, Product: "msft_nvme_accele", Serial: "AZ-NVME-2"},
		simulated.DiskSpec{Size: simulated.Size(2 * gib), BusType: "NVMe", Location: "2", NamespaceID: 10, Product: "amazon_elastic_b", Serial: "EBS-NVME-10"},
	)
	node, err := inprocess.New(t.Context(), inprocess.Options{Host: inprocess.HostSimulated, KubeletPath: kubelet, Simulated: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Close() })
	ctx, sim := t.Context(), node.Simulated()
	m := mounter.New(node, mounter.Options{})
	az6 := diskWith(t, sim, "AZ-NVME-6")
	for _, tc := range []struct {
		lun  string
		want uint32
		kind error
	}{
		{"5", az6, nil},                         // namespace 6
		{"05", az6, nil},                        // compared as numbers
		{"9", 0, errdefs.ErrNotFound},           // namespace 10 is not Azure's
		{"1", 0, errdefs.ErrFailedPrecondition}, // namespace 2 and the SCSI disk at LUN 1
		{"6", 0, errdefs.ErrNotFound},           // nothing there
	} {
		got, err := m.FindDiskByLUN(ctx, tc.lun)
		switch {
		case tc.kind == nil && (err != nil || got != tc.want):
			t.Errorf("LUN %s: disk %d, %v; want disk %d", tc.lun, got, err, tc.want)
		case tc.kind != nil && !errors.Is(err, tc.kind):
			t.Errorf("LUN %s: disk %d, %v; want %v", tc.lun, got, err, tc.kind)
		}
	}

	t.Run("daemon", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("this test serves unix sockets; on Windows the client dials named pipes")
		}
		n := daemonserver.Start(t, daemonserver.Options{
			Host: hostset.Config{Host: hostset.Simulated, WorkingDirs: []string{kubelet}, RequirePrivacy: true, Simulated: &cfg},
		})
		c, err := client.Dial(t.Context(), client.Options{SocketDir: n.SocketDir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if got, err := mounter.New(c, mounter.Options{}).FindDiskByLUN(t.Context(), "5"); !errors.Is(err, errdefs.ErrNotFound) {
			t.Errorf("through the wire, LUN 5: disk %d, %v; want NotFound (no namespace ID on upstream's wire)", got, err)
		}
	})
}
