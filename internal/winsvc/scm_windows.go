//go:build windows

package winsvc

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/eventlog"
	"golang.org/x/sys/windows/svc/mgr"
)

// Connect connects to the local SCM with full access (administrators
// only).
func Connect() (Manager, error) {
	m, err := mgr.Connect()
	if err != nil {
		return nil, fmt.Errorf("connect to the service control manager (run as administrator): %w", err)
	}
	return &manager{m: m}, nil
}

// manager is the SCM through golang.org/x/sys/windows/svc/mgr.
type manager struct{ m *mgr.Mgr }

// mapErr wraps the Win32 errors Install and Uninstall react to in this
// package's sentinel errors, keeping the original for errors.Is.
func mapErr(err error) error {
	var sentinel error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, windows.ERROR_SERVICE_DOES_NOT_EXIST):
		sentinel = ErrServiceNotExist
	case errors.Is(err, windows.ERROR_SERVICE_MARKED_FOR_DELETE):
		sentinel = ErrMarkedForDelete
	case errors.Is(err, windows.ERROR_SERVICE_EXISTS):
		sentinel = ErrServiceExists
	case errors.Is(err, windows.ERROR_SERVICE_NOT_ACTIVE):
		sentinel = ErrNotActive
	case errors.Is(err, windows.ERROR_SERVICE_CANNOT_ACCEPT_CTRL):
		sentinel = ErrCannotAcceptControl
	case errors.Is(err, windows.ERROR_DEPENDENT_SERVICES_RUNNING):
		sentinel = ErrDependentServicesRunning
	default:
		return err
	}
	return fmt.Errorf("%w (%w)", sentinel, err)
}

// OpenService implements Manager.
func (m *manager) OpenService(name string) (Service, error) {
	s, err := m.m.OpenService(name)
	if err != nil {
		return nil, mapErr(err)
	}
	return &service{s: s}, nil
}

// CreateService implements Manager.
func (m *manager) CreateService(name string, c Config) (Service, error) {
	// mgr.CreateService quotes its arguments itself; the command line is
	// built already, so call CreateService directly.
	ptr := func(s string) *uint16 {
		if s == "" {
			return nil
		}
		p, _ := windows.UTF16PtrFromString(s) // strings from this package never hold NUL
		return p
	}
	for _, s := range []string{name, c.DisplayName, c.BinaryPathName, c.ServiceStartName} {
		if _, err := windows.UTF16PtrFromString(s); err != nil {
			return nil, err
		}
	}
	h, err := windows.CreateService(m.m.Handle, ptr(name), ptr(c.DisplayName), windows.SERVICE_ALL_ACCESS,
		windows.SERVICE_WIN32_OWN_PROCESS, uint32(c.StartType), windows.SERVICE_ERROR_NORMAL,
		ptr(c.BinaryPathName), nil, nil, nil, ptr(c.ServiceStartName), nil)
	if err != nil {
		return nil, mapErr(err)
	}
	s := &service{s: &mgr.Service{Name: name, Handle: h}}
	if err := s.setConfig2(c, false); err != nil {
		_ = windows.DeleteService(h)      // undo the half-made service
		_ = windows.CloseServiceHandle(h) // and drop it
		return nil, err
	}
	return s, nil
}

