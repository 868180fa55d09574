// Package winsvctest provides a recording fake of the Windows service
// control manager, as package winsvc sees it (winsvc.Manager and
// winsvc.Service), and a fake clock, so the install and uninstall logic is
// tested on any OS.
//
// The fake keeps services with a state that moves as the SCM's does: Start
// makes a service StartPending and Stop makes it StopPending, and a pending
// state ends after a configurable number of Query calls. Every call is
// recorded, in order, as one line such as "Control csiproxy Stop".
package winsvctest

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/winsvc"
)

// Service is a fake service. Tests set its fields before use and read
// them afterwards.
type Service struct {
	// Name is the service name as created.
	Name string
	// Config is the service's configuration.
	Config winsvc.Config
	// State is its current state.
	State winsvc.State
	// PendingQueries is how many Query calls StartPending and StopPending
	// last (0: the next Query sees the final state).
	PendingQueries int
	// NeverStops keeps the service StopPending for ever.
	NeverStops bool
	// FailStart makes a start end in Stopped with this status instead of
	// Running.
	FailStart *winsvc.Status
	// DependentsRunning makes Stop fail with
	// winsvc.ErrDependentServicesRunning.
	DependentsRunning bool
	// Recovery, RecoveryReset and RecoveryOnNonCrash are what
	// SetRecoveryActions and SetRecoveryActionsOnNonCrashFailures set.
	Recovery           []winsvc.RecoveryAction
	RecoveryReset      time.Duration
	RecoveryOnNonCrash bool
	// Deleted is set by Delete.
	Deleted bool
	// HeldOpen is how many more OpenService polls a deleted service stays
	// visible after the last handle closes (another program holding it);
	// negative: for ever.
	HeldOpen int
	// Exit is the exit status a stopped service reports.
	Exit winsvc.Status

	pending int
	handles int
}

// Manager is the fake SCM. The zero value has no services; use Add to
// put some in. It is safe for concurrent use.
type Manager struct {
	mu       sync.Mutex
	services map[string]*Service
	sources  map[string]bool
	calls    []string
	// Fail maps a call ("Op" or "Op name", e.g. "UpdateConfig" or
	// "SetRecoveryActionsOnNonCrashFailures csiproxy") to the error it
	// returns instead of doing anything.
	Fail map[string]error
	// Disconnected is true after Disconnect.
	Disconnected bool
}

// NewManager returns a fake SCM holding services.
func NewManager(services ...*Service) *Manager {
	m := &Manager{services: map[string]*Service{}, sources: map[string]bool{}, Fail: map[string]error{}}
	for _, s := range services {
		m.Add(s)
	}
	return m
}

// Add installs a service (by its Name; names are case-insensitive).
func (m *Manager) Add(s *Service) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.State == 0 {
		s.State = winsvc.Stopped
	}
	m.services[strings.ToLower(s.Name)] = s
}

// Service returns the service of that name, or nil.
func (m *Manager) Service(name string) *Service {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.services[strings.ToLower(name)]
}

// HasEventSource tells whether name is registered as an event source.
func (m *Manager) HasEventSource(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sources[strings.ToLower(name)]
}

// AddEventSourceFor registers an event source, as an earlier install
// would have.
func (m *Manager) AddEventSourceFor(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sources[strings.ToLower(name)] = true
}

// Calls returns every call so far, in order.
func (m *Manager) Calls() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.calls...)
}

// Ops returns the calls that ask the SCM to change something or open or
// close a handle, leaving out Query and Config: the sequence that matters,
// without the polling.
func (m *Manager) Ops() []string {
	var ops []string
	for _, c := range m.Calls() {
		if op, _, _ := strings.Cut(c, " "); op != "Query" && op != "Config" {
			ops = append(ops, c)
		}
	}
	return ops
}

// Count returns how many calls to op (the first word) were made.
func (m *Manager) Count(op string) int {
	n := 0
	for _, c := range m.Calls() {
		if first, _, _ := strings.Cut(c, " "); first == op {
			n++
		}
	}
	return n
}

