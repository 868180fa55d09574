package storage

// PartitionDisk against the fake system: new, idempotent, offline and
// failing disks.

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// partitionedAfterCreate makes the layout of drive3 change once
// CreatePartition has run, as it would on Windows.
func partitionedAfterCreate(f *fakeSystem, before []byte, after []byte) {
	created := false
	f.on(drive3, ioctlDiskGetDriveLayoutEx, func(in []byte, outLen int) ([]byte, error) {
		if created {
			return fixed(after)(in, outLen)
		}
		return fixed(before)(in, outLen)
	})
	prev := f.wmiCall
	f.wmiCall = func(q, method string, in []wmi.Param) (wmi.Props, error) {
		if method == "CreatePartition" {
			created = true
		}
		if prev != nil {
			return prev(q, method, in)
		}
		return wmi.Props{"ReturnValue": int64(0)}, nil
	}
}

// readDisk3Layout is the trace of PartitionDisk reading drive3's state:
// its attributes (online or not) and its partition table.
var readDisk3Layout = []string{
	"open " + drive3 + " query",
	"ioctl " + drive3 + " IOCTL_DISK_GET_DISK_ATTRIBUTES out=16",
	"ioctl " + drive3 + " IOCTL_DISK_GET_DRIVE_LAYOUT_EX out=2352",
	"close " + drive3,
}

// partitionDisk3 is the trace of PartitionDisk partitioning the online RAW
// drive3: GPT, one data partition over the disk, the layout read again for
// the new partition's number, and that partition brought online.
var partitionDisk3 = []string{
	"wmi call SELECT * FROM MSFT_Disk WHERE Number = 3 .Initialize(PartitionStyle=2)",
	"wmi call SELECT * FROM MSFT_Disk WHERE Number = 3 .CreatePartition(UseMaximumSize=true, AssignDriveLetter=false, IsHidden=false, IsActive=false, GptType={ebd0a0a2-b9e5-4433-87c0-68b6b72699c7})",
	"wmi call SELECT * FROM MSFT_Disk WHERE Number = 3 .Refresh()",
	"open " + drive3 + " query",
	"ioctl " + drive3 + " IOCTL_DISK_GET_DRIVE_LAYOUT_EX out=2352",
	"close " + drive3,
	"wmi call SELECT * FROM MSFT_Partition WHERE DiskNumber = 3 AND PartitionNumber = 2 .Online()",
}

var afterCreate = gptLayoutBuf(
	gptEntry{1, gptMicrosoftReserved, 17408, 16 << 20},
	gptEntry{2, gptBasicData, 17 << 20, 1006 << 20},
)

func TestPartitionDiskRAW(t *testing.T) {
	f := newFake(t)
	f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(0)))
	partitionedAfterCreate(f, rawLayoutBuf(), afterCreate)
	if err := f.backend().Disk().PartitionDisk(ctx, 3); err != nil {
		t.Fatal(err)
	}
	f.expect(slices.Concat(readDisk3Layout, partitionDisk3)...)
}

func TestPartitionDiskIdempotent(t *testing.T) {
	f := newFake(t)
	f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(0))).
		on(drive3, ioctlDiskGetDriveLayoutEx, fixed(afterCreate))
	b := f.backend()
	for range 2 {
		if err := b.Disk().PartitionDisk(ctx, 3); err != nil {
			t.Fatal(err)
		}
	}
	if f.called("wmi") {
		t.Errorf("an already partitioned disk caused WMI calls: %v", f.calls)
	}
}

func TestPartitionDiskMSROnly(t *testing.T) {
	// Initialised (GPT, perhaps with only the MSR partition) but no data
	// partition: no Initialize, straight to CreatePartition.
	f := newFake(t)
	f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(0)))
	partitionedAfterCreate(f, gptLayoutBuf(gptEntry{1, gptMicrosoftReserved, 17408, 16 << 20}), afterCreate)
	if err := f.backend().Disk().PartitionDisk(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if f.called(".Initialize(") || !f.called(".CreatePartition(") {
		t.Errorf("calls = %v", f.calls)
	}
}

