//go:build windows && realnode

package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// The real-node kit: the checks of issue 11 (items 2, 5, 7, 10, 11) and of
// docs/windows-storage.md's unconfirmed list that only a real Windows node
// can settle. Build it anywhere with
//
//	GOOS=windows go test -c -tags realnode -o realnode.test.exe ./internal/host/windows/storage/
//
// and run it on the node in an elevated prompt:
//
//	.\realnode.test.exe -test.run RealNodeKit -test.v
//
// It makes its own 1 GiB VHDs (virtdisk.dll), never touches other disks
// except to read them, and removes the VHDs when it ends. It prints a
// report to paste into the issue: each check confirmed / differs / could
// not run, with the values observed. docs/windows.md says how.

// kitStatus is a check's outcome.
type kitStatus string

const (
	kitConfirmed kitStatus = "confirmed"
	kitDiffers   kitStatus = "differs"
	kitNotRun    kitStatus = "could not run"
)

// kitReport collects the checks' outcomes.
type kitReport struct {
	rows []string
}

func (r *kitReport) add(check string, s kitStatus, format string, args ...any) {
	obs := strings.ReplaceAll(fmt.Sprintf(format, args...), "|", `\|`)
	r.rows = append(r.rows, fmt.Sprintf("| %s | %s | %s |", check, s, strings.ReplaceAll(obs, "\n", " ")))
}

func (r *kitReport) print() {
	fmt.Println()
	fmt.Println("### csi-node-proxy real-node kit report")
	if v, err := windows.GetVersion(); err == nil {
		fmt.Printf("Windows %d.%d build %d, %s\n\n", byte(v), uint8(v>>8), v>>16, time.Now().UTC().Format(time.RFC3339))
	}
	fmt.Println("| check | result | observed |")
	fmt.Println("|---|---|---|")
	for _, row := range r.rows {
		fmt.Println(row)
	}
	fmt.Println()
}

// errCode renders an error with its Win32 code, if any.
func errCode(err error) string {
	if err == nil {
		return "success"
	}
	if n, ok := errnoOf(err); ok {
		return fmt.Sprintf("Win32 %d (%v)", n, err)
	}
	return err.Error()
}

func TestRealNodeKit(t *testing.T) {
	r := &kitReport{}
	defer r.print()
	if underWine() {
		r.add("environment", kitNotRun, "running under Wine; the kit needs real Windows")
		t.Skip("Wine")
	}
	if !windows.GetCurrentProcessToken().IsElevated() {
		r.add("environment", kitNotRun, "not elevated; run from an administrator prompt")
		t.Skip("not elevated")
	}
	b := realBackend(t)
	kitLocations(t, b, r)
	kitIDs(t, b, r)
	kitOfflineDisk(t, b, r)
	kitNewVolume(t, b, r)
	kitReadOnly(t, b, r)
}

// kitLocations (item 5, §C.1): per disk, the bus type, the SCSI address,
// MSFT_Disk.Location parsed with upstream's rule, and ListDiskLocations.
func kitLocations(t *testing.T, b *Backend, r *kitReport) {
	locs, err := b.Disk().ListDiskLocations(ctx)
	if err != nil {
		r.add("item 5: ListDiskLocations", kitNotRun, "ListDiskLocations: %v", err)
		return
	}
	rows, err := b.sys.query(ctx, wmi.Query(classDisk).Select("Number", "Location", "BusType"))
	if err != nil {
		r.add("item 5: MSFT_Disk.Location", kitNotRun, "query: %v", err)
		return
	}
	for _, row := range rows {
		n, _ := row.Uint32("Number")
		loc, _ := row.String("Location")
		bus, _ := row.Uint16("BusType")
		upstream, ok := parseLocation(loc)
		ours, have := locs[n]
		check := fmt.Sprintf("item 5 / §C.1: disk %d location (BusType %d)", n, bus)
		switch {
		case !ok && !have:
			r.add(check, kitConfirmed, "Location %q: omitted by upstream and by us", loc)
		case ok && have && upstream == ours:
			r.add(check, kitConfirmed, "Location %q → %+v", loc, ours)
		default:
			r.add(check, kitDiffers, "Location %q → upstream %+v (listed %v); ours %+v (listed %v); SCSI address: %s", loc, upstream, ok, ours, have, scsiAddressOf(b, n))
		}
	}
}

func scsiAddressOf(b *Backend, n uint32) string {
	s := ""
	err := b.onDisk(n, modeQuery, func(h handle) error {
		out, err := b.sys.ioctl(h, ioctlSCSIGetAddress, nil, 8)
		if err != nil {
			return err
		}
		a, err := parseSCSIAddress(out)
		s = fmt.Sprintf("%+v", a)
		return err
	})
	if err != nil {
		return errCode(err)
	}
	return s
}

