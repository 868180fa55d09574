package v2mounters

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
	"github.com/csi-node-proxy/csi-node-proxy/upstreamv2"
	"github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/disk"
)

const simKubelet = `C:\var\lib\kubelet`

// driverPolicy allows the drivers every call below the kubelet directory.
const driverPolicy = `rules:
- name: v2-driver
  callers: [{any: true}]
  allow: [{groups: [disk, volume, filesystem, system], methods: ["*"]}]
  pathRoots: ['C:\var\lib\kubelet']
`

// simulatedWorld configures the shared node of the upstreamv2 tree as a
// library-mode node on the simulated host with cfg, policy and an audit
// log of every call, and returns the World over it and the log's path.
func simulatedWorld(t *testing.T, policy string) (World, string) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "audit.log")
	cfg := Config(simKubelet)
	if err := upstreamv2.Configure(inprocess.Options{Host: inprocess.HostSimulated, Simulated: &cfg,
		PolicyData: []byte(policy), AuditLog: log, AuditReads: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := upstreamv2.Close(); err != nil {
			t.Error(err)
		}
	})
	n, err := upstreamv2.SharedNode()
	if err != nil {
		t.Fatal(err)
	}
	sim := n.(*inprocess.Node).Simulated()
	return World{
		KubeletDir:       simKubelet,
		Grow:             sim.ResizeDisk,
		ReattachReadOnly: func(d uint32) error { return sim.SetDiskReadOnlyAttribute(d, true) },
	}, log
}

// audited returns the group.method of every record of the log.
func audited(t *testing.T, log string) map[string]int {
	t.Helper()
	got := map[string]int{}
	for _, r := range auditlog.Done(auditlog.Read(t, log)) {
		if r.Endpoint != inprocess.Endpoint || r.Decision != "allow" {
			t.Errorf("audit record %+v: want an allowed library-mode call", r)
		}
		got[r.Group+"."+r.Method]++
	}
	return got
}

// TestAWSEBSV2FlowSimulatedHost runs aws-ebs's v2 mounter flow on the
// simulated host through library mode, its policy gate and audit log.
func TestAWSEBSV2FlowSimulatedHost(t *testing.T) {
	w, log := simulatedWorld(t, driverPolicy)
	RunAWSEBS(t, w)
	got := audited(t, log)
	for _, m := range []string{"disk.ListDiskIDs", "disk.ListDiskLocations", "disk.PartitionDisk", "disk.SetDiskState",
		"volume.FormatVolume", "volume.MountVolume", "filesystem.CreateSymlink", "volume.ResizeVolume",
		"volume.WriteVolumeCache", "volume.UnmountVolume", "filesystem.Rmdir"} {
		if got[m] == 0 {
			t.Errorf("no audit record of %s; got %v", m, got)
		}
	}
	if got["volume.FormatVolume"] != 1 {
		t.Errorf("FormatVolume audited %d times; the re-stage must not format again", got["volume.FormatVolume"])
	}
}

// TestVSphereV2FlowSimulatedHost runs vSphere's v2 mounter flow, the
// read-only re-attach included, on the simulated host through library
// mode, its policy gate and audit log.
func TestVSphereV2FlowSimulatedHost(t *testing.T) {
	w, log := simulatedWorld(t, driverPolicy)
	RunVSphere(t, w)
	got := audited(t, log)
	for _, m := range []string{"system.GetBIOSSerialNumber", "disk.Rescan", "disk.GetDiskReadOnly", "disk.SetDiskReadOnly",
		"volume.GetDiskNumberFromVolumeID", "volume.GetVolumeStats", "disk.GetDiskStats"} {
		if got[m] == 0 {
			t.Errorf("no audit record of %s; got %v", m, got)
		}
	}
	if got["disk.SetDiskReadOnly"] != 1 {
		t.Errorf("SetDiskReadOnly audited %d times; want once (the second clear finds nothing to do)", got["disk.SetDiskReadOnly"])
	}
}

// TestV2CallsPassThePolicyGate: a policy that does not allow
// SetDiskReadOnly refuses it through the v2 tree, as the daemon would.
func TestV2CallsPassThePolicyGate(t *testing.T) {
	_, log := simulatedWorld(t, strings.Replace(driverPolicy, `groups: [disk, volume, filesystem, system], methods: ["*"]`,
		`methods: [disk.GetDiskReadOnly]`, 1))
	m, err := NewVSphereMounter(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.DiskClient.SetDiskReadOnly(context.Background(), &disk.SetDiskReadOnlyRequest{DiskNumber: vsphereDisk})
	if !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Fatalf("SetDiskReadOnly under a policy without it = %v; want PermissionDenied", err)
	}
	recs := auditlog.Done(auditlog.Read(t, log))
	if len(recs) != 1 || recs[0].Method != "SetDiskReadOnly" || recs[0].Decision != "deny" {
		t.Fatalf("audit log %+v; want one denial of SetDiskReadOnly", recs)
	}
}
