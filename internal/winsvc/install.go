package winsvc

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Defaults of InstallOptions and UninstallOptions.
const (
	// DefaultServiceName is upstream csi-proxy's service name, so that
	// installing replaces an existing csi-proxy service in place.
	DefaultServiceName = "csiproxy"
	// DefaultDisplayName is shown in services.msc.
	DefaultDisplayName = "csi-node-proxy"
	// DefaultDescription is shown under the display name.
	DefaultDescription = "Serves the csi-proxy API to CSI node plugins over named pipes (csi-node-proxy, a drop-in successor of kubernetes-csi/csi-proxy)"
	// DefaultTimeout bounds each wait for a service to stop, start or
	// disappear.
	DefaultTimeout = 60 * time.Second
	// DefaultPollInterval is how often a waiting Install or Uninstall
	// asks the SCM for the service's state (upstream's system group polls
	// as often).
	DefaultPollInterval = 200 * time.Millisecond
	// DefaultRecoveryReset is how long the service must run without
	// failing before the SCM counts failures from the first action again.
	DefaultRecoveryReset = 24 * time.Hour
)

// DefaultRecovery restarts the service 5 s after its first failure, 10 s
// after its second and 30 s after every later one.
var DefaultRecovery = []RecoveryAction{{Delay: 5 * time.Second}, {Delay: 10 * time.Second}, {Delay: 30 * time.Second}}

// Clock is the time Install and Uninstall wait with; tests substitute a
// fake one.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Sleep pauses for d.
	Sleep(d time.Duration)
}

// realClock is the wall clock.
type realClock struct{}

// Now implements Clock.
func (realClock) Now() time.Time { return time.Now() }

// Sleep implements Clock.
func (realClock) Sleep(d time.Duration) { time.Sleep(d) }

// waitOptions are the options every operation that waits shares.
type waitOptions struct {
	timeout, poll time.Duration
	clock         Clock
	progress      func(string)
}

func newWaitOptions(timeout, poll time.Duration, clock Clock, progress func(string)) waitOptions {
	w := waitOptions{timeout: timeout, poll: poll, clock: clock, progress: progress}
	if w.timeout <= 0 {
		w.timeout = DefaultTimeout
	}
	if w.poll <= 0 {
		w.poll = DefaultPollInterval
	}
	if w.clock == nil {
		w.clock = realClock{}
	}
	if w.progress == nil {
		w.progress = func(string) {}
	}
	return w
}

func (w waitOptions) say(format string, args ...any) { w.progress(fmt.Sprintf(format, args...)) }

// InstallOptions says what service Install registers.
type InstallOptions struct {
	// Name is the service name; default DefaultServiceName.
	Name string
	// DisplayName is shown in services.msc; default DefaultDisplayName.
	DisplayName string
	// Description is shown under it; default DefaultDescription.
	Description string
	// Program is the absolute path of the daemon's executable.
	Program string
	// Args are the daemon's arguments, already checked by the daemon's
	// own parser; they must include -windows-service.
	Args []string
	// StartType says when the SCM starts the service; default
	// StartAutomatic, as upstream's "sc.exe create ... start= auto".
	StartType StartType
	// DelayedAutoStart delays an automatic start until shortly after boot.
	DelayedAutoStart bool
	// Recovery are the restart delays after the first, second and later
	// failures; nil means DefaultRecovery.
	Recovery []RecoveryAction
	// RecoveryReset is how long without failure resets the failure count;
	// zero means DefaultRecoveryReset.
	RecoveryReset time.Duration
	// Start starts the service once installed. A service that was running
	// before Install stopped it is started again whatever Start says.
	Start bool
	// Force replaces an existing service of that name even if its program
	// is neither csi-proxy nor csi-node-proxy.
	Force bool
	// Timeout bounds each wait (for the old service to stop, for the new
	// one to start); zero means DefaultTimeout.
	Timeout time.Duration
	// PollInterval is how often a wait asks for the state; zero means
	// DefaultPollInterval.
	PollInterval time.Duration
	// Clock waits; nil means the wall clock.
	Clock Clock
	// Progress receives one line per step, for the operator; may be nil.
	Progress func(string)
}

