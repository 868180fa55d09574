package server

import (
	"context"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity/grpccreds"
)

// The daemon's resource bounds (issue 23). Without them one unprivileged
// caller got the DaemonSet pod OOM-killed in seconds: one HTTP/2
// connection with 150 streams each declaring a 4 MB message (gRPC
// allocates a message's declared length before reading it), or
// thousands of idle connections. Each is a field of Limits, whose zero
// value takes these; docs/security.md's threat model lists them.
const (
	// DefaultMaxRecvMsgSize bounds a request message: 128 KiB. The
	// largest legitimate request of any served method holds two paths
	// (filesystem's CreateSymlink/LinkPath, SMB's NewSmbGlobalMapping:
	// remote and local path), each at most 32,767 bytes (hostpath's
	// Windows limit, which also bounds SMB remote paths; POSIX paths stop
	// at 4,095), plus SMB's user name (256) and password (1,024): 66,814
	// bytes and a few dozen bytes of protobuf framing. No request carries
	// a list. 128 KiB leaves nearly twice that. A larger message is
	// refused with ResourceExhausted from its 5-byte header, before
	// anything is allocated for it.
	DefaultMaxRecvMsgSize = 128 << 10
	// DefaultMaxConcurrentStreams bounds the calls in progress on one
	// connection: 16. A client past it waits for a call to end (gRPC
	// queues the stream), so a driver's calls are delayed, not failed.
	// With DefaultMaxRecvMsgSize it bounds what one connection can make
	// the daemon allocate for requests to 2 MiB.
	DefaultMaxConcurrentStreams = 16
	// DefaultMaxHeaderListSize bounds a call's headers (metadata): 16
	// KiB. Callers send the method, a deadline, the request ID (kept only
	// up to 128 bytes) and gRPC's own headers, a few hundred bytes.
	DefaultMaxHeaderListSize = 16 << 10
	// DefaultConnectionTimeout bounds a new connection's handshake
	// (identification and the HTTP/2 preface): 10 s. Identification may
	// wait 2 s for a slot and 500 ms for the container runtime
	// (cri.DefaultTimeout); a connection that sends nothing
	// (upstream's client opens one per NewClient and leaves it) is closed
	// after this instead of gRPC's two minutes.
	DefaultConnectionTimeout = 10 * time.Second
	// DefaultMaxConnectionIdle closes a connection that has had no call
	// for 5 minutes (an HTTP/2 GOAWAY); a client's next call reconnects
	// transparently.
	DefaultMaxConnectionIdle = 5 * time.Minute
	// DefaultKeepaliveMinTime is the shortest interval at which a client
	// may ping (30 s); one that pings more often, or pings without a
	// call in progress, is disconnected (gRPC's enforcement policy).
	DefaultKeepaliveMinTime = 30 * time.Second
	// DefaultMaxConns bounds the connections the daemon holds open, over
	// every endpoint together: 128. With DefaultMaxConcurrentStreams and
	// DefaultMaxRecvMsgSize, requests in flight take at most 256 MiB
	// whatever callers send: half the shipped 512 MiB limit, the rest
	// left to the daemon's own use. Drivers hold a connection per group
	// client, a handful each.
	DefaultMaxConns = 128
	// DefaultMaxConnsPerUID bounds the connections of one Unix user,
	// counted when accepted (the kernel's SO_PEERCRED, before any
	// handshake): 64, half of DefaultMaxConns, so one flooding user
	// leaves room for the others. Windows pipes tell no user at accept:
	// there the same bound holds per account (the caller's token's SID)
	// once the caller is identified, before any HTTP/2 handshake.
	DefaultMaxConnsPerUID = 64
	// DefaultMaxConnsPerContainer bounds the connections of one
	// container once the caller is identified: 32, so one container of a
	// user that many drivers share (root) cannot take that user's whole
	// allowance.
	DefaultMaxConnsPerContainer = 32
	// DefaultNewConnsPerUIDPerSecond and DefaultNewConnsBurstPerUID pace
	// the identification of each Unix user's new connections: 64 at
	// once, then 200 a second. Identifying a caller reads /proc and may
	// ask the container runtime; a user churning thousands of
	// connections a second made it a fifth of the daemon's CPU, taken
	// from every other caller (issue 23). A connection past its user's
	// pace waits for its turn, up to maxPaceWait, holding one of the
	// user's connections meanwhile, and is closed if its turn is further
	// away. A driver opens a connection per API group it calls, a
	// handful, and reconnects after idling; 64 drivers of one user
	// starting at once connect without waiting, and a client that
	// abandons calls by closing their connections, 400 a second (the
	// soak suite), is slowed, not refused.
	DefaultNewConnsPerUIDPerSecond = 200
	DefaultNewConnsBurstPerUID     = 64
	// maxPaceWait is the longest a connection waits for its turn to be
	// identified: 6 s, leaving 4 s of DefaultConnectionTimeout for the
	// identification (up to 2.5 s) and the HTTP/2 preface.
	maxPaceWait = 6 * time.Second
	// DefaultMaxCallsPerCaller bounds the calls one caller (container,
	// else user, else Windows SID) has in progress over every endpoint:
	// 64. Past it a call is refused with ResourceExhausted at once, so a
	// flooding caller never makes others wait.
	DefaultMaxCallsPerCaller = 64
	// DefaultRefusalsPerCallerPerSecond and DefaultRefusalBurstPerCaller
	// pace the answers to each caller's refused calls when a policy is in
	// force (PermissionDenied, Unauthenticated, InvalidArgument: calls it
	// should not have made; and ResourceExhausted for a call past
	// DefaultMaxCallsPerCaller): 200 at once, then 100 a second. A
	// refusal past the pace is answered when its turn comes, at most
	// maxRefusalDelay later; while it waits it holds none of the caller's
	// places among its calls in progress. A caller a whole maxRefusalDelay
	// behind has its calls held before they run (awaitStart), so that one
	// not waiting for its answers is paced too. Without the pace a caller
	// with no rights, answered in tens of microseconds, got about 20,000
	// refusals in the 9 s of make hostile-load's flood from eight loops:
	// the daemon's CPU and a core of the node spent on nothing, taken from
	// the drivers' calls. Paced, the same loops got about 1,200 and waited
	// the rest of the time (issue 23). A driver is refused only when it is
	// misconfigured, and kubelet then retries each volume with backoff
	// from 500 ms: a node's worth of volumes stays within the burst. The
	// answer a caller gets is the same, only later; a client whose
	// deadline comes first gets DeadlineExceeded instead.
	DefaultRefusalsPerCallerPerSecond = 100
	DefaultRefusalBurstPerCaller      = 200
	// maxRefusalDelay bounds the wait of one refused call: 1 s, so that
	// no client's deadline of a few seconds runs out on a refusal. A
	// caller therefore gets at most one answer a second per stream it
	// keeps open past the pace: DefaultMaxConcurrentStreams on each of its
	// DefaultMaxConnsPerUID connections, 1,024 a second.
	maxRefusalDelay = time.Second
)

