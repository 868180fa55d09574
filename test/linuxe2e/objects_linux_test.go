//go:build linux

package linuxe2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
	"github.com/csi-node-proxy/csi-node-proxy/test/linuxe2e/linuxnode"
)

// callerEnv, when set, makes the test binary a second caller instead of
// running tests (see TestMain): it makes the calls of the callerJob the
// variable holds as JSON and prints a callerResult as JSON. Run under
// another group ID, it is a caller the policy tells apart from the test.
const callerEnv = "CSI_NODE_PROXY_E2E_CALLER"

// driverBGID is the group ID driver B's calls come from.
const driverBGID = 4242

// callerJob is what the second caller is to do: calls on the daemon's
// volume and disk v1 sockets.
type callerJob struct {
	VolumeSocket, DiskSocket string
	Calls                    []callerCall
}

// callerCall is one call: FormatVolume, MountVolume (VolumeID, Target)
// or PartitionDisk (Disk).
type callerCall struct {
	Method, VolumeID, Target string
	Disk                     uint32
}

// callerResult is the status of each call, in order.
type callerResult struct {
	GID      int
	Codes    []string
	Messages []string
}

// runCaller is the second caller's main.
func runCaller(job string) int {
	var j callerJob
	if err := json.Unmarshal([]byte(job), &j); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	dial := func(sock string) *grpc.ClientConn {
		cc, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		return cc
	}
	vc, dc := dial(j.VolumeSocket), dial(j.DiskSocket)
	defer vc.Close()
	defer dc.Close()
	vol, dsk := volumev1.NewVolumeClient(vc), diskv1.NewDiskClient(dc)
	r := callerResult{GID: os.Getgid()}
	for _, c := range j.Calls {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		var err error
		switch c.Method {
		case "FormatVolume":
			_, err = vol.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: c.VolumeID})
		case "MountVolume":
			_, err = vol.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: c.VolumeID, TargetPath: c.Target})
		case "PartitionDisk":
			_, err = dsk.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: c.Disk})
		default:
			err = fmt.Errorf("the test caller makes no %s calls", c.Method)
		}
		cancel()
		st := status.Convert(err)
		r.Codes = append(r.Codes, st.Code().String())
		r.Messages = append(r.Messages, st.Message())
	}
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
	return 0
}

// asDriverB runs calls as the second caller (group driverBGID, still
// uid 0, so the sockets' mode lets it in and only the policy decides) and
// returns their statuses.
func asDriverB(t *testing.T, d *linuxnode.Daemon, calls ...callerCall) callerResult {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	job, err := json.Marshal(callerJob{VolumeSocket: d.Socket("volume-v1"), DiskSocket: d.Socket("disk-v1"), Calls: calls})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	// A race-enabled binary sleeps 1 s at exit by default; without -race
	// the variable is ignored.
	cmd.Env = append(os.Environ(), callerEnv+"="+string(job), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 0, Gid: driverBGID, Groups: []uint32{}}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("driver B's calls: %v\n%s", err, stderr.String())
	}
	var r callerResult
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
		t.Fatalf("driver B's output %q: %v", out, err)
	}
	if r.GID != driverBGID || len(r.Codes) != len(calls) {
		t.Fatalf("driver B ran as gid %d and made %d calls: %+v", r.GID, len(r.Codes), r)
	}
	return r
}

// auditDenials returns the denials the audit log at path holds for
// callers of group gid.
func auditDenials(t *testing.T, path string, gid uint32) []auditlog.Record {
	t.Helper()
	var out []auditlog.Record
	for _, e := range auditlog.Read(t, path) {
		if e.Decision == "deny" && e.Caller.GID != nil && *e.Caller.GID == gid {
			out = append(out, e)
		}
	}
	return out
}

