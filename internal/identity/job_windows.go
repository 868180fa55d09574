//go:build windows

package identity

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Functions x/sys does not declare.
var (
	modkernel32        = windows.NewLazySystemDLL("kernel32.dll")
	modntdll           = windows.NewLazySystemDLL("ntdll.dll")
	procIsProcessInJob = modkernel32.NewProc("IsProcessInJob")
	procNtQueryObject  = modntdll.NewProc("NtQueryObject")
)

const (
	jobObjectQuery        = 0x0004 // JOB_OBJECT_QUERY
	objectNameInformation = 1      // OBJECT_INFORMATION_CLASS ObjectNameInformation
	localSystemSID        = "S-1-5-18"
	maxHandleInfo         = 512 << 20 // give up on a handle table larger than this
)

// containerHosts are the image names of the processes that create and hold
// container jobs: the Host Compute Service (process-isolated containers)
// and the runhcs shim (HostProcess containers). Their jobs are trusted only
// when such a process runs as LocalSystem, which no unprivileged process
// can fake.
var containerHosts = map[string]bool{"vmcompute.exe": true, "containerd-shim-runhcs-v1.exe": true}

// isProcessInJob calls IsProcessInJob; job 0 asks about any job.
func isProcessInJob(proc, job windows.Handle) (bool, error) {
	if err := procIsProcessInJob.Find(); err != nil {
		return false, err
	}
	var result int32
	r1, _, err := procIsProcessInJob.Call(uintptr(proc), uintptr(job), uintptr(unsafe.Pointer(&result)))
	if r1 == 0 {
		return false, fmt.Errorf("IsProcessInJob: %w", err)
	}
	return result != 0, nil
}

// handleEntry is SYSTEM_HANDLE_TABLE_ENTRY_INFO_EX.
type handleEntry struct {
	Object                uintptr
	UniqueProcessID       uintptr
	HandleValue           uintptr
	GrantedAccess         uint32
	CreatorBackTraceIndex uint16
	ObjectTypeIndex       uint16
	HandleAttributes      uint32
	Reserved              uint32
}

// handleInfoHeader is the head of SYSTEM_HANDLE_INFORMATION_EX.
type handleInfoHeader struct {
	NumberOfHandles uintptr
	Reserved        uintptr
}

// systemHandles returns every open handle in the system.
func systemHandles() ([]handleEntry, error) {
	size := uint32(4 << 20)
	for {
		buf := make([]uintptr, size/uint32(unsafe.Sizeof(uintptr(0))))
		var ret uint32
		err := windows.NtQuerySystemInformation(int32(windows.SystemExtendedHandleInformation), unsafe.Pointer(&buf[0]), size, &ret)
		if errors.Is(err, windows.STATUS_INFO_LENGTH_MISMATCH) {
			if size >= maxHandleInfo {
				return nil, errors.New("the system handle table is too large")
			}
			size = max(size*2, ret+ret/4)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("NtQuerySystemInformation: %w", err)
		}
		hdr := (*handleInfoHeader)(unsafe.Pointer(&buf[0]))
		n := int(hdr.NumberOfHandles)
		avail := (uintptr(size) - unsafe.Sizeof(*hdr)) / unsafe.Sizeof(handleEntry{})
		if uintptr(n) > avail {
			return nil, errors.New("malformed system handle table")
		}
		first := unsafe.Add(unsafe.Pointer(&buf[0]), unsafe.Sizeof(*hdr))
		return append([]handleEntry(nil), unsafe.Slice((*handleEntry)(first), n)...), nil
	}
}

var (
	jobTypeMu    sync.Mutex
	jobTypeIndex uint16 // 0 until learned; stable for the life of the system
)

// jobType returns the object type index of job objects, learned by finding
// a job handle of our own in the handle table.
func jobType(handles []handleEntry, own windows.Handle) (uint16, bool) {
	me := uintptr(windows.GetCurrentProcessId())
	for _, h := range handles {
		if h.UniqueProcessID == me && h.HandleValue == uintptr(own) {
			return h.ObjectTypeIndex, true
		}
	}
	return 0, false
}