// Limits are the resource bounds of a Server; a zero field takes its
// Default constant, a negative one turns that bound off (tests only).
type Limits struct {
	MaxRecvMsgSize       int
	MaxConcurrentStreams int
	MaxHeaderListSize    int
	ConnectionTimeout    time.Duration
	MaxConnectionIdle    time.Duration
	KeepaliveMinTime     time.Duration
	MaxConns             int
	MaxConnsPerUID       int
	MaxConnsPerContainer int
	MaxCallsPerCaller    int
	// NewConnsPerUIDPerSecond and NewConnsBurstPerUID pace the
	// identification of each Unix user's new connections.
	NewConnsPerUIDPerSecond int
	NewConnsBurstPerUID     int
	// RefusalsPerCallerPerSecond and RefusalBurstPerCaller pace the
	// answers to each caller's refused calls.
	RefusalsPerCallerPerSecond int
	RefusalBurstPerCaller      int
}

func orDefault[T int | time.Duration](v, d T) T {
	if v == 0 {
		return d
	}
	return v
}

// withDefaults fills zero fields and turns negative ones into "no bound".
func (l Limits) withDefaults() Limits {
	l.MaxRecvMsgSize = orDefault(l.MaxRecvMsgSize, DefaultMaxRecvMsgSize)
	l.MaxConcurrentStreams = orDefault(l.MaxConcurrentStreams, DefaultMaxConcurrentStreams)
	l.MaxHeaderListSize = orDefault(l.MaxHeaderListSize, DefaultMaxHeaderListSize)
	l.ConnectionTimeout = orDefault(l.ConnectionTimeout, DefaultConnectionTimeout)
	l.MaxConnectionIdle = orDefault(l.MaxConnectionIdle, DefaultMaxConnectionIdle)
	l.KeepaliveMinTime = orDefault(l.KeepaliveMinTime, DefaultKeepaliveMinTime)
	l.MaxConns = orDefault(l.MaxConns, DefaultMaxConns)
	l.MaxConnsPerUID = orDefault(l.MaxConnsPerUID, DefaultMaxConnsPerUID)
	l.MaxConnsPerContainer = orDefault(l.MaxConnsPerContainer, DefaultMaxConnsPerContainer)
	l.MaxCallsPerCaller = orDefault(l.MaxCallsPerCaller, DefaultMaxCallsPerCaller)
	l.NewConnsPerUIDPerSecond = orDefault(l.NewConnsPerUIDPerSecond, DefaultNewConnsPerUIDPerSecond)
	l.NewConnsBurstPerUID = orDefault(l.NewConnsBurstPerUID, DefaultNewConnsBurstPerUID)
	l.RefusalsPerCallerPerSecond = orDefault(l.RefusalsPerCallerPerSecond, DefaultRefusalsPerCallerPerSecond)
	l.RefusalBurstPerCaller = orDefault(l.RefusalBurstPerCaller, DefaultRefusalBurstPerCaller)
	return l
}

