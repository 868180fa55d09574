//go:build linux

package systemd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

const (
	systemdName  = "org.freedesktop.systemd1"
	managerPath  = dbus.ObjectPath("/org/freedesktop/systemd1")
	managerIface = "org.freedesktop.systemd1.Manager"
	unitIface    = "org.freedesktop.systemd1.Unit"
	jobRemoved   = managerIface + ".JobRemoved"
	// connectTimeout bounds connecting and authenticating: a socket that
	// accepts but never answers must not hang a call.
	connectTimeout = 10 * time.Second
)

// DBus is a Bus on a D-Bus connection to systemd through the system bus.
// The connection is opened on first use (so the daemon starts, and the
// other groups serve, on a host where the bus is down) and reopened on the
// next call after it breaks. It is safe for concurrent use.
type DBus struct {
	address string

	mu    sync.Mutex
	conn  *dbus.Conn
	owner string // systemd's unique bus name: only its JobRemoved signals count
}

var _ Bus = (*DBus)(nil)

// NewDBus returns a Bus on the D-Bus system bus at address ("" means
// DefaultBusAddress, unix:path=/run/dbus/system_bus_socket). It does not
// connect yet. Managing units needs root (or a polkit rule).
func NewDBus(address string) *DBus {
	if address == "" {
		address = DefaultBusAddress
	}
	return &DBus{address: address}
}

// Close closes the connection, if one is open. A later call opens a new
// one.
func (b *DBus) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn == nil {
		return nil
	}
	err := b.conn.Close()
	b.conn = nil
	return err
}

// connection returns the open connection and systemd's unique name,
// connecting first if needed.
func (b *DBus) connection(ctx context.Context) (*dbus.Conn, string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn != nil && b.conn.Connected() {
		return b.conn, b.owner, nil
	}
	if b.conn != nil {
		_ = b.conn.Close()
		b.conn = nil
	}
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	conn, err := dial(ctx, b.address)
	if err != nil {
		return nil, "", errdefs.Errorf(errdefs.ErrUnavailable, "systemd is not reachable over D-Bus at %s: %v", socketOf(b.address), err)
	}
	owner, err := b.setUp(ctx, conn)
	if err != nil {
		_ = conn.Close()
		return nil, "", err
	}
	b.conn, b.owner = conn, owner
	return conn, owner, nil
}

// setUp prepares a new connection for jobs and returns systemd's unique
// name.
func (b *DBus) setUp(ctx context.Context, conn *dbus.Conn) (string, error) {
	var owner string
	err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetNameOwner", 0, systemdName).Store(&owner)
	if err != nil {
		if be := asBusError(err); be != nil && errors.Is(be, errdefs.ErrUnavailable) {
			return "", errdefs.Errorf(errdefs.ErrUnavailable, "systemd is not running on the D-Bus bus at %s (nobody owns %s)", socketOf(b.address), systemdName)
		}
		return "", b.callErr("GetNameOwner", err)
	}
	// The match rule is in place before any job is queued, so a job that
	// finishes before its StartUnit reply arrives is not missed.
	err = conn.AddMatchSignalContext(ctx,
		dbus.WithMatchSender(systemdName),
		dbus.WithMatchObjectPath(managerPath),
		dbus.WithMatchInterface(managerIface),
		dbus.WithMatchMember("JobRemoved"))
	if err != nil {
		return "", b.callErr("AddMatch", err)
	}
	// systemd emits JobRemoved only while some client is subscribed.
	if err := conn.Object(systemdName, managerPath).CallWithContext(ctx, managerIface+".Subscribe", 0).Err; err != nil {
		return "", b.callErr("Subscribe", err)
	}
	return owner, nil
}

