// Package transport opens and reaches the daemon's endpoints: one named
// pipe per API group-version on Windows (\\.\pipe\csi-proxy-<group>-<version>,
// the names upstream csi-proxy uses) and one Unix socket per group-version
// elsewhere (<dir>/csi-proxy-<group>-<version>.sock).
//
// The exported functions here are the same on every OS; each calls an
// unexported function in the per-OS file (transport_unix.go,
// transport_windows.go, transport_other.go). An OS without an
// implementation gets ErrNotSupported, never a silent success.
//
// Listening is where the endpoint's access control is set, because the
// endpoint is the daemon's only access control: whoever can open it can
// format disks. A socket gets an explicit mode and owner; a pipe gets an
// explicit security descriptor instead of the permissive default DACL that
// upstream relies on.
package transport

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Defaults for Options. A zero field in Options means its default.
const (
	// DefaultSocketDir holds the Unix sockets. /run is a tmpfs cleared at
	// boot, so sockets of a previous boot never linger.
	DefaultSocketDir = "/run/csi-node-proxy"
	// DefaultSocketMode lets the owner and group connect and nobody else:
	// a node plugin gets access by running with the socket's group.
	DefaultSocketMode fs.FileMode = 0o660
	// DefaultPipeSDDL denies every network logon (NU) and grants full
	// access to BUILTIN\Administrators and LocalSystem only, protected
	// from inheritance. Upstream's default DACL also lets Everyone and
	// Anonymous read, which is more than a privileged storage proxy should
	// allow. The deny comes first, as Windows evaluates deny entries
	// before allows: an administrator's token from a network logon (SMB,
	// WinRM) is refused even if the pipe were reachable remotely; go-winio
	// also creates every pipe instance with PIPE_REJECT_REMOTE_CLIENTS.
	DefaultPipeSDDL = "D:P(D;;GA;;;NU)(A;;GA;;;BA)(A;;GA;;;SY)"
	// PipePrefix begins every named pipe path.
	PipePrefix = `\\.\pipe\`
	// SocketSuffix ends every Unix socket file name.
	SocketSuffix = ".sock"
	// DefaultEndpointPrefix begins every endpoint name: upstream's
	// csi-proxy-<group>-<version>, which drivers' clients look for.
	DefaultEndpointPrefix = "csi-proxy"
)

// maxEndpointPrefix bounds a prefix so that a socket path (about 100
// bytes on Linux) keeps room for the directory and the group-version.
const maxEndpointPrefix = 40

// EndpointName returns the endpoint name of a group-version under prefix:
// <prefix>-<group>-<version>. An empty prefix is DefaultEndpointPrefix.
// A second proxy installed beside upstream's (or beside another
// csi-node-proxy) during a migration uses another prefix, so the two
// never contend for one pipe or socket.
func EndpointName(prefix, group, version string) string {
	if prefix == "" {
		prefix = DefaultEndpointPrefix
	}
	return prefix + "-" + group + "-" + version
}

// CheckEndpointPrefix refuses a prefix that is not a plain name: it must
// be 1 to 40 ASCII letters, digits, '.', '_' or '-', beginning with a
// letter or digit, so the endpoint stays inside its directory or the pipe
// namespace and reads the same in every shell.
func CheckEndpointPrefix(prefix string) error {
	if prefix == "" || len(prefix) > maxEndpointPrefix {
		return fmt.Errorf("endpoint prefix %q: want 1 to %d characters", prefix, maxEndpointPrefix)
	}
	for i, r := range prefix {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || i > 0 && (r == '.' || r == '_' || r == '-')
		if !ok {
			return fmt.Errorf("endpoint prefix %q: want letters, digits, '.', '_' and '-', beginning with a letter or digit", prefix)
		}
	}
	return nil
}

// ErrInUse reports an endpoint that another live process is serving. The
// daemon refuses to take it over: two proxies answering on one node would
// be worse than none starting.
var ErrInUse = errors.New("already in use by another process")

// ErrNotSupported reports an OS on which endpoints cannot be served or
// reached.
var ErrNotSupported = errors.New("endpoints are not supported on this operating system")

// Options says how endpoints are created. Unix sockets use the Socket*
// fields; Windows pipes use PipeSDDL. The zero value of a field selects its
// default, except SocketUID and SocketGID, where zero is root: set them to
// -1 (as DefaultOptions does) to leave the owner alone.
type Options struct {
	// SocketDir is the directory of the Unix sockets; it is created (0755)
	// when missing. Default DefaultSocketDir.
	SocketDir string
	// SocketMode is the permission bits of each socket file; connecting
	// needs write permission. Default DefaultSocketMode.
	SocketMode fs.FileMode
	// SocketUID and SocketGID own each socket file; -1 leaves the owner or
	// group as created (the daemon's), as chown(2) does.
	SocketUID, SocketGID int
	// PipeSDDL is the security descriptor of each pipe in SDDL. Default
	// DefaultPipeSDDL.
	PipeSDDL string
}

// DefaultOptions returns the options the daemon uses unless told otherwise.
func DefaultOptions() Options {
	return Options{
		SocketDir:  DefaultSocketDir,
		SocketMode: DefaultSocketMode,
		SocketUID:  -1,
		SocketGID:  -1,
		PipeSDDL:   DefaultPipeSDDL,
	}
}

// withDefaults fills zero fields.
func (o Options) withDefaults() Options {
	if o.SocketDir == "" {
		o.SocketDir = DefaultSocketDir
	}
	if o.SocketMode == 0 {
		o.SocketMode = DefaultSocketMode
	}
	if o.PipeSDDL == "" {
		o.PipeSDDL = DefaultPipeSDDL
	}
	return o
}

// Endpoint is one listening place: a name such as csi-proxy-disk-v1 and
// the options that say where and with which access it is created.
type Endpoint struct {
	// Name is the endpoint's base name, without directory, pipe prefix or
	// socket suffix: csi-proxy-<group>-<version>.
	Name string
	Options
}

// Address returns where the endpoint listens on this OS: the socket path
// on Unix, the pipe path on Windows. Clients pass it to Dial.
func (ep Endpoint) Address() string { return address(ep.withDefaults()) }

// withDefaults fills the endpoint's zero options.
func (ep Endpoint) withDefaults() Endpoint {
	ep.Options = ep.Options.withDefaults()
	return ep
}

// check refuses names that would escape the socket directory or the pipe
// namespace.
func (ep Endpoint) check() error {
	if ep.Name == "" || strings.ContainsAny(ep.Name, `/\:`+"\x00") || ep.Name == "." || ep.Name == ".." {
		return fmt.Errorf("invalid endpoint name %q: want a plain name such as csi-proxy-disk-v1", ep.Name)
	}
	return nil
}

// PipePath returns the named pipe path of an endpoint name, on any OS, as
// upstream's clients spell it after normalisation.
func PipePath(name string) string { return PipePrefix + name }

// SocketPath returns the Unix socket path of an endpoint name in dir.
func SocketPath(dir, name string) string {
	return strings.TrimRight(dir, "/") + "/" + name + SocketSuffix
}

// Listen creates the endpoint and returns its listener. Closing the
// listener removes the endpoint (the socket file on Unix).
//
// An endpoint that a live process serves is never taken over: the error
// wraps ErrInUse. On Unix a stale socket left by a crashed daemon (one that
// refuses connections) is replaced, but a file that is not a socket is
// never removed.
func Listen(ep Endpoint) (net.Listener, error) {
	if err := ep.check(); err != nil {
		return nil, err
	}
	return listen(ep.withDefaults())
}

// Dial connects to the endpoint at address, as returned by
// Endpoint.Address: a socket path on Unix, a pipe path on Windows. It gives
// up when ctx ends.
func Dial(ctx context.Context, address string) (net.Conn, error) {
	return dial(ctx, address)
}

// Target returns the gRPC target for an endpoint address, for use with
// grpc.NewClient and DialOptions. The passthrough scheme hands the address
// unchanged to the dialer, so pipe paths need no URL escaping.
func Target(address string) string { return "passthrough:///" + address }

// DialOptions returns the gRPC options that reach an endpoint address
// given as Target(address): the endpoint dialer and plain HTTP/2, as
// upstream's clients use (a local endpoint's access control is the
// endpoint's own, not TLS). The authority is fixed to "localhost" because
// a path is not a valid HTTP authority.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithContextDialer(dial),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithAuthority("localhost"),
	}
}
