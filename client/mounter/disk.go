package mounter

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// FindDiskByLUN returns the disk at SCSI logical unit lun (decimal, as the
// controller puts it in the publish context: azuredisk's "lun"), compared
// as a number ("03" is LUN 3). Disks that report no location, or a LUN
// that is not a number, are not candidates.
//
// Like every FindDisk method it never guesses: no match is
// errdefs.ErrNotFound (the disk is not attached yet; kubelet retries), and
// several matches are errdefs.ErrFailedPrecondition naming them.
//
// Azure's NVMe data disks are found by Azure's rule, LUN = namespace ID −
// 1: on Azure's NVMe controller every disk's SCSI LUN reads 0 and
// upstream's parse of MSFT_Disk.Location gives LUNID "", so
// azuredisk-csi-driver's own Windows code numbers them that way
// (kubernetes-sigs/azuredisk-csi-driver @ d983d613 pkg/os/disk/disk.go,
// getNVMeLunFromPath, since 41048465). The rule applies only to disks the
// host reports with a namespace ID and Azure's product (isAzureNVMe);
// azuredisk applies it to every "ven_nvme" disk because it runs on Azure
// alone, and the mounter does not know its cloud. The namespace ID is in
// the model only, so this works in library mode, not through the daemon's
// upstream wire (there the lookup finds no such disk).
func (m *Mounter) FindDiskByLUN(ctx context.Context, lun string) (uint32, error) {
	want, err := strconv.ParseUint(strings.TrimSpace(lun), 10, 32)
	if err != nil {
		return 0, errdefs.Errorf(errdefs.ErrInvalidArgument, "LUN %q is not a decimal number", lun)
	}
	locs, err := m.node.Disk().ListDiskLocations(ctx, &disk.ListDiskLocationsRequest{})
	if err != nil {
		return 0, fmt.Errorf("list disk locations: %w", err)
	}
	var found []uint32
	for n, loc := range locs.DiskLocations {
		if loc == nil {
			continue
		}
		if got, ok := azureNVMeLUN(loc); ok {
			if got == want {
				found = append(found, n)
			}
			continue
		}
		if got, err := strconv.ParseUint(strings.TrimSpace(loc.LUNID), 10, 32); err == nil && got == want {
			found = append(found, n)
		}
	}
	return pick(found, "LUN "+lun)
}

// azureProduct is the product of Azure's NVMe controller for remote disks,
// "MSFT NVMe Accelerator v1.0", as far as a device instance ID holds it
// (16 characters, spaces as "_"): azuredisk-csi-driver's own examples of
// an Azure NVMe disk's device path read
// "…#disk&ven_nvme&prod_msft_nvme_accele#…" (@ d983d613
// pkg/os/disk/disk_nvme_test.go), and Azure's Linux udev rules key the
// same controller on that model (Azure/azure-vm-utils @ 2fdf8dd1
// udev/80-azure-disk.rules).
const azureProduct = "msft nvme accele"

// isAzureNVMe tells whether a disk location is of an NVMe namespace on
// Azure's controller: a namespace ID, and Azure's product compared
// without case, with "_" and " " alike.
func isAzureNVMe(loc *disk.DiskLocation) bool {
	p := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(loc.Product), "_", " "))
	return loc.NVMeNamespaceID > 0 && strings.HasPrefix(p, azureProduct)
}

// azureNVMeLUN returns the LUN of an Azure NVMe data disk, its namespace ID
// − 1, and false for any other disk, which keeps its reported LUNID. A
// namespace ID below 1 is no namespace, as azuredisk refuses it.
func azureNVMeLUN(loc *disk.DiskLocation) (uint64, bool) {
	if !isAzureNVMe(loc) {
		return 0, false
	}
	return uint64(loc.NVMeNamespaceID) - 1, true
}