// dial connects, authenticates and says Hello, giving up when ctx ends.
func dial(ctx context.Context, address string) (*dbus.Conn, error) {
	type result struct {
		conn *dbus.Conn
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := dbus.Connect(address)
		ch <- result{c, err}
	}()
	select {
	case r := <-ch:
		return r.conn, r.err
	case <-ctx.Done():
		go func() { // close a connection that completes after all
			if r := <-ch; r.conn != nil {
				_ = r.conn.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// asBusError converts a godbus error reply to a BusError, or returns nil.
func asBusError(err error) *BusError {
	var de dbus.Error
	var pde *dbus.Error
	switch {
	case errors.As(err, &de):
	case errors.As(err, &pde) && pde != nil:
		de = *pde
	default:
		return nil
	}
	be := &BusError{Name: de.Name}
	if len(de.Body) > 0 {
		if s, ok := de.Body[0].(string); ok {
			be.Message = s
		}
	}
	return be
}

// callErr wraps the failure of a call: error replies become BusErrors,
// context errors pass through, and anything else (the connection broke)
// is errdefs.ErrUnavailable.
func (b *DBus) callErr(op string, err error) error {
	if be := asBusError(err); be != nil {
		return fmt.Errorf("systemd %s: %w", op, be)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("systemd %s: %w", op, err)
	}
	return fmt.Errorf("systemd %s over D-Bus at %s: %w: %w", op, socketOf(b.address), err, errdefs.ErrUnavailable)
}

// Unit implements Bus.
func (b *DBus) Unit(ctx context.Context, name string) (Unit, error) {
	conn, _, err := b.connection(ctx)
	if err != nil {
		return Unit{}, err
	}
	var path dbus.ObjectPath
	if err := conn.Object(systemdName, managerPath).CallWithContext(ctx, managerIface+".LoadUnit", 0, name).Store(&path); err != nil {
		return Unit{}, b.callErr("LoadUnit "+name, err)
	}
	var props map[string]dbus.Variant
	if err := conn.Object(systemdName, path).CallWithContext(ctx, "org.freedesktop.DBus.Properties.GetAll", 0, unitIface).Store(&props); err != nil {
		return Unit{}, b.callErr("GetAll "+name, err)
	}
	values := make(map[string]any, len(props))
	for k, v := range props {
		values[k] = v.Value()
	}
	return unitFromProperties(name, values), nil
}

// RunJob implements Bus. It listens for JobRemoved before queueing the
// job, then waits for the signal naming the job's object path, sent by
// systemd itself: a signal sent straight to this connection by another
// peer (unicast signals bypass match rules) is ignored.
func (b *DBus) RunJob(ctx context.Context, method, name, mode string) (string, error) {
	conn, owner, err := b.connection(ctx)
	if err != nil {
		return "", err
	}
	ch := make(chan *dbus.Signal, 16)
	conn.Signal(ch)
	defer conn.RemoveSignal(ch)
	var job dbus.ObjectPath
	if err := conn.Object(systemdName, managerPath).CallWithContext(ctx, managerIface+"."+method, 0, name, mode).Store(&job); err != nil {
		return "", b.callErr(method+" "+name, err)
	}
	for {
		select {
		case s, ok := <-ch:
			if !ok {
				return "", errdefs.Errorf(errdefs.ErrUnavailable, "lost the D-Bus connection to systemd while waiting for job %s (%s %s)", job, method, name)
			}
			if s.Name != jobRemoved || s.Path != managerPath || len(s.Body) != 4 {
				continue
			}
			path, _ := s.Body[1].(dbus.ObjectPath)
			result, _ := s.Body[3].(string)
			if path != job {
				continue
			}
			if s.Sender != owner && !b.isSystemd(ctx, conn, s.Sender) {
				continue
			}
			return result, nil
		case <-conn.Context().Done():
			return "", errdefs.Errorf(errdefs.ErrUnavailable, "lost the D-Bus connection to systemd while waiting for job %s (%s %s)", job, method, name)
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for systemd job %s (%s %s; it keeps running): %w", job, method, name, ctx.Err())
		}
	}
}

// isSystemd tells whether sender owns systemd's name now: after systemctl
// daemon-reexec systemd reconnects under a new unique name.
func (b *DBus) isSystemd(ctx context.Context, conn *dbus.Conn, sender string) bool {
	var owner string
	if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.GetNameOwner", 0, systemdName).Store(&owner); err != nil {
		return false
	}
	b.mu.Lock()
	if b.conn == conn {
		b.owner = owner
	}
	b.mu.Unlock()
	return owner == sender
}
