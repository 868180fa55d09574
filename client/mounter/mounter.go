// Package mounter is the mounter every Windows CSI driver used to write for
// itself over csi-proxy, written once over groups.Node: a k8s.io/mount-utils
// mount.Interface plus the node operations drivers call around it
// (format-and-mount, finding a disk by LUN, page 0x83 ID, serial or NVMe
// EUI, rescan, resize, volume stats, SMB mappings with link reference
// counting, flush before unmount).
//
// It runs over anything that implements groups.Node: the daemon through
// client.Dial (remote pipes or sockets), or library mode (inprocess.New),
// on Windows or Linux nodes. Every rule about paths (drive-less Windows
// paths, '/' separators, confinement to the kubelet's directory) is the
// proxy's: the mounter passes the kubelet's paths on unchanged, so a path
// is checked once, in the same place for every driver.
//
// What a mounter call means on the node:
//
//	FormatAndMount(ctx, disk, staging)   the disk online, partitioned, formatted if RAW, its volume mounted at staging
//	Mount(staging, publish, "", opts)    Windows: publish becomes a link to staging (what Windows drivers do for NodePublish);
//	                                     Linux: the volume is mounted at publish too (a bind mount of its root), see Options.Publish
//	MountSensitive(\\srv\share, ...)     an SMB global mapping of the share, publish a link to it (SMBMount)
//	Unmount(publish)                     the link removed (an SMB one: the mapping too when no other link uses it)
//	UnmountDevice(ctx, staging, ...)     the volume unmounted (flushed by the proxy), staging removed, optionally the disk offline
//
// The mount.Interface methods take no context; each of their calls to the
// proxy is bounded by Options.Timeout. The others take the CSI call's ctx.
package mounter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	mount "k8s.io/mount-utils"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// DefaultTimeout bounds each proxy call a mount.Interface method makes
// (they have no context): kubelet gives a CSI call about two minutes, and a
// call still running after that only holds the proxy's per-object lock
// against kubelet's retry.
const DefaultTimeout = 2 * time.Minute

// Options configure a Mounter. The zero value logs nothing, bounds
// mount.Interface calls by DefaultTimeout and keeps no SMB references.
type Options struct {
	// Logger receives what the mounter does (V(2): every change to the
	// node; errors it does not return, such as a failed flush before a
	// link is removed). It never receives a password or mount options.
	// The zero Logger discards.
	Logger logr.Logger
	// Timeout bounds each proxy call of a mount.Interface method.
	// Default DefaultTimeout.
	Timeout time.Duration
	// SMBStateDir is a directory of the driver's own (not the node's),
	// kept across driver restarts (the plugin directory hostPath, e.g.
	// C:\var\lib\kubelet\plugins\<driver>\smb-links), where SMBMount
	// records each link to a share. SMBUnmount removes a share's global
	// mapping only when its last recorded link goes, so several volumes on
	// one share keep working. "" records nothing and never removes a
	// mapping (a mapping may serve links this process cannot see): the
	// behaviour of csi-driver-smb without --remove-smb-mapping-during-unmount.
	SMBStateDir string
	// Publish says how Mount publishes a staged volume; the zero value,
	// PublishAuto, mounts on Linux nodes and links elsewhere.
	Publish PublishMode
	// SMBCredentials, when set, gives the credentials of a share
	// (lower-case \\server\share) from the driver's own records (the
	// volume's secret), and lets the mounter re-create SMB global mappings
	// that went bad between stages: on every SMBMount and every publish
	// (Mount of a staged path), and on ReconcileSMBMappings, each mapping
	// that links still lead into and whose status is not OK (Disconnected
	// after a reboot, say) is re-created through the proxy's
	// ReconcileSmbGlobalMapping, as csi-driver-smb and azurefile do in
	// their own code at stage time only. ok false leaves that share alone
	// (not the driver's). nil re-creates nothing between stages.
	SMBCredentials SMBCredentialsFunc
}

// PublishMode is how Mount makes a staged volume appear at a publish path.
type PublishMode int

const (
	// PublishAuto mounts (PublishMount) when the mounter runs on Linux and
	// both paths are Linux paths (a Linux node: the driver and the proxy
	// share the node's OS), and links (PublishLink) otherwise, which
	// keeps Windows paths on a Linux machine (the simulated Windows host
	// in tests) linked as Windows drivers do.
	PublishAuto PublishMode = iota
	// PublishLink makes the publish path a symbolic link to the staging
	// path, as Windows drivers and mount-utils' Windows mounter do. On
	// Linux, kubelet's fsGroup ownership change (SetVolumeOwnership) does
	// not descend into a link at the volume's root, so pods running as
	// non-root with an fsGroup cannot write: use it on Linux only for
	// volumes without fsGroup.
	PublishLink
	// PublishMount mounts the volume mounted at the staging path a second
	// time at the publish path (volume MountVolume), the proxy's
	// equivalent of the bind mount Linux drivers make: kubelet then walks
	// a real directory and applies fsGroup. A staging path with no
	// volume of the proxy mounted at it (an SMB mapping's link) is
	// published as a link still.
	PublishMount
)