// FindDiskByPage83 returns the disk whose SCSI page 0x83 identifier is id
// (compared without case and surrounding spaces), or whose identifier's
// last word is id: GCE reports "Google  <device-name>", and gcp-pd finds a
// disk by its device name that way (gcp-compute-persistent-disk-csi-driver
// @ b560165c pkg/mount-manager/safe-mounter-v1_windows.go,
// getDiskNumberLegacy).
func (m *Mounter) FindDiskByPage83(ctx context.Context, id string) (uint32, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return 0, errdefs.Errorf(errdefs.ErrInvalidArgument, "empty page 0x83 ID")
	}
	return m.findByIDs(ctx, "page 0x83 ID "+id, func(ids *disk.DiskIDs) bool {
		p := strings.TrimSpace(ids.Page83)
		if strings.EqualFold(p, id) {
			return true
		}
		words := strings.Fields(p)
		return len(words) > 1 && strings.EqualFold(words[len(words)-1], id)
	})
}

// FindDiskBySerial returns the disk whose serial number is serial,
// compared without case and without the space padding some buses add, and
// without the namespace suffix Windows adds to an NVMe serial (see
// serialMatches). For an EBS volume pass its ID without the dash
// ("vol0123…"): that is the NVMe serial AWS gives it, which
// aws-ebs-csi-driver matches.
func (m *Mounter) FindDiskBySerial(ctx context.Context, serial string) (uint32, error) {
	serial = strings.TrimSpace(serial)
	if serial == "" {
		return 0, errdefs.Errorf(errdefs.ErrInvalidArgument, "empty serial number")
	}
	return m.findByIDs(ctx, "serial number "+serial, func(ids *disk.DiskIDs) bool {
		return serialMatches(ids.SerialNumber, serial)
	})
}

// serialMatches tells whether a disk's reported serial number is want:
// equal without case and padding, or want followed by "_", hex digits and
// an optional ".". Windows reports an EBS volume on NVMe as the volume ID
// without its dash, then "_" and more: AWS's own PowerShell that maps
// Windows disks to EBS volumes strips "_[^ ]*$" from Get-Disk's
// SerialNumber (EC2 User Guide, "Map NVMe disks on Amazon EC2 Windows
// instance to volumes"), and aws-ebs-csi-driver matches with
// strings.Contains (@ 429e202e pkg/mounter/mount_windows_proxyV1.go,
// FindDevicePath). Only that suffix is accepted, not any containment, so
// "SN-1" never finds "SN-10", and an EUI in Windows' "XXXX_XXXX_….." form
// is not cut at its first "_".
func serialMatches(got, want string) bool {
	got = strings.TrimSpace(got)
	if strings.EqualFold(got, want) {
		return true
	}
	if len(got) <= len(want)+1 || !strings.EqualFold(got[:len(want)], want) || got[len(want)] != '_' {
		return false
	}
	rest := strings.TrimSuffix(got[len(want)+1:], ".")
	if rest == "" {
		return false
	}
	for _, r := range rest {
		if !isHexDigit(r) {
			return false
		}
	}
	return true
}

// FindDiskByNVMeEUI returns the NVMe disk whose namespace EUI is eui: 32
// hex digits (NGUID) or 16 (EUI-64), with or without an "eui." prefix,
// "_" grouping and a trailing ".". Windows reports an NVMe namespace's ID
// either as page 0x83 "eui.<hex>" or as a serial number in
// "XXXX_XXXX_…_XXXX." form; both are read. A 16-digit eui matches the
// first 16 digits of a 32-digit ID: GCE gives an NVMe disk's namespace
// identifier as a number (metadata nvmeNamespaceIdentifier), which is that
// prefix; pass fmt.Sprintf("%016x", id). (gcp-compute-persistent-disk-csi-driver
// @ b560165c pkg/mount-manager/safe-mounter-v1_windows.go: convertSerialToEUI,
// convertEUIToDecimal.)
func (m *Mounter) FindDiskByNVMeEUI(ctx context.Context, eui string) (uint32, error) {
	want, ok := NormalizeNVMeEUI(eui)
	if !ok || len(want) != 16 && len(want) != 32 {
		return 0, errdefs.Errorf(errdefs.ErrInvalidArgument, "NVMe EUI %q is not 16 or 32 hex digits", eui)
	}
	return m.findByIDs(ctx, "NVMe EUI "+eui, func(ids *disk.DiskIDs) bool {
		for _, cand := range []string{ids.Page83, ids.SerialNumber} {
			got, ok := NormalizeNVMeEUI(cand)
			if !ok || len(got) != 32 && len(got) != 16 {
				continue
			}
			if got == want || len(want) == 16 && len(got) == 32 && got[:16] == want {
				return true
			}
		}
		return false
	})
}