// serverOptions are the gRPC options that carry the limits.
func (l Limits) serverOptions() []grpc.ServerOption {
	opts := []grpc.ServerOption{
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: l.KeepaliveMinTime}),
		// Fixed flow-control windows (gRPC's minimum, and four for the
		// connection) instead of the bandwidth estimate, which may grow
		// a connection's window to 16 MiB of buffered data.
		grpc.InitialWindowSize(64 << 10),
		grpc.InitialConnWindowSize(256 << 10),
	}
	if l.ConnectionTimeout > 0 {
		opts = append(opts, grpc.ConnectionTimeout(l.ConnectionTimeout))
	}
	if l.MaxRecvMsgSize > 0 {
		opts = append(opts, grpc.MaxRecvMsgSize(l.MaxRecvMsgSize))
	}
	if l.MaxConcurrentStreams > 0 {
		opts = append(opts, grpc.MaxConcurrentStreams(uint32(min(l.MaxConcurrentStreams, math.MaxUint32))))
	}
	if l.MaxHeaderListSize > 0 {
		opts = append(opts, grpc.MaxHeaderListSize(uint32(min(l.MaxHeaderListSize, math.MaxUint32))))
	}
	if l.MaxConnectionIdle > 0 {
		opts = append(opts, grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: l.MaxConnectionIdle}))
	}
	return opts
}

// counter counts holders per key, up to a cap per key and in total.
type counter struct {
	mu    sync.Mutex
	n     map[string]int
	total int
}

// acquire takes one for key unless key already has perKey or everything
// total (a bound ≤ 0 is none); it tells whether it took one.
func (c *counter) acquire(key string, perKey, total int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if (total > 0 && c.total >= total) || (perKey > 0 && key != "" && c.n[key] >= perKey) {
		return false
	}
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.total++
	if key != "" {
		c.n[key]++
	}
	return true
}

// release gives back what acquire took for key.
func (c *counter) release(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total--
	if key == "" {
		return
	}
	if c.n[key]--; c.n[key] <= 0 {
		delete(c.n, key)
	}
}

// callLimiter bounds the calls each caller has in progress, over every
// endpoint of a Server, and paces the answers to each caller's refused
// calls.
type callLimiter struct {
	max   int
	calls counter
	// refusals paces the answers to refused calls per caller (callerKey);
	// nil: not paced.
	refusals *pacer
	// delayed counts the calls held back for their caller's pace of
	// refusals: refusals answered later than decided, and calls held
	// before they ran (awaitStart).
	delayed atomic.Uint64
}