// record logs a call and returns its injected failure, if any. Called
// with m.mu held.
func (m *Manager) record(op, name string, details ...string) error {
	line := op
	if name != "" {
		line += " " + name
	}
	if len(details) > 0 {
		line += " " + strings.Join(details, " ")
	}
	m.calls = append(m.calls, line)
	if err := m.Fail[op+" "+name]; err != nil {
		return err
	}
	return m.Fail[op]
}

// OpenService implements winsvc.Manager.
func (m *Manager) OpenService(name string) (winsvc.Service, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.record("OpenService", name); err != nil {
		return nil, err
	}
	s := m.services[strings.ToLower(name)]
	if s == nil {
		return nil, fmt.Errorf("fake OpenService %s: %w", name, winsvc.ErrServiceNotExist)
	}
	if s.Deleted && s.handles == 0 {
		if s.HeldOpen == 0 {
			delete(m.services, strings.ToLower(name))
			return nil, fmt.Errorf("fake OpenService %s: %w", name, winsvc.ErrServiceNotExist)
		}
		if s.HeldOpen > 0 {
			s.HeldOpen--
		}
	}
	s.handles++
	return &handle{m: m, s: s}, nil
}

// CreateService implements winsvc.Manager.
func (m *Manager) CreateService(name string, c winsvc.Config) (winsvc.Service, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.record("CreateService", name, FormatConfig(c)); err != nil {
		return nil, err
	}
	if old := m.services[strings.ToLower(name)]; old != nil {
		if old.Deleted {
			return nil, fmt.Errorf("fake CreateService %s: %w", name, winsvc.ErrMarkedForDelete)
		}
		return nil, fmt.Errorf("fake CreateService %s: %w", name, winsvc.ErrServiceExists)
	}
	s := &Service{Name: name, Config: c, State: winsvc.Stopped, handles: 1}
	m.services[strings.ToLower(name)] = s
	return &handle{m: m, s: s}, nil
}

// AddEventSource implements winsvc.Manager.
func (m *Manager) AddEventSource(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.record("AddEventSource", name); err != nil {
		return err
	}
	m.sources[strings.ToLower(name)] = true
	return nil
}

// RemoveEventSource implements winsvc.Manager.
func (m *Manager) RemoveEventSource(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.record("RemoveEventSource", name); err != nil {
		return err
	}
	delete(m.sources, strings.ToLower(name))
	return nil
}

// Disconnect implements winsvc.Manager.
func (m *Manager) Disconnect() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Disconnected = true
	return m.record("Disconnect", "")
}

// OpenHandles returns how many handles to the named service are open.
func (m *Manager) OpenHandles(name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.services[strings.ToLower(name)]; s != nil {
		return s.handles
	}
	return 0
}

// FormatConfig renders a configuration the way calls are recorded.
func FormatConfig(c winsvc.Config) string {
	return fmt.Sprintf("{bin=%s display=%q desc=%q start=%s delayed=%t account=%s}",
		c.BinaryPathName, c.DisplayName, c.Description, c.StartType, c.DelayedAutoStart, c.ServiceStartName)
}

// handle is an open fake service handle.
type handle struct {
	m      *Manager
	s      *Service
	closed bool
}

// op records a call on the handle's service, refusing a closed handle.
func (h *handle) op(op string, details ...string) error {
	if err := h.m.record(op, h.s.Name, details...); err != nil {
		return err
	}
	if h.closed {
		return fmt.Errorf("fake %s %s: handle already closed", op, h.s.Name)
	}
	return nil
}

// Config implements winsvc.Service.
func (h *handle) Config() (winsvc.Config, error) {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	if err := h.op("Config"); err != nil {
		return winsvc.Config{}, err
	}
	return h.s.Config, nil
}

// UpdateConfig implements winsvc.Service.
func (h *handle) UpdateConfig(c winsvc.Config) error {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	if err := h.op("UpdateConfig", FormatConfig(c)); err != nil {
		return err
	}
	h.s.Config = c
	return nil
}

// SetRecoveryActions implements winsvc.Service.
func (h *handle) SetRecoveryActions(actions []winsvc.RecoveryAction, reset time.Duration) error {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	var d []string
	for _, a := range actions {
		d = append(d, "restart/"+a.Delay.String())
	}
	if err := h.op("SetRecoveryActions", append(d, "reset="+reset.String())...); err != nil {
		return err
	}
	h.s.Recovery = append([]winsvc.RecoveryAction(nil), actions...)
	h.s.RecoveryReset = reset
	return nil
}