// NormalizeNVMeEUI returns an NVMe namespace ID in any of the forms
// Windows and clouds print it ("eui.0123…", "0123_4567_…_CDEF.", with
// spaces) as lower-case hex digits alone, and false if it is something
// else (no digits, or a character that is not a hex digit, "_", "." or a
// space).
func NormalizeNVMeEUI(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) >= 4 && strings.EqualFold(s[:4], "eui.") {
		s = s[4:]
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9', r >= 'a' && r <= 'f':
			b.WriteRune(r)
		case r >= 'A' && r <= 'F':
			b.WriteRune(r - 'A' + 'a')
		case r == '_' || r == '.' || r == ' ':
		default:
			return "", false
		}
	}
	return b.String(), b.Len() > 0
}

// findByIDs returns the one disk whose IDs match.
func (m *Mounter) findByIDs(ctx context.Context, what string, match func(*disk.DiskIDs) bool) (uint32, error) {
	ids, err := m.node.Disk().ListDiskIDs(ctx, &disk.ListDiskIDsRequest{})
	if err != nil {
		return 0, fmt.Errorf("list disk IDs: %w", err)
	}
	var found []uint32
	for n, id := range ids.DiskIDs {
		if id != nil && match(id) {
			found = append(found, n)
		}
	}
	return pick(found, what)
}

// pick returns the only disk found, or says why there is not exactly one.
func pick(found []uint32, what string) (uint32, error) {
	slices.Sort(found)
	switch len(found) {
	case 0:
		return 0, errdefs.Errorf(errdefs.ErrNotFound, "no disk with %s", what)
	case 1:
		return found[0], nil
	}
	return 0, errdefs.Errorf(errdefs.ErrFailedPrecondition, "disks %v all have %s; refusing to pick one", found, what)
}

// Rescan asks the node to look for new disks and changed sizes: after an
// attach the disk may not be listed yet, and after a cloud resize its new
// size may not be seen.
func (m *Mounter) Rescan(ctx context.Context) error {
	if _, err := m.node.Disk().Rescan(ctx, &disk.RescanRequest{}); err != nil {
		return fmt.Errorf("rescan disks: %w", err)
	}
	return nil
}

// FormatAndMount stages a disk: it brings it online, partitions it when it
// has no data partition, formats its volume when the volume is RAW (the
// proxy's filesystem: NTFS on Windows, the daemon's --linux-filesystem on
// Linux), and mounts the volume at target. It returns the volume ID.
//
// Every step is idempotent, so kubelet's retry after a timeout finishes
// the job, and a formatted volume is never formatted again: FormatVolume
// refuses one, and a "already formatted" answer from a format that raced
// another (a retry, another node call) counts as done once the volume
// reads formatted. Online comes before partitioning: partitioning an
// offline disk (a disk attached under the OfflineShared SAN policy, or
// staged again after an unstage took it offline) is what the drivers that
// partition first depend on the host to allow.
func (m *Mounter) FormatAndMount(ctx context.Context, diskNumber uint32, target string) (string, error) {
	d, v := m.node.Disk(), m.node.Volume()
	if _, err := d.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: diskNumber, IsOnline: true}); err != nil {
		return "", fmt.Errorf("bring disk %d online: %w", diskNumber, err)
	}
	if _, err := d.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: diskNumber}); err != nil {
		return "", fmt.Errorf("partition disk %d: %w", diskNumber, err)
	}
	vols, err := v.ListVolumesOnDisk(ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: diskNumber})
	if err != nil {
		return "", fmt.Errorf("list the volumes of disk %d: %w", diskNumber, err)
	}
	switch len(vols.VolumeIDs) {
	case 0:
		return "", errdefs.Errorf(errdefs.ErrFailedPrecondition, "disk %d has no volume after partitioning", diskNumber)
	case 1:
	default:
		// The proxy partitions with one data partition; more volumes mean
		// the disk was partitioned by someone else: do not pick one.
		return "", errdefs.Errorf(errdefs.ErrFailedPrecondition, "disk %d has %d volumes (%s); a CSI disk has one", diskNumber, len(vols.VolumeIDs), strings.Join(vols.VolumeIDs, ", "))
	}
	id := vols.VolumeIDs[0]
	if err := m.ensureFormatted(ctx, id); err != nil {
		return "", err
	}
	if parent := parentDir(target); parent != "" {
		if _, err := m.node.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: parent}); err != nil {
			return "", fmt.Errorf("create the parent of %s: %w", target, err)
		}
	}
	if _, err := v.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: target}); err != nil {
		return "", fmt.Errorf("mount volume %s at %s: %w", id, target, err)
	}
	m.log.V(2).Info("staged", "disk", diskNumber, "volume", id, "target", target)
	return id, nil
}

