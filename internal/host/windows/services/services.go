// Package services is the Windows backend of the system group
// (system.Host): the BIOS serial number from the firmware's SMBIOS table
// and host services through the service control manager, with Win32
// calls only (upstream used WMI: CIM_BIOSElement and Win32_Service).
//
//   - BIOSSerialNumber: GetSystemFirmwareTable('RSMB', 0), parsed here
//     (SerialNumberFromSMBIOS).
//   - GetService / StartService / StopService: OpenSCManagerW with
//     SC_MANAGER_CONNECT and OpenServiceW with only the rights each
//     operation needs, then QueryServiceStatusEx, QueryServiceConfigW,
//     StartServiceW, ControlService and EnumDependentServicesW.
//
// Start and stop wait for the final state as upstream does: polling every
// 200 ms for at most 30 s, and never beyond the caller's context. A
// running service started, or a stopped one stopped, is success; a
// disabled service is errdefs.ErrFailedPrecondition, an unknown one
// errdefs.ErrNotFound, a refused access errdefs.ErrPermissionDenied.
// Which services may be started or stopped is the system Service's
// allow-list, checked before this backend is called.
package services

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/ctxsleep"
)

// Upstream's polling: every 200 ms, for at most 30 s.
const (
	defaultPoll    = 200 * time.Millisecond
	defaultTimeout = 30 * time.Second
)

// Host implements system.Host on Windows.
type Host struct {
	scm serviceManager
	fw  firmware

	poll, timeout time.Duration
	now           func() time.Time
	sleep         func(ctx context.Context, d time.Duration) error
}

var _ system.Host = (*Host)(nil)

func newHost(scm serviceManager, fw firmware) *Host {
	return &Host{scm: scm, fw: fw, poll: defaultPoll, timeout: defaultTimeout, now: time.Now, sleep: ctxsleep.Sleep}
}

// BIOSSerialNumber implements system.Host.
func (h *Host) BIOSSerialNumber(ctx context.Context) (string, error) {
	raw, err := h.fw.RawSMBIOS()
	if err != nil {
		return "", fmt.Errorf("read the SMBIOS firmware table: %w", err)
	}
	return SerialNumberFromSMBIOS(raw)
}

// GetService implements system.Host.
func (h *Host) GetService(ctx context.Context, name string) (system.ServiceInfo, error) {
	s, err := h.open(name, serviceQueryConfig|serviceQueryStatus)
	if err != nil {
		return system.ServiceInfo{}, err
	}
	defer s.Close()
	display, start, err := s.Config()
	if err != nil {
		return system.ServiceInfo{}, scmError(err, "read the configuration of service %q", name)
	}
	st, err := s.Query()
	if err != nil {
		return system.ServiceInfo{}, scmError(err, "query service %q", name)
	}
	return system.ServiceInfo{DisplayName: display, StartType: system.StartType(start), Status: serviceStatus(st.State)}, nil
}

// serviceStatus maps an SCM state to the wire enum, which uses the same
// numbers and 0 for anything else.
func serviceStatus(state uint32) system.ServiceStatus {
	if state >= stateStopped && state <= statePaused {
		return system.ServiceStatus(state)
	}
	return system.StatusUnknown
}

// StartService implements system.Host: a stopped service is started, a
// paused one continued, a pending one waited for; the call returns once
// the service runs. A service that stops again right after StartServiceW
// failed to start: the error carries its exit code.
func (h *Host) StartService(ctx context.Context, name string) error {
	s, err := h.open(name, serviceQueryStatus|serviceStart|servicePauseContinue)
	if err != nil {
		return err
	}
	defer s.Close()
	deadline := h.now().Add(h.timeout)
	started, continued := false, false
	for {
		st, err := s.Query()
		if err != nil {
			return scmError(err, "query service %q", name)
		}
		switch st.State {
		case stateRunning:
			return nil
		case stateStopped:
			if started {
				return errdefs.Errorf(errdefs.ErrFailedPrecondition, "service %q stopped right after it was started (exit code %d, service-specific code %d)", name, st.Win32ExitCode, st.ServiceSpecificExitCode)
			}
			if err := s.Start(); err != nil && errnoOf(err) != errServiceAlreadyRunning {
				return scmError(err, "start service %q", name)
			}
			started = true
		case statePaused:
			if !continued {
				if err := s.Control(controlContinue); err != nil && errnoOf(err) != errServiceCannotAcceptCtrl {
					return scmError(err, "continue service %q", name)
				}
				continued = true
			}
		}
		if err := h.wait(ctx, deadline, name, "running", st.State); err != nil {
			return err
		}
	}
}

// StopService implements system.Host. Without force, running dependents
// are errdefs.ErrFailedPrecondition naming them (Windows error 1051);
// with force they are stopped first, each after its own dependents, as
// upstream does. A stopped service is success.
func (h *Host) StopService(ctx context.Context, name string, force bool) error {
	return h.stop(ctx, name, force, map[string]bool{})
}

