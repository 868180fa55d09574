package storage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// fakeSystem is the recording test double behind the system seam. Every
// call is appended to calls in a readable form; tests compare the list to
// the sequence Windows should see. Objects are set up per test:
// devices (anything open can open, keyed by the exact path), files
// (attributes, reparse tags and reparse data), mount points, and WMI
// handlers.
type fakeSystem struct {
	t *testing.T
	// mu guards calls: a WMI call abandoned after its deadline records
	// from its own goroutine.
	mu    sync.Mutex
	calls []string

	handles map[handle]string
	next    handle

	diskList    []string
	diskListErr error
	volumeList  []string
	volumesErr  error

	devices map[string]*fakeDevice
	files   map[string]*fakeFile
	// mounts answers GetVolumeNameForVolumeMountPoint (keys end with \).
	mounts map[string]string
	// mountErr overrides the answer for a mount point.
	mountErr map[string]error

	setMountErr    error
	deleteMountErr error
	mkdirErr       error
	fsNames        map[string]string
	fsErrs         map[string]error
	space          map[string][2]uint64 // total, free
	spaceErr       error

	// wmiQuery, wmiCall and wmiStatic answer WMI; nil means "no rows" for
	// queries and ReturnValue 0 for methods.
	wmiQuery  func(q string) ([]wmi.Props, error)
	wmiCall   func(q, method string, in []wmi.Param) (wmi.Props, error)
	wmiStatic func(class, method string) (wmi.Props, error)
}

// fakeDevice is something open can open: a disk, a volume, or a file
// opened for its reparse data.
type fakeDevice struct {
	openErr error
	// writeOpenErr fails only read-write opens (a write-protected
	// volume), after openErr.
	writeOpenErr error
	ioctls       map[uint32]reply
	flushErr     error
}

// reply answers one IOCTL given the caller's output size.
type reply func(in []byte, outLen int) ([]byte, error)

// fakeFile is a path's GetFileAttributes and FindFirstFile answers.
type fakeFile struct {
	attrs   uint32
	tag     uint32
	reparse []byte // FSCTL_GET_REPARSE_POINT output; nil: not a reparse point
}

func newFake(t *testing.T) *fakeSystem {
	f := &fakeSystem{
		t:        t,
		handles:  map[handle]string{},
		next:     100,
		devices:  map[string]*fakeDevice{},
		files:    map[string]*fakeFile{},
		mounts:   map[string]string{},
		mountErr: map[string]error{},
		fsNames:  map[string]string{},
		fsErrs:   map[string]error{},
		space:    map[string][2]uint64{},
	}
	t.Cleanup(func() {
		if len(f.handles) != 0 {
			t.Errorf("handles left open: %v", f.handles)
		}
	})
	return f
}