// ensureFormatted formats volume id unless it carries a filesystem.
func (m *Mounter) ensureFormatted(ctx context.Context, id string) error {
	v := m.node.Volume()
	f, err := v.IsVolumeFormatted(ctx, &volume.IsVolumeFormattedRequest{VolumeID: id})
	if err != nil {
		return fmt.Errorf("check the format of volume %s: %w", id, err)
	}
	if f.Formatted {
		return nil
	}
	m.log.V(2).Info("formatting", "volume", id)
	_, ferr := v.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: id})
	if ferr == nil {
		return nil
	}
	if errors.Is(ferr, errdefs.ErrFailedPrecondition) {
		// Refused as already formatted: someone else's format won the
		// race. Done if the volume now says so.
		if f, err := v.IsVolumeFormatted(ctx, &volume.IsVolumeFormattedRequest{VolumeID: id}); err == nil && f.Formatted {
			return nil
		}
	}
	return fmt.Errorf("format volume %s: %w", id, ferr)
}

// UnmountDeviceOptions say what UnmountDevice does besides unmounting.
type UnmountDeviceOptions struct {
	// Offline takes the disk offline afterwards, as aws-ebs, gcp-pd and
	// vsphere do on NodeUnstage (so the detach finds no open handle).
	Offline bool
}

// UnmountDevice unstages what FormatAndMount staged at target: it
// unmounts the volume (the proxy flushes it first, and a failed flush
// fails the unmount: the data would be lost on detach), removes target,
// and with o.Offline takes the disk offline. Nothing mounted at target is
// success (only the directory, if left, is removed), so a retry after a
// partial unstage finishes the job, except the offline step: once the
// volume is unmounted nothing names its disk any more, so a retry after a
// failed SetDiskState leaves the disk online (the detach still proceeds).
func (m *Mounter) UnmountDevice(ctx context.Context, target string, o UnmountDeviceOptions) error {
	v, fsys := m.node.Volume(), m.node.Filesystem()
	ex, err := fsys.PathExists(ctx, &filesystem.PathExistsRequest{Path: target})
	if err != nil {
		return fmt.Errorf("check %s: %w", target, err)
	}
	if !ex.Exists {
		return nil
	}
	id, err := v.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: target})
	switch {
	case errors.Is(err, errdefs.ErrNotFound):
		// Not mounted (any more): only the directory is left.
	case err != nil:
		return fmt.Errorf("find the volume at %s: %w", target, err)
	default:
		var diskNumber uint32
		if o.Offline {
			// Ask before unmounting: afterwards the volume has no path.
			n, err := v.GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: id.VolumeID})
			if err != nil {
				return fmt.Errorf("find the disk of volume %s: %w", id.VolumeID, err)
			}
			diskNumber = n.DiskNumber
		}
		if _, err := v.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: id.VolumeID, TargetPath: target}); err != nil {
			return fmt.Errorf("unmount volume %s from %s: %w", id.VolumeID, target, err)
		}
		m.log.V(2).Info("unmounted", "volume", id.VolumeID, "target", target)
		if err := m.removeDir(ctx, target); err != nil {
			return err
		}
		if o.Offline {
			if _, err := m.node.Disk().SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: diskNumber, IsOnline: false}); err != nil {
				return fmt.Errorf("take disk %d offline: %w", diskNumber, err)
			}
			m.log.V(2).Info("disk offline", "disk", diskNumber)
		}
		return nil
	}
	return m.removeDir(ctx, target)
}

