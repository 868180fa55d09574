package storage

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	groupsystem "github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/test/drivers/flows"
	"github.com/csi-node-proxy/csi-node-proxy/test/drivers/flows/viamounter"
)

// The driver conformance flows (test/drivers/flows) against the real
// Windows storage backend over winModel: what the four block drivers'
// Windows node code does (find the disk, partition, online, format,
// mount, publish by link, stats and expand on the publish path, flush,
// unmount, offline) reaches every decision the backend makes, on a world
// that changes as Windows would change it.
//
// Only the block drivers' flows run here. The storage backend serves the
// disk and volume groups, and modelFS the filesystem group on the same
// file tree; csi-driver-smb's flows need the SMB group (internal/host/windows/smbmap)
// and vsphere's NodeGetInfo the system group (internal/host/windows/services), which
// have seams of their own in their packages and no model on this one. Those
// flows show up as skipped subtests naming this reason.

// flowsKubeletDir is the model node's kubelet directory, with its drive.
const flowsKubeletDir = `C:\var\lib\kubelet`

// flowsNotHere says which flows the storage backend cannot carry out.
func flowsNotHere(id flows.FlowID) string {
	switch {
	case id.Driver == "smb":
		return "the SMB group is not part of the storage backend (internal/host/windows/smbmap has its own seam); the block drivers' flows run here"
	case id.Name == "NodeGetInfo/bios-serial":
		return "the system group is not part of the storage backend (internal/host/windows/services has its own seam); the block drivers' flows run here"
	}
	return ""
}

// flowsConfig turns the flows' fixture into the simulated world
// newModelStack copies onto the model: the system disk 0 (C:, holding the
// kubelet directory) and the fixture's RAW data disks.
func flowsConfig(f flows.Fixture) simulated.Config {
	cfg := simulated.Config{WorkingDirs: []string{flowsKubeletDir}, BIOSSerial: f.BIOSSerial, Seed: 11}
	for _, d := range f.Disks {
		cfg.Disks = append(cfg.Disks, simulated.DiskSpec{
			Number: &d.Number, Size: simulated.Size(d.Size), Location: d.Location,
			Page83: d.Page83, Serial: d.Serial, Offline: d.Offline,
		})
	}
	return cfg
}

// flowsKubelet is the kubelet's own MkdirAll on the model node, outside
// csi-proxy (CreateDirectoryW level by level, links on the way followed).
type flowsKubelet struct{ m *winModel }

func (k flowsKubelet) MkdirAll(_ context.Context, path string) error {
	k.m.mu.Lock()
	defer k.m.mu.Unlock()
	return k.m.mkdirAll(path)
}

// flowsLocal is the node as a driver's own process reads it (os.Lstat,
// os.Readlink), straight from the model's file tree rather than over
// csi-proxy. drive is the process's current drive ("C:"), on which Win32
// resolves the drive-less rooted paths (\var\lib\kubelet\...) drivers
// pass on as the kubelet gave them.
type flowsLocal struct {
	m     *winModel
	drive string
}

// resolve is Win32's resolution of a drive-less rooted path.
func (l flowsLocal) resolve(path string) string {
	if strings.HasPrefix(path, `\`) && !strings.HasPrefix(path, `\\`) {
		return l.drive + path
	}
	return path
}

// Lstat reports a link for what Go before 1.23 gave ModeSymlink on
// Windows: symbolic links and IO_REPARSE_TAG_MOUNT_POINT reparse points
// (junctions and mounted folders). A missing path or parent is "does not
// exist", as os.IsNotExist reads ERROR_FILE_NOT_FOUND and
// ERROR_PATH_NOT_FOUND.
func (l flowsLocal) Lstat(_ context.Context, path string) (exists, link bool, err error) {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	pl, err := l.m.lookup(l.resolve(path), false)
	switch {
	case isErrno(err, errFileNotFound, errPathNotFound):
		return false, false, nil
	case err != nil:
		return false, false, fmt.Errorf("lstat %s: %w", path, err)
	case pl.node == nil:
		return false, false, nil
	}
	return true, pl.node.tag == reparseTagSymlink || pl.node.tag == reparseTagMountPoint, nil
}

// Readlink returns a link's or junction's target as os.Readlink does (a
// drive path); a mounted folder's target is its volume GUID path.
func (l flowsLocal) Readlink(_ context.Context, path string) (string, error) {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	pl, err := l.m.lookup(l.resolve(path), false)
	switch {
	case err != nil:
		return "", fmt.Errorf("readlink %s: %w", path, err)
	case pl.node == nil || pl.node.tag == 0:
		return "", fmt.Errorf("readlink %s: not a link", path)
	case pl.node.volume != "":
		return pl.node.volume, nil
	}
	return pl.node.target, nil
}

// TestDriverFlows runs the block drivers' Windows node flows through the
// group Services over the real storage backend on winModel, with the
// kubelet directory spelled with a drive letter and without one (EKS).
func TestDriverFlows(t *testing.T) {
	envs := []flows.Env{
		{Name: "C-drive", KubeletDir: flowsKubeletDir, Windows: true, Drive: "C:"},
		{Name: "no-drive", KubeletDir: `\var\lib\kubelet`, Windows: true, Drive: "C:"},
	}
	// The fixture depends only on the environments' names and number,
	// so a first plan gives the world and the second the node's seams.
	world := flows.NewPlan(envs...).Fixture().Only(flowsNotHere)
	s := newModelStack(t, flowsConfig(world))
	for i := range envs {
		envs[i].Kubelet = flowsKubelet{s.Model}
		envs[i].Local = flowsLocal{m: s.Model, drive: envs[i].Drive}
	}
	flows.NewPlan(envs...).RunApplicable(t, flows.Proxy{Disk: s.Disk, Volume: s.Volume, Filesystem: s.Filesystem}, flowsNotHere)
}

// TestDriverFlowsMounter runs the block drivers' flows through the shared
// mounter (client/mounter, flows.MounterPlan) over the same stack: what a
// driver that adopts the mounter asks of the Windows backend.
func TestDriverFlowsMounter(t *testing.T) {
	envs := []flows.Env{
		{Name: "C-drive", KubeletDir: flowsKubeletDir, Windows: true, Drive: "C:"},
		{Name: "no-drive", KubeletDir: `\var\lib\kubelet`, Windows: true, Drive: "C:"},
	}
	plan := flows.NewMounterPlan(envs...)
	s := newModelStack(t, flowsConfig(plan.Fixture().Only(plan.NotApplicable(flowsNotHere))))
	for i := range envs {
		envs[i].Kubelet = flowsKubelet{s.Model}
		envs[i].Local = flowsLocal{m: s.Model, drive: envs[i].Drive}
	}
	flows.NewMounterPlan(envs...).Run(t, flowsNode{s}, viamounter.New, flowsNotHere)
}

// flowsNode is the stack as a groups.Node: the disk, volume and
// filesystem groups; the others are not part of this backend (nil: the
// block drivers' flows never call them).
type flowsNode struct{ s *modelStack }

func (n flowsNode) Disk() disk.Interface             { return n.s.Disk }
func (n flowsNode) Volume() volume.Interface         { return n.s.Volume }
func (n flowsNode) Filesystem() filesystem.Interface { return n.s.Filesystem }
func (flowsNode) SMB() smb.Interface                 { return nil }
func (flowsNode) ISCSI() iscsi.Interface             { return nil }
func (flowsNode) System() groupsystem.Interface      { return nil }
func (flowsNode) Close() error                       { return nil }
