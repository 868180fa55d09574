package flows

import (
	"context"
	"crypto/md5"
	"fmt"
	"strings"
	"sync"

	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
)

// smbDriver is csi-driver-smb's Windows node code over csi-proxy v1, from
// kubernetes-csi/csi-driver-smb @ 95c6968057eeab711c5913fa6c26295759b6ceb3:
// pkg/smb/nodeserver.go (NodeStageVolume, NodeUnstageVolume,
// NodePublishVolume, NodeUnpublishVolume, ensureMountPoint,
// mountWithTimeout), pkg/smb/smb_common_windows.go (Mount,
// CleanupSMBMountPoint, CleanupMountPoint, prepareStagePath,
// preparePublishPath), pkg/mounter/safe_mounter_windows.go (SMBMount,
// SMBUnmount, Mount, Rmdir, IsLikelyNotMountPoint) and
// pkg/mounter/refcounter_windows.go, with --remove-smb-mapping-during-unmount
// at its default (true).
//
// The driver counts, per share (\\server\share in lower case), the volume
// IDs staged from it (one file per volume under c:\csi\smbmounts on the
// node) and removes the global mapping when the last one is unstaged. It
// finds the share of a staging path by reading the link there (os.Readlink).
// NodeGetVolumeStats (os.Lstat and statfs on the node) and
// NodeExpandVolume (Unimplemented) make no csi-proxy call.
type smbDriver struct {
	base

	mu   sync.Mutex
	refs map[string]map[string]bool // mapping path -> md5 of volume IDs
}

// smbDefaultDomain is the domain csi-driver-smb puts before a user name
// without one (pkg/smb/smb.go defaultDomainName).
const smbDefaultDomain = "AZURE"

// smbUser is NodeStageVolume's Windows spelling of the account: DOMAIN\user
// unless the user name has a backslash already.
func smbUser(user, domain string) string {
	if domain == "" {
		domain = smbDefaultDomain
	}
	if !strings.Contains(user, `\`) {
		return domain + `\` + user
	}
	return user
}

// smbRootMappingPath is getRootMappingPath: \\server\share in lower case.
func smbRootMappingPath(path string) (string, error) {
	var parts []string
	for _, s := range strings.Split(path, `\`) {
		if s != "" {
			parts = append(parts, s)
			if len(parts) == 2 {
				break
			}
		}
	}
	if len(parts) != 2 {
		return "", fmt.Errorf("remote path (%s) is invalid", path)
	}
	return strings.ToLower(`\\` + parts[0] + `\` + parts[1]), nil
}

func smbRefKey(volumeID string) string {
	return fmt.Sprintf("%x", md5.Sum([]byte(strings.ToLower(volumeID))))
}

// NodeStage mounts v.Source (with v.SubDir) at the staging path.
func (d *smbDriver) NodeStage(ctx context.Context, v *Vol) error {
	// ensureMountPoint -> IsLikelyNotMountPoint.
	m, err := isLikelyMountPoint(ctx, d.p, d.env.normalize(v.Staging))
	if err != nil {
		return err
	}
	if m {
		return nil // "already mounted"
	}
	if err := rmdirIfExists(ctx, d.p, d.env.normalize(v.Staging)); err != nil { // prepareStagePath
		return err
	}
	source := v.Source
	if v.SubDir != "" {
		source = strings.TrimRight(source, "/") + "/" + v.SubDir
	}
	// SMBMount.
	parent := d.env.parent(v.Staging)
	ex, err := d.p.Filesystem.PathExists(ctx, &filesystem.PathExistsRequest{Path: d.env.normalize(parent)})
	if err != nil {
		return fail("PathExists(parent)", err)
	}
	if !ex.Exists {
		if _, err := d.p.Filesystem.Mkdir(ctx, &filesystem.MkdirRequest{Path: d.env.normalize(parent)}); err != nil {
			return fail("Mkdir(parent)", err)
		}
	}
	source = strings.TrimSuffix(strings.ReplaceAll(source, "/", `\`), `\`)
	mapping, err := smbRootMappingPath(source)
	if err != nil {
		return fail("getRootMappingPath", err)
	}
	if _, err := d.p.SMB.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{
		LocalPath:  d.env.normalize(v.Staging),
		RemotePath: source,
		Username:   smbUser(v.Username, v.Domain),
		Password:   v.Password,
	}); err != nil {
		return fail("NewSmbGlobalMapping", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.refs[mapping] == nil {
		d.refs[mapping] = map[string]bool{}
	}
	d.refs[mapping][smbRefKey(v.VolumeID)] = true
	return nil
}

// NodePublish links the pod's path to the staging path.
func (d *smbDriver) NodePublish(ctx context.Context, v *Vol) error {
	// ensureMountPoint -> IsLikelyNotMountPoint.
	m, err := isLikelyMountPoint(ctx, d.p, d.env.normalize(v.Publish))
	if err != nil {
		return err
	}
	if m {
		return nil
	}
	if err := rmdirIfExists(ctx, d.p, d.env.normalize(v.Publish)); err != nil { // preparePublishPath
		return err
	}
	if _, err := d.p.Filesystem.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{
		SourcePath: d.env.normalize(v.Staging), TargetPath: d.env.normalize(v.Publish),
	}); err != nil {
		return fail("CreateSymlink", err)
	}
	return nil
}

// NodeUnpublish removes the pod's link.
func (d *smbDriver) NodeUnpublish(ctx context.Context, v *Vol) error {
	if _, err := d.p.Filesystem.Rmdir(ctx, &filesystem.RmdirRequest{Path: d.env.normalize(v.Publish), Force: true}); err != nil {
		return fail("Rmdir", err)
	}
	return nil
}

// NodeUnstage is SMBUnmount: read the staging link; when that works, drop
// this volume from the share's count and remove the mapping when it was
// the last; Rmdir the staging path in every case. removed tells whether
// RemoveSmbGlobalMapping was called.
func (d *smbDriver) NodeUnstage(ctx context.Context, v *Vol) (removed bool, err error) {
	if remote, rerr := d.loc.Readlink(ctx, v.Staging); rerr == nil {
		remote = strings.TrimSuffix(remote, `\`)
		mapping, err := smbRootMappingPath(remote)
		if err != nil {
			return false, fail("getRootMappingPath", err)
		}
		d.mu.Lock()
		key := smbRefKey(v.VolumeID)
		if !d.refs[mapping][key] {
			d.mu.Unlock()
			// os.Remove of the volume's count file fails.
			return false, fail("decrementVolumeIDReferencesCount", fmt.Errorf("no reference of volume %s to %s", v.VolumeID, mapping))
		}
		delete(d.refs[mapping], key)
		count := len(d.refs[mapping])
		d.mu.Unlock()
		if count == 0 {
			if _, err := d.p.SMB.RemoveSmbGlobalMapping(ctx, &smb.RemoveSmbGlobalMappingRequest{RemotePath: remote}); err != nil {
				return false, fail("RemoveSmbGlobalMapping", err)
			}
			removed = true
		}
	}
	if _, err := d.p.Filesystem.Rmdir(ctx, &filesystem.RmdirRequest{Path: d.env.normalize(v.Staging), Force: true}); err != nil {
		return removed, fail("Rmdir", err)
	}
	return removed, nil
}
