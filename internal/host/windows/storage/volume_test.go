package storage

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

const (
	volA = `\\?\Volume{0c8a1d6e-5b2a-4a8e-9c1e-1d2f3a4b5c6d}\`
	volB = `\\?\Volume{11111111-2222-3333-4444-555555555555}\`
	volC = `\\?\Volume{c0ffee00-0000-4000-8000-000000000001}\` // C:
	volX = `\\?\Volume{deadbeef-0000-4000-8000-000000000002}\` // on no basic disk
	volR = `\\?\Volume{0badf00d-0000-4000-8000-000000000003}\` // a card reader without media

	kubelet = `C:\var\lib\kubelet`
	stage   = `C:\var\lib\kubelet\plugins\kubernetes.io\csi\pd.csi.storage.gke.io\abc\globalmount`
	publish = `C:\var\lib\kubelet\pods\p1\volumes\kubernetes.io~csi\pvc-1\mount`
)

// addVolume gives the fake a volume on (disk, partition).
func (f *fakeSystem) addVolume(id string, diskNumber, part uint32) {
	f.volumeList = append(f.volumeList, id)
	f.on(volumeDevice(id), ioctlStorageGetDeviceNumber, fixed(deviceNumberBuf(fileDeviceDisk, diskNumber, part))).
		on(volumeDevice(id), ioctlVolumeGetVolumeDiskExtents, moreData(extentsBuf(diskNumber)))
}

// onlineDisk gives the fake an online disk n with a layout.
func (f *fakeSystem) onlineDisk(path string, layout []byte) {
	f.on(path, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(0))).
		on(path, ioctlDiskGetDriveLayoutEx, fixed(layout))
}

func (f *fakeSystem) dir(path string) {
	f.files[path] = &fakeFile{attrs: fileAttributeDirectory}
}

func (f *fakeSystem) mountedFolder(path, vol string) {
	f.files[path] = &fakeFile{
		attrs:   fileAttributeDirectory | fileAttributeReparsePoint,
		tag:     reparseTagMountPoint,
		reparse: mountPointReparseBuf(`\??\`+strings.TrimPrefix(vol, `\\?\`), ""),
	}
	f.mounts[path+`\`] = vol
}

func (f *fakeSystem) symlink(path, target string) {
	f.files[path] = &fakeFile{
		attrs:   fileAttributeDirectory | fileAttributeReparsePoint,
		tag:     reparseTagSymlink,
		reparse: symlinkReparseBuf(`\??\`+target, target, false),
	}
}

func (f *fakeSystem) junction(path, target string) {
	f.files[path] = &fakeFile{
		attrs:   fileAttributeDirectory | fileAttributeReparsePoint,
		tag:     reparseTagMountPoint,
		reparse: mountPointReparseBuf(`\??\`+target, target),
	}
}

func TestListVolumesOnDisk(t *testing.T) {
	f := newFake(t)
	f.onlineDisk(drive3, gptLayoutBuf(
		gptEntry{1, gptMicrosoftReserved, 17408, 16 << 20},
		gptEntry{2, gptBasicData, 17 << 20, 500 << 20},
		gptEntry{3, gptBasicData, 517 << 20, 500 << 20},
	))
	f.addVolume(volC, 0, 2)
	f.addVolume(volB, 3, 3) // enumerated before partition 2's volume
	f.addVolume(volA, 3, 2)
	f.volumeList = append(f.volumeList, volR) // cannot be opened: skipped
	// A volume on no basic disk: GET_DEVICE_NUMBER fails, extents say disk 3.
	f.volumeList = append(f.volumeList, volX)
	f.on(volumeDevice(volX), ioctlStorageGetDeviceNumber, fails(errInvalidFunction)).
		on(volumeDevice(volX), ioctlVolumeGetVolumeDiskExtents, moreData(extentsBuf(3, 4)))
	v := f.backend().Volume()

	got, err := v.ListVolumesOnDisk(ctx, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{volA, volB, volX}; !slices.Equal(got, want) {
		t.Errorf("partition 0 = %q, want %q (partition order, then the volume found by extents)", got, want)
	}
	if !f.called("IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS out=56") {
		t.Errorf("the extents query did not grow to 2 extents: %v", f.calls)
	}

	got, err = v.ListVolumesOnDisk(ctx, 3, 3)
	if err != nil || !slices.Equal(got, []string{volB}) {
		t.Errorf("partition 3 = %q, %v", got, err)
	}
	got, err = v.ListVolumesOnDisk(ctx, 3, 1) // MSR: a partition without a volume
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("partition 1 = %q, %v; want an empty list", got, err)
	}
	if _, err := v.ListVolumesOnDisk(ctx, 3, 7); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("partition 7 = %v, want not found", err)
	}
	if _, err := v.ListVolumesOnDisk(ctx, 9, 0); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("disk 9 = %v, want not found", err)
	}
}

func TestListVolumesOnDiskOffline(t *testing.T) {
	f := newFake(t)
	f.on(drive3, ioctlDiskGetDiskAttributes, fixed(diskAttributesBuf(diskAttributeOffline)))
	_, err := f.backend().Volume().ListVolumesOnDisk(ctx, 3, 0)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("ListVolumesOnDisk(offline) = %v", err)
	}
	if f.called("volumes") {
		t.Error("volumes were enumerated for an offline disk")
	}
}

func TestMountVolume(t *testing.T) {
	t.Run("empty directory", func(t *testing.T) {
		f := newFake(t)
		f.dir(stage)
		if err := f.backend().Volume().MountVolume(ctx, volA, stage); err != nil {
			t.Fatal(err)
		}
		f.expect("attributes "+stage, "setVolumeMountPoint "+stage+`\ `+volA)
	})
	t.Run("missing target is created", func(t *testing.T) {
		f := newFake(t)
		if err := f.backend().Volume().MountVolume(ctx, volA, stage); err != nil {
			t.Fatal(err)
		}
		f.expect("attributes "+stage, "mkdir "+stage, "setVolumeMountPoint "+stage+`\ `+volA)
	})
	t.Run("missing parent", func(t *testing.T) {
		f := newFake(t)
		f.mkdirErr = syscall.Errno(errPathNotFound)
		err := f.backend().Volume().MountVolume(ctx, volA, stage)
		if !errors.Is(err, errdefs.ErrNotFound) || f.called("setVolumeMountPoint") {
			t.Errorf("MountVolume = %v; calls %v", err, f.calls)
		}
	})
	t.Run("target is a file", func(t *testing.T) {
		f := newFake(t)
		f.files[stage] = &fakeFile{attrs: 0x20}
		if err := f.backend().Volume().MountVolume(ctx, volA, stage); !errors.Is(err, errdefs.ErrFailedPrecondition) {
			t.Errorf("MountVolume = %v", err)
		}
	})
	t.Run("same volume already mounted there", func(t *testing.T) {
		f := newFake(t)
		f.mountedFolder(stage, volA)
		f.setMountErr = syscall.Errno(errDirNotEmpty)
		if err := f.backend().Volume().MountVolume(ctx, strings.ToUpper(volA), stage); err != nil {
			t.Errorf("MountVolume of the same volume again = %v", err)
		}
	})
	t.Run("access path in use by another volume", func(t *testing.T) {
		f := newFake(t)
		f.mountedFolder(stage, volB)
		f.setMountErr = syscall.Errno(errDirNotEmpty)
		err := f.backend().Volume().MountVolume(ctx, volA, stage)
		if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "already in use by volume "+volB) {
			t.Errorf("MountVolume = %v", err)
		}
	})
	t.Run("directory not empty", func(t *testing.T) {
		f := newFake(t)
		f.dir(stage)
		f.setMountErr = syscall.Errno(errDirNotEmpty)
		err := f.backend().Volume().MountVolume(ctx, volA, stage)
		if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "not an empty directory") {
			t.Errorf("MountVolume = %v", err)
		}
	})
	t.Run("volume does not exist", func(t *testing.T) {
		f := newFake(t)
		f.dir(stage)
		f.setMountErr = syscall.Errno(errFileNotFound)
		if err := f.backend().Volume().MountVolume(ctx, volA, stage); !errors.Is(err, errdefs.ErrNotFound) {
			t.Errorf("MountVolume = %v", err)
		}
	})
	t.Run("long path gets the \\\\?\\ prefix", func(t *testing.T) {
		f := newFake(t)
		long := kubelet + `\` + strings.Repeat(`segment\`, 30) + "globalmount"
		f.dir(`\\?\` + long)
		if err := f.backend().Volume().MountVolume(ctx, volA, long); err != nil {
			t.Fatal(err)
		}
		f.expect(`attributes \\?\`+long, `setVolumeMountPoint \\?\`+long+`\ `+volA)
	})
}

func TestUnmountVolume(t *testing.T) {
	f := newFake(t)
	f.device(volumeDevice(volA))
	if err := f.backend().Volume().UnmountVolume(ctx, volA, stage); err != nil {
		t.Fatal(err)
	}
	f.expect("open "+volumeDevice(volA)+" read-write", "flush "+volumeDevice(volA), "close "+volumeDevice(volA),
		"deleteVolumeMountPoint "+stage+`\`)

	// The volume is gone (disk detached): nothing to flush, the dangling
	// mount point still goes.
	f = newFake(t)
	if err := f.backend().Volume().UnmountVolume(ctx, volA, stage); err != nil {
		t.Fatal(err)
	}
	f.expect("open "+volumeDevice(volA)+" read-write", "deleteVolumeMountPoint "+stage+`\`)

	// A flush that fails with an I/O error may have lost data: the
	// unmount fails and the mount point stays for the retry.
	f = newFake(t)
	f.device(volumeDevice(volA)).flushErr = syscall.Errno(errIODevice)
	if err := f.backend().Volume().UnmountVolume(ctx, volA, stage); err == nil || f.called("deleteVolumeMountPoint") {
		t.Errorf("UnmountVolume with a failing flush = %v; calls %v", err, f.calls)
	}

	f = newFake(t)
	f.device(volumeDevice(volA))
	f.deleteMountErr = syscall.Errno(errNotAReparsePoint)
	if err := f.backend().Volume().UnmountVolume(ctx, volA, stage); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("UnmountVolume of a plain directory = %v", err)
	}
}

func TestIsVolumeFormatted(t *testing.T) {
	f := newFake(t)
	f.device(volumeDevice(volA))
	f.device(volumeDevice(volB))
	f.device(volumeDevice(volC))
	f.fsNames[volA] = "NTFS"
	f.fsErrs[volB] = syscall.Errno(errUnrecognizedVolume)
	f.fsNames[volC] = "RAW"
	v := f.backend().Volume()
	for id, want := range map[string]bool{volA: true, volB: false, volC: false} {
		got, err := v.IsVolumeFormatted(ctx, id)
		if err != nil || got != want {
			t.Errorf("IsVolumeFormatted(%s) = %v, %v; want %v", id, got, err, want)
		}
	}
	if _, err := v.IsVolumeFormatted(ctx, volX); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("missing volume = %v", err)
	}
}

// TestIsVolumeFormattedArriving: a volume still arriving after
// CreatePartition makes GetVolumeInformation fail with codes other than
// ERROR_UNRECOGNIZED_VOLUME (ERROR_NOT_READY while it mounts,
// ERROR_UNRECOGNIZED_MEDIA "may not be formatted", ...). Those are decided
// the way upstream decides every volume: MSFT_Volume.FileSystemType, 0
// (Unknown) being RAW. A volume the provider does not know either is
// missing, an error, never "unformatted" (issue 11 item 10).
func TestIsVolumeFormattedArriving(t *testing.T) {
	for _, c := range []struct {
		name    string
		code    uint32
		rows    []wmi.Props
		want    bool
		wantErr error
	}{
		{"not ready, RAW", errNotReady, []wmi.Props{{"FileSystemType": int64(0)}}, false, nil},
		{"unrecognized media, RAW", errUnrecognizedMedia, []wmi.Props{{"FileSystemType": int64(0)}}, false, nil},
		{"not ready, NTFS", errNotReady, []wmi.Props{{"FileSystemType": int64(14)}}, true, nil},
		{"invalid parameter, ReFS", errInvalidParameter, []wmi.Props{{"FileSystemType": int64(15)}}, true, nil},
		{"not ready, unknown to the provider", errNotReady, nil, false, errdefs.ErrNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			f.device(volumeDevice(volA))
			f.fsErrs[volA] = syscall.Errno(c.code)
			f.wmiQuery = func(q string) ([]wmi.Props, error) {
				if strings.Contains(q, "MSFT_Volume") {
					return c.rows, nil
				}
				return nil, nil
			}
			got, err := f.backend().Volume().IsVolumeFormatted(ctx, volA)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Errorf("IsVolumeFormatted = %v, %v; want %v", got, err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("IsVolumeFormatted = %v, %v; want %v", got, err, c.want)
			}
			if !f.called("wmi query SELECT FileSystemType FROM MSFT_Volume WHERE UniqueId = ") {
				t.Errorf("calls = %v", f.calls)
			}
		})
	}
	// The volume itself is gone: an error, not a WMI question.
	f := newFake(t)
	if _, err := f.backend().Volume().IsVolumeFormatted(ctx, volA); !errors.Is(err, errdefs.ErrNotFound) || f.called("wmi") {
		t.Errorf("missing volume = %v; calls %v", err, f.calls)
	}
}

func TestFormatVolume(t *testing.T) {
	f := newFake(t)
	if err := f.backend().Volume().FormatVolume(ctx, volA); err != nil {
		t.Fatal(err)
	}
	f.expect(`wmi call SELECT * FROM MSFT_Volume WHERE UniqueId = '\\\\?\\Volume{0c8a1d6e-5b2a-4a8e-9c1e-1d2f3a4b5c6d}\\' .Format(FileSystem=NTFS, FileSystemLabel=, Full=false, Force=true)`)

	refs, err := newBackend(f, Config{FileSystem: "refs"})
	if err != nil {
		t.Fatal(err)
	}
	f.reset()
	if err := refs.Volume().FormatVolume(ctx, volA); err != nil || !f.called("FileSystem=ReFS") {
		t.Errorf("ReFS format = %v; calls %v", err, f.calls)
	}
	if _, err := newBackend(f, Config{FileSystem: "FAT32"}); !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("FAT32 config = %v", err)
	}
}

func TestFormatVolumeLookup(t *testing.T) {
	// Not found by UniqueId, even after refreshing the cache: found by Path.
	f := newFake(t)
	f.wmiCall = func(q, method string, _ []wmi.Param) (wmi.Props, error) {
		if strings.Contains(q, "UniqueId") {
			return nil, errdefs.Errorf(errdefs.ErrNotFound, "no MSFT_Volume instance matches %s", q)
		}
		return wmi.Props{"ReturnValue": int64(0)}, nil
	}
	if err := f.backend().Volume().FormatVolume(ctx, volA); err != nil {
		t.Fatal(err)
	}
	if f.count("UniqueId") != 2 || !f.called("UpdateHostStorageCache") || !f.called(`WHERE Path = '\\\\?\\Volume{0c8a`) {
		t.Errorf("calls = %v", f.calls)
	}

	// A format error is not retried under another name.
	f = newFake(t)
	f.wmiCall = func(q, method string, _ []wmi.Param) (wmi.Props, error) {
		return wmi.Props{"ReturnValue": int64(42010)}, &wmi.MethodError{Class: "MSFT_Volume", Method: method, Code: wmi.NotAllowedOnSystemDisk}
	}
	if err := f.backend().Volume().FormatVolume(ctx, volC); !errors.Is(err, errdefs.ErrFailedPrecondition) || f.called("Path =") {
		t.Errorf("FormatVolume(system) = %v; calls %v", err, f.calls)
	}
}

