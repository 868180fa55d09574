package blockdev

import (
	"fmt"
	"path"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
)

// Config configures a Backend. The zero value is ready for a Linux node;
// each field says what the daemon should expose as a flag.
type Config struct {
	// SysfsRoot is where sysfs is mounted. Default "/sys".
	SysfsRoot string
	// DevRoot is the directory of block device nodes (devtmpfs). Default
	// "/dev". Disk and partition nodes are DevRoot/<kernel name>.
	DevRoot string
	// Filesystem is what FormatVolume creates: "ext4" or "xfs"; ""
	// means DefaultFilesystem.
	Filesystem string
	// DiskFilter holds glob patterns (path.Match syntax) of kernel disk
	// names ("sd*", "nvme0n1") the proxy shows and manages; other disks do
	// not exist for it. Default DefaultDiskFilter. RAM disks, loop devices
	// with nothing attached and hidden devices are never shown.
	DiskFilter []string
	// MountRoots are the directories volumes are mounted below: the
	// daemon's working directories. A disk with a filesystem mounted
	// anywhere else (not strictly below one of these), used as swap, or
	// held by device-mapper/md belongs to the host: it is listed but never
	// partitioned, formatted, mounted, resized or taken offline. Default
	// DefaultMountRoots.
	MountRoots []string
	// HostMountTable is a mountinfo file (proc(5)) of the host's mount
	// namespace. The proxy's own mount table shows only its namespace; a
	// disk mounted only on the host (an Azure resource disk at /mnt under
	// a DaemonSet) is the host's too, and is never taken offline,
	// partitioned, formatted, mounted or resized. Default
	// DefaultHostMountTable, /proc/1/mountinfo: the host's when the
	// daemon runs with hostPID, its own container's otherwise (then only
	// the proxy's own namespace counts; an unreadable default is ignored
	// the same way). "none" reads the proxy's own table only. A path set
	// explicitly must be readable: New fails otherwise.
	HostMountTable string
	// Exec runs mkfs, e2fsck, resize2fs and xfs_growfs. Default
	// NewExec(ToolTimeout).
	Exec Exec
	// ToolTimeout bounds each tool run of the default Exec. Default
	// DefaultToolTimeout.
	ToolTimeout time.Duration
	// DiskReadTimeout bounds how long a call waits for one disk's
	// partition table to be read. A disk that does not answer (a passive
	// ALUA path, a failed transport) is then reported as unreadable and the
	// call goes on with the other disks; until its read returns, later
	// calls do not wait for it again. Default DefaultDiskReadTimeout.
	DiskReadTimeout time.Duration
}

// Defaults for Config's empty fields.
var (
	// DefaultDiskFilter matches the disks a CSI driver attaches (see
	// blocktopo.DefaultDiskFilter): SCSI (including iSCSI and
	// virtio-scsi), virtio-blk, Xen, NVMe and IDE disks, attached loop
	// devices, and dm-multipath maps.
	DefaultDiskFilter = blocktopo.DefaultDiskFilter
	// DefaultMountRoots is kubelet's default root directory on Linux.
	DefaultMountRoots = []string{"/var/lib/kubelet"}
)

// DefaultFilesystem is what FormatVolume creates when Config.Filesystem
// is empty.
const DefaultFilesystem = "ext4"

// DefaultHostMountTable is the mount table of PID 1: the host's init when
// the daemon runs with hostPID.
const DefaultHostMountTable = "/proc/1/mountinfo"

// DefaultToolTimeout bounds one tool run. e2fsck -f of a large, full ext4
// volume is the slowest step; kubelet retries an operation it gave up on,
// and the Service's locks make the retry wait for the first attempt.
const DefaultToolTimeout = 10 * time.Minute

// DefaultDiskReadTimeout bounds the wait for one disk's partition table:
// a healthy disk answers in milliseconds, a path failing over within
// multipath's usual 5-30 s.
const DefaultDiskReadTimeout = 10 * time.Second

// xfsMinSize is the smallest volume mkfs.xfs accepts ("Filesystem must be
// larger than 300MB").
const xfsMinSize = 300 << 20

// withDefaults checks cfg and fills in the defaults.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.SysfsRoot == "" {
		cfg.SysfsRoot = "/sys"
	}
	if cfg.DevRoot == "" {
		cfg.DevRoot = "/dev"
	}
	switch cfg.Filesystem {
	case "":
		cfg.Filesystem = DefaultFilesystem
	case "ext4", "xfs":
	default:
		return cfg, errdefs.Errorf(errdefs.ErrInvalidArgument, "filesystem %q is not supported: use ext4 or xfs", cfg.Filesystem)
	}
	if len(cfg.DiskFilter) == 0 {
		cfg.DiskFilter = DefaultDiskFilter
	}
	for _, p := range cfg.DiskFilter {
		if _, err := path.Match(p, ""); err != nil {
			return cfg, errdefs.Errorf(errdefs.ErrInvalidArgument, "disk filter %q: %v", p, err)
		}
	}
	if len(cfg.MountRoots) == 0 {
		cfg.MountRoots = DefaultMountRoots
	}
	roots := make([]string, 0, len(cfg.MountRoots))
	for _, r := range cfg.MountRoots {
		if !path.IsAbs(r) {
			return cfg, errdefs.Errorf(errdefs.ErrInvalidArgument, "mount root %q is not an absolute path", r)
		}
		roots = append(roots, path.Clean(r))
	}
	cfg.MountRoots = roots
	if cfg.HostMountTable == "" {
		cfg.HostMountTable = DefaultHostMountTable
	} else if cfg.HostMountTable != "none" && !path.IsAbs(cfg.HostMountTable) {
		return cfg, errdefs.Errorf(errdefs.ErrInvalidArgument, "host mount table %q is not an absolute path (or none)", cfg.HostMountTable)
	}
	if cfg.ToolTimeout <= 0 {
		cfg.ToolTimeout = DefaultToolTimeout
	}
	if cfg.Exec == nil {
		cfg.Exec = NewExec(cfg.ToolTimeout)
	}
	if cfg.DiskReadTimeout <= 0 {
		cfg.DiskReadTimeout = DefaultDiskReadTimeout
	}
	return cfg, nil
}

// String summarises the configuration for the daemon's start-up log.
func (cfg Config) String() string {
	return fmt.Sprintf("sysfs=%s dev=%s filesystem=%s disks=%v mount-roots=%v host-mounts=%s tool-timeout=%s disk-read-timeout=%s",
		cfg.SysfsRoot, cfg.DevRoot, cfg.Filesystem, cfg.DiskFilter, cfg.MountRoots, cfg.HostMountTable, cfg.ToolTimeout, cfg.DiskReadTimeout)
}
