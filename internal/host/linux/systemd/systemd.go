// Package systemd is the system group's backend on a Linux host: it
// implements system.Host with the firmware's DMI tables for the BIOS serial
// number and systemd, over D-Bus, for services.
//
// Services are systemd units: the service name "foo" is the unit
// "foo.service". Host talks to systemd's manager object
// (org.freedesktop.systemd1(5)) through Bus, a small interface with two
// implementations: DBus, a connection to the system bus, and FakeBus, an
// in-memory systemd for tests of this package and of the layers above. No
// systemctl process is ever started, and nothing is faked when systemd
// cannot be reached: every call then fails with errdefs.ErrUnavailable.
//
// The mapping of systemd's states onto the Windows-shaped wire enums, and
// what StopService's force means here, are documented on the functions
// below and in docs/linux-filesystem-system.md.
package systemd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
)

// DefaultSysfsRoot is where sysfs is mounted on a Linux host.
const DefaultSysfsRoot = "/sys"

// maxJobWait bounds how long StartService and StopService wait for their
// job when the caller's context has no deadline: systemd's own timeouts
// can be infinite (TimeoutStartSec=infinity), and a call must not hold the
// Service's per-service lock for ever. The job itself keeps running.
const maxJobWait = 2 * time.Minute

// Host is a system.Host on Linux: DMI for the serial number, systemd over
// a Bus for services. It is safe for concurrent use as far as its Bus is.
type Host struct {
	sysfs string
	bus   Bus
}

var _ system.Host = (*Host)(nil)

// New returns a Host reading DMI under sysfsRoot ("" means /sys; tests
// pass a fixture tree) and managing services through bus (NewDBus("") for
// the host's systemd, or a FakeBus).
func New(sysfsRoot string, bus Bus) *Host {
	if sysfsRoot == "" {
		sysfsRoot = DefaultSysfsRoot
	}
	return &Host{sysfs: sysfsRoot, bus: bus}
}

// Close closes the Bus when it holds something (DBus: its connection to
// the system bus, with the goroutines that read it); a FakeBus holds
// nothing. Call it after the last call: a call made after Close opens a
// new connection, which the next Close closes.
func (h *Host) Close() error {
	if c, ok := h.bus.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// BIOSSerialNumber implements system.Host with the system serial number
// from SMBIOS type 1 (System Information), which Linux exposes as
// /sys/class/dmi/id/product_serial. It is the value Windows reports as
// Win32_BIOS.SerialNumber, which upstream returns and drivers use as a
// node identity (vSphere's is "VMware-42 1a ..."). board_serial (type 2,
// the baseboard) is a different number and is never substituted: a node
// whose identity silently changed source would be a different node.
//
// The value is returned as the firmware reports it, placeholders such as
// "To Be Filled By O.E.M." included, as on Windows. A host without DMI
// tables (many ARM machines, micro-VMs such as Firecracker) or with an
// empty serial is errdefs.ErrNotFound, never an invented value. The file
// is readable by root only (errdefs.ErrPermissionDenied otherwise).
func (h *Host) BIOSSerialNumber(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	p := filepath.Join(h.sysfs, "class", "dmi", "id", "product_serial")
	b, err := os.ReadFile(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", errdefs.Errorf(errdefs.ErrNotFound, "the firmware reports no serial number: %s does not exist (the host has no SMBIOS/DMI tables)", p)
	case errors.Is(err, os.ErrPermission):
		return "", errdefs.Errorf(errdefs.ErrPermissionDenied, "reading %s needs root", p)
	case err != nil:
		return "", fmt.Errorf("read the serial number: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", errdefs.Errorf(errdefs.ErrNotFound, "the firmware reports no serial number: %s is empty", p)
	}
	return s, nil
}

// maxUnitName is systemd's limit on a unit name (UNIT_NAME_MAX - 1).
const maxUnitName = 255

// UnitName returns the systemd unit for a service name: "foo" and
// "foo.service" are both "foo.service". Any other suffix is part of the
// name ("reboot.target" is the unit "reboot.target.service", which does
// not exist), so a service name can never reach a target, mount, socket or
// timer unit. An instance of a template ("getty@tty1") is a service like
// any other; a bare template ("getty@") is errdefs.ErrInvalidArgument, as
// systemd cannot start or stop one. Names may hold only the characters
// systemd allows in unit names, except "\" (its escape character, which
// the system group refuses in service names anyway).
func UnitName(name string) (string, error) {
	base := strings.TrimSuffix(name, ".service")
	if base == "" {
		return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "service name %q is empty", name)
	}
	for _, r := range base {
		if !unitNameChar(r) {
			return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "service name %q contains %q, which systemd does not allow in unit names", name, r)
		}
	}
	if prefix, instance, templ := strings.Cut(base, "@"); templ {
		switch {
		case prefix == "":
			return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "service name %q has nothing before the \"@\"", name)
		case instance == "":
			return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "service name %q is a template; name an instance such as %s@name", name, prefix)
		case strings.Contains(instance, "@"):
			return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "service name %q has more than one \"@\"", name)
		}
	}
	unit := base + ".service"
	if len(unit) > maxUnitName {
		return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "unit name %q is %d bytes long, systemd's limit is %d", unit, len(unit), maxUnitName)
	}
	return unit, nil
}

