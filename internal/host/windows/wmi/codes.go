package wmi

import (
	"fmt"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// ReturnCode is the UInt32 ReturnValue of a Storage Management API method
// (MSFT_Disk, MSFT_Partition, MSFT_Volume, MSFT_StorageSetting). The values
// are those the Learn method pages list; most methods share them.
type ReturnCode uint32

// Storage Management API return codes (Learn, "… method of the MSFT_Disk /
// MSFT_Partition / MSFT_Volume class"). Only the codes the backends act on
// or map get a name; every code in the table below still gets a message.
const (
	Success                           ReturnCode = 0
	NotSupported                      ReturnCode = 1
	UnspecifiedError                  ReturnCode = 2
	Timeout                           ReturnCode = 3
	Failed                            ReturnCode = 4
	InvalidParameter                  ReturnCode = 5
	SizeNotSupported                  ReturnCode = 4097
	CacheOutOfDate                    ReturnCode = 40003
	DiskNotInitialized                ReturnCode = 41000
	DiskAlreadyInitialized            ReturnCode = 41001
	DiskReadOnly                      ReturnCode = 41002
	DiskOffline                       ReturnCode = 41003
	ParameterNotValidForPartitionType ReturnCode = 41006
	AccessPathAlreadyInUse            ReturnCode = 42002
	NotAllowedOnSystemDisk            ReturnCode = 42010
	FileSystemNotSupported            ReturnCode = 43001
)

type codeInfo struct {
	text string
	kind error // nil: a host failure (codes.Internal)
}

// returnCodes is the table from the fact sheet (windows-apis.md §B3, §2.3).
// The kinds follow errdefs: a state the caller can change is
// ErrFailedPrecondition, a bad request ErrInvalidArgument, a size the disk
// cannot give ErrOutOfRange, a transient condition ErrUnavailable.
var returnCodes = map[ReturnCode]codeInfo{
	0:     {"Success", nil},
	1:     {"Not Supported", errdefs.ErrFailedPrecondition},
	2:     {"Unspecified Error", nil},
	3:     {"Timeout", errdefs.ErrUnavailable},
	4:     {"Failed", nil},
	5:     {"Invalid Parameter", errdefs.ErrInvalidArgument},
	6:     {"Disk is in use", errdefs.ErrUnavailable},
	7:     {"This command is not supported on x86 running in x64 environment", errdefs.ErrUnimplemented},
	4097:  {"Size Not Supported", errdefs.ErrOutOfRange},
	40000: {"Not enough available capacity", errdefs.ErrOutOfRange},
	40001: {"Access denied", errdefs.ErrPermissionDenied},
	40002: {"There are not enough resources to complete the operation", errdefs.ErrUnavailable},
	40003: {"Cache out of date", errdefs.ErrUnavailable},
	40004: {"An unexpected I/O error has occurred", nil},
	40005: {"You must specify a size by using either the Size or the UseMaximumSize parameter", errdefs.ErrInvalidArgument},
	40018: {"The operation is not allowed on a disk managed by Failover Clustering", errdefs.ErrFailedPrecondition},
	41000: {"The disk has not been initialized", errdefs.ErrFailedPrecondition},
	41001: {"The disk has already been initialized", errdefs.ErrFailedPrecondition},
	41002: {"The disk is read only", errdefs.ErrFailedPrecondition},
	41003: {"The disk is offline", errdefs.ErrFailedPrecondition},
	41004: {"The maximum number of partitions has been reached", errdefs.ErrFailedPrecondition},
	41005: {"The specified alignment is not a multiple of the sector size", errdefs.ErrInvalidArgument},
	41006: {"The specified parameter is not valid for this type of partition", errdefs.ErrInvalidArgument},
	41009: {"The operation is not supported on a critical disk", errdefs.ErrFailedPrecondition},
	41010: {"The specified partition type is not valid", errdefs.ErrInvalidArgument},
	41011: {"Only the first 2 TB are usable on MBR disks", errdefs.ErrOutOfRange},
	41012: {"The specified offset is not valid", errdefs.ErrInvalidArgument},
	41014: {"The disk is too small to be initialized as GPT", errdefs.ErrFailedPrecondition},
	41015: {"The disk has no media", errdefs.ErrFailedPrecondition},
	41016: {"The specified offset is not valid", errdefs.ErrInvalidArgument},
	41017: {"The partition layout is not valid", errdefs.ErrFailedPrecondition},
	41018: {"The operation is not allowed on a disk managed by Failover Clustering", errdefs.ErrFailedPrecondition},
	42002: {"The requested access path is already in use", errdefs.ErrFailedPrecondition},
	42004: {"Cannot assign access paths to hidden partitions", errdefs.ErrFailedPrecondition},
	42007: {"The access path is not valid", errdefs.ErrInvalidArgument},
	42008: {"Cannot shrink a partition containing a volume with errors", errdefs.ErrFailedPrecondition},
	42009: {"Cannot resize a partition containing an unknown file system", errdefs.ErrFailedPrecondition},
	42010: {"The operation is not allowed on a system or critical partition", errdefs.ErrFailedPrecondition},
	43000: {"The specified cluster size is invalid", errdefs.ErrInvalidArgument},
	43001: {"The specified file system is not supported", errdefs.ErrFailedPrecondition},
	43002: {"The volume cannot be quick formatted", errdefs.ErrFailedPrecondition},
	43003: {"The number of clusters exceeds 32 bits", errdefs.ErrOutOfRange},
	43005: {"The cluster size must be a multiple of the disk's physical sector size", errdefs.ErrInvalidArgument},
	43006: {"The volume is read only", errdefs.ErrFailedPrecondition},
}

// String returns the code's meaning as Learn words it, or "code N" for a
// code outside the table.
func (c ReturnCode) String() string {
	if i, ok := returnCodes[c]; ok {
		return i.text
	}
	return fmt.Sprintf("code %d", uint32(c))
}

// Kind returns the errdefs sentinel the code maps to, or nil when the code
// means a host failure (or success).
func (c ReturnCode) Kind() error { return returnCodes[c].kind }

// MethodError is a Storage Management method that returned a non-zero
// ReturnValue. It unwraps to the code's errdefs kind (see ReturnCode.Kind),
// so callers test errors.Is(err, errdefs.ErrFailedPrecondition) or, for a
// code they tolerate, errors.As and Code.
type MethodError struct {
	// Class and Method name the call, e.g. MSFT_Disk and CreatePartition.
	Class, Method string
	// Code is the ReturnValue.
	Code ReturnCode
	// ExtendedStatus is the method's ExtendedStatus out-parameter as the
	// provider serialised it (an embedded MSFT_StorageExtendedStatus), or
	// "". Its format is not documented; it is kept for messages only.
	ExtendedStatus string
}

// Error reads "MSFT_Disk.Initialize returned 41001 (The disk has already
// been initialized)".
func (e *MethodError) Error() string {
	s := fmt.Sprintf("%s.%s returned %d (%s)", e.Class, e.Method, uint32(e.Code), e.Code)
	if e.ExtendedStatus != "" {
		s += "; extended status: " + e.ExtendedStatus
	}
	return s
}

// Unwrap returns the code's errdefs kind, or nil.
func (e *MethodError) Unwrap() error { return e.Code.Kind() }

// HasCode tells whether err is (or wraps) a MethodError with one of codes.
func HasCode(err error, codes ...ReturnCode) bool {
	me, ok := asMethodError(err)
	if !ok {
		return false
	}
	for _, c := range codes {
		if me.Code == c {
			return true
		}
	}
	return false
}
