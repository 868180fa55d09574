package blockdev

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/beneath"
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
	// roots confines the paths callers name (mount targets, lookups) to
	// the working directories, Config.MountRoots.
	roots *beneath.Roots

	// mu guards the small maps below, for moments: no disk is read and
	// no system call made while it is held, so a disk that does not answer
	// cannot stall calls about other disks.
	mu sync.Mutex
	// extraNumbers numbers disks that have no usable diskseq.
	extraNumbers map[string]uint32
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
		extraNumbers:   map[string]uint32{},
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

// Disk is one disk as a scan found it.
type Disk struct {
	SysfsDisk
	Number uint32
	Path   string // device node
	// table is the disk's GPT; nil when it has none (or was not read).
	Table *GPT
	// tableErr is why the table could not be read (a damaged GPT, an I/O
	// error); ErrNoGPT is not an error and leaves it nil.
	TableErr error
	// content is what the whole disk holds when it has no GPT.
	Content FSInfo
	MBR     MBRKind
	// mounts are the mounts of the disk or any of its partitions in the
	// proxy's mount namespace.
	Mounts []mountinfo.Mount
	// hostMounts are its mounts in the host's table (Config
	// HostMountTable) that the proxy's own table does not show.
	HostMounts []mountinfo.Mount
	Swap       []string // devices of this disk in use as swap
	// host is why the disk belongs to the host ("" if it does not).
	Host    string
	Offline bool
	// reconcileErr is why some GPT partition could not be given a kernel
	// device.
	reconcileErr error
}

// Snapshot is the state of every disk at one moment.
type Snapshot struct {
	Disks  []*Disk
	Mounts []mountinfo.Mount
	// hostMounts are the mounts of the host's table (Config
	// HostMountTable) that mounts does not have.
	HostMounts []mountinfo.Mount
	// devRoot is Config.DevRoot, to name partition devices.
	DevRoot string
}

// scanMode says how much a scan reads, and whether it may change the
// kernel's partitions.
type scanMode int

const (
	// scanSysfs reads sysfs and the mount table only.
	scanSysfs scanMode = iota
	// scanTables also reads each disk's partition table (or whole-disk
	// signature) and changes nothing: every read (a listing, a lookup by
	// ID, a policy question) scans so. A disk whose kernel partitions
	// differ from its table is reported as the table says; what needs a
	// partition's device then reads the disk at the table's offsets (see
	// Volume.kernelDevice).
	scanTables
	// scanReconcile reads the tables as scanTables does and gives every
	// GPT partition of a disk that is not the host's a kernel device
	// (BLKPG, see reconcile): this kernel scans no partition tables
	// itself, and a disk partitioned before the proxy started, or whose
	// BLKPG partitions were dropped, must still work. Only Rescan scans
	// every disk so; the other calls that change a disk reconcile that
	// disk alone under its lock (lockDisk).
	scanReconcile
)

// scan reads the state of every disk: sysfs and the mount tables, and
// with scanTables every disk's partition table (see readTables).
func (b *Backend) scan(ctx context.Context, mode scanMode) (*Snapshot, error) {
	return b.scanDisks(ctx, mode, nil)
}

// scanDisk is scan for a call about disk n: only its partition table is
// read, so a disk that does not answer affects only the calls about it.
func (b *Backend) scanDisk(ctx context.Context, n uint32, mode scanMode) (*Snapshot, error) {
	return b.scanDisks(ctx, mode, func(d *Disk) bool { return d.Number == n })
}

