package cri

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Stats count what a Resolver did since it was made, for tests and
// figures.
type Stats struct {
	// Lookups counts Workload calls with a well-formed container ID.
	Lookups atomic.Uint64
	// Asked counts the questions put to the runtime.
	Asked atomic.Uint64
	// NegativeHits counts lookups answered with a cached failure (a
	// container the runtime did not know, or the runtime unreachable)
	// without asking the runtime.
	NegativeHits atomic.Uint64
	// Redials counts connections dropped because the runtime's socket
	// file had been replaced (the runtime restarted).
	Redials atomic.Uint64
}

// Stats returns the resolver's counters.
func (c *Resolver) Stats() *Stats { return &c.stat }

// runtimeConn is the gRPC connection to the runtime, replaced when the
// runtime's socket file is: containerd and CRI-O remove their socket and
// create a new one at every start, and a connection still open to the
// old one (a runtime hung while stopping) would never answer again.
type runtimeConn struct {
	target string
	opts   []grpc.DialOption
	// path is the socket file on Unix; "" for a Windows pipe, which has
	// no inode (a restarted runtime breaks the connections to its pipe).
	path string

	mu   sync.Mutex
	conn *grpc.ClientConn
	rs   runtimeapi.RuntimeServiceClient
	// cur is conn, for the dialer, which must not wait for mu.
	cur atomic.Pointer[grpc.ClientConn]
	// ino is the inode of the socket the current connection reached; 0
	// until it has connected.
	ino atomic.Uint64
}

// newRuntimeConn checks endpoint's form and makes a connection to it,
// which dials on first use.
func newRuntimeConn(endpoint string) (*runtimeConn, error) {
	target, opts, err := dial(endpoint)
	if err != nil {
		return nil, err
	}
	r := &runtimeConn{target: target, opts: opts, path: socketPath(endpoint)}
	if err := r.redial(); err != nil {
		return nil, err
	}
	return r, nil
}

// redial replaces the connection with a new one (not yet connected).
// r.mu is held, or r not yet shared.
func (r *runtimeConn) redial() error {
	opts := r.opts
	if r.path != "" {
		var conn *grpc.ClientConn
		opts = append(opts[:len(opts):len(opts)], grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return dialSocket(ctx, r.path, func(ino uint64) {
				// A late dial of a connection already replaced
				// says nothing of the current one.
				if r.cur.Load() == conn {
					r.ino.Store(ino)
				}
			})
		}))
		cc, err := grpc.NewClient(r.target, opts...)
		if err != nil {
			return err
		}
		conn = cc
		r.set(cc)
		return nil
	}
	cc, err := grpc.NewClient(r.target, opts...)
	if err != nil {
		return err
	}
	r.set(cc)
	return nil
}

// set makes cc the connection, closing the one before.
func (r *runtimeConn) set(cc *grpc.ClientConn) {
	old := r.conn
	r.conn, r.rs = cc, runtimeapi.NewRuntimeServiceClient(cc)
	r.ino.Store(0)
	r.cur.Store(cc)
	if old != nil {
		_ = old.Close() // a dropped connection; nothing to report
	}
}

// client returns the runtime's client, first dropping the connection if
// the socket file is no longer the one it reached. A socket file that
// is missing is an error: the runtime is not there.
func (r *runtimeConn) client(st *Stats) (runtimeapi.RuntimeServiceClient, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.path != "" {
		ino, err := socketInode(r.path)
		if err != nil {
			return nil, fmt.Errorf("the runtime's socket: %w", err)
		}
		if had := r.ino.Load(); had != 0 && had != ino {
			if err := r.redial(); err != nil {
				return nil, err
			}
			st.Redials.Add(1)
		}
	}
	return r.rs, nil
}

// resetBackoff makes the next question dial at once if the connection
// is down, instead of after gRPC's growing reconnection backoff.
func (r *runtimeConn) resetBackoff() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.conn.ResetConnectBackoff()
}

// close closes the connection.
func (r *runtimeConn) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conn.Close()
}

// Check tells whether the runtime answers, within the resolver's
// timeout: nil when it does (a runtime without the Version method
// answers Unimplemented, which is an answer), else an error saying why.
// The daemon warns at start and fails /readyz while it does not.
func (c *Resolver) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	client, err := c.rt.client(&c.stat)
	if err == nil {
		_, err = client.Version(ctx, &runtimeapi.VersionRequest{})
		if code := status.Code(err); code == codes.Unimplemented {
			err = nil
		} else if err != nil {
			c.rt.resetBackoff()
		}
	}
	if err != nil {
		return fmt.Errorf("container runtime at %s: %w", c.cfg.Endpoint, err)
	}
	return nil
}