// stop stops name. visited guards against dependency cycles (which the
// SCM refuses to create, but a corrupt database could hold).
func (h *Host) stop(ctx context.Context, name string, force bool, visited map[string]bool) error {
	visited[strings.ToLower(name)] = true
	s, err := h.open(name, serviceQueryStatus|serviceStop|serviceEnumerateDependent)
	if err != nil {
		return err
	}
	defer s.Close()
	st, err := s.Query()
	if err != nil {
		return scmError(err, "query service %q", name)
	}
	if st.State == stateStopped {
		return nil
	}
	if err := h.stopDependents(ctx, s, name, force, visited); err != nil {
		return err
	}
	deadline := h.now().Add(h.timeout)
	sent := false
	for {
		st, err := s.Query()
		if err != nil {
			return scmError(err, "query service %q", name)
		}
		switch st.State {
		case stateStopped:
			return nil
		case stateRunning, statePaused:
			if sent {
				break
			}
			err := s.Control(controlStop)
			switch errnoOf(err) {
			case 0, errServiceNotActive, errServiceCannotAcceptCtrl:
				// Sent, already stopping, or stopped meanwhile: wait.
				sent = true
			case errDependentServicesRun:
				// A dependent started meanwhile.
				if err := h.stopDependents(ctx, s, name, force, visited); err != nil {
					return err
				}
			default:
				return scmError(err, "stop service %q", name)
			}
		}
		// Pending states (start, stop, pause, continue): wait for them
		// to settle; a start-pending service is stopped once it runs.
		if err := h.wait(ctx, deadline, name, "stopped", st.State); err != nil {
			return err
		}
	}
}

// stopDependents stops the running dependents of s, or refuses without
// force. EnumDependentServicesW lists them in reverse start order, so
// stopping in list order is right; whether the list includes indirect
// dependents is unconfirmed, so each dependent's own dependents are
// stopped first anyway.
func (h *Host) stopDependents(ctx context.Context, s serviceHandle, name string, force bool, visited map[string]bool) error {
	deps, err := s.ActiveDependents()
	if err != nil {
		return scmError(err, "list the dependents of service %q", name)
	}
	if len(deps) == 0 {
		return nil
	}
	if !force {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "service %q has running dependent services %s (Windows error 1051); stop them first or use force", name, strings.Join(deps, ", "))
	}
	for _, d := range deps {
		if visited[strings.ToLower(d)] {
			continue
		}
		if err := h.stop(ctx, d, true, visited); err != nil && !errors.Is(err, errdefs.ErrNotFound) {
			return fmt.Errorf("stop dependent service %q of %q: %w", d, name, err)
		}
	}
	return nil
}

// wait sleeps one poll interval, or fails when the deadline has passed or
// the context ends.
func (h *Host) wait(ctx context.Context, deadline time.Time, name, want string, last uint32) error {
	if !h.now().Before(deadline) {
		return errdefs.Errorf(errdefs.ErrUnavailable, "service %q did not become %s within %s (last state %s)", name, want, h.timeout, stateName(last))
	}
	if err := h.sleep(ctx, h.poll); err != nil {
		return fmt.Errorf("waiting for service %q to become %s (last state %s): %w", name, want, stateName(last), err)
	}
	return nil
}

var stateNames = map[uint32]string{
	stateStopped: "stopped", stateStartPending: "start pending", stateStopPending: "stop pending",
	stateRunning: "running", stateContinuePending: "continue pending", statePausePending: "pause pending",
	statePaused: "paused",
}

func stateName(s uint32) string {
	if n, ok := stateNames[s]; ok {
		return n
	}
	return fmt.Sprintf("state %d", s)
}

func (h *Host) open(name string, access uint32) (serviceHandle, error) {
	s, err := h.scm.Open(name, access)
	if err != nil {
		return nil, scmError(err, "open service %q", name)
	}
	return s, nil
}

func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

// scmKinds maps SCM errors to errdefs kinds.
var scmKinds = map[syscall.Errno]error{
	errAccessDenied:            errdefs.ErrPermissionDenied,
	errInvalidName:             errdefs.ErrInvalidArgument,
	errServiceDoesNotExist:     errdefs.ErrNotFound,
	errServiceDisabled:         errdefs.ErrFailedPrecondition,
	errDependentServicesRun:    errdefs.ErrFailedPrecondition,
	errServiceDependencyFail:   errdefs.ErrFailedPrecondition,
	errServiceDependencyDelete: errdefs.ErrFailedPrecondition,
	errServiceLogonFailed:      errdefs.ErrFailedPrecondition,
	errServiceMarkedForDelete:  errdefs.ErrFailedPrecondition,
	errInvalidServiceControl:   errdefs.ErrFailedPrecondition,
	errServiceRequestTimeout:   errdefs.ErrUnavailable,
}

// scmError wraps an SCM error with the action and its errdefs kind,
// keeping the Win32 error in the chain.
func scmError(err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if k, ok := scmKinds[errnoOf(err)]; ok {
		return fmt.Errorf("%s: %w (Windows error %d) (%w)", msg, err, uint32(errnoOf(err)), k)
	}
	return fmt.Errorf("%s: %w", msg, err)
}
