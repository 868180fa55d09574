//go:build !linux

package systemd

import (
	"context"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// errNotLinux is every DBus call's error off Linux: the type exists there
// only so that cross-platform wiring compiles.
var errNotLinux = errdefs.Errorf(errdefs.ErrUnimplemented, "systemd: services through systemd are implemented only on Linux")

// DBus is a Bus on systemd's D-Bus API; off Linux every call fails with
// errdefs.ErrUnimplemented.
type DBus struct{}

var _ Bus = (*DBus)(nil)

// NewDBus returns a Bus whose calls fail off Linux.
func NewDBus(address string) *DBus { return &DBus{} }

// Close does nothing off Linux.
func (b *DBus) Close() error { return nil }

// Unit implements Bus; off Linux it always fails.
func (b *DBus) Unit(context.Context, string) (Unit, error) { return Unit{}, errNotLinux }

// RunJob implements Bus; off Linux it always fails.
func (b *DBus) RunJob(context.Context, string, string, string) (string, error) {
	return "", errNotLinux
}