func TestDiskNumber(t *testing.T) {
	f := newFake(t)
	f.addVolume(volA, 3, 2)
	f.on(volumeDevice(volB), ioctlVolumeGetVolumeDiskExtents, moreData(extentsBuf(4, 4, 4)))
	f.on(volumeDevice(volX), ioctlVolumeGetVolumeDiskExtents, moreData(extentsBuf(4, 5)))
	f.on(volumeDevice(volR), ioctlVolumeGetVolumeDiskExtents, moreData(extentsBuf()))
	v := f.backend().Volume()
	if n, err := v.DiskNumber(ctx, volA); err != nil || n != 3 {
		t.Errorf("DiskNumber(A) = %d, %v", n, err)
	}
	if n, err := v.DiskNumber(ctx, volB); err != nil || n != 4 {
		t.Errorf("DiskNumber(B, 3 extents on one disk) = %d, %v", n, err)
	}
	if !f.called("IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS out=80") {
		t.Errorf("no retry with the extent count: %v", f.calls)
	}
	if _, err := v.DiskNumber(ctx, volX); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("DiskNumber(spanned) = %v", err)
	}
	if _, err := v.DiskNumber(ctx, volR); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("DiskNumber(no extents) = %v", err)
	}
	if _, err := v.DiskNumber(ctx, volC); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("DiskNumber(missing) = %v", err)
	}
}