// containerJobsOf returns the IDs of the container jobs that hold proc.
func containerJobsOf(proc windows.Handle) ([]string, error) {
	own, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("create a probe job: %w", err)
	}
	handles, err := systemHandles()
	jobTypeMu.Lock()
	if err == nil && jobTypeIndex == 0 {
		if t, ok := jobType(handles, own); ok {
			jobTypeIndex = t
		}
	}
	typ := jobTypeIndex
	jobTypeMu.Unlock()
	_ = windows.CloseHandle(own) // a probe; nothing to do if closing fails
	if err != nil {
		return nil, err
	}
	if typ == 0 {
		return nil, errors.New("cannot tell job handles from others")
	}

	me := windows.CurrentProcess()
	trusted := map[uintptr]windows.Handle{} // owner PID → open handle, or 0 when not trusted
	defer func() {
		for _, h := range trusted {
			if h != 0 {
				_ = windows.CloseHandle(h) // our own handle; nothing to report
			}
		}
	}()
	seen := map[uintptr]bool{} // kernel objects already looked at
	var ids []string
	for _, h := range handles {
		if h.ObjectTypeIndex != typ || seen[h.Object] {
			continue
		}
		owner, ok := trusted[h.UniqueProcessID]
		if !ok {
			owner = openContainerHost(uint32(h.UniqueProcessID))
			trusted[h.UniqueProcessID] = owner
		}
		if owner == 0 {
			continue
		}
		seen[h.Object] = true
		var job windows.Handle
		if err := windows.DuplicateHandle(owner, windows.Handle(h.HandleValue), me, &job, jobObjectQuery, false, 0); err != nil {
			continue
		}
		id := ""
		if in, err := isProcessInJob(proc, job); err == nil && in {
			if name, err := objectName(job); err == nil {
				id = ContainerIDFromJobName(name)
			}
		}
		_ = windows.CloseHandle(job) // our duplicate; nothing to report
		if id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// openContainerHost opens pid for handle duplication if it is a container
// host process running as LocalSystem, or returns 0.
func openContainerHost(pid uint32) windows.Handle {
	if pid == 0 || pid == 4 || pid == windows.GetCurrentProcessId() {
		return 0
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.PROCESS_DUP_HANDLE, false, pid)
	if err != nil {
		return 0
	}
	if !isContainerHost(h) {
		_ = windows.CloseHandle(h) // our own handle; nothing to report
		return 0
	}
	return h
}

// isContainerHost tells whether the process is one of containerHosts
// running as LocalSystem.
func isContainerHost(h windows.Handle) bool {
	image, err := processImage(h)
	if err != nil || !containerHosts[strings.ToLower(filepath.Base(image))] {
		return false
	}
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return false
	}
	defer tok.Close() //nolint:errcheck // our own query handle; nothing to report
	u, err := tok.GetTokenUser()
	return err == nil && u.User.Sid.String() == localSystemSID
}

// objectName returns the kernel name of an object (NtQueryObject
// ObjectNameInformation). Only called on job handles: on some other types
// (synchronous pipes) the query can block.
func objectName(h windows.Handle) (string, error) {
	if err := procNtQueryObject.Find(); err != nil {
		return "", err
	}
	size := uint32(1024)
	for range 4 {
		buf := make([]uintptr, size/uint32(unsafe.Sizeof(uintptr(0))))
		var ret uint32
		r0, _, _ := procNtQueryObject.Call(uintptr(h), objectNameInformation, uintptr(unsafe.Pointer(&buf[0])), uintptr(size), uintptr(unsafe.Pointer(&ret)))
		st := windows.NTStatus(r0)
		if st == windows.STATUS_INFO_LENGTH_MISMATCH || st == windows.STATUS_BUFFER_OVERFLOW || st == windows.STATUS_BUFFER_TOO_SMALL {
			size = max(size*2, ret)
			continue
		}
		if st != windows.STATUS_SUCCESS {
			return "", fmt.Errorf("NtQueryObject: %w", st)
		}
		us := (*windows.NTUnicodeString)(unsafe.Pointer(&buf[0]))
		if us.Buffer == nil || us.Length == 0 {
			return "", nil
		}
		return windows.UTF16ToString(unsafe.Slice(us.Buffer, us.Length/2)), nil
	}
	return "", errors.New("NtQueryObject: the name does not fit")
}
