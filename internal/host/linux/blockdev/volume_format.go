package blockdev

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blocktopo"
)

// This file formats volumes: the checks that keep FormatVolume from ever
// erasing data (the built-in probe, blkid -p, an exclusive open) and mkfs.

// mkfsArgv is the command that formats dev with fs. mkfs's own check for
// existing signatures stays on (no -F / -f): if it knows a signature the
// probe does not, it refuses instead of erasing. ext4 initialises inode
// tables and journal lazily (seconds instead of minutes on large volumes)
// and reserves no blocks for root: a volume's capacity belongs to its
// workload, as on NTFS and as Kubernetes' mount-utils formats.
func mkfsArgv(fs, dev string) []string {
	if fs == "xfs" {
		return []string{"mkfs.xfs", "-q", dev}
	}
	return []string{"mkfs.ext4", "-q", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1", dev}
}

// FormatVolume implements volume.Host with mkfs.ext4 or mkfs.xfs (Config
// Filesystem). It refuses a volume of a host or offline disk, of a disk
// with anything mounted, a boot or reserved partition, and a volume already
// holding a signature, found by the built-in probe or by `blkid -p` when
// installed (TYPE or PTTYPE), whichever filesystem is asked for; XFS needs
// at least 300 MiB (errdefs.ErrOutOfRange). A volume something holds open
// exclusively (a format still running) is errdefs.ErrUnavailable.
func (b *Backend) FormatVolume(ctx context.Context, id string) error {
	v, err := b.writable(ctx, id, "format a volume of")
	if err != nil {
		return err
	}
	d := v.Disk
	switch {
	case d.InUse() != "":
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "refusing to format volume %s on %s: %s", id, d.Describe(), d.InUse())
	case !v.Whole() && (v.Entry.Type == blocktopo.TypeBIOSBoot || v.Entry.Type == blocktopo.TypeEFISystem || v.Entry.Type == blocktopo.TypeMicrosoftReserved):
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "refusing to format volume %s: partition %d of %s is a boot or reserved partition (type %s)", id, v.Entry.Index, d.Describe(), v.Entry.Type)
	}
	dev, err := device(v, b.cfg.DevRoot)
	if err != nil {
		return err
	}
	// Nothing may hold the device while a format starts: mkfs holds it
	// exclusively while it writes, and one left running by a daemon killed
	// before its tools died with it (or another program's) would have its
	// fresh filesystem overwritten once it finished unseen between the
	// checks below and this mkfs. Retrying after it ends finds its
	// filesystem instead.
	if err := b.k.claimable(dev); err != nil {
		if errors.Is(err, syscall.EBUSY) {
			return errdefs.Errorf(errdefs.ErrUnavailable, "volume %s (%s) is in use: a previous format may still be running; retry (%v)", id, dev, err)
		}
		return fmt.Errorf("open volume %s (%s) exclusively before formatting it: %w", id, dev, err)
	}
	// The Service checked this already; checking again right before mkfs
	// narrows the window for anything formatting the device meanwhile.
	info, err := blocktopo.ProbeDevice(dev)
	if err != nil {
		return err
	}
	if info.Type != "" {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "volume %s already holds %s; refusing to erase it", id, info.Type)
	}
	if b.cfg.Filesystem == "xfs" && v.Size() < xfsMinSize {
		return errdefs.Errorf(errdefs.ErrOutOfRange, "volume %s is %d MiB; XFS needs at least %d MiB (use a larger disk, or ext4)", id, v.Size()>>20, xfsMinSize>>20)
	}
	// A second opinion from libblkid, which knows some eighty formats the
	// probe does not: mke2fs checks for signatures only on a terminal.
	if sig, err := b.blkidSignature(ctx, dev); err != nil {
		return err
	} else if sig != "" {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "volume %s already holds %s (blkid -p); refusing to erase it", id, sig)
	}
	if _, err := b.exec.Run(ctx, mkfsArgv(b.cfg.Filesystem, dev)); err != nil {
		return toolError(err)
	}
	return nil
}

// blkidSignature asks `blkid -p` (low-level probing, no cache, no udev)
// what dev holds and returns its TYPE or PTTYPE ("TYPE=zfs_member"), or ""
// when blkid finds nothing (exit status 2) or is not installed, in which
// case the built-in probe has decided alone. blkid's "ambivalent result"
// (exit status 8: more than one signature) is a signature too.
func (b *Backend) blkidSignature(ctx context.Context, dev string) (string, error) {
	out, err := b.exec.Run(ctx, []string{"blkid", "-p", "-o", "export", "--", dev})
	var ee *ExitError
	switch {
	case errors.As(err, &ee) && errors.Is(ee.Err, exec.ErrNotFound):
		return "", nil
	case errors.As(err, &ee) && ee.Err == nil && ee.Code == 2:
		return "", nil
	case errors.As(err, &ee) && ee.Err == nil && ee.Code == 8:
		return "more than one signature (blkid: " + ee.Stderr + ")", nil
	case err != nil:
		return "", fmt.Errorf("check %s for signatures with blkid: %w", dev, err)
	}
	var sigs []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "TYPE=") || strings.HasPrefix(l, "PTTYPE=") {
			sigs = append(sigs, strings.TrimSpace(l))
		}
	}
	return strings.Join(sigs, " "), nil
}
