package blockdev

import (
	"fmt"
	"sync"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/beneath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// Backend is the disk and volume host of a Linux node. It keeps no copy of
// the host's state: every call reads sysfs, the partition tables and the
// mount table afresh, so it sees disks attached, grown or partitioned by
// anyone, and a restart of the proxy loses nothing but the "read-only by
// the device" memory described in docs/linux-block.md.
//
// It implements both disk.Host and volume.Host (their method sets do not
// collide); Disk and Volume return it typed as each. It is safe for
// concurrent use.
type Backend struct {
	cfg  Config
	k    kernel
	exec Exec
	// numbers numbers disks that have no usable diskseq, for the
	// backend's lifetime.
	numbers *blocktopo.Numbering
	// roots confines the paths callers name (mount targets, lookups) to
	// the working directories, Config.MountRoots.
	roots *beneath.Roots

	// mu guards the small maps below, for moments: no disk is read and
	// no system call made while it is held, so a disk that does not answer
	// cannot stall calls about other disks.
	mu sync.Mutex
	// deviceReadOnly holds the disks SetDiskOnline(true) found read-only by
	// the device itself (not by our flag): they count as online. Keyed by
	// disk number, which is unique per boot.
	deviceReadOnly map[uint32]bool
	// diskLocks serialise, per disk (kernel name), the reads of its
	// partition table with the writes to it and its BLKPG changes, so a
	// scan never reads a table half written or races another adding the
	// same partition. Tools (mkfs, resize2fs) run outside them.
	diskLocks map[string]*diskLock
}

var (
	_ disk.Host   = (*Backend)(nil)
	_ volume.Host = (*Backend)(nil)
)

// New returns the backend for this host. It fails with an error wrapping
// errdefs.ErrInvalidArgument for a bad Config and errdefs.ErrUnimplemented
// on an OS other than Linux or a kernel without openat2(2), which confining
// mount targets to the working directories needs.
func New(cfg Config) (*Backend, error) {
	k, err := newKernel()
	if err != nil {
		return nil, err
	}
	if err := beneath.Probe(); err != nil {
		return nil, fmt.Errorf("linux block backend: %w", err)
	}
	return newBackend(cfg, k)
}

func newBackend(cfg Config, k kernel) (*Backend, error) {
	explicit := cfg.HostMountTable != ""
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if explicit && cfg.HostMountTable != "none" {
		if _, err := mountinfo.ReadFile(cfg.HostMountTable); err != nil {
			return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "host mount table: %v", err)
		}
	}
	roots, err := beneath.New(cfg.MountRoots)
	if err != nil {
		return nil, fmt.Errorf("mount roots: %w", err)
	}
	return &Backend{
		cfg:            cfg,
		k:              k,
		exec:           cfg.Exec,
		roots:          roots,
		numbers:        &blocktopo.Numbering{},
		deviceReadOnly: map[uint32]bool{},
		diskLocks:      map[string]*diskLock{},
	}, nil
}

// Disk returns the backend as the disk group's host.
func (b *Backend) Disk() disk.Host { return b }

// Volume returns the backend as the volume group's host.
func (b *Backend) Volume() volume.Host { return b }

// Config returns the configuration in effect, defaults filled in.
func (b *Backend) Config() Config { return b.cfg }