// SetRecoveryActionsOnNonCrashFailures implements winsvc.Service.
func (h *handle) SetRecoveryActionsOnNonCrashFailures(on bool) error {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	if err := h.op("SetRecoveryActionsOnNonCrashFailures", fmt.Sprint(on)); err != nil {
		return err
	}
	h.s.RecoveryOnNonCrash = on
	return nil
}

// Query implements winsvc.Service.
func (h *handle) Query() (winsvc.Status, error) {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	if err := h.op("Query"); err != nil {
		return winsvc.Status{}, err
	}
	s := h.s
	switch s.State {
	case winsvc.StartPending:
		if s.pending > 0 {
			s.pending--
			break
		}
		if s.FailStart != nil {
			s.State = winsvc.Stopped
			s.Exit = *s.FailStart
			s.Exit.State = winsvc.Stopped
		} else {
			s.State = winsvc.Running
		}
	case winsvc.StopPending:
		if s.NeverStops {
			break
		}
		if s.pending > 0 {
			s.pending--
			break
		}
		s.State = winsvc.Stopped
		s.Exit = winsvc.Status{State: winsvc.Stopped}
	}
	return h.status(), nil
}

// status is the service's status now.
func (h *handle) status() winsvc.Status {
	if h.s.State == winsvc.Stopped {
		st := h.s.Exit
		st.State = winsvc.Stopped
		return st
	}
	st := winsvc.Status{State: h.s.State}
	if h.s.State == winsvc.Running {
		st.Accepts = winsvc.AcceptStop | winsvc.AcceptShutdown
	}
	return st
}

// Start implements winsvc.Service.
func (h *handle) Start() error {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	if err := h.op("Start"); err != nil {
		return err
	}
	switch {
	case h.s.Deleted:
		return fmt.Errorf("fake Start %s: %w", h.s.Name, winsvc.ErrMarkedForDelete)
	case h.s.State == winsvc.Stopped:
		h.s.State = winsvc.StartPending
		h.s.pending = h.s.PendingQueries
	}
	return nil // already running is not an error, as the real adapter
}

// Control implements winsvc.Service.
func (h *handle) Control(c winsvc.Cmd) (winsvc.Status, error) {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	if err := h.op("Control", c.String()); err != nil {
		return winsvc.Status{}, err
	}
	if c != winsvc.Stop {
		return h.status(), nil
	}
	switch h.s.State {
	case winsvc.Stopped:
		return h.status(), fmt.Errorf("fake Control %s: %w", h.s.Name, winsvc.ErrNotActive)
	case winsvc.Running, winsvc.Paused:
		if h.s.DependentsRunning {
			return h.status(), fmt.Errorf("fake Control %s: %w", h.s.Name, winsvc.ErrDependentServicesRunning)
		}
		h.s.State = winsvc.StopPending
		h.s.pending = h.s.PendingQueries
		return h.status(), nil
	}
	return h.status(), fmt.Errorf("fake Control %s: %w", h.s.Name, winsvc.ErrCannotAcceptControl)
}

// Delete implements winsvc.Service.
func (h *handle) Delete() error {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	if err := h.op("Delete"); err != nil {
		return err
	}
	if h.s.Deleted {
		return fmt.Errorf("fake Delete %s: %w", h.s.Name, winsvc.ErrMarkedForDelete)
	}
	h.s.Deleted = true
	return nil
}

// Close implements winsvc.Service.
func (h *handle) Close() error {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	if err := h.op("Close"); err != nil {
		return err
	}
	h.closed = true
	h.s.handles--
	return nil
}

// Clock is a fake winsvc.Clock: Sleep advances Now at once.
type Clock struct {
	mu    sync.Mutex
	now   time.Time
	slept time.Duration
}

// NewClock returns a clock at an arbitrary fixed time.
func NewClock() *Clock { return &Clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

// Now implements winsvc.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep implements winsvc.Clock.
func (c *Clock) Sleep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.slept += d
}

// Slept returns the total time slept.
func (c *Clock) Slept() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.slept
}