func TestPartitionDiskEmptyMBR(t *testing.T) {
	f := newFake(t)
	f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(0)))
	partitionedAfterCreate(f, mbrLayoutBuf(), mbrLayoutBuf(mbrEntry{1, 0x07, 1 << 20, 1 << 30}))
	if err := f.backend().Disk().PartitionDisk(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if !f.called(".CreatePartition(UseMaximumSize=true, AssignDriveLetter=false, IsHidden=false, IsActive=false)") || f.called("GptType") {
		t.Errorf("an MBR disk got GPT parameters: %v", f.calls)
	}
	if !f.called("PartitionNumber = 1 .Online()") {
		t.Errorf("calls = %v", f.calls)
	}
}

// gcp-pd, aws-ebs and vsphere call PartitionDisk before SetDiskState(online),
// and re-stage disks their NodeUnstage took offline: an offline disk that
// already has its data partition is done, and nothing is written to it
// (upstream reads PartitionStyle and the partitions, which are readable
// while offline, and returns).
func TestPartitionDiskOfflinePartitioned(t *testing.T) {
	f := newFake(t)
	f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(diskAttributeOffline))).
		on(drive3, ioctlDiskGetDriveLayoutEx, fixed(afterCreate))
	if err := f.backend().Disk().PartitionDisk(ctx, 3); err != nil {
		t.Fatalf("PartitionDisk(offline, partitioned) = %v, want success", err)
	}
	f.expect(readDisk3Layout...)
}

// An offline disk whose partition table the IOCTL cannot read is judged
// from the storage provider's view, as upstream judges every disk:
// MSFT_Disk.PartitionStyle and the non-MSR MSFT_Partition rows.
func TestPartitionDiskOfflineLayoutFromProvider(t *testing.T) {
	f := newFake(t)
	f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(diskAttributeOffline))).
		on(drive3, ioctlDiskGetDriveLayoutEx, fails(errNotReady))
	f.wmiQuery = func(q string) ([]wmi.Props, error) {
		switch {
		case strings.Contains(q, "FROM MSFT_Disk "):
			return []wmi.Props{{"PartitionStyle": int64(2)}}, nil
		case strings.Contains(q, "FROM MSFT_Partition "):
			return []wmi.Props{
				{"PartitionNumber": int64(1), "GptType": "{e3c9e316-0b5c-4db8-817d-f92df00215ae}", "MbrType": nil},
				{"PartitionNumber": int64(2), "GptType": "{EBD0A0A2-B9E5-4433-87C0-68B6B72699C7}", "MbrType": nil},
			}, nil
		}
		return nil, nil
	}
	if err := f.backend().Disk().PartitionDisk(ctx, 3); err != nil {
		t.Fatalf("PartitionDisk = %v, want success", err)
	}
	if f.called("wmi call") {
		t.Errorf("a partitioned offline disk was written to: %v", f.calls)
	}
	if !f.called("wmi query SELECT PartitionStyle FROM MSFT_Disk WHERE Number = 3") ||
		!f.called("wmi query SELECT PartitionNumber, GptType, MbrType FROM MSFT_Partition WHERE DiskNumber = 3") {
		t.Errorf("calls = %v", f.calls)
	}
}

// A RAW disk that arrives offline (the OfflineShared SAN policy) is
// brought online before it is initialised, and its layout is read again
// once online before anything is written.
func TestPartitionDiskOfflineRAW(t *testing.T) {
	f := newFake(t)
	online := false
	f.on(drive3, ioctlDiskGetDiskAttributes, func(in []byte, outLen int) ([]byte, error) {
		if online {
			return fixed(diskAttributesBuf(0))(in, outLen)
		}
		return fixed(diskAttributesBuf(diskAttributeOffline))(in, outLen)
	})
	f.wmiCall = func(_, method string, _ []wmi.Param) (wmi.Props, error) {
		if method == "Online" {
			online = true
		}
		return wmi.Props{"ReturnValue": int64(0)}, nil
	}
	partitionedAfterCreate(f, rawLayoutBuf(), afterCreate)
	if err := f.backend().Disk().PartitionDisk(ctx, 3); err != nil {
		t.Fatal(err)
	}
	f.expect(slices.Concat(
		readDisk3Layout,
		[]string{"wmi call SELECT * FROM MSFT_Disk WHERE Number = 3 .Online()"},
		readDisk3Layout,
		partitionDisk3,
	)...)
}