// Mounter is the shared mounter over one groups.Node. It implements
// mount.Interface and is safe for concurrent use.
type Mounter struct {
	node    groups.Node
	log     logr.Logger
	timeout time.Duration
	refs    *refStore // nil: SMB references are not kept
	publish PublishMode
	creds   SMBCredentialsFunc // nil: mappings are not reconciled

	shareLocks sync.Map // lower-case \\server\share -> *sync.Mutex
}

var _ mount.Interface = (*Mounter)(nil)

// New returns a Mounter over node. It does not take ownership: close node
// yourself.
func New(node groups.Node, o Options) *Mounter {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	log := o.Logger
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	m := &Mounter{node: node, log: log, timeout: o.Timeout, publish: o.Publish, creds: o.SMBCredentials}
	if o.SMBStateDir != "" {
		m.refs = &refStore{dir: o.SMBStateDir}
	}
	return m
}

// bounded returns a context for one mount.Interface method.
func (m *Mounter) bounded() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), m.timeout)
}

// Mount publishes source (a staging path) at target. Linked (PublishLink,
// the default on Windows): target becomes a link to source, the way
// Windows CSI drivers publish a staged volume (mount-utils' own Windows
// mounter does the same with mklink); an empty directory at target
// (kubelet may have made one) is replaced, a non-empty one refused, never
// deleted. Mounted (PublishMount, the default on Linux): the volume
// mounted at source is mounted at target as well, creating target if
// missing; kubelet's fsGroup walk then reaches the volume's root. In both
// cases target's parent is created if missing. fstype and options are
// ignored, as mount-utils ignores them for links on Windows, except that
// "ro" is logged: the proxy has no read-only mount.
//
// A source that is an SMB path (\\server\share\dir or //server/share/dir),
// or fstype "smb" or "cifs", is an SMB mount: see MountSensitive.
func (m *Mounter) Mount(source, target, fstype string, options []string) error {
	return m.MountSensitive(source, target, fstype, options, nil)
}

// MountSensitive is Mount with options that must not be logged. For an
// SMB source the credentials are, as for mount-utils' Windows mounter, the
// first two of options followed by sensitiveOptions: user name, then
// password (pass the password in sensitiveOptions); see SMBMount.
func (m *Mounter) MountSensitive(source, target, fstype string, options, sensitiveOptions []string) error {
	ctx, cancel := m.bounded()
	defer cancel()
	if isSMB(source, fstype) {
		all := append(append([]string(nil), options...), sensitiveOptions...)
		if len(all) < 2 {
			// Say how many, never which: they may hold the password.
			return errdefs.Errorf(errdefs.ErrInvalidArgument, "SMB mount of %s at %s: want the user name and password as the first two mount options, got %d options", source, target, len(all))
		}
		return m.SMBMount(ctx, source, target, SMBCredentials{Username: all[0], Password: all[1]})
	}
	// A publish: the share behind a staged SMB volume must work for the
	// pod, whatever happened to its mapping since the stage.
	m.reconcileSMBQuietly(ctx, "")
	for _, o := range options {
		if o == "ro" {
			m.log.Info("read-only requested but not enforced: the proxy publishes read-write", "source", source, "target", target)
		}
	}
	if m.publishByMount(source, target) {
		return m.mountAgain(ctx, source, target)
	}
	return m.link(ctx, source, target)
}

// publishByMount tells whether Mount publishes source at target with a
// second mount (see PublishMode).
func (m *Mounter) publishByMount(source, target string) bool {
	switch m.publish {
	case PublishMount:
		return true
	case PublishLink:
		return false
	}
	return runtime.GOOS == "linux" && isLinuxPath(source) && isLinuxPath(target)
}

// isLinuxPath tells an absolute Linux path from a Windows one: rooted at
// "/", with no backslash (Windows kubelets pass C:\... paths).
func isLinuxPath(p string) bool {
	return strings.HasPrefix(p, "/") && !strings.ContainsRune(p, '\\')
}

