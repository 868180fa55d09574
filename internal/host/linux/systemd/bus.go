package systemd

import (
	"context"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// DefaultBusAddress is the system bus's D-Bus address on a systemd host.
const DefaultBusAddress = "unix:path=/run/dbus/system_bus_socket"

// Bus is the slice of systemd's D-Bus API (org.freedesktop.systemd1(5))
// that Host uses. It is the seam between the service logic and the bus:
// DBus implements it on the system bus, FakeBus in memory. Errors wrap
// errdefs sentinels (a D-Bus error by BusError).
type Bus interface {
	// Unit describes the unit (a full name, "foo.service"), loading its
	// unit file if systemd has not yet (Manager.LoadUnit, then the
	// org.freedesktop.systemd1.Unit properties). A unit systemd does not
	// know is not an error: it has LoadState "not-found".
	Unit(ctx context.Context, name string) (Unit, error)
	// RunJob calls Manager.<method>(name, mode), where method is
	// "StartUnit" or "StopUnit", and waits until the job it queued is
	// removed, returning the job's result: "done", "canceled", "timeout",
	// "failed", "dependency" or "skipped". When ctx ends first it returns
	// ctx's error; the job keeps running in systemd.
	RunJob(ctx context.Context, method, name, mode string) (string, error)
}

// Unit is what Host reads about a unit: properties of the
// org.freedesktop.systemd1.Unit interface.
type Unit struct {
	// Name is the unit's name, "foo.service".
	Name string
	// Description is the unit's Description=, the service's display name.
	Description string
	// LoadState is "loaded", "not-found", "masked", "bad-setting", "error"
	// or "stub".
	LoadState string
	// ActiveState is "active", "reloading", "inactive", "failed",
	// "activating", "deactivating", "maintenance" or "refreshing".
	ActiveState string
	// SubState is the unit type's finer state ("running", "dead",
	// "exited", "auto-restart", ...).
	SubState string
	// UnitFileState is "enabled", "disabled", "static", "masked",
	// "indirect", "generated", ... or "" without a unit file.
	UnitFileState string
	// RequiredBy, RequisiteOf, BoundBy and ConsistsOf name the units that
	// systemd stops when this one stops (the reverse of their Requires=,
	// Requisite=, BindsTo= and PartOf=).
	RequiredBy, RequisiteOf, BoundBy, ConsistsOf []string
}

// BusError is an error reply from the bus or from systemd. It unwraps to
// the errdefs sentinel its Name means, so the gRPC code is right, while
// the text keeps the D-Bus name operators search for.
type BusError struct {
	// Name is the D-Bus error name ("org.freedesktop.systemd1.NoSuchUnit").
	Name string
	// Message is the error's human-readable text.
	Message string
}

func (e *BusError) Error() string {
	if e.Message == "" {
		return e.Name
	}
	return e.Name + ": " + e.Message
}

// Unwrap returns the sentinel for the error's name, or nil for a name
// with no meaning to the caller (which then becomes codes.Internal).
func (e *BusError) Unwrap() error { return busErrorKind(e.Name) }

// busErrorKind maps D-Bus and systemd error names (sd-bus's bus-common-
// errors.h, the D-Bus specification) to sentinels.
func busErrorKind(name string) error {
	switch name {
	case "org.freedesktop.systemd1.NoSuchUnit":
		return errdefs.ErrNotFound
	case "org.freedesktop.systemd1.UnitMasked",
		"org.freedesktop.systemd1.LoadFailed",
		"org.freedesktop.systemd1.OnlyByDependency",
		"org.freedesktop.systemd1.JobTypeNotApplicable",
		"org.freedesktop.systemd1.TransactionIsDestructive",
		"org.freedesktop.systemd1.TransactionJobsConflicting",
		"org.freedesktop.systemd1.TransactionOrderIsCyclic",
		"org.freedesktop.systemd1.UnitInactive":
		return errdefs.ErrFailedPrecondition
	case "org.freedesktop.DBus.Error.AccessDenied",
		"org.freedesktop.DBus.Error.AuthFailed",
		"org.freedesktop.DBus.Error.InteractiveAuthorizationRequired":
		return errdefs.ErrPermissionDenied
	case "org.freedesktop.DBus.Error.ServiceUnknown",
		"org.freedesktop.DBus.Error.NameHasNoOwner",
		"org.freedesktop.DBus.Error.NoReply",
		"org.freedesktop.DBus.Error.Timeout",
		"org.freedesktop.DBus.Error.TimedOut",
		"org.freedesktop.DBus.Error.Disconnected",
		"org.freedesktop.DBus.Error.NoServer",
		"org.freedesktop.DBus.Error.LimitsExceeded",
		"org.freedesktop.systemd1.ShuttingDown":
		return errdefs.ErrUnavailable
	case "org.freedesktop.DBus.Error.InvalidArgs":
		return errdefs.ErrInvalidArgument
	}
	return nil
}

// socketOf names the socket of a unix:path= address, for messages.
func socketOf(address string) string {
	for _, part := range strings.Split(strings.TrimPrefix(address, "unix:"), ",") {
		if p, ok := strings.CutPrefix(part, "path="); ok {
			return p
		}
	}
	return address
}

// unitFromProperties builds a Unit from the values of a GetAll reply on
// org.freedesktop.systemd1.Unit. Missing or mistyped properties stay
// empty: a unit description must not fail over a property an older
// systemd lacks.
func unitFromProperties(name string, props map[string]any) Unit {
	str := func(k string) string { s, _ := props[k].(string); return s }
	strs := func(k string) []string { s, _ := props[k].([]string); return s }
	return Unit{
		Name:          name,
		Description:   str("Description"),
		LoadState:     str("LoadState"),
		ActiveState:   str("ActiveState"),
		SubState:      str("SubState"),
		UnitFileState: str("UnitFileState"),
		RequiredBy:    strs("RequiredBy"),
		RequisiteOf:   strs("RequisiteOf"),
		BoundBy:       strs("BoundBy"),
		ConsistsOf:    strs("ConsistsOf"),
	}
}