// isRefusal tells whether a call's answer err refuses it for what the
// caller asked or who it is, rather than reporting what the node did:
// the answers refusal pacing holds back, with enter's own refusals.
func isRefusal(err error) bool {
	switch status.Code(err) {
	case codes.PermissionDenied, codes.Unauthenticated, codes.InvalidArgument:
		return true
	}
	return false
}

// pace holds the answer err to a call of the caller key until the
// caller's turn for a refusal comes (at most maxRefusalDelay, or until
// the call's context ends), when err refuses the call. It runs once the
// call has given back its place among the caller's calls in progress, so
// waiting refusals never take the places of the caller's other calls.
// What waits is bounded instead by the caller's streams
// (DefaultMaxConcurrentStreams on each of its connections: 1,024 for
// one user's 64 connections, 2,048 over the DefaultMaxConns of all
// callers), each a goroutine holding no request: the request was decoded
// and answered already. enter's own refusals (ResourceExhausted) wait
// too, through holdRefusal, or a caller holding all its places would be
// answered at once for every call past them.
func (cl *callLimiter) pace(ctx context.Context, key string, err error) {
	if err != nil && isRefusal(err) {
		cl.holdRefusal(ctx, key)
	}
}

// holdRefusal waits for the caller key's turn for a refusal (see pace).
func (cl *callLimiter) holdRefusal(ctx context.Context, key string) {
	if cl.refusals == nil || key == "" {
		return
	}
	wait, ok := cl.refusals.reserve(key, time.Now(), maxRefusalDelay)
	if !ok {
		// Its turn is further away than the bound: waits the bound
		// without taking a turn, so the caller's later refusals are not
		// pushed further still.
		wait = maxRefusalDelay
	}
	if wait > 0 {
		cl.delayed.Add(1)
		sleep(ctx, wait)
	}
}

// awaitStart holds a call of the caller key before it runs while the
// caller is a whole maxRefusalDelay behind its pace of refusals, for that
// long or until the call's context ends; it answers the context's end.
// Pacing answers alone spares nothing of a caller that does not wait for
// them: with deadlines of a few milliseconds, or cancelling each call, a
// caller's calls were each decoded, decided, audited and logged, 3,000 a
// second from eight loops, and the wait ended with the call. A caller
// falls that far behind only by sending refused calls faster than its
// pace for a second or more (a driver's mistakes come far slower), so
// what this holds is a flood; a caller that shares the flooder's key (root
// host processes, or callers nothing identifies) has its calls held too.
// A held call keeps its decoded request and its stream, within the
// bounds on requests in flight (DefaultMaxConns), and holds no place
// among the caller's calls in progress; one refused after it was held
// waits for its turn again, so its answer comes at most
// 2 × maxRefusalDelay late.
func (cl *callLimiter) awaitStart(ctx context.Context, key string) error {
	if cl.refusals == nil || key == "" || cl.refusals.pending(key, time.Now()) < maxRefusalDelay {
		return nil
	}
	cl.delayed.Add(1)
	if !sleep(ctx, maxRefusalDelay) {
		return status.FromContextError(ctx.Err()).Err()
	}
	return nil
}

// sleep waits d, or until ctx ends; it tells whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Delayed is how many calls were held back for their caller's pace of
// refusals (see delayed).
func (cl *callLimiter) Delayed() uint64 { return cl.delayed.Load() }

// callerKey is the key under which a call's caller is bounded and paced:
// its container, else its user, else its Windows SID (identity's
// AccountKey), "unknown" when nothing is known; "" for health checks,
// which are neither counted nor paced.
func callerKey(ctx context.Context, info *grpc.UnaryServerInfo) string {
	if isHealth(info.FullMethod) {
		return ""
	}
	if key := grpccreds.AccountKey(ctx); key != "" {
		return key
	}
	return "unknown"
}

// enter counts a call in progress for the caller key, or refuses it with
// ResourceExhausted while the caller has max calls in progress; it never
// waits for a place, so a flooding caller cannot hold up anyone else's
// calls. After a nil error, leave(key) ends what enter counted.
func (cl *callLimiter) enter(ctx context.Context, key string) error {
	if cl.max <= 0 || key == "" {
		return nil
	}
	if !cl.calls.acquire(key, cl.max, 0) {
		return status.Errorf(codes.ResourceExhausted, "caller %s has %d calls in progress, the limit; retry when one has ended", grpccreds.Describe(ctx), cl.max)
	}
	return nil
}