// mountAgain mounts the volume mounted at source at target too: a bind
// mount of the volume's root, which is what every Linux block-volume
// driver's NodePublish does. A source where no volume of the proxy is
// mounted is linked instead.
func (m *Mounter) mountAgain(ctx context.Context, source, target string) error {
	v := m.node.Volume()
	id, err := v.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: source})
	if errors.Is(err, errdefs.ErrNotFound) {
		m.log.V(2).Info("no volume mounted at the source: publishing by link", "source", source, "target", target)
		return m.link(ctx, source, target)
	}
	if err != nil {
		return fmt.Errorf("find the volume at %s: %w", source, err)
	}
	if parent := parentDir(target); parent != "" {
		if _, err := m.node.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: parent}); err != nil {
			return fmt.Errorf("create the parent of %s: %w", target, err)
		}
	}
	if _, err := v.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id.VolumeID, TargetPath: target}); err != nil {
		return fmt.Errorf("mount volume %s at %s: %w", id.VolumeID, target, err)
	}
	m.log.V(2).Info("mounted", "target", target, "source", source, "volume", id.VolumeID)
	return nil
}

// MountSensitiveWithoutSystemd is MountSensitive: the proxy mounts, not
// systemd.
func (m *Mounter) MountSensitiveWithoutSystemd(source, target, fstype string, options, sensitiveOptions []string) error {
	return m.MountSensitive(source, target, fstype, options, sensitiveOptions)
}

// MountSensitiveWithoutSystemdWithMountFlags is MountSensitive; the flags,
// Linux mount(8) options such as --no-canonicalize, have no meaning for a
// link or an SMB mapping.
func (m *Mounter) MountSensitiveWithoutSystemdWithMountFlags(source, target, fstype string, options, sensitiveOptions, _ []string) error {
	return m.MountSensitive(source, target, fstype, options, sensitiveOptions)
}

// link makes target a link to source (see Mount).
func (m *Mounter) link(ctx context.Context, source, target string) error {
	fsys := m.node.Filesystem()
	if parent := parentDir(target); parent != "" {
		if _, err := fsys.Mkdir(ctx, &filesystem.MkdirRequest{Path: parent}); err != nil {
			return fmt.Errorf("create the parent of %s: %w", target, err)
		}
	}
	ex, err := fsys.PathExists(ctx, &filesystem.PathExistsRequest{Path: target})
	if err != nil {
		return fmt.Errorf("check %s: %w", target, err)
	}
	if ex.Exists {
		// Not Force: an empty directory goes, anything with data in it
		// makes Rmdir fail and nothing is lost.
		if _, err := fsys.Rmdir(ctx, &filesystem.RmdirRequest{Path: target}); err != nil {
			return fmt.Errorf("%s exists and is not an empty directory that could be replaced by the link: %w", target, err)
		}
	}
	if _, err := fsys.CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{SourcePath: source, TargetPath: target}); err != nil {
		return fmt.Errorf("link %s to %s: %w", target, source, err)
	}
	m.log.V(2).Info("linked", "target", target, "source", source)
	return nil
}

// Unmount removes what Mount put at target, never what it points to:
//
//   - an SMB link SMBMount recorded: as SMBUnmount;
//   - a volume mounted there (PublishMount): unmounted (the proxy flushes
//     it first; the staging mount stays), then the directory removed;
//   - a link or mount point: the volume behind it is flushed first
//     (WriteVolumeCache; a failure is logged, not returned: the volume
//     stays mounted at its staging path, whose UnmountDevice flushes it
//     again and fails if that fails), then the link itself is removed;
//   - an empty directory: removed; a non-empty one: refused;
//   - nothing: success, so kubelet's retries succeed.
func (m *Mounter) Unmount(target string) error {
	ctx, cancel := m.bounded()
	defer cancel()
	if m.refs != nil {
		if ref, ok, err := m.refs.lookup(target); err != nil {
			return err
		} else if ok {
			return m.smbUnmount(ctx, target, ref)
		}
	}
	fsys := m.node.Filesystem()
	ex, err := fsys.PathExists(ctx, &filesystem.PathExistsRequest{Path: target})
	switch {
	case err != nil:
		return fmt.Errorf("check %s: %w", target, err)
	case !ex.Exists:
		return nil
	}
	link, err := fsys.IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: target})
	if err != nil {
		return fmt.Errorf("check %s: %w", target, err)
	}
	if link.IsSymlink {
		m.flush(ctx, target)
	} else {
		id, err := m.node.Volume().GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: target})
		switch {
		case err == nil:
			if _, err := m.node.Volume().UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: id.VolumeID, TargetPath: target}); err != nil {
				return fmt.Errorf("unmount volume %s from %s: %w", id.VolumeID, target, err)
			}
		case !errors.Is(err, errdefs.ErrNotFound):
			return fmt.Errorf("check %s: %w", target, err)
		}
	}
	// Force removes a link or mount point itself (never its target); a
	// plain directory must be empty.
	if _, err := fsys.Rmdir(ctx, &filesystem.RmdirRequest{Path: target, Force: link.IsSymlink}); err != nil {
		return fmt.Errorf("remove %s: %w", target, err)
	}
	m.log.V(2).Info("unmounted", "target", target)
	return nil
}