// unitNameChar tells whether systemd allows r in a unit name; its escape
// character, the backslash, is left out.
func unitNameChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(":_.-@", r)
}

// StatusOf maps a unit's ActiveState (and SubState, for the record) to
// the wire's ServiceStatus:
//
//	active, reloading, refreshing  RUNNING (reloading and refreshing are a running unit doing extra work)
//	activating                     START_PENDING (including SubState auto-restart: waiting to start again)
//	deactivating                   STOP_PENDING
//	inactive, failed, maintenance  STOPPED (failed is stopped with an error; maintenance is a stopped unit being cleaned)
//	anything else                  UNKNOWN
//
// systemd has no paused services, so CONTINUE_PENDING, PAUSE_PENDING and
// PAUSED never occur.
func StatusOf(activeState, subState string) system.ServiceStatus {
	_ = subState // every SubState maps as its ActiveState does; kept so a future split needs no new signature
	switch activeState {
	case "active", "reloading", "refreshing":
		return system.StatusRunning
	case "activating":
		return system.StatusStartPending
	case "deactivating":
		return system.StatusStopPending
	case "inactive", "failed", "maintenance":
		return system.StatusStopped
	}
	return system.StatusUnknown
}

// StartTypeOf maps a unit's UnitFileState to the wire's StartType:
//
//	enabled, enabled-runtime, generated     AUTOMATIC (started at boot; generated units are pulled in by their generator)
//	disabled, masked, masked-runtime        DISABLED
//	static, indirect, linked, alias, ...    MANUAL (started on demand or by another unit)
//
// and MANUAL for any other state, including "" (a transient unit, or one
// without a unit file). The wire enum has no unknown value (0 is BOOT), and
// MANUAL claims least. BOOT and SYSTEM (Windows driver start types) never
// occur.
//
// Caveat: a disabled systemd unit can still be started (StartService
// works); it is reported DISABLED because that is what systemctl
// is-enabled says and what an operator reading both will expect. Only a
// masked unit truly cannot start.
func StartTypeOf(unitFileState string) system.StartType {
	switch unitFileState {
	case "enabled", "enabled-runtime", "generated":
		return system.StartAutomatic
	case "disabled", "masked", "masked-runtime":
		return system.StartDisabled
	}
	return system.StartManual
}

// running tells whether a unit is up or on its way up, the states in which
// a StopUnit job would have something to stop.
func running(u Unit) bool {
	switch u.ActiveState {
	case "active", "reloading", "refreshing", "activating":
		return true
	}
	return false
}

// load fetches the unit for a service name and turns systemd's "not-found"
// into errdefs.ErrNotFound.
func (h *Host) load(ctx context.Context, name string) (Unit, error) {
	unit, err := UnitName(name)
	if err != nil {
		return Unit{}, err
	}
	u, err := h.bus.Unit(ctx, unit)
	if err != nil {
		return Unit{}, err
	}
	if u.LoadState == "not-found" {
		return Unit{}, errdefs.Errorf(errdefs.ErrNotFound, "service %q (systemd unit %s) does not exist", name, unit)
	}
	u.Name = unit
	return u, nil
}

// GetService implements system.Host: DisplayName is the unit's
// Description (the unit name when it has none), StartType is
// StartTypeOf(UnitFileState), Status is StatusOf(ActiveState, SubState).
// An unknown service is errdefs.ErrNotFound.
func (h *Host) GetService(ctx context.Context, name string) (system.ServiceInfo, error) {
	u, err := h.load(ctx, name)
	if err != nil {
		return system.ServiceInfo{}, err
	}
	display := u.Description
	if display == "" {
		display = u.Name
	}
	return system.ServiceInfo{
		DisplayName: display,
		StartType:   StartTypeOf(u.UnitFileState),
		Status:      StatusOf(u.ActiveState, u.SubState),
	}, nil
}

