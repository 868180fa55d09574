package storage

import (
	"bytes"
	"strings"
	"testing"
)

// ctlCode is the CTL_CODE macro (winioctl.h):
// (DeviceType << 16) | (Access << 14) | (Function << 2) | Method.
func ctlCode(deviceType, function, method, access uint32) uint32 {
	return deviceType<<16 | access<<14 | function<<2 | method
}

func TestIOCTLCodes(t *testing.T) {
	const (
		fileDeviceController  = 0x04
		fileDeviceDiskType    = 0x07
		fileDeviceFileSystem  = 0x09
		fileDeviceMassStorage = 0x2d
		ioctlVolumeBase       = 'V'
		methodBuffered        = 0
		anyAccess             = 0
		readAccess            = 1
	)
	for _, tc := range []struct {
		name string
		got  uint32
		want uint32
	}{
		{"IOCTL_STORAGE_GET_DEVICE_NUMBER", ioctlStorageGetDeviceNumber, ctlCode(fileDeviceMassStorage, 0x0420, methodBuffered, anyAccess)},
		{"IOCTL_STORAGE_QUERY_PROPERTY", ioctlStorageQueryProperty, ctlCode(fileDeviceMassStorage, 0x0500, methodBuffered, anyAccess)},
		{"IOCTL_SCSI_GET_ADDRESS", ioctlSCSIGetAddress, ctlCode(fileDeviceController, 0x0406, methodBuffered, anyAccess)},
		{"IOCTL_DISK_GET_LENGTH_INFO", ioctlDiskGetLengthInfo, ctlCode(fileDeviceDiskType, 0x0017, methodBuffered, readAccess)},
		{"IOCTL_DISK_GET_DRIVE_LAYOUT_EX", ioctlDiskGetDriveLayoutEx, ctlCode(fileDeviceDiskType, 0x0014, methodBuffered, anyAccess)},
		{"IOCTL_DISK_GET_DISK_ATTRIBUTES", ioctlDiskGetDiskAttributes, ctlCode(fileDeviceDiskType, 0x003c, methodBuffered, anyAccess)},
		{"IOCTL_DISK_IS_WRITABLE", ioctlDiskIsWritable, ctlCode(fileDeviceDiskType, 0x0009, methodBuffered, anyAccess)},
		{"IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS", ioctlVolumeGetVolumeDiskExtents, ctlCode(ioctlVolumeBase, 0, methodBuffered, anyAccess)},
		{"FSCTL_GET_REPARSE_POINT", fsctlGetReparsePoint, ctlCode(fileDeviceFileSystem, 42, methodBuffered, anyAccess)},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %#08x, CTL_CODE gives %#08x", tc.name, tc.got, tc.want)
		}
	}
}