// leave ends a call enter counted under key.
func (cl *callLimiter) leave(key string) {
	if cl.max > 0 && key != "" {
		cl.calls.release(key)
	}
}

// limitedCreds identifies connections with the daemon's credentials and
// then bounds the connections of each container, and on Windows of each
// account: the container is known only once the caller is identified,
// and a named pipe tells nothing of its client at accept (Unix users are
// bounded there, by trackingListener).
type limitedCreds struct {
	credentials.TransportCredentials
	max        int // per container
	perAccount int // per Windows account (SID) outside a known container
	conns      *counter
	// pace spaces the identifications of each Unix user's connections
	// (the key trackingListener gave them); nil: no pacing.
	pace *pacer
	// handshakeTimeout is gRPC's bound on a connection's handshake
	// (Limits.ConnectionTimeout), whose read deadline waitTurn puts
	// back; 0: none.
	handshakeTimeout time.Duration
}

// connKey is what bounds conn's caller's connections here, and that
// bound; "" when nothing does: a caller outside a known container that
// the listener already counted by its Unix user, or one with no
// identity at all (only the total bounds it).
func (lc *limitedCreds) connKey(c identity.Caller) (string, int) {
	switch {
	case c.ContainerID != "":
		return "container:" + c.ContainerID, lc.max
	case !c.HasUnixIDs && c.WindowsSID != "":
		return "sid:" + c.WindowsSID, lc.perAccount
	}
	return "", 0
}

// ServerHandshake identifies the caller; a connection over its
// container's or account's bound fails the handshake, and gRPC closes it.
func (lc *limitedCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	if tc, ok := raw.(*trackedConn); ok && tc.key != "" && lc.pace != nil {
		start := time.Now()
		wait, ok := lc.pace.reserve(tc.key, start, maxPaceWait)
		if !ok {
			_ = raw.Close() // refused; the handshake error says why
			klog.V(4).InfoS("connection refused: new connections too fast", "peer", tc.key)
			return nil, nil, fmt.Errorf("%s opens connections faster than they are identified (%d at once, then %s apart)",
				tc.key, lc.pace.burst, lc.pace.interval)
		}
		if wait > 0 { // bounded by maxPaceWait, within the connection's handshake timeout
			var restore time.Time
			if lc.handshakeTimeout > 0 {
				restore = start.Add(lc.handshakeTimeout)
			}
			waited, err := waitTurn(raw, start.Add(wait), restore)
			if err != nil {
				_ = raw.Close() // the client is gone; nothing to report
				return nil, nil, fmt.Errorf("%s: the connection ended while it waited for its turn to be identified: %w", tc.key, err)
			}
			raw = waited
		}
	}
	conn, ai, err := lc.TransportCredentials.ServerHandshake(raw)
	if err != nil {
		return conn, ai, err
	}
	a, ok := ai.(*grpccreds.AuthInfo)
	if !ok || a == nil {
		return conn, ai, nil
	}
	key, max := lc.connKey(a.Caller)
	if key == "" || max <= 0 {
		return conn, ai, nil
	}
	if !lc.conns.acquire(key, max, 0) {
		_ = conn.Close() // refused; the handshake error says why
		// Verbose: a flooding caller would otherwise flood the log too.
		klog.V(4).InfoS("connection refused: too many connections", "caller", key, "max", max)
		return nil, nil, fmt.Errorf("%s has %d connections open, the limit", key, max)
	}
	return &releasingConn{Conn: conn, release: func() { lc.conns.release(key) }}, ai, nil
}

// Clone keeps the bounds and their count.
func (lc *limitedCreds) Clone() credentials.TransportCredentials {
	return &limitedCreds{TransportCredentials: lc.TransportCredentials.Clone(), max: lc.max, perAccount: lc.perAccount, conns: lc.conns, pace: lc.pace, handshakeTimeout: lc.handshakeTimeout}
}

// releasingConn gives back its container's count once, when closed.
type releasingConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// NetConn returns the connection underneath, as trackedConn does.
func (c *releasingConn) NetConn() net.Conn { return c.Conn }

// Close closes the connection and releases its count.
func (c *releasingConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
