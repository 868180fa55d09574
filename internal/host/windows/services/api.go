package services

import "syscall"

// Service states (SERVICE_STATUS.dwCurrentState). csi-proxy's
// ServiceStatus uses the same numbers.
const (
	stateStopped         = 1
	stateStartPending    = 2
	stateStopPending     = 3
	stateRunning         = 4
	stateContinuePending = 5
	statePausePending    = 6
	statePaused          = 7
)

// Service access rights (winsvc.h) and the SCM right used to open
// services. Each operation asks for only what it needs, unlike
// mgr.Connect/OpenService, which ask for SC_MANAGER_ALL_ACCESS and
// SERVICE_ALL_ACCESS.
const (
	serviceQueryConfig        = 0x0001
	serviceQueryStatus        = 0x0004
	serviceEnumerateDependent = 0x0008
	serviceStart              = 0x0010
	serviceStop               = 0x0020
	servicePauseContinue      = 0x0040
)

// Service control codes.
const (
	controlStop     = 1
	controlContinue = 3
)

// Win32 error codes the SCM returns (winerror.h).
const (
	errAccessDenied            = syscall.Errno(5)
	errInvalidName             = syscall.Errno(123)
	errDependentServicesRun    = syscall.Errno(1051)
	errInvalidServiceControl   = syscall.Errno(1052)
	errServiceRequestTimeout   = syscall.Errno(1053)
	errServiceAlreadyRunning   = syscall.Errno(1056)
	errServiceDisabled         = syscall.Errno(1058)
	errServiceDoesNotExist     = syscall.Errno(1060)
	errServiceCannotAcceptCtrl = syscall.Errno(1061)
	errServiceNotActive        = syscall.Errno(1062)
	errServiceDependencyFail   = syscall.Errno(1068)
	errServiceLogonFailed      = syscall.Errno(1069)
	errServiceMarkedForDelete  = syscall.Errno(1072)
	errServiceDependencyDelete = syscall.Errno(1075)
)

// status is what QueryServiceStatusEx reports.
type status struct {
	State                   uint32
	Win32ExitCode           uint32
	ServiceSpecificExitCode uint32
}

// serviceManager is the seam to the service control manager.
type serviceManager interface {
	// Open opens the service name with the given access rights
	// (OpenSCManagerW(SC_MANAGER_CONNECT) + OpenServiceW).
	Open(name string, access uint32) (serviceHandle, error)
}

// serviceHandle is an open service. Errors are the Win32 error as a
// syscall.Errno.
type serviceHandle interface {
	// Query returns the current status (QueryServiceStatusEx).
	Query() (status, error)
	// Config returns the display name and start type
	// (QueryServiceConfigW).
	Config() (displayName string, startType uint32, err error)
	// Start starts the service without arguments (StartServiceW).
	Start() error
	// Control sends a control code (ControlService).
	Control(code uint32) error
	// ActiveDependents lists the running services that depend on this
	// one, in reverse start order (EnumDependentServicesW with
	// SERVICE_ACTIVE).
	ActiveDependents() ([]string, error)
	// Close closes the handles; a failure to close has no consequence
	// the caller could act on.
	Close()
}

// firmware is the seam to the firmware tables.
type firmware interface {
	// RawSMBIOS returns the RawSMBIOSData buffer
	// (GetSystemFirmwareTable('RSMB', 0)).
	RawSMBIOS() ([]byte, error)
}