// kitIDs (§C.2): ListDiskIDs' serial against MSFT_Disk.SerialNumber.
func kitIDs(t *testing.T, b *Backend, r *kitReport) {
	ids, err := b.Disk().ListDiskIDs(ctx)
	if err != nil {
		r.add("§C.2: serial numbers", kitNotRun, "ListDiskIDs: %v", err)
		return
	}
	rows, err := b.sys.query(ctx, wmi.Query(classDisk).Select("Number", "SerialNumber"))
	if err != nil {
		r.add("§C.2: serial numbers", kitNotRun, "query: %v", err)
		return
	}
	for _, row := range rows {
		n, _ := row.Uint32("Number")
		serial, _ := row.String("SerialNumber")
		s := kitConfirmed
		if serial != ids[n].SerialNumber {
			s = kitDiffers
		}
		r.add(fmt.Sprintf("§C.2: disk %d serial", n), s, "MSFT_Disk.SerialNumber %q, ours %q, page83 %q", serial, ids[n].SerialNumber, ids[n].Page83)
	}
}

// kitOfflineDisk (item 2): the layout IOCTL on an offline disk; what
// Initialize does on an offline RAW disk; PartitionDisk on an offline
// RAW disk and on an offline partitioned one.
func kitOfflineDisk(t *testing.T, b *Backend, r *kitReport) {
	d := b.Disk()
	n := newTestVHD(t).disk()
	if err := d.SetDiskOnline(ctx, n, false); err != nil {
		r.add("item 2: offline RAW disk", kitNotRun, "SetDiskOnline(false): %v", err)
		return
	}
	var layoutErr error
	_ = b.onDisk(n, modeQuery, func(h handle) error { _, layoutErr = b.driveLayout(h, n); return nil })
	s := kitConfirmed
	if layoutErr != nil {
		s = kitDiffers
	}
	r.add("item 2: IOCTL_DISK_GET_DRIVE_LAYOUT_EX on an offline RAW disk", s, "%s (if it differs, the provider's view is used)", errCode(layoutErr))
	_, err := b.sys.call(ctx, diskQuery(n), "Initialize", wmi.Arg("PartitionStyle", uint16(msftPartitionStyleGPT)))
	on, _ := d.IsDiskOnline(ctx, n)
	r.add("item 2: MSFT_Disk.Initialize on an offline RAW disk (upstream's order)", kitConfirmed, "%s; disk online afterwards: %v (we bring it online first)", errCode(err), on)

	m := newTestVHD(t).disk()
	_ = d.SetDiskOnline(ctx, m, false)
	err = d.PartitionDisk(ctx, m)
	on, _ = d.IsDiskOnline(ctx, m)
	s = kitConfirmed
	if err != nil || !on {
		s = kitDiffers
	}
	r.add("item 2: PartitionDisk on an offline RAW disk", s, "%s; online afterwards: %v", errCode(err), on)
	if err == nil {
		_ = d.SetDiskOnline(ctx, m, false)
		err = d.PartitionDisk(ctx, m)
		on, _ = d.IsDiskOnline(ctx, m)
		s = kitConfirmed
		if err != nil || on {
			s = kitDiffers
		}
		r.add("item 2: PartitionDisk on an offline partitioned disk (re-stage)", s, "%s; left offline: %v", errCode(err), !on)
	}
}

