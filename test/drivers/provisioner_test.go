package drivers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
)

// The local static provisioner's Windows node code, as read in
// kubernetes-sigs/sig-storage-local-static-provisioner @ 6cbe253c:
// pkg/util/volume_util_windows.go (IsLikelyMountPoint, GetFsCapacityByte,
// DeleteContents) over pkg/util/csi_proxy_v1_windows.go (one csi-proxy v1
// call each, context.Background()). Its discovery directory is the
// chart's hostDir (helm/provisioner/values.yaml: /mnt/fast-disks), each
// entry a volume an administrator mounted there.
const provisionerHostDir = `C:\mnt\fast-disks`

// provisioner replays the provisioner's calls, in its order, on a node.
type provisioner struct{ n groups.Node }

// discover is its discovery of one entry: IsLikelyMountPoint (IsSymlink,
// which must be true) then GetFsCapacityByte (GetVolumeIDFromTargetPath,
// GetVolumeStats).
func (p provisioner) discover(ctx context.Context, hostPath string) (int64, error) {
	link, err := p.n.Filesystem().IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: hostPath})
	if err != nil {
		return 0, err
	}
	if !link.IsSymlink {
		return 0, fmt.Errorf("hostPath %q is not a symlink", hostPath)
	}
	id, err := p.n.Volume().GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: hostPath})
	if err != nil {
		return 0, err
	}
	st, err := p.n.Volume().GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id.VolumeID})
	if err != nil {
		return 0, err
	}
	return st.TotalBytes, nil
}

// deleteContents is its deleter (DeleteContents) for a released PV:
// GetVolumeIDFromTargetPath(hostPath), then FormatVolume of that volume,
// which already carries the previous tenant's file system.
func (p provisioner) deleteContents(ctx context.Context, hostPath string) error {
	id, err := p.n.Volume().GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: hostPath})
	if err != nil {
		return err
	}
	_, err = p.n.Volume().FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: id.VolumeID})
	return err
}

// provisionerPolicy is the rule an operator gives the provisioner: its
// calls, its discovery directory, and, with reformat, allowReformat.
func provisionerPolicy(reformat bool) []byte {
	p := `rules:
- name: local-static-provisioner
  callers:
  - any: true
  allow:
  - methods: [filesystem.IsSymlink, volume.GetVolumeIDFromTargetPath, volume.GetVolumeStats, volume.FormatVolume]
  pathRoots: ['` + provisionerHostDir + `']
`
	if reformat {
		p += "  allowReformat: true\n"
	}
	return []byte(p)
}

// provisionerNode starts library mode on a simulated node whose disk 1 is
// formatted and mounted at hostDir\vol1 (the administrator's setup, done
// on the host itself), with a file of the previous tenant on it; extra
// mounts the same volume at further folders too.
func provisionerNode(t *testing.T, reformat bool, extra ...string) (*inprocess.Node, string) {
	n, hostPath, _ := provisionerNodeAudited(t, reformat, extra...)
	return n, hostPath
}

