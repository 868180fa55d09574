//go:build windows

package storage

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sys/windows"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// guidDevInterfaceDisk is GUID_DEVINTERFACE_DISK
// {53F56307-B6BF-11D0-94F2-00A0C91EFB8B} (ntddstor.h), the interface every
// disk stack registers, including the native NVMe stack whose setup class
// differs (Learn "Disk enumeration").
var guidDevInterfaceDisk = windows.GUID{
	Data1: 0x53f56307, Data2: 0xb6bf, Data3: 0x11d0,
	Data4: [8]byte{0x94, 0xf2, 0x00, 0xa0, 0xc9, 0x1e, 0xfb, 0x8b},
}

// winSystem is the seam implemented with Win32 calls from
// golang.org/x/sys/windows (every one the backend needs is there, so no
// mkwinsyscall declarations are required) and a wmi.Client for the
// Storage Management API.
type winSystem struct {
	wmi *wmi.Client
}

func newSystem() (system, error) {
	return winSystem{wmi: wmi.NewClient(wmi.StorageNamespace)}, nil
}

// cmMapCrToWin32Err is looked up once to know whether a CONFIGRET error
// may be passed on: x/sys's CONFIGRET.Error and Unwrap call
// CM_MapCrToWin32Err and panic where it is missing (before Windows 8, and
// under Wine).
var cmMapCrToWin32Err = windows.NewLazySystemDLL("cfgmgr32.dll").NewProc("CM_MapCrToWin32Err")

func (winSystem) diskInterfaces() ([]string, error) {
	list, err := windows.CM_Get_Device_Interface_List("", &guidDevInterfaceDisk, windows.CM_GET_DEVICE_INTERFACE_LIST_PRESENT)
	switch e := err.(type) { //nolint:errorlint // the concrete types x/sys returns, checked without unwrapping (see cmMapCrToWin32Err)
	case nil:
		return list, nil
	case windows.Errno:
		if e == windows.ERROR_NO_SUCH_DEVICE_INTERFACE {
			return nil, nil // no disk at all
		}
	case windows.CONFIGRET:
		if cmMapCrToWin32Err.Find() != nil {
			return nil, fmt.Errorf("CM_Get_Device_Interface_List: CfgMgr error %#08x", uint32(e))
		}
	}
	return nil, err
}

func (winSystem) volumes() ([]string, error) {
	buf := make([]uint16, windows.MAX_PATH+1)
	h, err := windows.FindFirstVolume(&buf[0], uint32(len(buf)))
	if err != nil {
		return nil, err
	}
	defer func() { _ = windows.FindVolumeClose(h) }() // an enumeration handle: nothing to report
	var out []string
	for {
		out = append(out, windows.UTF16ToString(buf))
		err := windows.FindNextVolume(h, &buf[0], uint32(len(buf)))
		if errors.Is(err, windows.ERROR_NO_MORE_FILES) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (winSystem) open(path string, mode openMode) (handle, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, err
	}
	share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE)
	var access, flags uint32
	switch mode {
	case modeQuery:
	case modeRead:
		access = windows.GENERIC_READ
	case modeReadWrite:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	case modeReparse:
		share |= windows.FILE_SHARE_DELETE
		flags = windows.FILE_FLAG_OPEN_REPARSE_POINT | windows.FILE_FLAG_BACKUP_SEMANTICS
	}
	h, err := windows.CreateFile(p, access, share, nil, windows.OPEN_EXISTING, flags, 0)
	if err != nil {
		return 0, err
	}
	return handle(h), nil
}

func (winSystem) close(h handle) error { return windows.CloseHandle(windows.Handle(h)) }

func (winSystem) ioctl(h handle, code uint32, in []byte, outLen int) ([]byte, error) {
	out := make([]byte, outLen)
	var inPtr, outPtr *byte
	if len(in) > 0 {
		inPtr = &in[0]
	}
	if outLen > 0 {
		outPtr = &out[0]
	}
	var n uint32
	err := windows.DeviceIoControl(windows.Handle(h), code, inPtr, uint32(len(in)), outPtr, uint32(outLen), &n, nil)
	if int(n) > outLen {
		n = uint32(outLen)
	}
	if err != nil {
		if errors.Is(err, windows.ERROR_MORE_DATA) {
			if n == 0 {
				return out, err // the header is at the start even if the count was not reported
			}
			return out[:n], err
		}
		return nil, err
	}
	return out[:n], nil
}

