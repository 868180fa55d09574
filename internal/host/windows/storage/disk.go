package storage

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// diskHost is the disk group backend.
type diskHost struct{ b *Backend }

// forEachDisk opens every present disk by its device interface path and
// calls fn with its number. A disk that disappears between enumeration and
// open (hot removal) is skipped; any other failure fails the call, as
// upstream does, rather than silently hiding a disk.
func (d diskHost) forEachDisk(ctx context.Context, fn func(h handle, n uint32, path string) error) error {
	b := d.b
	paths, err := b.sys.diskInterfaces()
	if err != nil {
		return osError("enumerate disk interfaces", err)
	}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := b.sys.open(p, modeQuery)
		if isGone(err) {
			continue
		}
		if err != nil {
			return osError("open disk "+p, err)
		}
		err = func() error {
			defer b.closeHandle(h)
			dn, err := b.deviceNumber(h, p)
			if err != nil {
				return err
			}
			return fn(h, dn.DeviceNumber, p)
		}()
		if err != nil {
			return err
		}
	}
	return nil
}

// ListDiskLocations implements disk.Host with IOCTL_SCSI_GET_ADDRESS on
// every disk, reproducing what upstream parses out of MSFT_Disk.Location
// for SCSI disks: Adapter is the port (adapter) number, Target the target
// ID, LUNID the LUN, each in decimal, and Bus is "" because upstream drops
// the "Port N" part of Location (fact sheet §1.2). Disks that do not
// answer the IOCTL (not on a SCSI-like bus) are omitted, as upstream omits
// disks without a Location.
//
// NVMe disks (STORAGE_DEVICE_DESCRIPTOR.BusType 17) are the exception.
// The IOCTL answers there with LUN 0 (azuredisk-csi-driver's own
// pkg/os/disk/disk.go says so of Azure's NVMe disks), where upstream's
// Location for NVMe, "Integrated : Bus X : Device 0 : Function 0 :
// Adapter 0", yields Adapter "0", Bus X and empty Target and LUNID; a
// "0" would let azuredisk's FindDiskByLun("0") pick an NVMe disk, even
// the OS disk. The PCI bus number has no Win32 equivalent the backend
// already reads, so for NVMe disks alone MSFT_Disk.Location is read (one
// query, only on hosts that have NVMe disks) and parsed with upstream's
// rule; an NVMe disk without a usable Location is omitted, as upstream
// omits it. A disk whose device path names the vendor "NVMe" (how
// Windows' SCSI translation presents an NVMe namespace, and how
// azuredisk-csi-driver tells one) counts as NVMe whatever bus type it
// reports, since its SCSI LUN is just as meaningless.
//
// For NVMe disks the model (not the wire) also gets the namespace ID and
// product that the device path carries (parseNVMeInstance), so that
// library mode's mounter can apply Azure's LUN rule.
func (d diskHost) ListDiskLocations(ctx context.Context) (map[uint32]disk.DiskLocation, error) {
	out := map[uint32]disk.DiskLocation{}
	var nvme []uint32
	nvmePaths := map[uint32]string{}
	err := d.forEachDisk(ctx, func(h handle, n uint32, path string) error {
		bus, err := d.busType(h, path)
		if err != nil {
			return err
		}
		if bus == busTypeNVMe || isNVMeInstance(path) {
			nvme = append(nvme, n)
			nvmePaths[n] = path
			return nil
		}
		buf, err := d.b.sys.ioctl(h, ioctlSCSIGetAddress, nil, 8)
		if isUnsupported(err) {
			return nil
		}
		if err != nil {
			return osError("IOCTL_SCSI_GET_ADDRESS on "+path, err)
		}
		a, err := parseSCSIAddress(buf)
		if err != nil {
			return fmt.Errorf("disk %d: %w", n, err)
		}
		out[n] = disk.DiskLocation{
			Adapter: strconv.Itoa(int(a.PortNumber)),
			Target:  strconv.Itoa(int(a.TargetID)),
			LUNID:   strconv.Itoa(int(a.Lun)),
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(nvme) == 0 {
		return out, nil
	}
	rows, err := d.b.sys.query(ctx, wmi.Query(classDisk).Select("Number", "Location"))
	if err != nil {
		return nil, fmt.Errorf("read MSFT_Disk.Location for the NVMe disks %v: %w", nvme, err)
	}
	for _, r := range rows {
		num, err := r.Uint32("Number")
		if err != nil || !slices.Contains(nvme, num) || r.IsNull("Location") {
			continue
		}
		loc, err := r.String("Location")
		if err != nil {
			continue
		}
		if l, ok := parseLocation(loc); ok {
			l.NVMeNamespaceID, l.Product, _ = parseNVMeInstance(nvmePaths[num])
			out[num] = l
		}
	}
	return out, nil
}

// isNVMeInstance tells whether a disk's device path (or PnP device ID)
// names the vendor "NVMe": Windows' SCSI translation of an NVMe namespace
// (stornvme) gives it the hardware ID "disk&ven_nvme&prod_<product>".
// azuredisk-csi-driver tells an NVMe disk the same way
// (kubernetes-sigs/azuredisk-csi-driver @ d983d613 pkg/os/disk/disk.go,
// isNVMeDisk).
func isNVMeInstance(path string) bool {
	return strings.Contains(strings.ToLower(path), "ven_nvme")
}

// parseNVMeInstance reads an NVMe disk's namespace ID and product from its
// device interface path, the value MSFT_Disk.Path and
// CM_Get_Device_Interface_List both give, in the form
// `\\?\scsi#disk&ven_nvme&prod_<product>#<instance>#{<interface GUID>}`
// (or the PnP device ID `SCSI\DISK&VEN_NVME&PROD_<product>\<instance>`).
// The namespace ID is the decimal number ending the instance ID, after a
// "0" field ("6&ca10229&0&000002" is namespace 2): that is where
// azuredisk-csi-driver reads it (@ d983d613 pkg/os/disk/disk.go,
// nvmeNSIDRegex and getNVMeLunFromPath; since 41048465), and the only
// source on record for Azure's numbering. Windows offers no query that
// answers "which namespace is this disk": IOCTL_STORAGE_QUERY_PROPERTY
// with StorageDeviceProtocolSpecificProperty and NVMeDataTypeIdentify
// takes a namespace ID as input (ProtocolDataRequestSubValue, Learn
// "STORAGE_PROTOCOL_NVME_DATA_TYPE") and returns that namespace's
// Identify data, and IOCTL_SCSI_GET_ADDRESS reads LUN 0 on Azure's NVMe
// disks. Unconfirmed: that the number is decimal rather than hex (the two
// agree below 10; azuredisk parses decimal), and that it equals the NSID
// the controller reports (Azure's Linux rules number data disks NSID − 2,
// Azure/azure-vm-utils @ 2fdf8dd1 udev/80-azure-disk.rules, which fits a
// Windows number of NSID − 1).
//
// The product is the "prod_" part, lower-cased as the path holds it
// ("msft_nvme_accele"). ok is false, with zero values, for a path that is
// not an NVMe disk's or whose instance ID does not end that way; a
// namespace ID of 0 is no namespace, as azuredisk refuses it.
func parseNVMeInstance(path string) (nsid uint32, product string, ok bool) {
	if !isNVMeInstance(path) {
		return 0, "", false
	}
	p := strings.ToLower(path)
	p = strings.TrimPrefix(p, `\\?\`)
	sep := "#"
	if !strings.Contains(p, "#") {
		sep = `\`
	}
	parts := strings.Split(p, sep)
	if len(parts) < 3 {
		return 0, "", false
	}
	for _, f := range strings.Split(parts[1], "&") {
		if v, found := strings.CutPrefix(f, "prod_"); found {
			product = v
		}
	}
	inst := strings.Split(parts[2], "&")
	if len(inst) < 2 || inst[len(inst)-2] != "0" {
		return 0, "", false
	}
	last := inst[len(inst)-1]
	if last == "" || strings.Trim(last, "0123456789") != "" {
		return 0, "", false
	}
	n, err := strconv.ParseUint(last, 10, 32)
	if err != nil || n == 0 {
		return 0, "", false
	}
	return uint32(n), product, true
}

// busType reads STORAGE_DEVICE_DESCRIPTOR.BusType of an open disk. A disk
// that does not answer the query has an unknown bus (0) and is treated as
// before bus types were looked at.
func (d diskHost) busType(h handle, path string) (uint32, error) {
	buf, err := d.b.queryProperty(h, storageDeviceProperty)
	switch {
	case isUnsupported(err):
		return 0, nil
	case err != nil:
		return 0, osError("IOCTL_STORAGE_QUERY_PROPERTY(StorageDeviceProperty) on "+path, err)
	}
	bus, err := parseBusType(buf)
	if err != nil {
		return 0, nil // a short descriptor says nothing about the bus
	}
	return bus, nil
}

// parseLocation applies upstream's parse of MSFT_Disk.Location
// (kubernetes-csi/csi-proxy pkg/os/disk/api.go ListDiskLocations, master
// eeba470): split on ":"; fewer than five parts is no location; each part
// trimmed and split on single spaces, and only parts of exactly two words
// count: Adapter, Target, LUN and Bus fill the fields, any other name
// (Port, Device, Function) is ignored, as are one- and three-word parts
// ("Integrated", "PCI Slot 3"). ok is whether any two-word part was seen.
func parseLocation(s string) (l disk.DiskLocation, ok bool) {
	parts := strings.Split(s, ":")
	if len(parts) < 5 {
		return disk.DiskLocation{}, false
	}
	for _, p := range parts {
		words := strings.Split(strings.TrimSpace(p), " ")
		if len(words) != 2 {
			continue
		}
		ok = true
		v := strings.TrimSpace(words[1])
		switch strings.TrimSpace(words[0]) {
		case "Adapter":
			l.Adapter = v
		case "Target":
			l.Target = v
		case "LUN":
			l.LUNID = v
		case "Bus":
			l.Bus = v
		}
	}
	if !ok {
		return disk.DiskLocation{}, false
	}
	return l, true
}

// ListDiskIDs implements disk.Host. Page83 comes from
// IOCTL_STORAGE_QUERY_PROPERTY(StorageDeviceIdProperty) with upstream's
// first-match rule; the serial number from
// IOCTL_STORAGE_QUERY_PROPERTY(StorageDeviceProperty), where upstream
// reads MSFT_Disk.SerialNumber. A disk that has no device identification
// page gets an empty Page83 instead of failing the whole call (upstream
// fails it). So does a disk whose descriptor is malformed (a driver bug on
// one disk): its identifier is left empty, the problem goes to the
// backend's Warnf, and the other disks are still listed, because one bad
// disk must not hide every disk from the driver looking for its own.
// A failed IOCTL other than "not supported" still fails the call.
func (d diskHost) ListDiskIDs(ctx context.Context) (map[uint32]disk.DiskIDs, error) {
	out := map[uint32]disk.DiskIDs{}
	err := d.forEachDisk(ctx, func(h handle, n uint32, path string) error {
		var ids disk.DiskIDs
		for _, r := range diskIDReads {
			buf, err := d.b.queryProperty(h, r.property)
			switch {
			case isUnsupported(err):
			case err != nil:
				return osError("IOCTL_STORAGE_QUERY_PROPERTY("+r.propertyName+") on "+path, err)
			default:
				var id string
				if id, err = r.parse(buf); err != nil {
					d.b.warnf("ListDiskIDs: disk %d (%s) is listed with an empty %s: its %s is malformed: %v", n, path, r.field, r.descriptor, err)
				}
				r.set(&ids, id)
			}
		}
		out[n] = ids
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DiskSize implements disk.Host with IOCTL_DISK_GET_LENGTH_INFO, the call
// Learn names for a disk's total size. It works on offline disks. After a
// disk grows underneath Windows the old size may be reported until a
// Rescan, as with upstream's MSFT_Disk.Size.
func (d diskHost) DiskSize(_ context.Context, n uint32) (int64, error) {
	var size int64
	err := d.b.onDisk(n, modeRead, func(h handle) error {
		out, err := d.b.sys.ioctl(h, ioctlDiskGetLengthInfo, nil, 8)
		if err != nil {
			return osError(fmt.Sprintf("IOCTL_DISK_GET_LENGTH_INFO on disk %d", n), err)
		}
		size, err = parseLengthInfo(out)
		return err
	})
	return size, err
}

// diskIDRead is one identifier ListDiskIDs reads from a storage
// property of each disk.
type diskIDRead struct {
	property     uint32 // the STORAGE_PROPERTY_ID queried
	propertyName string // its name, for errors
	parse        func([]byte) (string, error)
	field        string // the identifier, for warnings
	descriptor   string // what the property returns, for warnings
	set          func(*disk.DiskIDs, string)
}

// diskIDReads are ListDiskIDs' reads, in order: page 83 from the device
// identification descriptor, then the serial number from the device
// descriptor.
var diskIDReads = []diskIDRead{
	{storageDeviceIDProperty, "StorageDeviceIdProperty", parsePage83, "page83", "device identification descriptor",
		func(ids *disk.DiskIDs, v string) { ids.Page83 = v }},
	{storageDeviceProperty, "StorageDeviceProperty", parseSerialNumber, "serial number", "device descriptor",
		func(ids *disk.DiskIDs, v string) { ids.SerialNumber = v }},
}

// IsDiskOnline implements disk.Host with IOCTL_DISK_GET_DISK_ATTRIBUTES:
// online is DISK_ATTRIBUTE_OFFLINE clear. The IOCTL reads the disk's own
// state, which the storage provider's cached MSFT_Disk.IsOffline may lag.
func (d diskHost) IsDiskOnline(_ context.Context, n uint32) (bool, error) {
	attrs, err := d.attributes(n)
	return err == nil && attrs&diskAttributeOffline == 0, err
}

// attributes opens disk n for query and reads its
// IOCTL_DISK_GET_DISK_ATTRIBUTES flags: the one read behind IsDiskOnline
// and IsDiskReadOnly.
func (d diskHost) attributes(n uint32) (uint64, error) {
	var attrs uint64
	err := d.b.onDisk(n, modeQuery, func(h handle) error {
		var err error
		attrs, err = d.b.diskAttributes(h, n)
		return err
	})
	return attrs, err
}

// SetDiskOnline implements disk.Host. The state is read with the IOCTL
// (no WMI round trip when nothing needs doing); the change is made with
// MSFT_Disk.Online/Offline, as upstream does, not with
// IOCTL_DISK_SET_DISK_ATTRIBUTES: whether the IOCTL also dismounts the
// volumes and keeps the storage provider's view in step the way the WMI
// methods do is unconfirmed (fact sheet §1.5, §C.4).
func (d diskHost) SetDiskOnline(ctx context.Context, n uint32, online bool) error {
	method := "Offline"
	if online {
		method = "Online"
	}
	return d.change(ctx, n, d.IsDiskOnline, online, method)
}

// change calls MSFT_Disk method (with in) on disk n unless is reports
// that the disk already has the wanted value: SetDiskOnline and
// SetDiskReadOnly, which read with the IOCTL so that a call with nothing
// to do makes no WMI round trip.
func (d diskHost) change(ctx context.Context, n uint32, is func(context.Context, uint32) (bool, error), want bool, method string, in ...wmi.Param) error {
	cur, err := is(ctx, n)
	if err != nil || cur == want {
		return err
	}
	_, err = d.b.storageCall(ctx, diskQuery(n), method, in...)
	return err
}

// IsDiskReadOnly implements disk.Host with IOCTL_DISK_GET_DISK_ATTRIBUTES:
// DISK_ATTRIBUTE_READ_ONLY, the attribute MSFT_Disk.IsReadOnly shows.
func (d diskHost) IsDiskReadOnly(_ context.Context, n uint32) (bool, error) {
	attrs, err := d.attributes(n)
	return err == nil && attrs&diskAttributeReadOnly != 0, err
}

// SetDiskReadOnly implements disk.Host as upstream's v2 library does
// (kubernetes-csi/csi-proxy PR #438, commit 874f535, pkg/disk/hostapi):
// the attribute is read first and nothing is done when it already has the
// wanted value; the change is MSFT_Disk.SetAttributes(IsReadOnly), which
// persists and keeps the storage provider's view in step, for the same
// reason SetDiskOnline uses MSFT_Disk.Online rather than
// IOCTL_DISK_SET_DISK_ATTRIBUTES (whose side effects are unconfirmed,
// fact sheet windows-apis.md). The read uses the IOCTL, as IsDiskOnline.
func (d diskHost) SetDiskReadOnly(ctx context.Context, n uint32, readOnly bool) error {
	return d.change(ctx, n, d.IsDiskReadOnly, readOnly, "SetAttributes", wmi.Arg("IsReadOnly", readOnly))
}

// Rescan implements disk.Host with MSFT_StorageSetting.UpdateHostStorageCache,
// as upstream: it refreshes the storage provider's view of disks,
// partitions and volumes (new LUNs, new sizes). IOCTL_DISK_UPDATE_PROPERTIES
// would only re-read one disk's partition table.
func (d diskHost) Rescan(ctx context.Context) error { return d.b.updateCache(ctx) }

// diskQuery selects MSFT_Disk number n. MSFT_Disk.Number is the same
// number as \\.\PhysicalDriveN and IOCTL_STORAGE_GET_DEVICE_NUMBER's
// DeviceNumber.
func diskQuery(n uint32) *wmi.WQL { return wmi.Query(classDisk).Where("Number", n) }

// partitionQuery selects one MSFT_Partition.
func partitionQuery(diskNumber, partitionNumber uint32) *wmi.WQL {
	return wmi.Query(classPartition).Where("DiskNumber", diskNumber).Where("PartitionNumber", partitionNumber)
}

// MSFT_Disk.PartitionStyle values (not PARTITION_STYLE, which numbers
// them differently).
const (
	msftPartitionStyleRAW = 0
	msftPartitionStyleMBR = 1
	msftPartitionStyleGPT = 2
)

// PartitionDisk implements disk.Host like upstream: initialise a RAW disk
// as GPT, then create one basic-data partition using the whole disk,
// unless a data partition exists already, in which case nothing is done.
//
// The reads come first, and work on an offline disk: gcp-pd, aws-ebs and
// vsphere call PartitionDisk before SetDiskState(online), and re-stage
// disks their NodeUnstage took offline, so an offline disk that already
// has its data partition must succeed without being touched, as upstream
// (which reads MSFT_Disk.PartitionStyle and MSFT_Partition, both readable
// offline) succeeds. The disk's offline attribute and its partition table
// (IOCTL_DISK_GET_DRIVE_LAYOUT_EX) decide, so a second call costs two
// IOCTLs and no WMI; when the IOCTL cannot read an offline disk's table,
// the storage provider's view decides, as upstream's does.
//
// The writes are WMI, because MSFT_Disk.Initialize and CreatePartition
// also take care of alignment, the Microsoft Reserved partition and volume
// arrival, which raw IOCTL_DISK_CREATE_DISK/SET_DRIVE_LAYOUT_EX would
// leave to us (fact sheet §1.6). An offline disk that needs them (a RAW
// disk left offline by the OfflineShared SAN policy) is brought online
// first (MSFT_Disk.Online) and its table read again: what Initialize and
// CreatePartition do on an offline disk is unconfirmed, and the disk must
// be online for the driver's next step anyway. A disk still offline after
// that is errdefs.ErrFailedPrecondition, with nothing written.
func (d diskHost) PartitionDisk(ctx context.Context, n uint32) error {
	b := d.b
	offline, layout, err := d.readLayout(ctx, n)
	if err != nil {
		return err
	}
	if _, ok := layout.dataPartition(); ok {
		return nil // already done: kubelet retries NodeStage, drivers re-stage
	}
	if offline {
		if _, err := b.storageCall(ctx, diskQuery(n), "Online"); err != nil {
			return fmt.Errorf("bring offline disk %d online before partitioning it: %w", n, err)
		}
		if offline, layout, err = d.readLayout(ctx, n); err != nil {
			return err
		}
		if offline {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "disk %d is still offline after MSFT_Disk.Online; it was not partitioned", n)
		}
		if _, ok := layout.dataPartition(); ok {
			return nil
		}
	}
	if layout.Style == partitionStyleRAW {
		_, err := b.storageCall(ctx, diskQuery(n), "Initialize", wmi.Arg("PartitionStyle", uint16(msftPartitionStyleGPT)))
		if err != nil && !wmi.HasCode(err, wmi.DiskAlreadyInitialized) {
			return fmt.Errorf("initialize disk %d as GPT: %w", n, err)
		}
		layout.Style = partitionStyleGPT
	}
	args := []wmi.Param{
		wmi.Arg("UseMaximumSize", true),
		wmi.Arg("AssignDriveLetter", false),
		wmi.Arg("IsHidden", false),
		wmi.Arg("IsActive", false),
	}
	if layout.Style == partitionStyleGPT {
		// Braced, as upstream passes it. On an MBR disk the parameter is
		// not valid (41006), and the provider's default type is used.
		args = append(args, wmi.Arg("GptType", "{"+gptBasicData+"}"))
	}
	// 42002 (access path already in use) means the partition was created
	// but a drive letter could not be given; no letter is asked for, but
	// upstream tolerates it and so do we.
	if _, err := b.storageCall(ctx, diskQuery(n), "CreatePartition", args...); err != nil && !wmi.HasCode(err, wmi.AccessPathAlreadyInUse) {
		return fmt.Errorf("create a partition on disk %d: %w", n, err)
	}
	if _, err := b.storageCall(ctx, diskQuery(n), "Refresh"); err != nil {
		return fmt.Errorf("refresh disk %d after creating its partition: %w", n, err)
	}
	var created partition
	err = b.onDisk(n, modeQuery, func(h handle) error {
		l, err := b.driveLayout(h, n)
		if err != nil {
			return err
		}
		var ok bool
		if created, ok = l.dataPartition(); !ok {
			return fmt.Errorf("disk %d has no data partition after CreatePartition succeeded", n)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if _, err := b.storageCall(ctx, partitionQuery(n, created.Number), "Online"); err != nil {
		return fmt.Errorf("bring partition %d of disk %d online: %w", created.Number, n, err)
	}
	return nil
}

// readLayout reads whether disk n is offline and its partition table. An
// offline disk whose table the IOCTL cannot read (whether it can is
// unconfirmed: docs/windows-storage.md) is described by the storage
// provider instead.
func (d diskHost) readLayout(ctx context.Context, n uint32) (offline bool, layout driveLayout, err error) {
	b := d.b
	var layoutErr error
	err = b.onDisk(n, modeQuery, func(h handle) error {
		attrs, err := b.diskAttributes(h, n)
		if err != nil {
			return err
		}
		offline = attrs&diskAttributeOffline != 0
		layout, layoutErr = b.driveLayout(h, n)
		return nil
	})
	switch {
	case err != nil:
		return false, driveLayout{}, err
	case layoutErr == nil:
		return offline, layout, nil
	case !offline:
		return false, driveLayout{}, layoutErr
	}
	layout, err = d.providerLayout(ctx, n)
	if err != nil {
		return true, driveLayout{}, fmt.Errorf("%w (and the storage provider could not describe the offline disk either: %w)", layoutErr, err)
	}
	return true, layout, nil
}

// providerLayout describes disk n's partition table the way upstream reads
// it: MSFT_Disk.PartitionStyle, and the MSFT_Partition rows of the disk
// with their GPT or MBR type. GptType is compared without braces or case,
// so the answer does not depend on how the provider spells it (fact sheet
// §C.19).
func (d diskHost) providerLayout(ctx context.Context, n uint32) (driveLayout, error) {
	rows, err := d.b.storageQuery(ctx, diskQuery(n).Select("PartitionStyle"))
	if err != nil {
		return driveLayout{}, err
	}
	if len(rows) != 1 {
		return driveLayout{}, errdefs.Errorf(errdefs.ErrNotFound, "%d MSFT_Disk instances have Number %d, want 1", len(rows), n)
	}
	style, err := rows[0].Uint16("PartitionStyle")
	if err != nil {
		return driveLayout{}, err
	}
	var l driveLayout
	switch style {
	case msftPartitionStyleRAW:
		return driveLayout{Style: partitionStyleRAW}, nil
	case msftPartitionStyleMBR:
		l.Style = partitionStyleMBR
	case msftPartitionStyleGPT:
		l.Style = partitionStyleGPT
	default:
		return driveLayout{}, fmt.Errorf("MSFT_Disk %d has PartitionStyle %d", n, style)
	}
	parts, err := d.b.sys.query(ctx, wmi.Query(classPartition).Select("PartitionNumber", "GptType", "MbrType").Where("DiskNumber", n))
	if err != nil {
		return driveLayout{}, err
	}
	for _, r := range parts {
		num, err := r.Uint32("PartitionNumber")
		if err != nil {
			return driveLayout{}, err
		}
		p := partition{Style: l.Style, Number: num}
		if l.Style == partitionStyleGPT {
			t, err := r.String("GptType")
			if err != nil {
				return driveLayout{}, err
			}
			if p.GPTType, err = parseGUID(t); err != nil {
				return driveLayout{}, fmt.Errorf("MSFT_Partition %d of disk %d: %w", num, n, err)
			}
		} else {
			t, err := r.Uint16("MbrType")
			if err != nil {
				return driveLayout{}, err
			}
			p.MBRType = uint8(t)
		}
		l.Partitions = append(l.Partitions, p)
	}
	return l, nil
}