func TestStoragePropertyQuery(t *testing.T) {
	// STORAGE_PROPERTY_QUERY: PropertyId u32 @0, QueryType u32 @4
	// (PropertyStandardQuery = 0), AdditionalParameters[1] @8, padded to 12.
	want := []byte{2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if got := storagePropertyQuery(storageDeviceIDProperty); !bytes.Equal(got, want) {
		t.Errorf("storagePropertyQuery(2) = % x, want % x", got, want)
	}
}

func TestParseFixedStructures(t *testing.T) {
	dn, err := parseDeviceNumber(deviceNumberBuf(fileDeviceDisk, 3, 2))
	if err != nil || dn != (deviceNumber{7, 3, 2}) {
		t.Errorf("parseDeviceNumber = %+v, %v", dn, err)
	}
	a, err := parseSCSIAddress(scsiAddressBuf(1, 0, 2, 9))
	if err != nil || a != (scsiAddress{PortNumber: 1, PathID: 0, TargetID: 2, Lun: 9}) {
		t.Errorf("parseSCSIAddress = %+v, %v", a, err)
	}
	n, err := parseLengthInfo(lengthInfoBuf(1 << 40))
	if err != nil || n != 1<<40 {
		t.Errorf("parseLengthInfo = %d, %v", n, err)
	}
	attrs, err := parseDiskAttributes(diskAttributesBuf(diskAttributeOffline | 2))
	if err != nil || attrs != 3 {
		t.Errorf("parseDiskAttributes = %d, %v", attrs, err)
	}
	for name, bad := range map[string]func() error{
		"device number": func() error { _, err := parseDeviceNumber(make([]byte, 11)); return err },
		"scsi address":  func() error { _, err := parseSCSIAddress(make([]byte, 7)); return err },
		"length":        func() error { _, err := parseLengthInfo(make([]byte, 7)); return err },
		"negative length": func() error {
			_, err := parseLengthInfo([]byte{0, 0, 0, 0, 0, 0, 0, 0x80})
			return err
		},
		"attributes": func() error { _, err := parseDiskAttributes(make([]byte, 15)); return err },
	} {
		if bad() == nil {
			t.Errorf("%s: a short or bad buffer parsed", name)
		}
	}
}

// Page 0x83 descriptors as devices report them. The values follow the
// formats drivers depend on (fact sheet §1.3): vSphere compares the NAA
// identifier as lowercase hex, gcp-pd takes the last word of the T10
// vendor ID "Google  <device name>".
var (
	t10GCE = storageID{codeSet: codeSetASCII, typ: 1, assoc: associationDevice,
		value: []byte("Google  persistent-disk-1")}
	naaVSphere = storageID{codeSet: codeSetBinary, typ: 3, assoc: associationDevice,
		value: []byte{0x60, 0x00, 0xc2, 0x9a, 0xbc, 0xde, 0xf0, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x12}}
	eui64 = storageID{codeSet: codeSetBinary, typ: 2, assoc: associationDevice,
		value: []byte{0x00, 0x25, 0x38, 0xB1, 0x71, 0xA0, 0x2C, 0xFE}}
	portRelative = storageID{codeSet: codeSetBinary, typ: 4, assoc: 1, value: []byte{0, 0, 0, 1}}
	utf8Name     = storageID{codeSet: 3, typ: 8, assoc: associationDevice, value: []byte("naa.6000c29")}
	targetAssoc  = storageID{codeSet: codeSetASCII, typ: 8, assoc: 2, value: []byte("iqn.1991-05.com.microsoft:target")}
)

func TestParsePage83(t *testing.T) {
	for _, tc := range []struct {
		name string
		buf  []byte
		want string
	}{
		{"GCE persistent disk: T10 ASCII first, raw bytes", deviceIDDescriptorBuf(t10GCE, naaVSphere), "Google  persistent-disk-1"},
		{"vSphere: NAA binary as lowercase hex", deviceIDDescriptorBuf(naaVSphere, t10GCE), "6000c29abcdef0123456789abcdef012"},
		{"first match wins regardless of type", deviceIDDescriptorBuf(eui64, naaVSphere), "002538b171a02cfe"},
		{"port and target associations are skipped", deviceIDDescriptorBuf(portRelative, targetAssoc, naaVSphere), "6000c29abcdef0123456789abcdef012"},
		{"UTF-8 identifiers are skipped", deviceIDDescriptorBuf(utf8Name, eui64), "002538b171a02cfe"},
		{"no usable identifier", deviceIDDescriptorBuf(portRelative, utf8Name), ""},
		{"no identifiers", deviceIDDescriptorBuf(), ""},
		{"ASCII is not trimmed", deviceIDDescriptorBuf(storageID{codeSet: codeSetASCII, typ: 1, value: []byte("VENDOR  PRODUCT  \x00")}), "VENDOR  PRODUCT  \x00"},
		{"unpadded NextOffset", deviceIDDescriptorBuf(storageID{codeSet: 3, typ: 8, value: []byte("x"), nextOffset: 17}, eui64), "002538b171a02cfe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parsePage83(tc.buf)
			if err != nil || got != tc.want {
				t.Errorf("parsePage83 = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestParsePage83Malformed(t *testing.T) {
	// NextOffset 0 ends the walk instead of re-reading the same identifier.
	stuck := deviceIDDescriptorBuf(storageID{codeSet: 3, value: []byte("abcd"), nextOffset: 0}, eui64)
	put16(stuck, 12+10, 0)
	if got, err := parsePage83(stuck); err != nil || got != "" {
		t.Errorf("NextOffset 0: %q, %v", got, err)
	}
	// An identifier claiming more bytes than the buffer holds.
	long := deviceIDDescriptorBuf(eui64)
	put16(long, 12+8, 200)
	if _, err := parsePage83(long); err == nil {
		t.Error("an overlong identifier parsed")
	}
	// More identifiers claimed than present.
	many := deviceIDDescriptorBuf(portRelative)
	put32(many, 8, 5)
	if _, err := parsePage83(many); err == nil {
		t.Error("a missing identifier parsed")
	}
	// A header Size smaller than the bytes returned bounds the walk.
	bounded := deviceIDDescriptorBuf(portRelative, eui64)
	put32(bounded, 4, 12+20)
	if _, err := parsePage83(bounded); err == nil {
		t.Error("the header Size did not bound the descriptor")
	}
	if _, err := parsePage83(make([]byte, 8)); err == nil {
		t.Error("an 8-byte descriptor parsed")
	}
	// A truncated read (4 KiB buffer, bigger descriptor) is not parsed past
	// its end.
	trunc := deviceIDDescriptorBuf(portRelative, naaVSphere)
	if _, err := parsePage83(trunc[:40]); err == nil {
		t.Error("a truncated descriptor parsed")
	}
}

func TestParseSerialNumber(t *testing.T) {
	for _, tc := range []struct {
		name string
		buf  []byte
		want string
	}{
		{"Hyper-V SCSI", deviceDescriptorBuf(1, "Msft    ", "Virtual Disk    ", "1.0 ", "6002248069B1C1A3D8F1"), "6002248069B1C1A3D8F1"},
		{"GCE NVMe keeps _ and .", deviceDescriptorBuf(17, "", "nvme_card-pd", "2", "10CC_9636_B6E3_CE3B_0000_0000_0000_0000."), "10CC_9636_B6E3_CE3B_0000_0000_0000_0000."},
		{"AWS EBS NVMe, space padded", deviceDescriptorBuf(17, "", "Amazon Elastic Block Store", "1.0", "vol0123456789abcdef0  "), "vol0123456789abcdef0"},
		{"ATA, leading padding", deviceDescriptorBuf(11, "", "Samsung SSD", "1", "     S3Z9NB0K123456"), "S3Z9NB0K123456"},
		{"no serial", deviceDescriptorBuf(14, "Msft", "Virtual", "1", ""), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSerialNumber(tc.buf)
			if err != nil || got != tc.want {
				t.Errorf("parseSerialNumber = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	out := deviceDescriptorBuf(1, "v", "p", "r", "s")
	put32(out, 24, 5000)
	if got, err := parseSerialNumber(out); err != nil || got != "" {
		t.Errorf("offset past the end: %q, %v; want empty", got, err)
	}
	unterminated := deviceDescriptorBuf(1, "", "", "", "ABC")
	unterminated = unterminated[:len(unterminated)-1]
	put32(unterminated, 4, uint32(len(unterminated)))
	if got, err := parseSerialNumber(unterminated); err != nil || got != "ABC" {
		t.Errorf("unterminated: %q, %v", got, err)
	}
	if _, err := parseSerialNumber(make([]byte, 20)); err == nil {
		t.Error("a 20-byte descriptor parsed")
	}
}

// TestParseRecordedUnderWine parses buffers recorded from Wine 8.0's
// implementation of the IOCTLs (\\.\C: and \\.\PhysicalDrive0 in a
// fresh prefix). Wine's values are made up, so these check only that the
// parsers take a real implementation's output; they say nothing about
// what Windows returns.
func TestParseRecordedUnderWine(t *testing.T) {
	// IOCTL_STORAGE_QUERY_PROPERTY(StorageDeviceProperty): a bare 40-byte
	// STORAGE_DEVICE_DESCRIPTOR, BusType 1 (SCSI), no strings.
	desc := []byte{
		0x28, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	}
	if s, err := parseSerialNumber(desc); err != nil || s != "" {
		t.Errorf("parseSerialNumber(Wine) = %q, %v", s, err)
	}
	// IOCTL_STORAGE_GET_DEVICE_NUMBER on \\.\C:: disk 0, partition 1.
	dn, err := parseDeviceNumber([]byte{0x07, 0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0})
	if err != nil || dn != (deviceNumber{fileDeviceDisk, 0, 1}) {
		t.Errorf("parseDeviceNumber(Wine) = %+v, %v", dn, err)
	}
	// IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS on \\.\C:: success with 32
	// zero bytes, i.e. no extents.
	if ext, err := parseDiskExtents(make([]byte, 32)); err != nil || len(ext) != 0 {
		t.Errorf("parseDiskExtents(Wine) = %+v, %v", ext, err)
	}
}

func TestParseDriveLayout(t *testing.T) {
	gpt, err := parseDriveLayout(gptLayoutBuf(
		gptEntry{1, gptMicrosoftReserved, 17408, 16 << 20},
		gptEntry{2, gptBasicData, 17 << 20, 1000 << 20},
	))
	if err != nil {
		t.Fatal(err)
	}
	if gpt.Style != partitionStyleGPT || len(gpt.Partitions) != 2 {
		t.Fatalf("layout = %+v", gpt)
	}
	if got := gpt.Partitions[0].GPTType.String(); got != gptMicrosoftReserved {
		t.Errorf("GPT type = %s", got)
	}
	if p, ok := gpt.dataPartition(); !ok || p.Number != 2 || p.StartingOffset != 17<<20 || p.PartitionLength != 1000<<20 {
		t.Errorf("dataPartition = %+v, %v", p, ok)
	}
	if !gpt.hasPartition(1) || !gpt.hasPartition(2) || gpt.hasPartition(3) {
		t.Error("hasPartition is wrong")
	}

	msrOnly, _ := parseDriveLayout(gptLayoutBuf(gptEntry{1, gptMicrosoftReserved, 17408, 16 << 20}))
	if _, ok := msrOnly.dataPartition(); ok {
		t.Error("the Microsoft Reserved partition counts as data")
	}
	efi, _ := parseDriveLayout(gptLayoutBuf(gptEntry{1, "c12a7328-f81f-11d2-ba4b-00a0c93ec93b", 1 << 20, 100 << 20}))
	if _, ok := efi.dataPartition(); !ok {
		t.Error("an EFI partition does not count (upstream counts everything but MSR)")
	}

	mbr, err := parseDriveLayout(mbrLayoutBuf(mbrEntry{1, 0x05, 1 << 20, 100 << 20}, mbrEntry{5, 0x07, 2 << 20, 50 << 20}))
	if err != nil {
		t.Fatal(err)
	}
	if mbr.Style != partitionStyleMBR || len(mbr.Partitions) != 4 {
		t.Fatalf("MBR layout = %+v", mbr)
	}
	if p, ok := mbr.dataPartition(); !ok || p.Number != 5 || p.MBRType != 0x07 {
		t.Errorf("MBR dataPartition = %+v, %v (the extended container must not count)", p, ok)
	}
	if mbr.hasPartition(0) || !mbr.hasPartition(5) {
		t.Error("MBR hasPartition is wrong (unused slots have number 0)")
	}
	emptyMBR, _ := parseDriveLayout(mbrLayoutBuf())
	if _, ok := emptyMBR.dataPartition(); ok {
		t.Error("an empty MBR has a data partition")
	}

	raw, err := parseDriveLayout(rawLayoutBuf())
	if err != nil || raw.Style != partitionStyleRAW || len(raw.Partitions) != 0 {
		t.Errorf("RAW layout = %+v, %v", raw, err)
	}

	over := gptLayoutBuf(gptEntry{1, gptBasicData, 1 << 20, 1 << 20})
	put32(over, 4, 2)
	if _, err := parseDriveLayout(over); err == nil {
		t.Error("a layout claiming more entries than it holds parsed")
	}
	if _, err := parseDriveLayout(make([]byte, 47)); err == nil {
		t.Error("a 47-byte layout parsed")
	}
}

func TestGUIDString(t *testing.T) {
	var g guid
	copy(g[:], guidBytes("EBD0A0A2-B9E5-4433-87C0-68B6B72699C7"))
	if g.String() != gptBasicData {
		t.Errorf("String() = %s", g)
	}
	if (guid{}).String() != "00000000-0000-0000-0000-000000000000" {
		t.Errorf("zero GUID = %s", guid{})
	}
}

func TestParseDiskExtents(t *testing.T) {
	ext, err := parseDiskExtents(extentsBuf(2, 5))
	if err != nil || len(ext) != 2 || ext[0].DiskNumber != 2 || ext[1].DiskNumber != 5 || ext[0].StartingOffset != 1<<20 || ext[0].ExtentLength != 1<<30 {
		t.Errorf("parseDiskExtents = %+v, %v", ext, err)
	}
	if ext, err := parseDiskExtents(extentsBuf()); err != nil || len(ext) != 0 {
		t.Errorf("no extents = %+v, %v", ext, err)
	}
	if _, err := parseDiskExtents(extentsBuf(1, 2)[:32]); err == nil {
		t.Error("a truncated extent list parsed")
	}
	if _, err := parseDiskExtents([]byte{1, 0, 0}); err == nil {
		t.Error("a 3-byte buffer parsed")
	}
}

func TestParseReparsePoint(t *testing.T) {
	for _, tc := range []struct {
		name string
		buf  []byte
		want reparsePoint
	}{
		{"mounted folder", mountPointReparseBuf(`\??\Volume{0c8a1d6e-5b2a-4a8e-9c1e-1d2f3a4b5c6d}\`, ""),
			reparsePoint{Tag: reparseTagMountPoint, Substitute: `\??\Volume{0c8a1d6e-5b2a-4a8e-9c1e-1d2f3a4b5c6d}\`}},
		{"junction", mountPointReparseBuf(`\??\C:\data\real`, `C:\data\real`),
			reparsePoint{Tag: reparseTagMountPoint, Substitute: `\??\C:\data\real`, Print: `C:\data\real`}},
		{"absolute symlink", symlinkReparseBuf(`\??\C:\var\lib\kubelet\plugins\x\globalmount`, `C:\var\lib\kubelet\plugins\x\globalmount`, false),
			reparsePoint{Tag: reparseTagSymlink, Substitute: `\??\C:\var\lib\kubelet\plugins\x\globalmount`, Print: `C:\var\lib\kubelet\plugins\x\globalmount`}},
		{"relative symlink", symlinkReparseBuf(`..\peer`, `..\peer`, true),
			reparsePoint{Tag: reparseTagSymlink, Substitute: `..\peer`, Print: `..\peer`, Relative: true}},
		{"non-ASCII", symlinkReparseBuf(`\??\C:\données\日本`, `C:\données\日本`, false),
			reparsePoint{Tag: reparseTagSymlink, Substitute: `\??\C:\données\日本`, Print: `C:\données\日本`}},
		{"other tag", []byte{0x13, 0, 0, 0x80, 0, 0, 0, 0}, reparsePoint{Tag: 0x80000013}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseReparsePoint(tc.buf)
			if err != nil || got != tc.want {
				t.Errorf("parseReparsePoint = %+v, %v\nwant %+v", got, err, tc.want)
			}
		})
	}
	bad := symlinkReparseBuf(`\??\C:\x`, `C:\x`, false)
	put16(bad, 10, 500)
	if _, err := parseReparsePoint(bad); err == nil || !strings.Contains(err.Error(), "substitute") {
		t.Errorf("an overlong substitute name: %v", err)
	}
	odd := mountPointReparseBuf(`\??\C:\x`, "")
	put16(odd, 8, 1)
	if _, err := parseReparsePoint(odd); err == nil {
		t.Error("an odd offset parsed")
	}
	if _, err := parseReparsePoint(make([]byte, 7)); err == nil {
		t.Error("a 7-byte buffer parsed")
	}
	if _, err := parseReparsePoint(symlinkReparseBuf("a", "", false)[:19]); err == nil {
		t.Error("a 19-byte symlink buffer parsed")
	}
	if _, err := parseReparsePoint(mountPointReparseBuf("a", "")[:15]); err == nil {
		t.Error("a 15-byte mount point buffer parsed")
	}
}
