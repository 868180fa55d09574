//go:build windows

package services

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/mgr"
)

// scManagerConnect is SC_MANAGER_CONNECT, the least right that allows
// OpenServiceW.
const scManagerConnect = 0x0001

// winSCM implements serviceManager with the service control manager.
type winSCM struct{}

var _ serviceManager = winSCM{}

// Open implements serviceManager. It connects to the local SCM with
// SC_MANAGER_CONNECT only (mgr.Connect asks for SC_MANAGER_ALL_ACCESS) and
// opens the service with the caller's access mask (mgr.OpenService asks
// for SERVICE_ALL_ACCESS); the handle is then wrapped in a mgr.Service to
// reuse its Query, Control and ListDependentServices.
func (winSCM) Open(name string, access uint32) (serviceHandle, error) {
	n, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, windows.ERROR_INVALID_NAME
	}
	m, err := windows.OpenSCManager(nil, nil, scManagerConnect)
	if err != nil {
		return nil, err
	}
	h, err := windows.OpenService(m, n, access)
	if err != nil {
		_ = windows.CloseServiceHandle(m)
		return nil, err
	}
	return &winService{scm: m, s: &mgr.Service{Name: name, Handle: h}}, nil
}

// winService implements serviceHandle.
type winService struct {
	scm windows.Handle
	s   *mgr.Service
}

// Query implements serviceHandle (QueryServiceStatusEx).
func (w *winService) Query() (status, error) {
	st, err := w.s.Query()
	if err != nil {
		return status{}, err
	}
	return status{State: uint32(st.State), Win32ExitCode: st.Win32ExitCode, ServiceSpecificExitCode: st.ServiceSpecificExitCode}, nil
}

// Config implements serviceHandle with QueryServiceConfigW alone.
// mgr.Service.Config would also query the description, delayed
// auto-start and SID settings, which this backend does not need and which
// can fail for driver services.
func (w *winService) Config() (string, uint32, error) {
	var need uint32
	buf := make([]byte, 1024)
	for {
		p := (*windows.QUERY_SERVICE_CONFIG)(unsafe.Pointer(&buf[0]))
		err := windows.QueryServiceConfig(w.s.Handle, p, uint32(len(buf)), &need)
		if err == nil {
			return windows.UTF16PtrToString(p.DisplayName), p.StartType, nil
		}
		if !errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER) || need <= uint32(len(buf)) {
			return "", 0, err
		}
		buf = make([]byte, need)
	}
}

// Start implements serviceHandle (StartServiceW without arguments).
func (w *winService) Start() error { return windows.StartService(w.s.Handle, 0, nil) }

// Control implements serviceHandle (ControlService).
func (w *winService) Control(code uint32) error {
	_, err := w.s.Control(svc.Cmd(code))
	return err
}

// ActiveDependents implements serviceHandle (EnumDependentServicesW with
// SERVICE_ACTIVE).
func (w *winService) ActiveDependents() ([]string, error) {
	return w.s.ListDependentServices(svc.Active)
}

// Close implements serviceHandle.
func (w *winService) Close() {
	_ = w.s.Close()
	_ = windows.CloseServiceHandle(w.scm)
}