func (winSystem) flush(h handle) error { return windows.FlushFileBuffers(windows.Handle(h)) }

func (winSystem) volumeNameForMountPoint(mountPoint string) (string, error) {
	p, err := windows.UTF16PtrFromString(mountPoint)
	if err != nil {
		return "", err
	}
	buf := make([]uint16, windows.MAX_PATH+1) // Learn: 50 characters suffice
	if err := windows.GetVolumeNameForVolumeMountPoint(p, &buf[0], uint32(len(buf))); err != nil {
		return "", err
	}
	return windows.UTF16ToString(buf), nil
}

func (winSystem) setVolumeMountPoint(mountPoint, volume string) error {
	mp, err := windows.UTF16PtrFromString(mountPoint)
	if err != nil {
		return err
	}
	v, err := windows.UTF16PtrFromString(volume)
	if err != nil {
		return err
	}
	return windows.SetVolumeMountPoint(mp, v)
}

func (winSystem) deleteVolumeMountPoint(mountPoint string) error {
	mp, err := windows.UTF16PtrFromString(mountPoint)
	if err != nil {
		return err
	}
	return windows.DeleteVolumeMountPoint(mp)
}

func (winSystem) volumePathNames(volume string) ([]string, error) {
	name, err := windows.UTF16PtrFromString(volume)
	if err != nil {
		return nil, err
	}
	n := uint32(windows.MAX_PATH + 1)
	for range 4 { // the list can grow between the calls
		buf := make([]uint16, n)
		err := windows.GetVolumePathNamesForVolumeName(name, &buf[0], n, &n)
		if errors.Is(err, windows.ERROR_MORE_DATA) {
			continue
		}
		if err != nil {
			return nil, err
		}
		// A list of NUL-terminated strings ended by an empty one.
		var out []string
		for start, i := 0, 0; i < len(buf); i++ {
			if buf[i] != 0 {
				continue
			}
			if i == start {
				break
			}
			out = append(out, windows.UTF16ToString(buf[start:i]))
			start = i + 1
		}
		return out, nil
	}
	return nil, windows.ERROR_MORE_DATA
}

func (winSystem) fileSystemName(root string) (string, error) {
	r, err := windows.UTF16PtrFromString(root)
	if err != nil {
		return "", err
	}
	buf := make([]uint16, windows.MAX_PATH+1)
	if err := windows.GetVolumeInformation(r, nil, 0, nil, nil, nil, &buf[0], uint32(len(buf))); err != nil {
		return "", err
	}
	return windows.UTF16ToString(buf), nil
}

func (winSystem) diskFreeSpace(dir string) (total, free uint64, err error) {
	d, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, 0, err
	}
	var avail uint64
	err = windows.GetDiskFreeSpaceEx(d, &avail, &total, &free)
	return total, free, err
}

func (winSystem) attributes(path string) (uint32, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, err
	}
	return windows.GetFileAttributes(p)
}

func (winSystem) reparseTag(path string) (uint32, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, err
	}
	var fd windows.Win32finddata
	h, err := windows.FindFirstFile(p, &fd)
	if err != nil {
		return 0, err
	}
	// Upstream never closes this handle; FindClose is the documented pair.
	_ = windows.FindClose(h)
	return fd.Reserved0, nil
}

func (winSystem) mkdir(path string) error {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return err
	}
	return windows.CreateDirectory(p, nil)
}

func (s winSystem) query(ctx context.Context, q *wmi.WQL) ([]wmi.Props, error) {
	return s.wmi.Query(ctx, q)
}

func (s winSystem) call(ctx context.Context, q *wmi.WQL, method string, in ...wmi.Param) (wmi.Props, error) {
	return s.wmi.Call(ctx, q, method, in...)
}

func (s winSystem) callStatic(ctx context.Context, class, method string, in ...wmi.Param) (wmi.Props, error) {
	return s.wmi.CallStatic(ctx, class, method, in...)
}