// TestObjectConfinementOverTheWire: two drivers, each confined by a rule
// of pathRoots (its plugin directory and the pods directory) plus
// objects: {onlyMountedBeneathPathRoots: true} and nothing else, on the
// Linux backend and real loop disks. Driver A runs its whole flow
// (partition, format, stage beneath its plugin directory, stats, publish
// by link, unpublish, unstage) with no rule line for its disk. Driver B,
// a caller the policy tells apart by its group, is refused formatting or
// mounting A's staged and published volume, and partitioning A's disk:
// PermissionDenied, audited as denials, nothing changed. A volume mounted
// outside every root (in the working directory beside the plugin
// directories, or outside it altogether, seen only in the host's mount
// table) is refused even to the driver that formatted it.
func TestObjectConfinementOverTheWire(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "e2fsprogs", "mkfs.ext4")
	s := linuxnode.New(t)
	rootA := filepath.Join(s.Kubelet, "plugins", "a")
	rootB := filepath.Join(s.Kubelet, "plugins", "b")
	pods := filepath.Join(s.Kubelet, "pods")
	for _, d := range []string{rootA, rootB, pods} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			t.Fatal(err)
		}
	}
	conf := t.TempDir()
	pol := filepath.Join(conf, "policy.yaml")
	if err := os.WriteFile(pol, []byte(fmt.Sprintf(`
rules:
- name: driver-a
  callers: [{uids: [0], gids: [0]}]
  allow: [{groups: [disk, volume, filesystem], methods: ["*"]}]
  pathRoots: [%[1]s, %[3]s]
  objects: {onlyMountedBeneathPathRoots: true}
- name: driver-b
  callers: [{gids: [%[4]d]}]
  allow: [{groups: [disk, volume, filesystem], methods: ["*"]}]
  pathRoots: [%[2]s, %[3]s]
  objects: {onlyMountedBeneathPathRoots: true}
`, rootA, rootB, pods, driverBGID)), 0o600); err != nil {
		t.Fatal(err)
	}
	auditLog := filepath.Join(conf, "audit.log")
	n := nodeOn(t, s, "ext4", "--policy="+pol, "--audit-log="+auditLog, "--cri-endpoint=")
	ctx := n.ctx()

	// Driver A's flow on its disk.
	_, num, id := n.attachVolume("csi-e2e-objects-a.img", 64<<20)
	staging := filepath.Join(rootA, "pv1", "globalmount")
	_, err := n.fs.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: filepath.Dir(staging)})
	n.ok("A: Mkdir(staging parent)", err)
	_, err = n.vol.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: id, TargetPath: staging})
	n.ok("A: MountVolume(staging)", err)
	_, err = n.vol.GetVolumeStats(ctx, &volumev1.GetVolumeStatsRequest{VolumeId: id})
	n.ok("A: GetVolumeStats of its staged volume", err)
	_, err = n.disk.GetDiskStats(ctx, &diskv1.GetDiskStatsRequest{DiskNumber: num})
	n.ok("A: GetDiskStats of its disk", err)
	publish := filepath.Join(pods, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "volumes", "kubernetes.io~csi", "pv1", "mount")
	_, err = n.fs.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: filepath.Dir(publish)})
	n.ok("A: Mkdir(publish parent)", err)
	_, err = n.fs.CreateSymlink(ctx, &filesystemv1.CreateSymlinkRequest{SourcePath: staging, TargetPath: publish})
	n.ok("A: CreateSymlink(publish -> staging)", err)

	// Driver B, while A's volume is staged and published.
	before := n.state()
	steal := filepath.Join(rootB, "steal")
	r := asDriverB(t, n.d,
		callerCall{Method: "FormatVolume", VolumeID: id},
		callerCall{Method: "MountVolume", VolumeID: id, Target: steal},
		callerCall{Method: "PartitionDisk", Disk: num},
	)
	for i, m := range []string{"FormatVolume", "MountVolume", "PartitionDisk"} {
		if r.Codes[i] != codes.PermissionDenied.String() || !strings.Contains(r.Messages[i], "mounted at "+staging+", outside the path roots") {
			t.Errorf("B: %s of A's volume: %s %q, want PermissionDenied naming A's staging mount", m, r.Codes[i], r.Messages[i])
		}
	}
	if after := n.state(); after != before {
		t.Fatalf("driver B's refused calls changed the node:\n%s", diff(before, after))
	}
	if exists(steal) {
		t.Errorf("B's refused MountVolume created %s", steal)
	}
	denials := auditDenials(t, auditLog, driverBGID)
	byMethod := map[string]auditlog.Record{}
	for _, e := range denials {
		byMethod[e.Method] = e
	}
	for _, m := range []string{"FormatVolume", "MountVolume", "PartitionDisk"} {
		e, ok := byMethod[m]
		if !ok || e.Code != "PermissionDenied" || !strings.Contains(e.Reason, "outside the path roots") {
			t.Errorf("B's %s is not audited as a denial naming the roots: %+v (denials: %+v)", m, e, denials)
		}
	}
	if e := byMethod["FormatVolume"]; e.Request["volume_id"] != id {
		t.Errorf("the audited FormatVolume denial names volume %v, want %s", e.Request["volume_id"], id)
	}

	// A volume mounted outside every root, on a disk A partitioned and
	// formatted itself: first in the working directory, beside the
	// plugin directories, then outside it, where only the host's mount
	// table (the daemon reads /proc/1/mountinfo) shows it.
	l2, num2, id2 := n.attachVolume("csi-e2e-objects-out.img", 64<<20)
	hostDir := privateDir(t, "lnxobj")
	for _, where := range []string{filepath.Join(s.Kubelet, "elsewhere", "x"), filepath.Join(hostDir, "mnt")} {
		n.ok("mkdir", os.MkdirAll(where, 0o750))
		n.ok("mount "+where, unix.Mount(l2.Path+"p1", where, "ext4", 0, ""))
		t.Cleanup(func() { _ = unix.Unmount(where, 0) }) // before the scratch area's cleanup detaches the disk
		before := n.state()
		_, err = n.vol.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: id2})
		n.wantErr("A: FormatVolume of a volume mounted at "+where, err, codes.PermissionDenied, "mounted at "+where+", outside the path roots")
		_, err = n.vol.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: id2, TargetPath: filepath.Join(rootA, "pv2")})
		n.wantErr("A: MountVolume of a volume mounted at "+where, err, codes.PermissionDenied, "mounted at "+where+", outside the path roots")
		_, err = n.disk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: num2, IsOnline: false})
		n.wantErr("A: SetDiskState(offline) of its disk", err, codes.PermissionDenied, "outside the path roots")
		if after := n.state(); after != before {
			t.Fatalf("refused calls changed the node:\n%s", diff(before, after))
		}
		n.ok("unmount "+where, unix.Unmount(where, 0))
	}

	// A finishes its flow: unpublish, unstage; its volume is mounted
	// nowhere again, which A may act on.
	_, err = n.fs.Rmdir(ctx, &filesystemv1.RmdirRequest{Path: publish, Force: true})
	n.ok("A: Rmdir(publish)", err)
	_, err = n.vol.UnmountVolume(ctx, &volumev1.UnmountVolumeRequest{VolumeId: id, TargetPath: staging})
	n.ok("A: UnmountVolume(staging)", err)
	_, err = n.vol.IsVolumeFormatted(ctx, &volumev1.IsVolumeFormattedRequest{VolumeId: id})
	n.ok("A: IsVolumeFormatted after unstaging", err)
	_, err = n.disk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: num, IsOnline: false})
	n.ok("A: SetDiskState(offline) after unstaging", err)
	_, err = n.disk.SetDiskState(ctx, &diskv1.SetDiskStateRequest{DiskNumber: num, IsOnline: true})
	n.ok("A: SetDiskState(online)", err)
	if n.mountsAt(staging) != 0 {
		t.Errorf("the staging mount is still there after UnmountVolume")
	}
}