// A disk that stays offline after Online (the provider refused quietly,
// or a policy put it back) is not written to.
func TestPartitionDiskOfflineStaysOffline(t *testing.T) {
	f := newFake(t)
	f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(diskAttributeOffline))).
		on(drive3, ioctlDiskGetDriveLayoutEx, fixed(rawLayoutBuf()))
	err := f.backend().Disk().PartitionDisk(ctx, 3)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "offline") {
		t.Errorf("PartitionDisk = %v, want failed precondition (still offline)", err)
	}
	if f.called(".Initialize(") || f.called(".CreatePartition(") {
		t.Errorf("an offline disk was written to: %v", f.calls)
	}
}

func TestPartitionDiskToleratedCodes(t *testing.T) {
	// 41001 from Initialize (the provider saw the disk initialised after
	// all) and 42002 from CreatePartition (upstream tolerates it) are
	// success.
	f := newFake(t)
	f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(0)))
	f.wmiCall = func(_, method string, _ []wmi.Param) (wmi.Props, error) {
		switch method {
		case "Initialize":
			return wmi.Props{"ReturnValue": int64(41001)}, &wmi.MethodError{Class: "MSFT_Disk", Method: method, Code: wmi.DiskAlreadyInitialized}
		case "CreatePartition":
			return wmi.Props{"ReturnValue": int64(42002)}, &wmi.MethodError{Class: "MSFT_Disk", Method: method, Code: wmi.AccessPathAlreadyInUse}
		}
		return wmi.Props{"ReturnValue": int64(0)}, nil
	}
	partitionedAfterCreate(f, rawLayoutBuf(), afterCreate)
	if err := f.backend().Disk().PartitionDisk(ctx, 3); err != nil {
		t.Fatalf("PartitionDisk = %v", err)
	}
	if !f.called("PartitionNumber = 2 .Online()") {
		t.Errorf("calls = %v", f.calls)
	}
}

func TestPartitionDiskFailures(t *testing.T) {
	t.Run("read-only disk", func(t *testing.T) {
		f := newFake(t)
		f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(0))).
			on(drive3, ioctlDiskGetDriveLayoutEx, fixed(rawLayoutBuf()))
		f.wmiCall = func(_, method string, _ []wmi.Param) (wmi.Props, error) {
			return wmi.Props{"ReturnValue": int64(41002)}, &wmi.MethodError{Class: "MSFT_Disk", Method: method, Code: wmi.DiskReadOnly}
		}
		err := f.backend().Disk().PartitionDisk(ctx, 3)
		if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "read only") {
			t.Errorf("PartitionDisk = %v", err)
		}
		if f.called("CreatePartition") {
			t.Error("CreatePartition ran after Initialize failed")
		}
	})
	t.Run("no data partition after CreatePartition", func(t *testing.T) {
		f := newFake(t)
		f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(0)))
		partitionedAfterCreate(f, rawLayoutBuf(), gptLayoutBuf(gptEntry{1, gptMicrosoftReserved, 17408, 16 << 20}))
		if err := f.backend().Disk().PartitionDisk(ctx, 3); err == nil || !strings.Contains(err.Error(), "no data partition") {
			t.Errorf("PartitionDisk = %v", err)
		}
	})
	t.Run("large layout needs a bigger buffer", func(t *testing.T) {
		entries := []gptEntry{}
		for i := range 40 {
			entries = append(entries, gptEntry{uint32(i + 1), gptMicrosoftReserved, uint64(i) << 20, 1 << 20})
		}
		entries = append(entries, gptEntry{41, gptBasicData, 50 << 20, 1 << 30})
		f := newFake(t)
		f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(0))).
			on(drive3, ioctlDiskGetDriveLayoutEx, fixed(gptLayoutBuf(entries...)))
		if err := f.backend().Disk().PartitionDisk(ctx, 3); err != nil {
			t.Fatal(err)
		}
		if !f.called("IOCTL_DISK_GET_DRIVE_LAYOUT_EX out=" + strconv.Itoa(layoutSize(64))) {
			t.Errorf("calls = %v", f.calls)
		}
	})
}