// removeDir removes a staging directory, now an empty folder.
func (m *Mounter) removeDir(ctx context.Context, target string) error {
	// Not Force: an unmounted staging directory is empty; if it is not,
	// something wrote into the directory itself and that is kept.
	if _, err := m.node.Filesystem().Rmdir(ctx, &filesystem.RmdirRequest{Path: target}); err != nil && !errors.Is(err, errdefs.ErrNotFound) {
		return fmt.Errorf("remove %s: %w", target, err)
	}
	return nil
}

// VolumeIDFromMount returns the volume mounted at path, following a link
// (a publish path): what drivers call GetDeviceNameFromMount. A path where
// no volume is mounted is errdefs.ErrNotFound, however the proxy words it.
func (m *Mounter) VolumeIDFromMount(ctx context.Context, path string) (string, error) {
	id, err := m.node.Volume().GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: path})
	if err != nil {
		return "", fmt.Errorf("find the volume at %s: %w", path, err)
	}
	return id.VolumeID, nil
}

// DiskNumberFromMount returns the disk of the volume mounted at path
// (aws-ebs's GetDeviceNameFromMount); not mounted is errdefs.ErrNotFound.
func (m *Mounter) DiskNumberFromMount(ctx context.Context, path string) (uint32, error) {
	id, err := m.VolumeIDFromMount(ctx, path)
	if err != nil {
		return 0, err
	}
	n, err := m.node.Volume().GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: id})
	if err != nil {
		return 0, fmt.Errorf("find the disk of volume %s: %w", id, err)
	}
	return n.DiskNumber, nil
}

// Stats is a volume's capacity and use in bytes, as NodeGetVolumeStats
// reports them.
type Stats struct {
	Total, Used, Available int64
}

// VolumeStats returns the stats of the volume mounted at path, which may
// be the staging path or a publish link to it.
func (m *Mounter) VolumeStats(ctx context.Context, path string) (Stats, error) {
	id, err := m.VolumeIDFromMount(ctx, path)
	if err != nil {
		return Stats{}, err
	}
	s, err := m.node.Volume().GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id})
	if err != nil {
		return Stats{}, fmt.Errorf("stats of volume %s: %w", id, err)
	}
	return Stats{Total: s.TotalBytes, Used: s.UsedBytes, Available: s.TotalBytes - s.UsedBytes}, nil
}

// DiskSize returns a disk's size in bytes.
func (m *Mounter) DiskSize(ctx context.Context, diskNumber uint32) (int64, error) {
	s, err := m.node.Disk().GetDiskStats(ctx, &disk.GetDiskStatsRequest{DiskNumber: diskNumber})
	if err != nil {
		return 0, fmt.Errorf("size of disk %d: %w", diskNumber, err)
	}
	return s.TotalBytes, nil
}

// ResizeToFill grows the volume mounted at path (staging or publish) and
// its filesystem to fill its disk, after a rescan so that the node sees
// the disk's new size, and returns the volume's size afterwards. A gain
// under 100 MiB is skipped, as upstream skips it, so calling it again is
// harmless.
func (m *Mounter) ResizeToFill(ctx context.Context, path string) (int64, error) {
	if err := m.Rescan(ctx); err != nil {
		return 0, err
	}
	id, err := m.VolumeIDFromMount(ctx, path)
	if err != nil {
		return 0, err
	}
	if _, err := m.node.Volume().ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: id}); err != nil {
		return 0, fmt.Errorf("resize volume %s: %w", id, err)
	}
	s, err := m.node.Volume().GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id})
	if err != nil {
		return 0, fmt.Errorf("stats of volume %s: %w", id, err)
	}
	m.log.V(2).Info("resized", "volume", id, "bytes", s.TotalBytes)
	return s.TotalBytes, nil
}

// isHexDigit tells whether r is 0-9, a-f or A-F.
func isHexDigit(r rune) bool {
	return '0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F'
}
