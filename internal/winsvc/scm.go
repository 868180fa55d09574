package winsvc

import (
	"errors"
	"fmt"
	"time"
)

// ErrNotWindows is returned by Connect, Run and OpenEventLog on an OS
// without a service control manager.
var ErrNotWindows = errors.New("the Windows service control manager is only available on Windows")

// Errors a Manager or Service reports for the SCM conditions Install and
// Uninstall react to. The Windows implementation wraps the Win32 error, so
// errors.Is matches both this error and the windows.Errno.
var (
	// ErrServiceNotExist: no service has that name
	// (ERROR_SERVICE_DOES_NOT_EXIST, 1060).
	ErrServiceNotExist = errors.New("the service does not exist")
	// ErrMarkedForDelete: the service was deleted but still exists until
	// every handle to it is closed (ERROR_SERVICE_MARKED_FOR_DELETE, 1072).
	ErrMarkedForDelete = errors.New("the service is marked for deletion")
	// ErrServiceExists: CreateService found the name taken
	// (ERROR_SERVICE_EXISTS, 1073).
	ErrServiceExists = errors.New("the service already exists")
	// ErrNotActive: a control was sent to a service that is not running
	// (ERROR_SERVICE_NOT_ACTIVE, 1062).
	ErrNotActive = errors.New("the service is not running")
	// ErrCannotAcceptControl: the service cannot take the control now,
	// typically because it is already starting or stopping
	// (ERROR_SERVICE_CANNOT_ACCEPT_CTRL, 1061).
	ErrCannotAcceptControl = errors.New("the service cannot accept the control now")
	// ErrDependentServicesRunning: the service cannot stop while services
	// that depend on it run (ERROR_DEPENDENT_SERVICES_RUNNING, 1051).
	ErrDependentServicesRunning = errors.New("services that depend on it are running")
)

// State is a service's current state (SERVICE_STATUS.dwCurrentState); the
// values are the SCM's and svc.State's.
type State uint32

// Service states.
const (
	Stopped         State = 1
	StartPending    State = 2
	StopPending     State = 3
	Running         State = 4
	ContinuePending State = 5
	PausePending    State = 6
	Paused          State = 7
)

// String names the state as sc.exe query does.
func (s State) String() string {
	switch s {
	case Stopped:
		return "STOPPED"
	case StartPending:
		return "START_PENDING"
	case StopPending:
		return "STOP_PENDING"
	case Running:
		return "RUNNING"
	case ContinuePending:
		return "CONTINUE_PENDING"
	case PausePending:
		return "PAUSE_PENDING"
	case Paused:
		return "PAUSED"
	}
	return fmt.Sprintf("State(%d)", uint32(s))
}

// Accepted is the set of controls a service accepts; the values are the
// SCM's and svc.Accepted's.
type Accepted uint32

// Controls a service may accept. Only these two are used.
const (
	AcceptStop     Accepted = 0x1
	AcceptShutdown Accepted = 0x4
)

// Cmd is a control sent to a service; the values are the SCM's and
// svc.Cmd's.
type Cmd uint32

// Controls the handler knows. Others are ignored.
const (
	Stop        Cmd = 1
	Pause       Cmd = 2
	Continue    Cmd = 3
	Interrogate Cmd = 4
	Shutdown    Cmd = 5
)

// String names the control.
func (c Cmd) String() string {
	switch c {
	case Stop:
		return "Stop"
	case Pause:
		return "Pause"
	case Continue:
		return "Continue"
	case Interrogate:
		return "Interrogate"
	case Shutdown:
		return "Shutdown"
	}
	return fmt.Sprintf("Cmd(%d)", uint32(c))
}

// Status is a service's status, as svc.Status without the process ID.
type Status struct {
	// State is the current state.
	State State
	// Accepts are the controls the service takes in this state.
	Accepts Accepted
	// CheckPoint increases while a pending state makes progress.
	CheckPoint uint32
	// WaitHint is how long, in milliseconds, the pending state may take
	// before the next CheckPoint.
	WaitHint uint32
	// Win32ExitCode is the exit code of a stopped service;
	// ERROR_SERVICE_SPECIFIC_ERROR (1066) means see
	// ServiceSpecificExitCode.
	Win32ExitCode uint32
	// ServiceSpecificExitCode is the service's own exit code.
	ServiceSpecificExitCode uint32
}