func TestFlushVolume(t *testing.T) {
	f := newFake(t)
	f.device(volumeDevice(volA))
	if err := f.backend().Volume().FlushVolume(ctx, volA); err != nil {
		t.Fatal(err)
	}
	// The volume itself (no trailing backslash), opened for writing.
	f.expect(`open \\?\Volume{0c8a1d6e-5b2a-4a8e-9c1e-1d2f3a4b5c6d} read-write`,
		`flush \\?\Volume{0c8a1d6e-5b2a-4a8e-9c1e-1d2f3a4b5c6d}`,
		`close \\?\Volume{0c8a1d6e-5b2a-4a8e-9c1e-1d2f3a4b5c6d}`)
	f.device(volumeDevice(volB)).openErr = syscall.Errno(errAccessDenied)
	if err := f.backend().Volume().FlushVolume(ctx, volB); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("FlushVolume(denied) = %v", err)
	}
	if err := f.backend().Volume().FlushVolume(ctx, volC); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("FlushVolume(missing) = %v", err)
	}
}

// TestFlushVolumeReadOnly: a write-protected or read-only volume cannot
// be opened for writing (ERROR_WRITE_PROTECT, or ERROR_ACCESS_DENIED on
// open or flush), and has nothing to flush: WriteVolumeCache succeeds.
// ERROR_ACCESS_DENIED on a writable volume (IOCTL_DISK_IS_WRITABLE
// succeeds) is still PermissionDenied (issue 11 item 7).
func TestFlushVolumeReadOnly(t *testing.T) {
	for _, c := range []struct {
		name      string
		setup     func(d *fakeDevice)
		wantErr   error
		wantProbe bool
	}{
		{"open write-protected", func(d *fakeDevice) { d.writeOpenErr = syscall.Errno(errWriteProtect) }, nil, false},
		{"flush write-protected", func(d *fakeDevice) { d.flushErr = syscall.Errno(errWriteProtect) }, nil, false},
		{"open denied, read-only", func(d *fakeDevice) {
			d.writeOpenErr = syscall.Errno(errAccessDenied)
			d.ioctls[ioctlDiskIsWritable] = fails(errWriteProtect)
		}, nil, true},
		{"flush denied, read-only", func(d *fakeDevice) {
			d.flushErr = syscall.Errno(errAccessDenied)
			d.ioctls[ioctlDiskIsWritable] = fails(errWriteProtect)
		}, nil, true},
		{"open denied, writable", func(d *fakeDevice) {
			d.writeOpenErr = syscall.Errno(errAccessDenied)
			d.ioctls[ioctlDiskIsWritable] = fixed(nil)
		}, errdefs.ErrPermissionDenied, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			c.setup(f.device(volumeDevice(volA)))
			err := f.backend().Volume().FlushVolume(ctx, volA)
			if c.wantErr == nil && err != nil || c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Errorf("FlushVolume = %v, want %v", err, c.wantErr)
			}
			if got := f.called("IOCTL_DISK_IS_WRITABLE"); got != c.wantProbe {
				t.Errorf("IOCTL_DISK_IS_WRITABLE asked: %v, want %v; calls %v", got, c.wantProbe, f.calls)
			}
		})
	}
}