// provisionerNodeAudited is provisionerNode with an audit log, whose path
// it returns too.
func provisionerNodeAudited(t *testing.T, reformat bool, extra ...string) (*inprocess.Node, string, string) {
	t.Helper()
	ctx := t.Context()
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	one := uint32(1)
	cfg := simulated.Config{
		WorkingDirs: []string{kubeletDir, provisionerHostDir},
		Disks:       []simulated.DiskSpec{{Number: &one, Size: simulated.Size(10 << 30), Location: "1:0:0:3", FileSystem: "NTFS"}},
	}
	n, err := inprocess.New(ctx, inprocess.Options{Host: inprocess.HostSimulated, Simulated: &cfg, KubeletPath: kubeletDir,
		WorkingDirs: []string{provisionerHostDir}, PolicyData: provisionerPolicy(reformat), AuditLog: auditLog})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	h := n.Simulated()
	var id string
	for _, v := range h.ListVolumes() {
		if v.Disk == 1 {
			id = v.ID
		}
	}
	if id == "" {
		t.Fatal("no volume on disk 1")
	}
	hostPath := provisionerHostDir + `\vol1`
	for _, dir := range append([]string{hostPath}, extra...) {
		if err := h.MkdirAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := h.Volume().MountVolume(ctx, id, dir); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.WriteFile(hostPath+`\tenant-data`, []byte("the previous claim's data")); err != nil {
		t.Fatal(err)
	}
	return n, hostPath, auditLog
}

// TestLocalStaticProvisionerDeleterReformatsWithAllowReformat replays the
// provisioner's discovery and deleter flow on the simulated host in
// library mode: with allowReformat the deleter's FormatVolume of the
// formatted volume mounted beneath its root succeeds and erases the
// previous tenant's file, and the volume is discovered again; without it
// the same call is refused FailedPrecondition, as before, and nothing is
// erased.
func TestLocalStaticProvisionerDeleterReformatsWithAllowReformat(t *testing.T) {
	for _, reformat := range []bool{true, false} {
		t.Run(fmt.Sprintf("allowReformat=%v", reformat), func(t *testing.T) {
			ctx := t.Context()
			n, hostPath := provisionerNode(t, reformat)
			p := provisioner{n}
			size, err := p.discover(ctx, hostPath)
			if err != nil || size <= 0 {
				t.Fatalf("discovery: size %d, %v", size, err)
			}
			err = p.deleteContents(ctx, hostPath)
			_, readErr := n.Simulated().ReadFile(hostPath + `\tenant-data`)
			if !reformat {
				if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "allowReformat") {
					t.Fatalf("without allowReformat the deleter got %v, want FailedPrecondition naming allowReformat", err)
				}
				if readErr != nil {
					t.Fatalf("a refused format erased the volume: %v", readErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("deleter: %v", err)
			}
			if readErr == nil {
				t.Fatal("the previous tenant's file survived the deleter's format")
			}
			if size2, err := p.discover(ctx, hostPath); err != nil || size2 != size {
				t.Fatalf("rediscovery after the wipe: size %d (was %d), %v", size2, size, err)
			}
		})
	}
}

// TestAllowReformatRefusesVolumesMountedElsewhere: allowReformat reaches
// no further than the rule's roots. The same volume also mounted in a
// kubelet pod directory (another driver's staging, say) is refused, and
// nothing is erased.
func TestAllowReformatRefusesVolumesMountedElsewhere(t *testing.T) {
	ctx := t.Context()
	n, hostPath := provisionerNode(t, true, kubeletDir+`\plugins\kubernetes.io\csi\disk.csi.example.com\staging`)
	err := provisioner{n}.deleteContents(ctx, hostPath)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "outside the path roots") {
		t.Fatalf("got %v, want FailedPrecondition: mounted outside the path roots", err)
	}
	if _, err := n.Simulated().ReadFile(hostPath + `\tenant-data`); err != nil {
		t.Fatalf("a refused format erased the volume: %v", err)
	}
}

// TestAllowReformatIsAudited: the deleter's erasing FormatVolume leaves an
// intent and an outcome record in the audit log, naming the rule that
// allowed it, before and after the change.
func TestAllowReformatIsAudited(t *testing.T) {
	n, hostPath, auditLog := provisionerNodeAudited(t, true)
	if err := (provisioner{n}).deleteContents(t.Context(), hostPath); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	phases := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r struct{ Method, Phase, Rule, Code string }
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if r.Method == "FormatVolume" && r.Rule == "local-static-provisioner" {
			phases[r.Phase] = r.Code
		}
	}
	if len(phases) != 2 || phases["done"] != "OK" {
		t.Fatalf("FormatVolume records by phase (code): %v, want an intent and an OK done record naming the rule\n%s", phases, data)
	}
}