// StartService implements system.Host: Manager.StartUnit(unit, "replace"),
// then wait until the job finishes. An active unit is success without a
// job. A unit that fails to start (job result "failed" or "dependency")
// or is masked is errdefs.ErrFailedPrecondition; a job canceled by another
// or timed out is errdefs.ErrUnavailable. For a Type=oneshot unit "started"
// means it ran to completion.
func (h *Host) StartService(ctx context.Context, name string) error {
	u, err := h.load(ctx, name)
	if err != nil {
		return err
	}
	switch {
	case u.ActiveState == "active" || u.ActiveState == "reloading" || u.ActiveState == "refreshing":
		return nil
	case u.LoadState == "masked":
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "service %q is masked and cannot be started (systemctl unmask %s)", name, u.Name)
	}
	return h.runJob(ctx, "StartUnit", u.Name)
}

// StopService implements system.Host: Manager.StopUnit(unit, "replace"),
// then wait until the job finishes. A stopped (inactive or failed) unit is
// success without a job.
//
// force mirrors Windows, where stopping a service that others depend on
// fails unless the dependents are stopped first. systemd always stops, in
// the same transaction and in the right order, every unit that requires
// this one (the reverse of Requires=, Requisite=, BindsTo= and PartOf=:
// the properties RequiredBy, RequisiteOf, BoundBy, ConsistsOf). So:
// without force, a running unit among those is errdefs.ErrFailedPrecondition
// and nothing is stopped; with force the stop goes ahead and systemd stops
// them too. Units that merely want this one (Wants=, WantedBy) keep
// running either way, as they would on Windows with no dependency at all.
func (h *Host) StopService(ctx context.Context, name string, force bool) error {
	u, err := h.load(ctx, name)
	if err != nil {
		return err
	}
	if u.ActiveState == "inactive" || u.ActiveState == "failed" {
		return nil
	}
	if !force {
		deps, err := h.runningDependents(ctx, u)
		if err != nil {
			return err
		}
		if len(deps) > 0 {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "service %q has running dependents that systemd would stop with it: %s; stop them first or use force", name, strings.Join(deps, ", "))
		}
	}
	return h.runJob(ctx, "StopUnit", u.Name)
}

// runningDependents lists the running units systemd would stop along with
// u.
func (h *Host) runningDependents(ctx context.Context, u Unit) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, list := range [][]string{u.RequiredBy, u.RequisiteOf, u.BoundBy, u.ConsistsOf} {
		for _, d := range list {
			if seen[d] {
				continue
			}
			seen[d] = true
			du, err := h.bus.Unit(ctx, d)
			if errors.Is(err, errdefs.ErrNotFound) {
				continue // not loaded, so not running
			}
			if err != nil {
				return nil, fmt.Errorf("dependent %s: %w", d, err)
			}
			if running(du) {
				out = append(out, d)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// runJob runs a StartUnit or StopUnit job in "replace" mode (the mode
// systemctl uses: it replaces conflicting queued jobs, so a start
// overrides a pending stop) and maps its result.
func (h *Host) runJob(ctx context.Context, method, unit string) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, maxJobWait)
		defer cancel()
	}
	result, err := h.bus.RunJob(ctx, method, unit, "replace")
	if err != nil {
		return err
	}
	return JobResultError(method, unit, result)
}

// JobResultError maps the result systemd reports for a finished job
// (JobRemoved's result) to an error: nil for "done" and "skipped" (the
// job had nothing to do), errdefs.ErrFailedPrecondition for "failed" and
// "dependency" (the unit or one it requires failed: the journal says why),
// errdefs.ErrUnavailable for "canceled" (another job replaced it) and
// "timeout", and a plain error for anything else.
func JobResultError(method, unit, result string) error {
	verb := strings.ToLower(strings.TrimSuffix(method, "Unit"))
	switch result {
	case "done", "skipped":
		return nil
	case "failed":
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "systemd could not %s %s (see journalctl -u %s)", verb, unit, unit)
	case "dependency":
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "systemd could not %s %s: a unit it requires failed", verb, unit)
	case "canceled":
		return errdefs.Errorf(errdefs.ErrUnavailable, "the %s job for %s was canceled, probably replaced by another job; retry", verb, unit)
	case "timeout":
		return errdefs.Errorf(errdefs.ErrUnavailable, "the %s job for %s timed out", verb, unit)
	}
	return fmt.Errorf("the %s job for %s ended with result %q", verb, unit, result)
}
