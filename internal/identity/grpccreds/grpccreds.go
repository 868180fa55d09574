// Package grpccreds hands package identity to gRPC: Credentials are the
// gRPC transport credentials that identify each connection's caller
// (identity.Credentials) and leave the connection as it is, AuthInfo
// carries the caller on the connection, and FromContext and CheckAlive
// read it back in a call. It is the only part of identification that
// knows gRPC, so library mode, which identifies itself (identity.Self),
// links none of it.
package grpccreds

import (
	"context"
	"fmt"
	"net"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

// AuthInfo carries the caller of a connection through gRPC
// (peer.FromContext(ctx).AuthInfo): identity's AuthInfo, with gRPC's
// security level (none: the endpoints' access control is their own).
type AuthInfo struct {
	credentials.CommonAuthInfo
	identity.AuthInfo
}

// Credentials are server transport credentials that identify callers.
type Credentials struct {
	id *identity.Credentials
}

var _ credentials.TransportCredentials = (*Credentials)(nil)

// NewCredentials returns server credentials that identify callers as o
// says (see identity.NewCredentials).
func NewCredentials(o identity.Options) *Credentials {
	return &Credentials{id: identity.NewCredentials(o)}
}

// ServerHandshake identifies the process on the other end of conn (see
// identity.Credentials.ServerHandshake) and returns its AuthInfo.
func (c *Credentials) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, pi, err := c.id.ServerHandshake(conn)
	if err != nil {
		return nil, nil, err
	}
	ai, _ := pi.(identity.AuthInfo) // the only PeerInfo identity returns
	// A pointer, so that each call can point at the connection's caller
	// (Caller) instead of copying it.
	return conn, &AuthInfo{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}, AuthInfo: ai}, nil
}

// ClientHandshake is not supported: these credentials are for the server.
func (c *Credentials) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, fmt.Errorf("identity.Credentials is server-side only")
}

// Info implements credentials.TransportCredentials.
func (c *Credentials) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "insecure"}
}

// Clone implements credentials.TransportCredentials.
func (c *Credentials) Clone() credentials.TransportCredentials {
	cp := *c
	return &cp
}

// OverrideServerName implements credentials.TransportCredentials; it has
// nothing to override.
func (c *Credentials) OverrideServerName(string) error { return nil }

// FromContext returns the caller of the call ctx belongs to: the one
// identity.NewContext put there, or else the one the connection's
// handshake found (an AuthInfo in the gRPC peer). ok is false when
// neither is present, as for a server that does not use Credentials.
func FromContext(ctx context.Context) (c identity.Caller, ok bool) {
	if c, ok := identity.FromContext(ctx); ok {
		return c, true
	}
	if ai, ok := authInfo(ctx); ok {
		return ai.Caller, true
	}
	return identity.Caller{}, false
}

// Describe returns FromContext's caller as Caller.String() does, without
// formatting it again on every call when it is the connection's.
func Describe(ctx context.Context) string {
	if c, ok := identity.FromContext(ctx); ok {
		return c.String()
	}
	if ai, ok := authInfo(ctx); ok {
		return ai.Describe()
	}
	return identity.Caller{}.String()
}

// AccountKey returns FromContext's caller's Caller.AccountKey(), made
// once per connection when it is the connection's.
func AccountKey(ctx context.Context) string {
	if c, ok := identity.FromContext(ctx); ok {
		return c.AccountKey()
	}
	if ai, ok := authInfo(ctx); ok {
		return ai.Key()
	}
	return ""
}

// CheckAlive returns an error wrapping identity.ErrCallerExited when the
// call ctx belongs to arrived on a connection whose connecting process
// has exited (identity.AuthInfo.CheckAlive). A call without such a
// connection (no Credentials on the server) passes.
func CheckAlive(ctx context.Context) error {
	ai, ok := authInfo(ctx)
	if !ok {
		return nil
	}
	return ai.CheckAlive()
}

// Caller returns the caller the handshake of ctx's connection found,
// shared by every call on the connection and never changed; nil when
// the connection has none (a server without Credentials).
func Caller(ctx context.Context) *identity.Caller {
	if ai, ok := authInfo(ctx); ok {
		return &ai.Caller
	}
	return nil
}

// authInfo returns the AuthInfo of ctx's connection.
func authInfo(ctx context.Context) (*identity.AuthInfo, bool) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil, false
	}
	ai, ok := p.AuthInfo.(*AuthInfo)
	if !ok || ai == nil {
		return nil, false
	}
	return &ai.AuthInfo, true
}