// InstallResult says what Install did.
type InstallResult struct {
	// BinaryPathName is the command line the service now runs.
	BinaryPathName string
	// Created is true if the service did not exist before.
	Created bool
	// Previous is the replaced service's configuration (nil if Created):
	// its BinaryPathName is what to re-install to roll back.
	Previous *Config
	// WasRunning is true if the replaced service was running (Install
	// stopped it, and started the new one).
	WasRunning bool
	// Started is true if Install started the service and saw it running.
	Started bool
}

// ServiceArgFlag is the daemon flag that makes it run under the SCM;
// Install refuses arguments without it.
const ServiceArgFlag = "-windows-service"

// replaceable reports whether an existing service running program (a
// lower-case file name) may be replaced without Force: csi-proxy and
// csi-node-proxy under any version suffix, or the very program being
// installed.
func replaceable(program, installing string) bool {
	return strings.HasPrefix(program, "csi-proxy") || strings.HasPrefix(program, "csi-node-proxy") || program == installing
}

// check validates the options and fills defaults.
func (o *InstallOptions) check() error {
	if o.Name == "" {
		o.Name = DefaultServiceName
	}
	if err := checkName(o.Name); err != nil {
		return err
	}
	if o.DisplayName == "" {
		o.DisplayName = DefaultDisplayName
	}
	if o.Description == "" {
		o.Description = DefaultDescription
	}
	if !IsAbsWindowsPath(o.Program) {
		return fmt.Errorf("program %q is not an absolute Windows path", o.Program)
	}
	if strings.ContainsAny(o.Program, "\"\x00") || strings.HasSuffix(o.Program, `\`) {
		return fmt.Errorf("program %q is not a file path: it contains a double quote or ends with a backslash", o.Program)
	}
	hasFlag := false
	for _, a := range o.Args {
		hasFlag = hasFlag || a == ServiceArgFlag || a == "-"+ServiceArgFlag || a == ServiceArgFlag+"=true" || a == "-"+ServiceArgFlag+"=true"
	}
	if !hasFlag {
		return fmt.Errorf("the service's arguments lack %s: without it the daemon does not talk to the service control manager, which then kills it", ServiceArgFlag)
	}
	switch o.StartType {
	case 0:
		o.StartType = StartAutomatic
	case StartAutomatic, StartManual, StartDisabled:
	default:
		return fmt.Errorf("invalid start type %d", o.StartType)
	}
	if o.DelayedAutoStart && o.StartType != StartAutomatic {
		return errors.New("a delayed start needs the automatic start type")
	}
	if o.Recovery == nil {
		o.Recovery = DefaultRecovery
	}
	if o.RecoveryReset == 0 {
		o.RecoveryReset = DefaultRecoveryReset
	}
	return nil
}

// checkName refuses a name the SCM refuses: empty, longer than 256
// characters, or with a slash or backslash.
func checkName(name string) error {
	if name == "" || len(name) > 256 || strings.ContainsAny(name, `/\`) {
		return fmt.Errorf("invalid service name %q: want 1 to 256 characters without / or \\", name)
	}
	return nil
}

// Install registers the daemon as a service, or re-configures an existing
// service of that name (upstream's csiproxy, or an older csi-node-proxy)
// in place, so drivers keep finding the pipes under the service they
// know. In order:
//
//  1. the service is opened; if it exists and its program is not
//     csi-proxy or csi-node-proxy, Install stops unless Force is set;
//  2. an existing service is stopped, and Install waits (bounded) until it
//     is; a stop refused because other running services depend on it ends
//     Install with nothing changed;
//  3. the configuration is replaced (UpdateConfig) or the service created
//     (CreateService): own process, the start type, LocalSystem, the
//     display name, the description and the quoted command line;
//  4. the recovery actions are set (restart after each delay in Recovery,
//     reset after RecoveryReset) and applied to non-crash failures too, so
//     a daemon that exits with an error is restarted;
//  5. the service's name is registered as an event log source (a failure
//     is reported as progress, not as an error);
//  6. the service is started if Start is set or it was running before,
//     and Install waits until it runs.
//
// A service Install created is deleted again if a later step fails. If a
// step fails after an existing service was stopped, Install starts it again
// (with whatever configuration it then has) and says so in the error.
func Install(m Manager, opts InstallOptions) (InstallResult, error) {
	if err := opts.check(); err != nil {
		return InstallResult{}, err
	}
	w := newWaitOptions(opts.Timeout, opts.PollInterval, opts.Clock, opts.Progress)
	res := InstallResult{BinaryPathName: CommandLine(opts.Program, opts.Args)}
	cfg := Config{
		BinaryPathName:   res.BinaryPathName,
		DisplayName:      opts.DisplayName,
		Description:      opts.Description,
		StartType:        opts.StartType,
		DelayedAutoStart: opts.DelayedAutoStart,
		ServiceStartName: LocalSystem,
	}

	s, err := m.OpenService(opts.Name)
	switch {
	case err == nil:
		if err := replace(s, opts, cfg, w, &res); err != nil {
			_ = s.Close() // the error to report is replace's
			return res, err
		}
	case errors.Is(err, ErrServiceNotExist):
		if s, err = create(m, opts, cfg, w, &res); err != nil {
			return res, err
		}
	default:
		return res, fmt.Errorf("open service %s: %w", opts.Name, err)
	}
	defer s.Close() //nolint:errcheck // a handle to a configured service; nothing left to undo

	if err := m.AddEventSource(opts.Name); err != nil {
		w.say("Warning: could not register %s as an event log source (its events will show without a message file): %v", opts.Name, err)
	}
	if opts.Start || res.WasRunning {
		w.say("Starting service %s", opts.Name)
		if err := startAndWait(s, opts.Name, w); err != nil {
			return res, err
		}
		res.Started = true
		w.say("Service %s is running", opts.Name)
	}
	return res, nil
}

// replace re-configures the existing service s.
func replace(s Service, opts InstallOptions, cfg Config, w waitOptions, res *InstallResult) error {
	prev, err := s.Config()
	if err != nil {
		return fmt.Errorf("read the configuration of service %s: %w", opts.Name, err)
	}
	res.Previous = &prev
	prog := ProgramName(prev.BinaryPathName)
	if !opts.Force && !replaceable(prog, ProgramName(CommandLine(opts.Program, nil))) {
		return fmt.Errorf("service %s exists and runs %s, which is neither csi-proxy nor csi-node-proxy (command line: %s); choose another service name, or replace it anyway with --force", opts.Name, prog, prev.BinaryPathName)
	}
	w.say("Service %s exists; replacing its configuration (previous command line: %s)", opts.Name, prev.BinaryPathName)
	if res.WasRunning, err = stopAndWait(s, opts.Name, w); err != nil {
		return err
	}
	// From here on, a failure leaves the node without a running proxy
	// unless the service is started again.
	restore := func(err error) error {
		if !res.WasRunning {
			return err
		}
		if serr := s.Start(); serr != nil {
			return fmt.Errorf("%w; starting service %s again also failed: %w", err, opts.Name, serr)
		}
		return fmt.Errorf("%w (service %s was started again)", err, opts.Name)
	}
	if err := s.UpdateConfig(cfg); err != nil {
		return restore(fmt.Errorf("update the configuration of service %s: %w", opts.Name, err))
	}
	w.say("Updated service %s: %s", opts.Name, cfg.BinaryPathName)
	if err := setRecovery(s, opts, w); err != nil {
		return restore(err)
	}
	return nil
}

// create creates the service and sets its recovery actions, deleting it
// again if that fails.
func create(m Manager, opts InstallOptions, cfg Config, w waitOptions, res *InstallResult) (Service, error) {
	s, err := m.CreateService(opts.Name, cfg)
	if err != nil {
		if errors.Is(err, ErrMarkedForDelete) {
			return nil, fmt.Errorf("create service %s: %w; close services.msc, Event Viewer and anything else that holds the old service open (or reboot), then install again", opts.Name, err)
		}
		return nil, fmt.Errorf("create service %s: %w", opts.Name, err)
	}
	res.Created = true
	w.say("Created service %s: %s", opts.Name, cfg.BinaryPathName)
	if err := setRecovery(s, opts, w); err != nil {
		derr := s.Delete()
		_ = s.Close() // deleted, or the Delete error is reported
		res.Created = false
		if derr != nil {
			return nil, fmt.Errorf("%w; deleting the half-made service %s also failed: %w", err, opts.Name, derr)
		}
		return nil, fmt.Errorf("%w (service %s was deleted again)", err, opts.Name)
	}
	return s, nil
}

// setRecovery sets the restart-on-failure actions.
func setRecovery(s Service, opts InstallOptions, w waitOptions) error {
	if err := s.SetRecoveryActions(opts.Recovery, opts.RecoveryReset); err != nil {
		return fmt.Errorf("set the recovery actions of service %s: %w", opts.Name, err)
	}
	if err := s.SetRecoveryActionsOnNonCrashFailures(true); err != nil {
		return fmt.Errorf("apply the recovery actions of service %s to non-crash failures: %w", opts.Name, err)
	}
	w.say("Service %s restarts on failure after %s (failure count reset after %s)", opts.Name, FormatRecovery(opts.Recovery), opts.RecoveryReset)
	return nil
}

// FormatRecovery renders restart delays as "5s, 10s, 30s".
func FormatRecovery(actions []RecoveryAction) string {
	var delays []string
	for _, a := range actions {
		delays = append(delays, a.Delay.String())
	}
	return strings.Join(delays, ", ")
}

// stopAndWait stops s and waits until it is stopped, returning whether it
// was running (or starting, or paused) before. A service that is starting
// is let start, then stopped.
func stopAndWait(s Service, name string, w waitOptions) (wasRunning bool, err error) {
	deadline := w.clock.Now().Add(w.timeout)
	sent := false
	for {
		st, err := s.Query()
		if err != nil {
			return wasRunning, fmt.Errorf("query service %s: %w", name, err)
		}
		switch st.State {
		case Stopped:
			if wasRunning {
				w.say("Service %s stopped", name)
			}
			return wasRunning, nil
		case Running, Paused:
			wasRunning = true
			if !sent {
				w.say("Stopping service %s", name)
				_, err := s.Control(Stop)
				switch {
				case err == nil:
					sent = true
				case errors.Is(err, ErrDependentServicesRunning):
					return wasRunning, fmt.Errorf("stop service %s: %w: stop them first (Get-Service %s -DependentServices), then run this again", name, err, name)
				case errors.Is(err, ErrNotActive), errors.Is(err, ErrCannotAcceptControl):
					// Stopping or starting meanwhile: look again.
				default:
					return wasRunning, fmt.Errorf("stop service %s: %w", name, err)
				}
			}
		default: // a pending state
			wasRunning = true
		}
		if !w.clock.Now().Before(deadline) {
			return wasRunning, fmt.Errorf("service %s is still %s after %s; stop it (or end its process) and run this again", name, st.State, w.timeout)
		}
		w.clock.Sleep(w.poll)
	}
}

// startAndWait starts s and waits until it runs.
func startAndWait(s Service, name string, w waitOptions) error {
	if err := s.Start(); err != nil {
		return fmt.Errorf("start service %s: %w", name, err)
	}
	deadline := w.clock.Now().Add(w.timeout)
	for {
		st, err := s.Query()
		if err != nil {
			return fmt.Errorf("query service %s: %w", name, err)
		}
		switch st.State {
		case Running:
			return nil
		case Stopped:
			return fmt.Errorf("service %s stopped while starting (%s); see its log file and the Application event log", name, exitCode(st))
		}
		if !w.clock.Now().Before(deadline) {
			return fmt.Errorf("service %s is still %s after %s", name, st.State, w.timeout)
		}
		w.clock.Sleep(w.poll)
	}
}

// errorServiceSpecific is ERROR_SERVICE_SPECIFIC_ERROR.
const errorServiceSpecific = 1066

// exitCode describes a stopped service's exit code.
func exitCode(st Status) string {
	if st.Win32ExitCode == errorServiceSpecific {
		return fmt.Sprintf("service-specific exit code %d", st.ServiceSpecificExitCode)
	}
	return fmt.Sprintf("exit code %d", st.Win32ExitCode)
}

// UninstallOptions says which service Uninstall removes.
type UninstallOptions struct {
	// Name is the service name; default DefaultServiceName.
	Name string
	// Timeout bounds the wait for the service to stop and the wait for it
	// to disappear; zero means DefaultTimeout.
	Timeout time.Duration
	// PollInterval is how often a wait asks; zero means
	// DefaultPollInterval.
	PollInterval time.Duration
	// Clock waits; nil means the wall clock.
	Clock Clock
	// Progress receives one line per step; may be nil.
	Progress func(string)
}

// UninstallResult says what Uninstall did.
type UninstallResult struct {
	// Existed is false if there was no such service (Uninstall then did
	// nothing and succeeded).
	Existed bool
	// Previous is the removed service's configuration.
	Previous *Config
}

// Uninstall stops the service (waiting, bounded), deletes it and waits
// until the SCM no longer knows it, then removes its event log source. A
// service that does not exist is not an error. If the service does not
// stop in time, nothing is deleted. If it is deleted but does not
// disappear in time (some program holds it open), Uninstall says so.
func Uninstall(m Manager, opts UninstallOptions) (UninstallResult, error) {
	if opts.Name == "" {
		opts.Name = DefaultServiceName
	}
	var res UninstallResult
	if err := checkName(opts.Name); err != nil {
		return res, err
	}
	w := newWaitOptions(opts.Timeout, opts.PollInterval, opts.Clock, opts.Progress)
	s, err := m.OpenService(opts.Name)
	if errors.Is(err, ErrServiceNotExist) {
		w.say("Service %s is not installed", opts.Name)
		_ = m.RemoveEventSource(opts.Name) // a leftover from an earlier install, if any
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("open service %s: %w", opts.Name, err)
	}
	res.Existed = true
	if prev, err := s.Config(); err == nil {
		res.Previous = &prev
		w.say("Removing service %s (command line: %s)", opts.Name, prev.BinaryPathName)
	}
	if _, err := stopAndWait(s, opts.Name, w); err != nil {
		_ = s.Close() // nothing changed; the stop error is the one to report
		return res, err
	}
	if err := s.Delete(); err != nil && !errors.Is(err, ErrMarkedForDelete) {
		_ = s.Close() // the Delete error is the one to report
		return res, fmt.Errorf("delete service %s: %w", opts.Name, err)
	}
	// The service disappears only once every handle is closed, ours
	// included.
	if err := s.Close(); err != nil {
		return res, fmt.Errorf("close service %s: %w", opts.Name, err)
	}
	deadline := w.clock.Now().Add(w.timeout)
	for {
		s, err := m.OpenService(opts.Name)
		if errors.Is(err, ErrServiceNotExist) {
			break
		}
		if err == nil {
			_ = s.Close() // only looked
		} else if !errors.Is(err, ErrMarkedForDelete) {
			return res, fmt.Errorf("open service %s: %w", opts.Name, err)
		}
		if !w.clock.Now().Before(deadline) {
			return res, fmt.Errorf("service %s is deleted but still present after %s: it disappears once every program holding it open (services.msc, Event Viewer, a monitoring agent) closes it, or at the next reboot", opts.Name, w.timeout)
		}
		w.clock.Sleep(w.poll)
	}
	w.say("Service %s removed", opts.Name)
	if err := m.RemoveEventSource(opts.Name); err != nil {
		w.say("Warning: could not remove the event log source %s: %v", opts.Name, err)
	}
	return res, nil
}