// scanDisks reads sysfs and the mount tables, and with scanTables or
// scanReconcile the partition tables of the disks tables selects (nil:
// all).
func (b *Backend) scanDisks(ctx context.Context, mode scanMode, tables func(*Disk) bool) (*Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := b.scanSysfs()
	if err != nil {
		return nil, err
	}
	if mode == scanTables || mode == scanReconcile {
		var ds []*Disk
		for _, d := range s.Disks {
			if tables == nil || tables(d) {
				ds = append(ds, d)
			}
		}
		if err := b.readTables(ctx, ds, mode == scanReconcile); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// scanSysfs reads the disks from sysfs and classifies them by the mount
// tables and swap; it reads no disk.
func (b *Backend) scanSysfs() (*Snapshot, error) {
	sds, err := ReadSysfsDisks(b.cfg.SysfsRoot, b.cfg.DiskFilter)
	if err != nil {
		return nil, err
	}
	mounts, err := b.k.mounts()
	if err != nil {
		return nil, fmt.Errorf("read the mount table: %w", err)
	}
	swaps, err := b.k.swapDevices()
	if err != nil {
		return nil, fmt.Errorf("read the swap devices: %w", err)
	}
	hostMounts, err := b.hostMounts(mounts)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Mounts: mounts, HostMounts: hostMounts, DevRoot: b.cfg.DevRoot}
	roots := b.mountRoots()
	for _, sd := range sds {
		d := &Disk{SysfsDisk: sd, Path: filepath.Join(b.cfg.DevRoot, sd.Name)}
		d.Number = b.number(sd)
		b.classify(d, mounts, hostMounts, swaps, roots)
		s.Disks = append(s.Disks, d)
	}
	sort.Slice(s.Disks, func(i, j int) bool { return s.Disks[i].Number < s.Disks[j].Number })
	return s, nil
}

// readTables reads the partition tables of the disks (readTable, or with
// reconcile loadTable, which gives partitions kernel devices),
// each in its own goroutine under the disk's lock, and waits at most
// Config.DiskReadTimeout for them. A disk that has not answered by then
// (a passive ALUA path whose reads hang, or a long operation holding its
// lock) gets a tableErr wrapping errdefs.ErrUnavailable and the call goes
// on without it; while a read of it is stuck past the timeout, later
// scans do not start another and do not wait, so a disk that does not
// answer costs each call at most one timeout, and only calls that need
// every disk.
func (b *Backend) readTables(ctx context.Context, ds []*Disk, reconcile bool) error {
	timeout := b.cfg.DiskReadTimeout
	type result struct {
		i int
		d Disk
	}
	results := make(chan result, len(ds))
	// Cancelled when the wait ends: reads still queued for a disk's lock
	// give up instead of piling up behind one that does not return.
	readCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pending := map[int]bool{}
	for i, d := range ds {
		lk := b.diskLock(d.Name)
		if held := lk.heldFor(); held > timeout {
			d.TableErr = notAnswering(d, held)
			continue
		}
		pending[i] = true
		c := *d // the goroutine's own copy: the scan may give up on it
		go func() {
			if err := lk.lock(readCtx); err != nil {
				return
			}
			defer lk.unlock()
			if reconcile {
				b.loadTable(&c)
			} else {
				b.readTable(&c)
			}
			results <- result{i, c}
		}()
	}
	if len(pending) == 0 {
		return nil
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for len(pending) > 0 {
		select {
		case r := <-results:
			*ds[r.i] = r.d
			delete(pending, r.i)
		case <-timer.C:
			for i := range pending {
				ds[i].TableErr = notAnswering(ds[i], timeout)
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// notAnswering explains a disk whose partition table could not be read in
// time.
func notAnswering(d *Disk, waited time.Duration) error {
	return errdefs.Errorf(errdefs.ErrUnavailable,
		"%s did not answer a read of its partition table within %s (a passive or failed path, or a long operation on it); calls about other disks are not held up by it, try again later",
		d.Describe(), waited.Round(time.Millisecond))
}

// loadTable reads a disk's partition table and, for a disk that is not
// the host's, reconciles the kernel's partitions with it (BLKPG): this
// kernel scans no partition tables itself, and a disk partitioned before
// the proxy started, or whose BLKPG partitions were dropped, must still
// work. Only calls that change the node load tables so (see scanMode).
// The disk's lock is held.
func (b *Backend) loadTable(d *Disk) {
	b.readTable(d)
	if d.Table != nil && d.Host == "" && d.DMUUID == "" {
		b.reconcile(d)
	}
}

// rescanDiskLocked reads disk n again, table included, in the calling
// goroutine, and with reconcile gives its partitions kernel devices
// (loadTable): the caller holds the disk's lock (named name), so nothing
// changes the table meanwhile. The disk must still have that name.
func (b *Backend) rescanDiskLocked(n uint32, name string, reconcile bool) (*Snapshot, *Disk, error) {
	s, err := b.scanSysfs()
	if err != nil {
		return nil, nil, err
	}
	d, err := s.Disk(n, b.cfg.DiskFilter)
	if err != nil {
		return nil, nil, err
	}
	if d.Name != name {
		return nil, nil, errdefs.Errorf(errdefs.ErrNotFound, "disk %d is gone (it was %s)", n, name)
	}
	if reconcile {
		b.loadTable(d)
	} else {
		b.readTable(d)
	}
	return s, d, nil
}

// lockDisk finds disk n by sysfs alone, takes its lock (giving up when ctx
// ends), and reads it again under the lock, with reconcile giving its
// partitions kernel devices (see loadTable); unlock releases the lock.
// Only calls that change the disk lock it.
func (b *Backend) lockDisk(ctx context.Context, n uint32, reconcile bool) (s *Snapshot, d *Disk, unlock func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, err
	}
	s, err = b.scanSysfs()
	if err != nil {
		return nil, nil, nil, err
	}
	if d, err = s.Disk(n, b.cfg.DiskFilter); err != nil {
		return nil, nil, nil, err
	}
	lk := b.diskLock(d.Name)
	if err := lk.lock(ctx); err != nil {
		return nil, nil, nil, fmt.Errorf("wait for other calls about %s: %w", d.Describe(), err)
	}
	if s, d, err = b.rescanDiskLocked(n, d.Name, reconcile); err != nil {
		lk.unlock()
		return nil, nil, nil, err
	}
	return s, d, lk.unlock, nil
}

// diskLock returns the lock of the disk with the kernel name.
func (b *Backend) diskLock(name string) *diskLock {
	b.mu.Lock()
	defer b.mu.Unlock()
	lk := b.diskLocks[name]
	if lk == nil {
		lk = &diskLock{ch: make(chan struct{}, 1)}
		b.diskLocks[name] = lk
	}
	return lk
}

// diskLock is a per-disk mutex that a waiter can give up on, and that
// tells how long it has been held: a holder stuck in a read of a disk that
// does not answer is how scans learn not to wait for that disk.
type diskLock struct {
	ch    chan struct{}
	mu    sync.Mutex
	since time.Time // when the current holder took it; zero when free
}

func (l *diskLock) lock(ctx context.Context) error {
	select {
	case l.ch <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := ctx.Err(); err != nil { // both were ready: the waiter gave up
		<-l.ch
		return err
	}
	l.mu.Lock()
	l.since = time.Now()
	l.mu.Unlock()
	return nil
}

func (l *diskLock) unlock() {
	l.mu.Lock()
	l.since = time.Time{}
	l.mu.Unlock()
	<-l.ch
}

// heldFor tells how long the lock has been held; 0 when it is free.
func (l *diskLock) heldFor() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.since.IsZero() {
		return 0
	}
	return time.Since(l.since)
}

// number returns a disk's number: its diskseq, which the kernel
// gives every disk (and every new medium of a loop device) once per boot
// and never reuses, so the number stays valid exactly as long as the disk
// does. A disk with no diskseq (kernel < 5.15), or one of 2^31 or more
// (two billion attachments in one boot), is numbered from 2^31 up by this
// process, keyed by name, device number, diskseq and the disk's sysfs
// object: such numbers are stable only while the proxy runs, and a disk
// detached and attached again (same sdb, same 8:16, but a new sysfs
// object) gets a new one, so a stale number is NotFound, never another
// disk.
func (b *Backend) number(d SysfsDisk) uint32 {
	if d.Diskseq > 0 && d.Diskseq < 1<<31 {
		return uint32(d.Diskseq)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	key := fmt.Sprintf("%s %s %d %s", d.Name, d.Dev, d.Diskseq, d.Object)
	if n, ok := b.extraNumbers[key]; ok {
		return n
	}
	n := uint32(1<<31 + len(b.extraNumbers))
	b.extraNumbers[key] = n
	return n
}

// DiskNumberOf returns the number the disk group gives the block device
// name ("sdb"): its diskseq, or the number this backend keeps for a disk
// without one. The iSCSI backend numbers its LUNs' disks with it, so that
// GetTargetDisks names the disks the disk group answers to on every
// kernel, 5.15 or not. A device the backend does not manage (filtered out,
// or gone) is errdefs.ErrNotFound.
func (b *Backend) DiskNumberOf(name string) (uint32, error) {
	s, err := b.scanSysfs()
	if err != nil {
		return 0, err
	}
	for _, d := range s.Disks {
		if d.Name == name {
			return d.Number, nil
		}
	}
	return 0, errdefs.Errorf(errdefs.ErrNotFound, "block device %q is not a disk of this node (disks matching %v)", name, b.cfg.DiskFilter)
}

// mountRoots returns the mount roots plus the resolved form of each that
// is (or lies below) a symlink, such as /var/lib/kubelet linked to
// /data/kubelet: the mount table records resolved paths.
func (b *Backend) mountRoots() []string {
	roots := append([]string(nil), b.cfg.MountRoots...)
	for _, r := range b.cfg.MountRoots {
		if res, err := filepath.EvalSymlinks(r); err == nil && filepath.ToSlash(res) != r {
			roots = append(roots, filepath.ToSlash(res))
		}
	}
	return roots
}

// hostMounts reads Config.HostMountTable and returns the mounts in it that
// own (the proxy's table) does not have: the same device at the same
// mount point is one mount seen from both namespaces. The default table
// that cannot be read (no such process view, no permission) counts as
// empty; an explicit one is an error.
func (b *Backend) hostMounts(own []mountinfo.Mount) ([]mountinfo.Mount, error) {
	if b.cfg.HostMountTable == "none" {
		return nil, nil
	}
	ms, err := mountinfo.ReadFile(b.cfg.HostMountTable)
	if err != nil {
		if b.cfg.HostMountTable == DefaultHostMountTable {
			return nil, nil
		}
		return nil, fmt.Errorf("read the host's mount table: %w", err)
	}
	type key struct {
		dev DevNum
		mp  string
	}
	seen := map[key]bool{}
	for _, m := range own {
		seen[key{DevNum{m.Major, m.Minor}, m.MountPoint}] = true
	}
	var out []mountinfo.Mount
	for _, m := range ms {
		if !seen[key{DevNum{m.Major, m.Minor}, m.MountPoint}] {
			out = append(out, m)
		}
	}
	return out, nil
}

// classify works out who a disk belongs to and whether it is offline.
// hostMounts are the host's mounts the proxy's namespace does not show:
// one of the disk outside the mount roots makes it the host's, and any
// makes it in use.
func (b *Backend) classify(d *Disk, mounts, hostMounts []mountinfo.Mount, swaps []DevNum, roots []string) {
	devs := map[DevNum]string{d.Dev: d.Name}
	paths := map[string]bool{d.Path: true}
	for _, p := range d.Parts {
		devs[p.Dev] = p.Name
		paths[filepath.Join(b.cfg.DevRoot, p.Name)] = true
	}
	var reasons []string
	// ofDisk picks the mounts of the disk and its partitions from one
	// table, and gives each outside the mount roots as a reason (where
	// says in which namespace): the proxy's table and the host's are read
	// alike.
	ofDisk := func(ms []mountinfo.Mount, where string) []mountinfo.Mount {
		var out []mountinfo.Mount
		for _, m := range ms {
			// btrfs reports an anonymous st_dev, so match the source too.
			if _, ok := devs[DevNum{m.Major, m.Minor}]; !ok && !paths[m.Source] {
				continue
			}
			out = append(out, m)
			if !strictlyBelow(m.MountPoint, roots) {
				reasons = append(reasons, fmt.Sprintf("%s is mounted at %s%s", m.Source, m.MountPoint, where))
			}
		}
		return out
	}
	d.Mounts = append(d.Mounts, ofDisk(mounts, "")...)
	d.HostMounts = append(d.HostMounts, ofDisk(hostMounts, " in the host's mount namespace")...)
	for _, sw := range swaps {
		if name, ok := devs[sw]; ok {
			d.Swap = append(d.Swap, name)
			reasons = append(reasons, name+" is in use as swap")
		}
	}
	if len(d.Holders) > 0 {
		reasons = append(reasons, fmt.Sprintf("%s is held by %s", d.Name, strings.Join(d.Holders, ", ")))
	}
	for _, p := range d.Parts {
		if len(p.Holders) > 0 {
			reasons = append(reasons, fmt.Sprintf("%s is held by %s", p.Name, strings.Join(p.Holders, ", ")))
		}
	}
	if len(reasons) > 0 {
		d.Host = strings.Join(reasons, "; ")
	}
	switch {
	case d.SCSI != nil:
		d.Offline = d.SCSIState == "offline" || d.SCSIState == "transport-offline"
	default:
		b.mu.Lock()
		d.Offline = d.ReadOnly && !b.deviceReadOnly[d.Number]
		b.mu.Unlock()
	}
}

// strictlyBelow tells whether a mount point lies strictly inside one of
// the mount roots: the only places the volume Service mounts volumes.
func strictlyBelow(mp string, roots []string) bool {
	for _, r := range roots {
		if r == "/" {
			if mp != "/" {
				return true
			}
			continue
		}
		if strings.HasPrefix(mp, r+"/") {
			return true
		}
	}
	return false
}

// readTable reads the disk's GPT, or what the whole disk holds if it has
// none.
func (b *Backend) readTable(d *Disk) {
	if d.Size == 0 {
		return
	}
	f, err := b.k.openDevice(d.Path)
	if err != nil {
		d.TableErr = err
		return
	}
	defer f.Close() //nolint:errcheck // read-only: a close error changes nothing
	t, err := ReadGPT(f, d.LogicalBlock, d.Size)
	switch {
	case err == nil:
		d.Table = t
		if d.DMUUID != "" {
			// Matching kpartx's devices to the entries changes nothing.
			d.reconcileMultipath()
		}
		return
	case !errors.Is(err, ErrNoGPT):
		d.TableErr = err
		return
	}
	if d.Content, err = Probe(f, d.Size); err != nil {
		d.TableErr = err
		return
	}
	sector0 := make([]byte, 512)
	if _, err := f.ReadAt(sector0, 0); err == nil {
		d.MBR = ClassifyMBR(sector0)
	}
}

// reconcile makes the kernel's partitions of the disk the table's: it
// first deletes kernel partitions the table does not list, or lists at
// another start or with a smaller size, when nothing uses them (a reused
// /dev/loopN keeps the BLKPG partitions of its previous user when it had
// no LO_FLAGS_PARTSCAN, and one of them in the way makes every BLKPG_ADD
// fail with EBUSY); then it gives every GPT partition a kernel device and
// grows a kernel partition the table has grown. A partition in use is
// left as it is: device() refuses a volume whose kernel partition is not
// where the table says.
func (b *Backend) reconcile(d *Disk) {
	lbs := d.LogicalBlock
	changed := false
	var errs []error
	for _, p := range d.StaleParts(d.Table, true) {
		if d.partitionBusy(b, p) != "" {
			continue
		}
		if err := b.k.deletePartition(d.Path, p.Number); err != nil {
			errs = append(errs, fmt.Errorf("delete stale kernel partition %s: %w", p.Name, err))
			continue
		}
		changed = true
	}
	if changed {
		if err := b.rereadParts(d); err != nil {
			d.reconcileErr = err
			return
		}
	}
	changed = false
	for i := range d.Table.Entries {
		e := &d.Table.Entries[i]
		start, length := int64(e.First)*lbs, int64(e.Sectors())*lbs
		kp := d.Part(e.Index)
		var err error
		switch {
		case kp == nil:
			err = b.k.addPartition(d.Path, e.Index, start, length)
		case kp.Start == start && kp.Size < length:
			err = b.k.resizePartition(d.Path, e.Index, start, length)
		default:
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("partition %d: %w", e.Index, err))
			continue
		}
		changed = true
	}
	if changed {
		if err := b.rereadParts(d); err != nil {
			errs = append(errs, err)
		}
	}
	d.reconcileErr = errors.Join(errs...)
}

// reconcileMultipath checks a multipath map's partition devices against
// its table. Device-mapper disks take no BLKPG partitions: kpartx makes a
// dm-linear device per partition (multipathd's udev rules run it when the
// table changes). A kpartx device whose size is not its entry's is not
// taken for it (its offset cannot be read from sysfs), and an entry
// without a device has none until kpartx runs.
func (d *Disk) reconcileMultipath() {
	lbs := d.LogicalBlock
	var keep []KernelPartition
	var errs []error
	for _, p := range d.Parts {
		e := d.Table.Entry(p.Number)
		if e != nil && int64(e.Sectors())*lbs == p.Size {
			keep = append(keep, p)
		} else if e != nil {
			errs = append(errs, fmt.Errorf("partition %d: its device-mapper device %s is %d bytes, the table says %d", p.Number, p.Name, p.Size, int64(e.Sectors())*lbs))
		}
	}
	d.Parts = keep
	for _, e := range d.Table.Entries {
		if d.Part(e.Index) == nil {
			errs = append(errs, fmt.Errorf("partition %d has no device-mapper device: kpartx makes them (multipathd's udev rules run it when the table changes); run kpartx -u /dev/mapper/%s", e.Index, d.DMName))
		}
	}
	d.reconcileErr = errors.Join(errs...)
}

// rereadParts reads the disk's kernel partitions again after BLKPG
// changed them.
func (b *Backend) rereadParts(d *Disk) error {
	parts, err := ReadKernelPartitions(filepath.Join(b.cfg.SysfsRoot, "block", d.Name))
	if err != nil {
		return fmt.Errorf("re-read partitions: %w", err)
	}
	d.Parts = parts
	return nil
}

// staleParts returns the kernel partitions of the disk that table t (nil:
// no table) does not describe: no entry with the number, or an entry at
// another start, or of another size. With growable, a kernel partition
// smaller than its entry at the same start is not stale: BLKPG grows it
// in place, even while it is mounted.
func (d *Disk) StaleParts(t *GPT, growable bool) []*KernelPartition {
	var out []*KernelPartition
	for i := range d.Parts {
		p := &d.Parts[i]
		if t != nil {
			if e := t.Entry(p.Number); e != nil {
				start, length := int64(e.First)*d.LogicalBlock, int64(e.Sectors())*d.LogicalBlock
				if p.Start == start && (p.Size == length || growable && p.Size < length) {
					continue
				}
			}
		}
		out = append(out, p)
	}
	return out
}

// MountedFrom tells whether mount m is of the block device dev, whose
// node below the device root is src: by device number, or by the source
// text mount(8) was given. Matching the name as well errs towards "in
// use", which is what the callers want: they refuse to delete or reuse a
// device that is mounted, or unmount what is mounted from it.
// VolumeMounts, which answers the policy's question, compares device
// numbers only, since there a reused name must not count (see there).
func MountedFrom(m mountinfo.Mount, dev DevNum, src string) bool {
	return (DevNum{m.Major, m.Minor}) == dev || m.Source == src
}

// partitionBusy says why a kernel partition must not be deleted: it is
// held (device-mapper, md), swap, mounted in the proxy's or the host's
// mount namespace, or another program has it open exclusively (an O_EXCL
// open fails). "" means it is free.
func (d *Disk) partitionBusy(b *Backend, p *KernelPartition) string {
	if len(p.Holders) > 0 {
		return "held by " + strings.Join(p.Holders, ", ")
	}
	for _, sw := range d.Swap {
		if sw == p.Name {
			return "in use as swap"
		}
	}
	src := filepath.Join(b.cfg.DevRoot, p.Name)
	for _, m := range append(append([]mountinfo.Mount(nil), d.Mounts...), d.HostMounts...) {
		if MountedFrom(m, p.Dev, src) {
			return "mounted at " + m.MountPoint
		}
	}
	if err := b.k.claimable(src); err != nil {
		return fmt.Sprintf("open by another program (an exclusive open failed: %v)", err)
	}
	return ""
}

// dropStaleParts deletes the kernel partitions of a disk about to get
// table t that t does not describe exactly, before anything is written:
// a stale partition in the way makes the BLKPG_ADD of the new one fail
// with EBUSY. One in use is refused with errdefs.ErrFailedPrecondition
// naming it, and then nothing is deleted.
func (b *Backend) dropStaleParts(d *Disk, t *GPT, op string) error {
	stale := d.StaleParts(t, false)
	for _, p := range stale {
		if why := d.partitionBusy(b, p); why != "" {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition,
				"refusing to %s %s: its kernel partition %s (bytes %d to %d) is not in the partition table on the disk but is %s; stop using it (or delete it: delpart /dev/%s %d) and retry",
				op, d.Describe(), p.Name, p.Start, p.Start+p.Size, why, d.Name, p.Number)
		}
	}
	for _, p := range stale {
		if err := b.k.deletePartition(d.Path, p.Number); err != nil {
			return errdefs.Errorf(errdefs.ErrUnavailable, "%s %s: delete its stale kernel partition %s: %v", op, d.Describe(), p.Name, err)
		}
	}
	if len(stale) > 0 {
		return b.rereadParts(d)
	}
	return nil
}

// MountsFrom returns the mounts in ms of the block device dev, whose node
// is src (see MountedFrom), in ms's order.
func MountsFrom(ms []mountinfo.Mount, dev DevNum, src string) []mountinfo.Mount {
	var out []mountinfo.Mount
	for _, m := range ms {
		if MountedFrom(m, dev, src) {
			out = append(out, m)
		}
	}
	return out
}

// inUse explains why the disk's content must not be rewritten: it is the
// host's, or something on it is mounted. "" means it may be.
func (d *Disk) InUse() string {
	if d.Host != "" {
		return d.Host
	}
	if all := append(append([]mountinfo.Mount(nil), d.Mounts...), d.HostMounts...); len(all) > 0 {
		var where []string
		for _, m := range all {
			where = append(where, fmt.Sprintf("%s at %s", m.Source, m.MountPoint))
		}
		return "it has mounted filesystems (" + strings.Join(where, ", ") + ")"
	}
	return ""
}

// describe names a disk in messages: "disk 12 (loop3)".
func (d *Disk) Describe() string { return fmt.Sprintf("disk %d (%s)", d.Number, d.Name) }

// hostErr refuses an operation on a host disk.
func (d *Disk) hostErr(op string) error {
	return errdefs.Errorf(errdefs.ErrFailedPrecondition,
		"refusing to %s %s: it belongs to the host (%s); the proxy only changes disks that hold nothing mounted outside its working directories", op, d.Describe(), d.Host)
}

// offlineErr refuses an operation on an offline disk.
func (d *Disk) offlineErr(op string) error {
	return errdefs.Errorf(errdefs.ErrFailedPrecondition,
		"cannot %s %s: the disk is offline; bring it online with SetDiskState first", op, d.Describe())
}

// disk finds a disk by number.
func (s *Snapshot) Disk(n uint32, filter []string) (*Disk, error) {
	for _, d := range s.Disks {
		if d.Number == n {
			return d, nil
		}
	}
	return nil, errdefs.Errorf(errdefs.ErrNotFound, "disk %d does not exist (disk numbers are kernel diskseq values of disks matching %v; ListDiskIDs lists them)", n, filter)
}

// Volume is a volume: a GPT partition and its kernel device, or a whole
// disk holding a filesystem without a partition table (entry and part nil).
type Volume struct {
	ID    string
	Disk  *Disk
	Entry *GPTEntry        // nil for a whole-disk volume
	Part  *KernelPartition // nil when the kernel has no device for it, and for a whole-disk volume
}

// whole tells whether the volume is a whole disk.
func (v *Volume) Whole() bool { return v.Entry == nil }

// describe names the volume's place in messages.
func (v *Volume) Describe() string {
	if v.Whole() {
		return "the whole of " + v.Disk.Describe()
	}
	return fmt.Sprintf("partition %d of %s", v.Entry.Index, v.Disk.Describe())
}

// VolumeID is the ID of a partition: its unique GUID in lower case. It is
// written in the partition table, so it survives reboots and moves
// between nodes, and it passes the POSIX volume ID rule (printable, no
// '/', at most 256 bytes).
func VolumeID(e *GPTEntry) string { return e.ID.String() }

// wholeVolume returns the ID of the volume a disk without a partition
// table is, or "" when it is none. aws-ebs, gce-pd and azuredisk on Linux
// format the whole device (mkfs /dev/xvdf), so such a disk holds one
// volume: its filesystem, named by the filesystem's UUID, lower case, as
// blkid prints it and /dev/disk/by-uuid names it. Like a partition GUID it
// is stored on the disk, so it survives reboots and moves between nodes.
// Only filesystems the backend mounts and whose UUID the probe reads
// count (ext2/3/4, XFS, btrfs).
func (d *Disk) WholeVolume() string {
	if d.Table != nil || d.TableErr != nil || d.MBR != MBRNone || d.Content.MountType() == "" || d.Content.UUID.IsZero() {
		return ""
	}
	return d.Content.UUID.String()
}

// volumes returns the volumes of the disk: its GPT partitions but
// Microsoft Reserved ones, in index order, or its whole-disk volume.
func (d *Disk) Volumes() []*Volume {
	var out []*Volume
	if id := d.WholeVolume(); id != "" {
		return append(out, &Volume{ID: id, Disk: d})
	}
	if d.Table == nil {
		return nil
	}
	for i := range d.Table.Entries {
		e := &d.Table.Entries[i]
		if e.Type != TypeMicrosoftReserved {
			out = append(out, &Volume{ID: VolumeID(e), Disk: d, Entry: e, Part: d.Part(e.Index)})
		}
	}
	return out
}

// volume finds a volume by ID, in either case. A cloned disk (a snapshot
// restored, a PVC clone) carries the same IDs as its original: when more
// than one volume has the ID and exactly one of them is mounted, that one
// is meant (the live volume whose stats or unmount a driver asks for);
// otherwise the ID is ambiguous until the clone is given new identities
// (SetDiskOnline) or detached.
func (s *Snapshot) Volume(id string) (*Volume, error) {
	found, err := s.VolumesWithID(id)
	if err != nil {
		return nil, err
	}
	if len(found) == 1 {
		return found[0], nil
	}
	var mounted []*Volume
	var where []string
	for _, v := range found {
		if len(v.Mounts(s.DevRoot)) > 0 {
			mounted = append(mounted, v)
		}
		where = append(where, v.Describe())
	}
	if len(mounted) == 1 {
		return mounted[0], nil
	}
	return nil, errdefs.Errorf(errdefs.ErrFailedPrecondition,
		"volume %s is ambiguous: it is on %s (a cloned disk?); bring the clone online with SetDiskState to give it new IDs, or detach all but one", id, strings.Join(where, " and "))
}

// volumesWithID returns every volume with the ID, in either case: one,
// or more on a node with a clone attached (see volume). None is
// errdefs.ErrNotFound, or errdefs.ErrUnavailable when a disk that did not
// answer may hold it.
func (s *Snapshot) VolumesWithID(id string) ([]*Volume, error) {
	g, err := ParseGUID(id)
	if err != nil {
		return nil, errdefs.Errorf(errdefs.ErrNotFound, "volume %q does not exist: volume IDs on Linux are GPT partition GUIDs or whole-disk filesystem UUIDs such as 0fc63daf-8483-4772-8e79-3d69d8477de4", id)
	}
	var found []*Volume
	for _, d := range s.Disks {
		for _, v := range d.Volumes() {
			if v.ID == g.String() {
				found = append(found, v)
			}
		}
	}
	if len(found) > 0 {
		return found, nil
	}
	// A disk that did not answer may hold it: that is not "no such
	// volume", and a retry may find it.
	for _, d := range s.Disks {
		if errors.Is(d.TableErr, errdefs.ErrUnavailable) {
			return nil, errdefs.Errorf(errdefs.ErrUnavailable, "volume %s is on none of the disks that could be read: %v", id, d.TableErr)
		}
	}
	return nil, errdefs.Errorf(errdefs.ErrNotFound, "volume %s does not exist on any disk (ListVolumesOnDisk lists the volumes of a disk)", id)
}

// device returns the volume's kernel device node, checking that the
// kernel's partition is where the table says.
func (v *Volume) device(devRoot string) (string, error) {
	if v.Whole() {
		return v.Disk.Path, nil
	}
	lbs := v.Disk.LogicalBlock
	if v.Part == nil {
		msg := fmt.Sprintf("the kernel has no device for %s", v.Describe())
		if v.Disk.reconcileErr != nil {
			msg += ": " + v.Disk.reconcileErr.Error()
		}
		return "", errdefs.Errorf(errdefs.ErrUnavailable, "%s", msg)
	}
	// A kpartx device's start is unknown (-1); its size matched.
	if v.Part.Start >= 0 && v.Part.Start != int64(v.Entry.First)*lbs {
		return "", errdefs.Errorf(errdefs.ErrFailedPrecondition,
			"kernel partition %s starts at byte %d but the partition table says %d, and it is in use so it cannot be re-added",
			v.Part.Name, v.Part.Start, int64(v.Entry.First)*lbs)
	}
	return filepath.Join(devRoot, v.Part.Name), nil
}

// kernelDevice returns the volume's device node when the kernel has one
// exactly where the table says (the disk itself for a whole-disk volume),
// checking without changing anything; ok is false otherwise. Reads use it
// (probeContent); calls that change a volume reconcile first and use
// device.
func (v *Volume) KernelDevice(devRoot string) (dev string, ok bool) {
	if v.Whole() {
		return v.Disk.Path, true
	}
	if v.Part == nil {
		return "", false
	}
	lbs := v.Disk.LogicalBlock
	// A kpartx device's start is unknown (-1); its size is what matched.
	if (v.Part.Start >= 0 && v.Part.Start != int64(v.Entry.First)*lbs) || v.Part.Size != v.Size() {
		return "", false
	}
	return filepath.Join(devRoot, v.Part.Name), true
}

// size is the size of the volume's device (the partition, or the whole
// disk) in bytes.
func (v *Volume) Size() int64 {
	if v.Whole() {
		return v.Disk.Size
	}
	return int64(v.Entry.Sectors()) * v.Disk.LogicalBlock
}

// mounts returns the mounts of the volume, the topmost of each mount
// point last (mount table order).
func (v *Volume) Mounts(devRoot string) []mountinfo.Mount {
	switch {
	case v.Whole():
		return MountsFrom(v.Disk.Mounts, v.Disk.Dev, v.Disk.Path)
	case v.Part == nil:
		return nil
	}
	return MountsFrom(v.Disk.Mounts, v.Part.Dev, filepath.Join(devRoot, v.Part.Name))
}

// mountPoint returns one mount point of the volume to run filesystem
// calls on, preferring a mount of the filesystem root over a bind mount of
// a subdirectory; "" when the volume is not mounted.
func (v *Volume) MountPoint(devRoot string) string {
	ms := v.Mounts(devRoot)
	for _, m := range ms {
		if m.Root == "/" {
			return m.MountPoint
		}
	}
	if len(ms) > 0 {
		return ms[0].MountPoint
	}
	return ""
}

// byDevice finds the partition (as a volume) or whole disk with a device
// number or source path; the volume is nil when the device is not one.
func (s *Snapshot) ByDevice(dev DevNum, source, devRoot string) (*Disk, *Volume) {
	for _, d := range s.Disks {
		if d.Dev == dev || d.Path == source {
			if id := d.WholeVolume(); id != "" {
				return d, &Volume{ID: id, Disk: d}
			}
			return d, nil
		}
		for i := range d.Parts {
			p := &d.Parts[i]
			if p.Dev != dev && filepath.Join(devRoot, p.Name) != source {
				continue
			}
			if d.Table != nil {
				if e := d.Table.Entry(p.Number); e != nil {
					return d, &Volume{ID: VolumeID(e), Disk: d, Entry: e, Part: p}
				}
			}
			return d, nil
		}
	}
	return nil, nil
}

// IsWithin tells whether p is root or below it (POSIX paths).
func IsWithin(p, root string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}