// ChangeRequest is a control the SCM sends to a running service, as
// svc.ChangeRequest without the event data.
type ChangeRequest struct {
	// Cmd is the control.
	Cmd Cmd
	// CurrentStatus is the status last reported to the SCM.
	CurrentStatus Status
}

// StartType says when the SCM starts a service; the values are the SCM's
// and mgr's.
type StartType uint32

// Start types (SERVICE_AUTO_START, SERVICE_DEMAND_START,
// SERVICE_DISABLED).
const (
	StartAutomatic StartType = 2
	StartManual    StartType = 3
	StartDisabled  StartType = 4
)

// String names the start type as sc.exe's start= option does.
func (t StartType) String() string {
	switch t {
	case StartAutomatic:
		return "auto"
	case StartManual:
		return "demand"
	case StartDisabled:
		return "disabled"
	}
	return fmt.Sprintf("StartType(%d)", uint32(t))
}

// LocalSystem is the account csi-node-proxy runs as, as upstream's
// csiproxy service does: it manages disks, volumes, SMB mappings and
// services, which needs SYSTEM.
const LocalSystem = "LocalSystem"

// Config is the part of a service's configuration Install sets. The
// service is always a SERVICE_WIN32_OWN_PROCESS with normal error control
// and no dependencies.
type Config struct {
	// BinaryPathName is the command line the SCM runs (ImagePath).
	BinaryPathName string
	// DisplayName is the name shown in services.msc.
	DisplayName string
	// Description is the text shown under the display name.
	Description string
	// StartType says when the service starts.
	StartType StartType
	// DelayedAutoStart delays an automatic start until shortly after boot.
	DelayedAutoStart bool
	// ServiceStartName is the account the service runs as; "" and
	// "LocalSystem" both mean LocalSystem.
	ServiceStartName string
}

// RecoveryAction is what the SCM does when the service fails (a restart
// after Delay is the only kind Install sets).
type RecoveryAction struct {
	// Delay is how long the SCM waits before restarting the service.
	Delay time.Duration
}

// Manager is the service control manager, as Install and Uninstall use it:
// the part of mgr.Mgr (plus event-log source registration) this package
// needs. The Windows implementation is returned by Connect; winsvctest has
// a recording fake.
type Manager interface {
	// OpenService opens an existing service; ErrServiceNotExist if there
	// is none of that name.
	OpenService(name string) (Service, error)
	// CreateService creates a service (an own-process Win32 service with
	// normal error control) and opens it.
	CreateService(name string, c Config) (Service, error)
	// AddEventSource registers name as an Application event log source;
	// an existing registration is kept.
	AddEventSource(name string) error
	// RemoveEventSource removes that registration; a missing one is not
	// an error.
	RemoveEventSource(name string) error
	// Disconnect closes the connection to the SCM.
	Disconnect() error
}

// Service is one open service.
type Service interface {
	// Config returns the service's configuration.
	Config() (Config, error)
	// UpdateConfig replaces the configuration Config describes; it does
	// not change the service type, error control or dependencies.
	UpdateConfig(c Config) error
	// SetRecoveryActions sets what the SCM does on the first, second and
	// later failures, and after how long without failure it starts
	// counting again.
	SetRecoveryActions(actions []RecoveryAction, resetPeriod time.Duration) error
	// SetRecoveryActionsOnNonCrashFailures(true) makes the SCM also apply
	// the recovery actions when the service stops with a non-zero exit
	// code, not only when its process dies.
	SetRecoveryActionsOnNonCrashFailures(on bool) error
	// Query returns the current status.
	Query() (Status, error)
	// Start starts the service; a running service is not an error.
	Start() error
	// Control sends a control and returns the status the service then
	// reports.
	Control(c Cmd) (Status, error)
	// Delete marks the service for deletion; it disappears once stopped
	// and once every handle to it is closed.
	Delete() error
	// Close closes the handle.
	Close() error
}
