package storage

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/callgate"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/objecthost"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// The local static provisioner's discovery directory (its chart's
// hostDir), as test/drivers/provisioner_test.go replays it on the
// simulated host.
const reformatHostDir = `C:\mnt\fast-disks`

// reformatModelNode is the Windows storage backend over its model behind
// the call gate, as hostset.NewNode assembles a node: the volume Service
// with the policy's reformat check, the object answers from the backend
// as built (objecthost.NewHostObjects, which finds VolumeMounts on it),
// and a policy of one rule for the provisioner, with allowReformat when
// reformat is set. Disk 1 is formatted and mounted at hostDir\vol1, with
// a file of the previous tenant on it.
func reformatModelNode(t *testing.T, reformat bool) (groups.Set, *winModel, string) {
	t.Helper()
	ctx := t.Context()
	one := uint32(1)
	h, err := simulated.New(simulated.Config{
		WorkingDirs: []string{modelKubelet, reformatHostDir},
		Disks:       []simulated.DiskSpec{{Number: &one, Size: simulated.Size(10 << 30), Location: "1:0:0:3", FileSystem: "NTFS"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := newWinModel(t, modelDisksLike(h), h.WorkingDirs()...)
	b, err := newBackend(m, Config{})
	if err != nil {
		t.Fatal(err)
	}
	paths, err := hostpath.NewPolicy(hostpath.Windows, h.WorkingDirs())
	if err != nil {
		t.Fatal(err)
	}
	vols := volume.NewService(b.Volume(), paths)
	vols.SetReformatCheck(policy.CheckReformat)
	set := groups.Set{
		Disk:       disk.NewService(b.Disk()),
		Volume:     vols,
		Filesystem: filesystem.NewService(modelFS{m}, paths),
	}

	rule := `rules:
- name: local-static-provisioner
  callers:
  - any: true
  allow:
  - methods: [filesystem.IsSymlink, volume.GetVolumeIDFromTargetPath, volume.GetVolumeStats, volume.FormatVolume]
  pathRoots: ['` + reformatHostDir + `']
`
	if reformat {
		rule += "  allowReformat: true\n"
	}
	p, err := policy.Parse([]byte(rule), policy.Options{Style: hostpath.Windows, Methods: callgate.Methods, Paths: paths})
	if err != nil {
		t.Fatal(err)
	}
	gate := &callgate.Gate{
		Policy:  policy.Static(p),
		Objects: objecthost.NewHostObjects(b.Volume(), b.Disk(), nil),
		Origin:  &callgate.Origin{Endpoint: "model", Version: "v1", Caller: identity.Caller{PID: 1}},
	}

	// The administrator's setup, on the host itself (unguarded).
	ids, err := vols.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: 1})
	if err != nil || len(ids.VolumeIDs) != 1 {
		t.Fatalf("volumes of disk 1: %v, %v", ids, err)
	}
	hostPath := reformatHostDir + `\vol1`
	if _, err := set.Filesystem.Mkdir(ctx, &filesystem.MkdirRequest{Path: hostPath}); err != nil {
		t.Fatal(err)
	}
	if _, err := vols.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: ids.VolumeIDs[0], TargetPath: hostPath}); err != nil {
		t.Fatal(err)
	}
	if err := m.writeFile(hostPath+`\tenant-data`, 4096); err != nil {
		t.Fatal(err)
	}
	return gate.Guard(set), m, hostPath
}

// TestLocalStaticProvisionerDeleterOnWindowsModel replays the
// provisioner's Windows discovery and deleter
// (kubernetes-sigs/sig-storage-local-static-provisioner @ 6cbe253c
// pkg/util/volume_util_windows.go: IsSymlink, GetVolumeIDFromTargetPath,
// GetVolumeStats, then FormatVolume of the released, formatted volume)
// against the Windows storage backend over its model, behind the call
// gate: with allowReformat the format succeeds (the backend tells the
// gate where the volume is mounted: only beneath the rule's root) and the
// previous tenant's file is gone; without it the call is refused
// FailedPrecondition naming allowReformat and nothing is erased.
func TestLocalStaticProvisionerDeleterOnWindowsModel(t *testing.T) {
	for _, reformat := range []bool{true, false} {
		t.Run(fmt.Sprintf("allowReformat=%v", reformat), func(t *testing.T) {
			ctx := t.Context()
			n, m, hostPath := reformatModelNode(t, reformat)
			link, err := n.Filesystem.IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: hostPath})
			if err != nil || !link.IsSymlink {
				t.Fatalf("IsSymlink(%s) = %v, %v; the provisioner needs true", hostPath, link, err)
			}
			id, err := n.Volume.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: hostPath})
			if err != nil {
				t.Fatal(err)
			}
			st, err := n.Volume.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id.VolumeID})
			if err != nil || st.TotalBytes <= 0 {
				t.Fatalf("GetVolumeStats: %v, %v", st, err)
			}
			_, err = n.Volume.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: id.VolumeID})
			m.mu.Lock()
			_, lookErr := m.existing(hostPath+`\tenant-data`, true)
			m.mu.Unlock()
			if !reformat {
				if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "allowReformat") {
					t.Fatalf("without allowReformat: %v, want FailedPrecondition naming allowReformat", err)
				}
				if lookErr != nil {
					t.Fatalf("a refused format erased the volume: %v", lookErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("deleter's FormatVolume: %v", err)
			}
			if lookErr == nil {
				t.Fatal("the previous tenant's file survived the deleter's format")
			}
			st2, err := n.Volume.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id.VolumeID})
			if err != nil || st2.TotalBytes != st.TotalBytes {
				t.Fatalf("rediscovery after the wipe: %v (was %v), %v", st2, st, err)
			}
		})
	}
}

// TestVolumeMountsOnModel: the backend names every path of a volume, as
// GetVolumePathNamesForVolumeNameW does (drive root, mounted folders,
// each with a trailing backslash); an unknown volume is NotFound.
func TestVolumeMountsOnModel(t *testing.T) {
	ctx := t.Context()
	n, m, hostPath := reformatModelNode(t, false)
	b, err := newBackend(m, Config{})
	if err != nil {
		t.Fatal(err)
	}
	mounts := b.Volume().(volumeHost)
	id, err := n.Volume.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: hostPath})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := mounts.VolumeMounts(ctx, id.VolumeID); err != nil || len(got) != 1 || got[0] != hostPath+`\` {
		t.Errorf("VolumeMounts(disk 1's volume) = %q, %v; want [%s\\]", got, err, hostPath)
	}
	if got, err := mounts.VolumeMounts(ctx, m.letters['C'].guid); err != nil || len(got) != 1 || got[0] != `C:\` {
		t.Errorf("VolumeMounts(the system volume) = %q, %v; want [C:\\]", got, err)
	}
	if _, err := mounts.VolumeMounts(ctx, `\\?\Volume{00000000-0000-4000-8000-000000000000}\`); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("unknown volume: %v, want NotFound", err)
	}
}