// flush writes the cached data of the volume behind path to disk; a
// failure is logged (see Unmount).
func (m *Mounter) flush(ctx context.Context, path string) {
	id, err := m.node.Volume().GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: path})
	if err != nil {
		if !errors.Is(err, errdefs.ErrNotFound) { // a link to no volume (an SMB share) has nothing to flush
			m.log.Error(err, "flush before unmount: finding the volume failed", "target", path)
		}
		return
	}
	if _, err := m.node.Volume().WriteVolumeCache(ctx, &volume.WriteVolumeCacheRequest{VolumeID: id.VolumeID}); err != nil {
		m.log.Error(err, "flush before unmount failed", "target", path, "volume", id.VolumeID)
	}
}

// List returns no mount points: the proxy has no call that lists them (nor
// has Windows one mount-utils uses; its Windows List returns none too).
// mount.IsNotMountPoint and other helpers built on List therefore rely on
// IsLikelyNotMountPoint, which is exact here.
func (m *Mounter) List() ([]mount.MountPoint, error) { return []mount.MountPoint{}, nil }

// IsLikelyNotMountPoint tells whether file is not a mount: false for a
// link or volume mount point whose target exists, or a directory where a
// volume (or anything else) is mounted, true for anything else.
// A path that does not exist is (true, an error satisfying
// os.IsNotExist), which is what kubelet's and the drivers' callers check
// for; the proxy's errors are returned as they are.
func (m *Mounter) IsLikelyNotMountPoint(file string) (bool, error) {
	ctx, cancel := m.bounded()
	defer cancel()
	fsys := m.node.Filesystem()
	ex, err := fsys.PathExists(ctx, &filesystem.PathExistsRequest{Path: file})
	if err != nil {
		return true, fmt.Errorf("check %s: %w", file, err)
	}
	if !ex.Exists {
		// A *PathError: os.IsNotExist does not unwrap fmt's wrapping.
		return true, &fs.PathError{Op: "IsLikelyNotMountPoint", Path: file, Err: fs.ErrNotExist}
	}
	link, err := fsys.IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: file})
	if err != nil {
		return true, fmt.Errorf("check %s: %w", file, err)
	}
	if link.IsSymlink {
		return false, nil
	}
	// A publish path mounted by PublishMount is a plain directory.
	_, err = m.node.Volume().GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: file})
	switch {
	case err == nil, errors.Is(err, errdefs.ErrFailedPrecondition): // a volume, or something the proxy does not manage, is mounted there
		return false, nil
	case errors.Is(err, errdefs.ErrNotFound):
		return true, nil
	}
	return true, fmt.Errorf("check %s: %w", file, err)
}

// CanSafelySkipMountPointCheck is false: Unmount of something that is not
// a mount point is not an error, but a caller must still learn whether a
// target is mounted before mounting again.
func (m *Mounter) CanSafelySkipMountPointCheck() bool { return false }

// IsMountPoint is the negation of IsLikelyNotMountPoint, which is exact
// here: it asks the proxy for links and mounts alike.
func (m *Mounter) IsMountPoint(file string) (bool, error) {
	notMnt, err := m.IsLikelyNotMountPoint(file)
	return !notMnt && err == nil, err
}

// GetMountRefs returns pathname itself when it exists and nothing
// otherwise, as mount-utils' Windows mounter does: there is no way to ask
// the node which other paths mount the same volume.
func (m *Mounter) GetMountRefs(pathname string) ([]string, error) {
	ctx, cancel := m.bounded()
	defer cancel()
	ex, err := m.node.Filesystem().PathExists(ctx, &filesystem.PathExistsRequest{Path: pathname})
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", pathname, err)
	}
	if !ex.Exists {
		return []string{}, nil
	}
	return []string{pathname}, nil
}

// parentDir returns the directory holding path, in either separator, or
// "" for a path with none.
func parentDir(path string) string {
	trimmed := strings.TrimRight(path, `\/`)
	i := strings.LastIndexAny(trimmed, `\/`)
	if i <= 0 {
		return ""
	}
	parent := trimmed[:i]
	if len(parent) == 2 && parent[1] == ':' { // C: alone is drive-relative: the root is C:\
		return ""
	}
	return parent
}