// TestUnmountVolumeReadOnly: a flush refused for want of write access
// (read-only volume, or any ERROR_ACCESS_DENIED/ERROR_WRITE_PROTECT) does
// not stop the unmount, which otherwise fails forever and NodeUnstage
// loops; the mount point is removed and the skipped flush reported.
func TestUnmountVolumeReadOnly(t *testing.T) {
	for _, setup := range []func(d *fakeDevice){
		func(d *fakeDevice) { d.writeOpenErr = syscall.Errno(errWriteProtect) },
		func(d *fakeDevice) { d.flushErr = syscall.Errno(errWriteProtect) },
		func(d *fakeDevice) {
			d.flushErr = syscall.Errno(errAccessDenied)
			d.ioctls[ioctlDiskIsWritable] = fixed(nil)
		},
	} {
		f := newFake(t)
		setup(f.device(volumeDevice(volA)))
		var warnings []string
		b, err := newBackend(f, Config{Warnf: func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Volume().UnmountVolume(ctx, volA, stage); err != nil {
			t.Errorf("UnmountVolume = %v; calls %v", err, f.calls)
		}
		if !f.called("deleteVolumeMountPoint " + stage + `\`) {
			t.Errorf("the mount point was not removed: %v", f.calls)
		}
		if len(warnings) > 1 {
			t.Errorf("warnings = %q", warnings)
		}
	}
}

// (idempotent mount, no second format, the 100 MiB resize rule) on top of
// this backend.
func TestThroughService(t *testing.T) {
	policy, err := hostpath.NewPolicy(hostpath.Windows, []string{kubelet})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("MountVolume of the same volume at the same path is success without a call", func(t *testing.T) {
		f := newFake(t)
		f.mountedFolder(stage, volA)
		s := volume.NewService(f.backend().Volume(), policy)
		if _, err := s.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: volA, TargetPath: strings.ToLower(stage)}); err != nil {
			t.Fatal(err)
		}
		if f.called("setVolumeMountPoint") {
			t.Errorf("calls = %v", f.calls)
		}
	})
	t.Run("MountVolume where another volume is mounted", func(t *testing.T) {
		f := newFake(t)
		f.mountedFolder(stage, volB)
		s := volume.NewService(f.backend().Volume(), policy)
		_, err := s.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: volA, TargetPath: stage})
		if !errors.Is(err, errdefs.ErrFailedPrecondition) {
			t.Errorf("MountVolume = %v", err)
		}
	})
	t.Run("UnmountVolume where nothing is mounted", func(t *testing.T) {
		f := newFake(t)
		f.dir(stage)
		s := volume.NewService(f.backend().Volume(), policy)
		if _, err := s.UnmountVolume(ctx, &volume.UnmountVolumeRequest{VolumeID: volA, TargetPath: stage}); err != nil {
			t.Fatal(err)
		}
		if f.called("deleteVolumeMountPoint") || f.called("flush") {
			t.Errorf("calls = %v", f.calls)
		}
	})
	t.Run("FormatVolume of a formatted volume is refused without a format", func(t *testing.T) {
		f := newFake(t)
		f.device(volumeDevice(volA))
		f.fsNames[volA] = "NTFS"
		s := volume.NewService(f.backend().Volume(), policy)
		_, err := s.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: volA})
		if !errors.Is(err, errdefs.ErrFailedPrecondition) || f.called("Format(") {
			t.Errorf("FormatVolume = %v; calls %v", err, f.calls)
		}
	})
	t.Run("ResizeVolume(0) with less than 100 MiB to gain does nothing", func(t *testing.T) {
		f := resizeFake(t, 1000, 1099)
		s := volume.NewService(f.backend().Volume(), policy)
		if _, err := s.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: volA}); err != nil {
			t.Fatal(err)
		}
		if f.called(".Resize(") {
			t.Errorf("calls = %v", f.calls)
		}
	})
	t.Run("ResizeVolume(0) grows to SizeMax", func(t *testing.T) {
		f := resizeFake(t, 1000, 2000)
		s := volume.NewService(f.backend().Volume(), policy)
		if _, err := s.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: volA}); err != nil {
			t.Fatal(err)
		}
		if !f.called(".Resize(Size=2097152000)") {
			t.Errorf("calls = %v", f.calls)
		}
	})
	t.Run("GetVolumeIDFromTargetPath", func(t *testing.T) {
		f := newFake(t)
		f.mountedFolder(stage, volA)
		s := volume.NewService(f.backend().Volume(), policy)
		r, err := s.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: stage})
		if err != nil || r.VolumeID != volA {
			t.Errorf("GetVolumeIDFromTargetPath = %+v, %v", r, err)
		}
	})
}

func TestNewOutsideWindows(t *testing.T) {
	if _, err := newSystem(); err == nil {
		t.Skip("running on Windows")
	}
	if _, err := New(Config{}); !errors.Is(err, errdefs.ErrUnimplemented) {
		t.Errorf("New = %v, want unimplemented", err)
	}
}

// errnoUnrecognizedVolume is what GetVolumeInformation gives for RAW.
func errnoUnrecognizedVolume() error { return syscall.Errno(errUnrecognizedVolume) }