// AddEventSource implements Manager.
func (m *manager) AddEventSource(name string) error {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, `SYSTEM\CurrentControlSet\Services\EventLog\Application\`+name, registry.QUERY_VALUE)
	if err == nil {
		return k.Close() // registered already
	}
	return eventlog.InstallAsEventCreate(name, eventlog.Error|eventlog.Warning|eventlog.Info)
}

// RemoveEventSource implements Manager.
func (m *manager) RemoveEventSource(name string) error {
	err := eventlog.Remove(name)
	if errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
		return nil
	}
	return err
}

// Disconnect implements Manager.
func (m *manager) Disconnect() error { return m.m.Disconnect() }

// service is one service through mgr.Service, with its own Config and
// UpdateConfig: mgr's query and set the service SID type too, which Wine
// does not implement, and mgr's UpdateConfig rewrites fields Install leaves
// alone.
type service struct{ s *mgr.Service }

// Config implements Service.
func (s *service) Config() (Config, error) {
	n := uint32(1024)
	var p *windows.QUERY_SERVICE_CONFIG
	for {
		b := make([]byte, n)
		p = (*windows.QUERY_SERVICE_CONFIG)(unsafe.Pointer(&b[0]))
		err := windows.QueryServiceConfig(s.s.Handle, p, n, &n)
		if err == nil {
			break
		}
		if !errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER) || n <= uint32(len(b)) {
			return Config{}, mapErr(err)
		}
	}
	c := Config{
		BinaryPathName:   windows.UTF16PtrToString(p.BinaryPathName),
		DisplayName:      windows.UTF16PtrToString(p.DisplayName),
		StartType:        StartType(p.StartType),
		ServiceStartName: windows.UTF16PtrToString(p.ServiceStartName),
	}
	if b, err := s.config2(windows.SERVICE_CONFIG_DESCRIPTION); err == nil {
		c.Description = windows.UTF16PtrToString((*windows.SERVICE_DESCRIPTION)(unsafe.Pointer(&b[0])).Description)
	} else if !errors.Is(err, windows.ERROR_INVALID_LEVEL) {
		return Config{}, err
	}
	if b, err := s.config2(windows.SERVICE_CONFIG_DELAYED_AUTO_START_INFO); err == nil {
		c.DelayedAutoStart = (*windows.SERVICE_DELAYED_AUTO_START_INFO)(unsafe.Pointer(&b[0])).IsDelayedAutoStartUp != 0
	} else if !errors.Is(err, windows.ERROR_INVALID_LEVEL) { // Wine lacks this level: not delayed
		return Config{}, err
	}
	return c, nil
}

// config2 calls QueryServiceConfig2.
func (s *service) config2(level uint32) ([]byte, error) {
	n := uint32(1024)
	for {
		b := make([]byte, n)
		err := windows.QueryServiceConfig2(s.s.Handle, level, &b[0], n, &n)
		if err == nil {
			return b, nil
		}
		if !errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER) || n <= uint32(len(b)) {
			return nil, err
		}
	}
}

// UpdateConfig implements Service.
func (s *service) UpdateConfig(c Config) error {
	ptr := func(v string) (*uint16, error) { return windows.UTF16PtrFromString(v) }
	bin, err := ptr(c.BinaryPathName)
	if err != nil {
		return err
	}
	display, err := ptr(c.DisplayName)
	if err != nil {
		return err
	}
	var account, password *uint16
	if c.ServiceStartName != "" {
		if account, err = ptr(c.ServiceStartName); err != nil {
			return err
		}
		password, _ = ptr("") // LocalSystem has no password
	}
	err = windows.ChangeServiceConfig(s.s.Handle, windows.SERVICE_NO_CHANGE, uint32(c.StartType), windows.SERVICE_NO_CHANGE,
		bin, nil, nil, nil, account, password, display)
	if err != nil {
		return mapErr(err)
	}
	return s.setConfig2(c, true)
}

// setConfig2 sets the description and, when it differs or (for a new
// service) when it is on, the delayed automatic start.
func (s *service) setConfig2(c Config, existing bool) error {
	desc, err := windows.UTF16PtrFromString(c.Description)
	if err != nil {
		return err
	}
	d := windows.SERVICE_DESCRIPTION{Description: desc}
	if err := windows.ChangeServiceConfig2(s.s.Handle, windows.SERVICE_CONFIG_DESCRIPTION, (*byte)(unsafe.Pointer(&d))); err != nil {
		return fmt.Errorf("set the description: %w", err)
	}
	current := false
	if existing {
		if b, err := s.config2(windows.SERVICE_CONFIG_DELAYED_AUTO_START_INFO); err == nil {
			current = (*windows.SERVICE_DELAYED_AUTO_START_INFO)(unsafe.Pointer(&b[0])).IsDelayedAutoStartUp != 0
		}
	}
	if c.DelayedAutoStart == current {
		return nil
	}
	var info windows.SERVICE_DELAYED_AUTO_START_INFO
	if c.DelayedAutoStart {
		info.IsDelayedAutoStartUp = 1
	}
	if err := windows.ChangeServiceConfig2(s.s.Handle, windows.SERVICE_CONFIG_DELAYED_AUTO_START_INFO, (*byte)(unsafe.Pointer(&info))); err != nil {
		return fmt.Errorf("set the delayed automatic start: %w", err)
	}
	return nil
}

// SetRecoveryActions implements Service.
func (s *service) SetRecoveryActions(actions []RecoveryAction, resetPeriod time.Duration) error {
	ra := make([]mgr.RecoveryAction, len(actions))
	for i, a := range actions {
		ra[i] = mgr.RecoveryAction{Type: mgr.ServiceRestart, Delay: a.Delay}
	}
	return s.s.SetRecoveryActions(ra, uint32(resetPeriod/time.Second))
}

// SetRecoveryActionsOnNonCrashFailures implements Service.
func (s *service) SetRecoveryActionsOnNonCrashFailures(on bool) error {
	return s.s.SetRecoveryActionsOnNonCrashFailures(on)
}

// Query implements Service.
func (s *service) Query() (Status, error) {
	st, err := s.s.Query()
	return fromSvc(st), mapErr(err)
}

// Start implements Service.
func (s *service) Start() error {
	err := s.s.Start()
	if errors.Is(err, windows.ERROR_SERVICE_ALREADY_RUNNING) {
		return nil
	}
	return mapErr(err)
}

// Control implements Service.
func (s *service) Control(c Cmd) (Status, error) {
	st, err := s.s.Control(svc.Cmd(c))
	return fromSvc(st), mapErr(err)
}

// Delete implements Service.
func (s *service) Delete() error { return mapErr(s.s.Delete()) }

// Close implements Service.
func (s *service) Close() error { return s.s.Close() }

func fromSvc(st svc.Status) Status {
	return Status{
		State:                   State(st.State),
		Accepts:                 Accepted(st.Accepts),
		CheckPoint:              st.CheckPoint,
		WaitHint:                st.WaitHint,
		Win32ExitCode:           st.Win32ExitCode,
		ServiceSpecificExitCode: st.ServiceSpecificExitCode,
	}
}

func toSvc(st Status) svc.Status {
	return svc.Status{
		State:                   svc.State(st.State),
		Accepts:                 svc.Accepted(st.Accepts),
		CheckPoint:              st.CheckPoint,
		WaitHint:                st.WaitHint,
		Win32ExitCode:           st.Win32ExitCode,
		ServiceSpecificExitCode: st.ServiceSpecificExitCode,
	}
}

// Run hosts h as a service under the SCM (svc.Run) and returns when the
// service has stopped. It must not be called while packages are still
// being initialised (from an init function): the SCM calls the service
// from a thread of its own, which Go lets run only after initialisation,
// so that would hang. Started by anything but the SCM, it fails with
// ERROR_FAILED_SERVICE_CONTROLLER_CONNECT (1063) at once.
func Run(name string, h *Handler) error {
	err := svc.Run(name, svcHandler{h})
	if errors.Is(err, windows.ERROR_FAILED_SERVICE_CONTROLLER_CONNECT) {
		return fmt.Errorf("%w: not started by the service control manager (%w)", ErrNotAService, err)
	}
	return err
}

// svcHandler adapts Handler to svc.Handler, translating the channels.
type svcHandler struct{ h *Handler }

// Execute implements svc.Handler: it runs the Handler with channels of this package's types.
func (a svcHandler) Execute(args []string, r <-chan svc.ChangeRequest, s chan<- svc.Status) (bool, uint32) {
	requests := make(chan ChangeRequest)
	statuses := make(chan Status)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case c := <-r:
				select {
				case requests <- ChangeRequest{Cmd: Cmd(c.Cmd), CurrentStatus: fromSvc(c.CurrentStatus)}:
				case <-quit:
					return
				}
			case <-quit:
				return
			}
		}
	})
	wg.Go(func() {
		for st := range statuses {
			s <- toSvc(st)
		}
	})
	ss, code := a.h.Execute(args, requests, statuses)
	close(statuses)
	close(quit)
	wg.Wait()
	return ss, code
}

// eventLog writes to the Application event log.
type eventLog struct{ l *eventlog.Log }

// Event IDs: the message file Install registers (EventCreate.exe) has
// the message "%1" for IDs 1 to 1000.
const (
	eventInfo    = 1
	eventWarning = 2
	eventError   = 3
)

// OpenEventLog opens the Application event log for source (the service
// name). An unregistered source works too; Event Viewer then shows the
// message after a note that the description cannot be found.
func OpenEventLog(source string) (EventLog, error) {
	l, err := eventlog.Open(source)
	if err != nil {
		return nil, err
	}
	return eventLog{l}, nil
}

// Info implements EventLog.
func (e eventLog) Info(msg string) error { return e.l.Info(eventInfo, msg) }

// Warning implements EventLog.
func (e eventLog) Warning(msg string) error { return e.l.Warning(eventWarning, msg) }
func (e eventLog) Error(msg string) error   { return e.l.Error(eventError, msg) }

// Close implements EventLog.
func (e eventLog) Close() error { return e.l.Close() }