// kitNewVolume (item 10, item 11, §C.5, §C.8, §C.9): GetVolumeInformation
// right after CreatePartition, FileSystemType, Format's duration, the
// MSR partition, UniqueId, sizes, UpdateHostStorageCache's duration.
func kitNewVolume(t *testing.T, b *Backend, r *kitReport) {
	d, v := b.Disk(), b.Volume()
	n := newTestVHD(t).disk()
	if err := d.SetDiskOnline(ctx, n, true); err != nil {
		r.add("item 10: new volume", kitNotRun, "SetDiskOnline: %v", err)
		return
	}
	if err := d.PartitionDisk(ctx, n); err != nil {
		r.add("item 10: new volume", kitNotRun, "PartitionDisk: %v", err)
		return
	}
	codes := map[string]int{}
	var id string
	for deadline := time.Now().Add(volumeArrivalTimeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ids, err := v.ListVolumesOnDisk(ctx, n, 0)
		if err != nil || len(ids) != 1 {
			codes["ListVolumesOnDisk: "+fmt.Sprint(len(ids), " volumes ", errCode(err))]++
			continue
		}
		id = ids[0]
		_, err = b.sys.fileSystemName(volumeRoot(id))
		codes["GetVolumeInformation: "+errCode(err)]++
		if isErrno(err, errUnrecognizedVolume) {
			break
		}
	}
	s := kitConfirmed
	if id == "" || len(codes) > 2 {
		s = kitDiffers
	}
	r.add("item 10 / §C.8: answers while the new volume arrives (then RAW = 1005)", s, "%v", codes)
	if id == "" {
		return
	}
	ok, err := v.IsVolumeFormatted(ctx, id)
	fsType, ferr := volumeHost{b}.fileSystemType(ctx, id)
	r.add("item 10: IsVolumeFormatted(new) vs MSFT_Volume.FileSystemType", statusIf(err == nil && !ok && ferr == nil && fsType == 0), "ours %v, %s; FileSystemType %d, %s", ok, errCode(err), fsType, errCode(ferr))
	begin := time.Now()
	err = v.FormatVolume(ctx, id)
	r.add("item 11: MSFT_Volume.Format duration (1 GiB, quick)", statusIf(err == nil), "%v, %s (default limit %v)", time.Since(begin).Round(time.Millisecond), errCode(err), defaultWMILimits.format)
	ok, err = v.IsVolumeFormatted(ctx, id)
	fsType, ferr = volumeHost{b}.fileSystemType(ctx, id)
	r.add("item 10: IsVolumeFormatted(formatted) vs FileSystemType", statusIf(err == nil && ok && ferr == nil && fsType != 0), "ours %v, %s; FileSystemType %d, %s", ok, errCode(err), fsType, errCode(ferr))
	begin = time.Now()
	err = d.Rescan(ctx)
	r.add("§C.7 / item 11: UpdateHostStorageCache duration", statusIf(err == nil), "%v, %s (default limit %v)", time.Since(begin).Round(time.Millisecond), errCode(err), defaultWMILimits.method)

	parts, err := b.sys.query(ctx, wmi.Query(classPartition).Select("PartitionNumber", "GptType", "Size").Where("DiskNumber", n))
	r.add("§C.5 / §C.19: partitions after Initialize(GPT) on 1 GiB (MSR? GptType braces?)", statusIf(err == nil), "%v %s", parts, errCode(err))
	vols, err := b.sys.query(ctx, wmi.Query(classVolume).Select("UniqueId", "Path", "Size", "SizeRemaining").Where("UniqueId", id))
	total, used, serr := v.VolumeStats(ctx, id)
	r.add("§C.8 / §C.9: MSFT_Volume UniqueId/Size/SizeRemaining vs ours", statusIf(err == nil && len(vols) == 1 && serr == nil), "volume %s; provider %v %s; GetDiskFreeSpaceEx total %d, used %d, %s", id, vols, errCode(err), total, used, errCode(serr))
}

func statusIf(ok bool) kitStatus {
	if ok {
		return kitConfirmed
	}
	return kitDiffers
}

// attachVirtualDiskFlagReadOnly is ATTACH_VIRTUAL_DISK_FLAG_READ_ONLY.
const attachVirtualDiskFlagReadOnly = 0x1

// kitReadOnly (item 7): a formatted, mounted volume on a VHD attached
// read-only: the codes of the read-write open, the flush and
// IOCTL_DISK_IS_WRITABLE, and WriteVolumeCache and UnmountVolume.
func kitReadOnly(t *testing.T, b *Backend, r *kitReport) {
	vhd := newTestVHD(t)
	_, id := stageVHD(t, b, vhd)
	vhd.detach()
	ap := attachVirtualDiskParameters{Version: attachVirtualDiskVersion1}
	if err := attachVirtualDisk(vhd.h, nil, attachVirtualDiskFlagNoLetter|attachVirtualDiskFlagReadOnly, 0, &ap, nil); err != nil {
		r.add("item 7: read-only volume", kitNotRun, "AttachVirtualDisk(read-only): %v", err)
		return
	}
	n := vhd.disk()
	_ = b.Disk().SetDiskOnline(ctx, n, true)
	if got := waitForVolume(t, b, n); !strings.EqualFold(got, id) {
		r.add("item 7: read-only volume", kitNotRun, "the volume came back as %s, not %s", got, id)
		return
	}
	mnt := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	mnt, _ = hostpath.Windows.Clean(mnt)
	if err := b.Volume().MountVolume(ctx, id, mnt); err != nil {
		r.add("item 7: read-only volume", kitNotRun, "MountVolume: %v", err)
		return
	}
	var openErr, flushErr, writableErr error
	h, openErr := b.sys.open(volumeDevice(id), modeReadWrite)
	if openErr == nil {
		flushErr = b.sys.flush(h)
		b.closeHandle(h)
	}
	_ = b.onVolume(id, modeQuery, func(h handle) error { _, writableErr = b.sys.ioctl(h, ioctlDiskIsWritable, nil, 0); return nil })
	roSeen := isErrno(writableErr, errWriteProtect)
	r.add("item 7: codes on a read-only volume", statusIf(roSeen), "read-write open: %s; flush: %s; IOCTL_DISK_IS_WRITABLE: %s", errCode(openErr), errCode(flushErr), errCode(writableErr))
	err := b.Volume().FlushVolume(ctx, id)
	r.add("item 7: WriteVolumeCache on a read-only volume", statusIf(err == nil), "%s", errCode(err))
	err = b.Volume().UnmountVolume(ctx, id, mnt)
	_, atErr := b.Volume().VolumeAt(ctx, mnt)
	r.add("item 7: UnmountVolume on a read-only volume", statusIf(err == nil && atErr != nil), "%s; mount point afterwards: %s", errCode(err), errCode(atErr))
}