// backend returns a Backend on the fake with the default configuration.
func (f *fakeSystem) backend() *Backend {
	b, err := newBackend(f, Config{})
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

func (f *fakeSystem) record(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

// recorded returns a copy of the calls so far.
func (f *fakeSystem) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// device returns (creating) the device at path.
func (f *fakeSystem) device(path string) *fakeDevice {
	d, ok := f.devices[path]
	if !ok {
		d = &fakeDevice{ioctls: map[uint32]reply{}}
		f.devices[path] = d
	}
	return d
}

// on sets the reply of one IOCTL on the device at path.
func (f *fakeSystem) on(path string, code uint32, r reply) *fakeSystem {
	f.device(path).ioctls[code] = r
	return f
}

// Reply helpers, each mimicking how a class of IOCTL behaves when the
// output buffer is too small.

// fixed fails with ERROR_INSUFFICIENT_BUFFER when b does not fit
// (IOCTL_DISK_GET_DRIVE_LAYOUT_EX, fixed-size structures).
func fixed(b []byte) reply {
	return func(_ []byte, outLen int) ([]byte, error) {
		if outLen < len(b) {
			return nil, syscall.Errno(errInsufficientBuffer)
		}
		return b, nil
	}
}

// truncating returns as much as fits and succeeds
// (IOCTL_STORAGE_QUERY_PROPERTY: the header's Size tells the full size).
func truncating(b []byte) reply {
	return func(_ []byte, outLen int) ([]byte, error) {
		return b[:min(outLen, len(b))], nil
	}
}

// moreData returns as much as fits with ERROR_MORE_DATA
// (IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS).
func moreData(b []byte) reply {
	return func(_ []byte, outLen int) ([]byte, error) {
		if outLen < len(b) {
			return b[:min(outLen, len(b))], syscall.Errno(errMoreData)
		}
		return b, nil
	}
}

// fails always fails with a Win32 code.
func fails(code uint32) reply {
	return func([]byte, int) ([]byte, error) { return nil, syscall.Errno(code) }
}

var ioctlNames = map[uint32]string{
	ioctlStorageGetDeviceNumber:     "IOCTL_STORAGE_GET_DEVICE_NUMBER",
	ioctlStorageQueryProperty:       "IOCTL_STORAGE_QUERY_PROPERTY",
	ioctlSCSIGetAddress:             "IOCTL_SCSI_GET_ADDRESS",
	ioctlDiskGetLengthInfo:          "IOCTL_DISK_GET_LENGTH_INFO",
	ioctlDiskGetDriveLayoutEx:       "IOCTL_DISK_GET_DRIVE_LAYOUT_EX",
	ioctlDiskGetDiskAttributes:      "IOCTL_DISK_GET_DISK_ATTRIBUTES",
	ioctlDiskIsWritable:             "IOCTL_DISK_IS_WRITABLE",
	ioctlVolumeGetVolumeDiskExtents: "IOCTL_VOLUME_GET_VOLUME_DISK_EXTENTS",
	fsctlGetReparsePoint:            "FSCTL_GET_REPARSE_POINT",
}

func (f *fakeSystem) diskInterfaces() ([]string, error) {
	f.record("diskInterfaces")
	return f.diskList, f.diskListErr
}

func (f *fakeSystem) volumes() ([]string, error) {
	f.record("volumes")
	return f.volumeList, f.volumesErr
}

func (f *fakeSystem) open(path string, mode openMode) (handle, error) {
	f.record("open %s %s", path, mode)
	if mode == modeReparse {
		file, ok := f.files[path]
		if !ok {
			return 0, syscall.Errno(errFileNotFound)
		}
		f.next++
		f.handles[f.next] = path
		d := f.device(path)
		if file.reparse == nil {
			d.ioctls[fsctlGetReparsePoint] = fails(errNotAReparsePoint)
		} else {
			d.ioctls[fsctlGetReparsePoint] = fixed(file.reparse)
		}
		return f.next, nil
	}
	d, ok := f.devices[path]
	if !ok {
		return 0, syscall.Errno(errFileNotFound)
	}
	if d.openErr != nil {
		return 0, d.openErr
	}
	if mode == modeReadWrite && d.writeOpenErr != nil {
		return 0, d.writeOpenErr
	}
	f.next++
	f.handles[f.next] = path
	return f.next, nil
}

func (f *fakeSystem) close(h handle) error {
	path, ok := f.handles[h]
	if !ok {
		f.t.Errorf("close of handle %d, which is not open", h)
		return syscall.Errno(errInvalidHandle)
	}
	delete(f.handles, h)
	f.record("close %s", path)
	return nil
}

func (f *fakeSystem) ioctl(h handle, code uint32, in []byte, outLen int) ([]byte, error) {
	path, ok := f.handles[h]
	if !ok {
		f.t.Errorf("ioctl on handle %d, which is not open", h)
		return nil, syscall.Errno(errInvalidHandle)
	}
	name := ioctlNames[code]
	if name == "" {
		name = fmt.Sprintf("%#x", code)
	}
	if code == ioctlStorageQueryProperty && len(in) >= 4 {
		name += fmt.Sprintf("(%d)", le.Uint32(in))
	}
	f.record("ioctl %s %s out=%d", path, name, outLen)
	r, ok := f.devices[path].ioctls[code]
	if !ok {
		return nil, syscall.Errno(errInvalidFunction)
	}
	return r(in, outLen)
}

func (f *fakeSystem) flush(h handle) error {
	path := f.handles[h]
	f.record("flush %s", path)
	return f.devices[path].flushErr
}

func (f *fakeSystem) volumeNameForMountPoint(mp string) (string, error) {
	f.record("volumeNameForMountPoint %s", mp)
	if err := f.mountErr[mp]; err != nil {
		return "", err
	}
	if v, ok := f.mounts[mp]; ok {
		return v, nil
	}
	return "", syscall.Errno(errNotAReparsePoint)
}

func (f *fakeSystem) setVolumeMountPoint(mp, vol string) error {
	f.record("setVolumeMountPoint %s %s", mp, vol)
	return f.setMountErr
}

func (f *fakeSystem) deleteVolumeMountPoint(mp string) error {
	f.record("deleteVolumeMountPoint %s", mp)
	return f.deleteMountErr
}

// volumePathNames answers from mounts: every mount point naming the
// volume, sorted; a volume in neither mounts nor volumeList is
// ERROR_FILE_NOT_FOUND.
func (f *fakeSystem) volumePathNames(vol string) ([]string, error) {
	f.record("volumePathNames %s", vol)
	var out []string
	for mp, v := range f.mounts {
		if strings.EqualFold(v, vol) {
			out = append(out, mp)
		}
	}
	if out == nil && !slices.ContainsFunc(f.volumeList, func(v string) bool { return strings.EqualFold(v, vol) }) {
		return nil, syscall.Errno(errFileNotFound)
	}
	slices.Sort(out)
	return out, nil
}

func (f *fakeSystem) fileSystemName(root string) (string, error) {
	f.record("fileSystemName %s", root)
	if err := f.fsErrs[root]; err != nil {
		return "", err
	}
	return f.fsNames[root], nil
}

func (f *fakeSystem) diskFreeSpace(dir string) (uint64, uint64, error) {
	f.record("diskFreeSpace %s", dir)
	if f.spaceErr != nil {
		return 0, 0, f.spaceErr
	}
	s := f.space[dir]
	return s[0], s[1], nil
}

func (f *fakeSystem) attributes(path string) (uint32, error) {
	f.record("attributes %s", path)
	file, ok := f.files[path]
	if !ok {
		return 0, syscall.Errno(errFileNotFound)
	}
	return file.attrs, nil
}

func (f *fakeSystem) reparseTag(path string) (uint32, error) {
	f.record("reparseTag %s", path)
	file, ok := f.files[path]
	if !ok {
		return 0, syscall.Errno(errFileNotFound)
	}
	return file.tag, nil
}

func (f *fakeSystem) mkdir(path string) error {
	f.record("mkdir %s", path)
	if f.mkdirErr == nil {
		f.files[path] = &fakeFile{attrs: fileAttributeDirectory}
	}
	return f.mkdirErr
}

func (f *fakeSystem) query(_ context.Context, q *wmi.WQL) ([]wmi.Props, error) {
	text, err := q.Build()
	if err != nil {
		return nil, err
	}
	f.record("wmi query %s", text)
	if f.wmiQuery == nil {
		return nil, nil
	}
	return f.wmiQuery(text)
}

func (f *fakeSystem) call(_ context.Context, q *wmi.WQL, method string, in ...wmi.Param) (wmi.Props, error) {
	text, err := q.Build()
	if err != nil {
		return nil, err
	}
	args := make([]string, len(in))
	for i, p := range in {
		if _, _, err := wmi.Encode(p.Value()); err != nil {
			f.t.Errorf("%s.%s: parameter %s cannot be encoded: %v", q.Class(), method, p.Name(), err)
		}
		args[i] = p.String()
	}
	f.record("wmi call %s .%s(%s)", text, method, strings.Join(args, ", "))
	if f.wmiCall == nil {
		return wmi.Props{"ReturnValue": int64(0)}, nil
	}
	return f.wmiCall(text, method, in)
}

func (f *fakeSystem) callStatic(_ context.Context, class, method string, in ...wmi.Param) (wmi.Props, error) {
	f.record("wmi static %s.%s", class, method)
	if f.wmiStatic == nil {
		return wmi.Props{"ReturnValue": int64(0)}, nil
	}
	return f.wmiStatic(class, method)
}

// expect compares the recorded calls with want, exactly and in order.
func (f *fakeSystem) expect(want ...string) {
	f.t.Helper()
	if calls := f.recorded(); !slices.Equal(calls, want) {
		f.t.Errorf("calls:\n\t%s\nwant:\n\t%s", strings.Join(calls, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// called tells whether some recorded call contains s.
func (f *fakeSystem) called(s string) bool {
	for _, c := range f.recorded() {
		if strings.Contains(c, s) {
			return true
		}
	}
	return false
}

// count tells how many recorded calls contain s.
func (f *fakeSystem) count(s string) int {
	n := 0
	for _, c := range f.recorded() {
		if strings.Contains(c, s) {
			n++
		}
	}
	return n
}

// reset forgets the recorded calls.
func (f *fakeSystem) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = nil
}

var _ system = (*fakeSystem)(nil)
