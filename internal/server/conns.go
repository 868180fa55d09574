package server

import (
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

// connLimits bounds the connections of a Server, over all its endpoints:
// in total and per Unix user, counted when accepted.
type connLimits struct {
	total, perUID int
	conns         counter
	// pace, when set, is the identification pacer of the handshake
	// (limitedCreds): a connection of a user whose next turn is further
	// away than maxPaceWait is refused at accept, as the handshake would
	// refuse it, before it costs a net.Conn, a goroutine and a handshake.
	pace *pacer
}

// trackingListener remembers the connections it accepted, so shutdown can
// close the ones gRPC cannot.
//
// Upstream's client opens a probe connection in every NewClient and never
// closes it or sends anything on it. gRPC holds such a connection in its
// HTTP/2 handshake for up to two minutes (the connection timeout), and both
// GracefulStop and Stop wait for every handshake to end. Closing the
// connections that never sent a byte when the listener closes lets
// shutdown finish at once; they carried no call, so nothing is lost.
type trackingListener struct {
	net.Listener

	limits *connLimits // nil: no bounds
	// raw, when set, is the listening socket below the runtime's poller
	// (Linux Unix sockets, with bounds): Accept takes connections with
	// accept4 and closes the ones over the bounds as bare descriptors,
	// so a caller opening connections as fast as it can costs the daemon
	// two system calls each, not a poller registration, a finalizer and
	// an address lookup (acceptRaw). rawFile is the duplicate of the
	// listening socket raw belongs to (rawListener), closed with the
	// listener.
	raw     syscall.RawConn
	rawFile *os.File
	// storm, while a storm of refused connections lasts, carries what
	// the storm acceptor admits to Accept (acceptRaw, stormAcceptor).
	// Only Accept uses it, under acceptMu.
	acceptMu sync.Mutex
	storm    chan acceptResult
	// done is closed by Close, so that a storm acceptor holding a
	// connection for an Accept that will not come lets it go.
	done chan struct{}
	// stormQuiet is how long a storm acceptor (Linux) goes on after its
	// last refusal: defaultStormQuiet, shorter in tests.
	stormQuiet time.Duration

	mu     sync.Mutex
	conns  map[*trackedConn]struct{}
	closed bool
}

// defaultStormQuiet is how long a storm acceptor goes on after its last
// refusal: longer than a flooder's pauses between bursts, short enough
// that the accepting is back at the usual priority soon after a storm.
const defaultStormQuiet = time.Second

func newTrackingListener(l net.Listener, limits *connLimits) *trackingListener {
	t := &trackingListener{Listener: l, limits: limits, conns: map[*trackedConn]struct{}{}, done: make(chan struct{}), stormQuiet: defaultStormQuiet}
	if limits != nil {
		t.rawFile, t.raw = rawListener(l)
	}
	return t
}

// Accept returns the next connection, tracked. A connection over the
// bounds (its user's, or the total) is closed at once, before any
// handshake, and Accept waits for the next one: gRPC ends serving on an
// Accept error, and the other callers must still be served.
func (l *trackingListener) Accept() (net.Conn, error) {
	if l.raw != nil {
		return l.acceptRaw()
	}
	return l.acceptNet()
}

// acceptNet is Accept through net's Accept: every connection becomes a
// net.Conn before the bounds judge it.
func (l *trackingListener) acceptNet() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if tc, ok, err := l.take(c); ok {
			return tc, err
		}
	}
}

// acceptResult is what the storm acceptor hands to Accept: an admitted
// connection or an accept error, and whether the storm acceptor has
// ended (over), after which Accept takes connections itself again.
type acceptResult struct {
	conn net.Conn
	err  error
	over bool
}

// acceptRaw is Accept for a Unix listener with bounds (Linux; acceptOne
// and stormAcceptor are its platform's parts). It takes each queued
// connection with accept4, reads its user (SO_PEERCRED) and, when
// the bounds refuse it, closes the bare descriptor: a refused connection
// is never registered with the runtime's poller nor given a finalizer or
// addresses, and only an admitted one becomes a net.Conn (FileConn). With
// nothing queued it waits for the socket to be readable (rawListener).
// Issue 23: it used to wait in net's Accept, which took the next
// connection through net's path; under a storm of connections arriving
// one at a time, that was nearly every one of them.
//
// Once it refuses a connection, a storm is on: the accepting moves to a
// thread of its own at the lowest priority (stormAcceptor) until
// stormQuiet passes without a refusal, and Accept returns what that
// thread admits.
func (l *trackingListener) acceptRaw() (net.Conn, error) {
	l.acceptMu.Lock()
	defer l.acceptMu.Unlock()
	for {
		if l.storm != nil {
			var r acceptResult
			select {
			case r = <-l.storm:
			case <-l.done:
				// The storm acceptor ends without handing anything over.
				l.storm = nil
				return nil, l.acceptErr(net.ErrClosed)
			}
			if r.over {
				l.storm = nil // the storm acceptor has ended
			}
			if r.conn == nil && r.err == nil {
				continue // it ended with nothing to hand over: accept here again
			}
			return r.conn, r.err
		}
		c, refused, err := l.acceptOne()
		if refused {
			l.storm = make(chan acceptResult)
			stormProcs.add()
			go func(out chan<- acceptResult) {
				// Given back by a goroutine of its own: this one is
				// locked to the storm's thread at the lowest priority
				// until it ends, and changing GOMAXPROCS stops the
				// world until the caller has done (procBudget).
				defer func() { go stormProcs.release() }()
				l.stormAcceptor(out)
			}(l.storm)
			continue
		}
		return c, err
	}
}

// acceptErr is Accept's error for err, as net's Accept words it.
func (l *trackingListener) acceptErr(err error) error {
	return &net.OpError{Op: "accept", Net: "unix", Addr: l.Addr(), Err: err}
}

// hand gives r to the Accept waiting for the storm acceptor, false if the
// listener closed first (a listener's user stops calling Accept once it
// failed, so none may come).
func (l *trackingListener) hand(out chan<- acceptResult, r acceptResult) bool {
	select {
	case out <- r:
		return true
	case <-l.done:
		return false
	}
}

// take judges a connection net's Accept returned: tracked when the
// bounds admit it; closed, and ok false, when they refuse it.
func (l *trackingListener) take(c net.Conn) (tc net.Conn, ok bool, err error) {
	key := ""
	if l.limits != nil {
		if uid, ok := peerUID(c); ok {
			key = uidKey(uid)
		}
		if !l.admit(key) {
			_ = c.Close() // refused; the client sees the connection end
			return nil, false, nil
		}
	}
	tc, err = l.track(c, key)
	return tc, true, err
}

// uidKey is the connection bounds' key of a Unix user.
func uidKey(uid string) string { return "uid:" + uid }

// admit takes a place within the bounds for a connection of key, or
// says it is refused.
func (l *trackingListener) admit(key string) bool {
	if key != "" && l.limits.pace.pending(key, time.Now()) > maxPaceWait {
		// Issue 23: a user churning connections (opening them and
		// closing the ones it holds, so that places keep coming free)
		// had hundreds a second admitted here only for the handshake to
		// refuse them; each was a net.Conn, a goroutine and an HTTP/2
		// transport's start, the largest part of what the daemon spent
		// on such a storm.
		klog.V(4).InfoS("connection refused: new connections too fast", "peer", key)
		return false
	}
	if l.limits.conns.acquire(key, l.limits.perUID, l.limits.total) {
		return true
	}
	// Verbose: a flooding caller would otherwise flood the log too.
	klog.V(4).InfoS("connection refused: too many connections", "peer", key, "maxPerUID", l.limits.perUID, "max", l.limits.total)
	return false
}

// track adds an accepted connection that holds the bound key.
func (l *trackingListener) track(c net.Conn, key string) (net.Conn, error) {
	tc := &trackedConn{Conn: c, l: l, key: key, accepted: identity.MarkAccepted()}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		// Accepted just as the listener closed: treat it as never
		// accepted, as Close would have closed it anyway.
		if l.limits != nil {
			l.limits.conns.release(key)
		}
		_ = c.Close() // the client is gone either way; nothing to report
		return nil, net.ErrClosed
	}
	l.conns[tc] = struct{}{}
	return tc, nil
}

// Close stops listening (removing the endpoint) and closes the accepted
// connections on which the client has not sent anything yet.
func (l *trackingListener) Close() error {
	err := l.Listener.Close()
	if l.rawFile != nil {
		// The duplicate keeps the socket listening until it is closed;
		// closing it also ends an Accept waiting on it. A second Close
		// finds it closed already, which says nothing new.
		_ = l.rawFile.Close()
	}
	l.mu.Lock()
	if !l.closed {
		close(l.done)
	}
	l.closed = true
	var idle []*trackedConn
	for c := range l.conns {
		if !c.active.Load() {
			idle = append(idle, c)
		}
	}
	l.mu.Unlock()
	for _, c := range idle {
		_ = c.Close() // the client is gone either way; nothing to report
	}
	return err
}

// closeAll closes every accepted connection still open.
func (l *trackingListener) closeAll() {
	l.mu.Lock()
	all := make([]*trackedConn, 0, len(l.conns))
	for c := range l.conns {
		all = append(all, c)
	}
	l.mu.Unlock()
	for _, c := range all {
		_ = c.Close() // the client is gone either way; nothing to report
	}
}

// trackedConn is an accepted connection that notes whether its client has
// sent anything and leaves its listener's set when closed.
type trackedConn struct {
	net.Conn
	l        *trackingListener
	key      string              // what it holds of l.limits
	accepted identity.AcceptMark // when it was accepted, for identification
	active   atomic.Bool
	once     sync.Once
}

// Read marks the connection active once data arrived.
func (c *trackedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 && !c.active.Load() {
		c.active.Store(true)
	}
	return n, err
}

// AcceptMark tells identification when the connection was accepted: its
// handshake may wait for its user's turn (pacer) before identifying it.
func (c *trackedConn) AcceptMark() identity.AcceptMark { return c.accepted }

// NetConn returns the accepted connection underneath, so the handshake can
// read the peer's credentials from it (see identity.Identify).
func (c *trackedConn) NetConn() net.Conn { return c.Conn }

// Close closes the connection and forgets it.
func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
		if c.l.limits != nil {
			c.l.limits.conns.release(c.key)
		}
	})
	return c.Conn.Close()
}

// stormProcs is the process's procBudget for its storm acceptors, over
// all its listeners (GOMAXPROCS is the process's).
var stormProcs = procBudget{
	set:     runtime.GOMAXPROCS,
	restore: restoreGOMAXPROCS,
}

// procBudget raises GOMAXPROCS by one for each storm acceptor running,
// up to twice the runtime's setting, and gives the runtime back its own
// setting when the last one ends.
//
// Issue 23: a storm acceptor's goroutine is locked to a thread at the
// lowest priority, and while that thread runs Go code (between its
// system calls) it holds one of the runtime's Ps. The kernel preempts a
// thread at nice 19 whenever other work wants its CPU, and the thread
// keeps its P while it waits to run again: with GOMAXPROCS at 2 the daemon
// then served every other caller on the one P left, for as long as the
// kernel kept the storm's thread waiting. A P of its own for each such
// thread leaves the others theirs, whatever the kernel does with it.
// Seven interleaved pairs of the hostile-load suite, driver p99 flooding
// over flooder stopped: 2.40-3.57x (median 2.96x) without, 2.12-2.79x
// (median 2.39x) with, lower in every pair; the connection storm alone,
// three pairs: median 2.53x without, 1.88x with.
//
// The extra Ps are at most as many as the runtime had: a caller refused
// on every endpoint at once (two dozen of them) would otherwise have
// GOMAXPROCS at 26 on a two-core node, and the runtime sizes its work by
// it (a quarter of the Ps mark for the collector, six threads on two
// cores). Storm acceptors beyond that share the extra Ps, as all of them
// shared the runtime's own before.
type procBudget struct {
	// set is runtime.GOMAXPROCS; restore gives the runtime back the
	// setting it had before the first storm (restoreGOMAXPROCS). Fields,
	// so that a test can watch them.
	set     func(int) int
	restore func(base int)

	mu      sync.Mutex
	running int // storm acceptors running
	base    int // GOMAXPROCS before the first of them
}

// add raises GOMAXPROCS for one more storm acceptor. Each add is paired
// with one release, when that acceptor has ended.
func (b *procBudget) add() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running == 0 {
		b.base = b.set(0) // reads it
	}
	b.running++
	b.set(b.procs())
}

// procs is GOMAXPROCS for the storm acceptors running: one more for each,
// at most twice base.
func (b *procBudget) procs() int {
	return b.base + min(b.running, b.base)
}

// release lowers GOMAXPROCS again for a storm acceptor that has ended;
// after the last, the runtime's own setting comes back.
func (b *procBudget) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running == 0 {
		return // never added: nothing to give back
	}
	b.running--
	if b.running == 0 {
		b.restore(b.base)
		return
	}
	b.set(b.procs())
}

// restoreGOMAXPROCS gives the runtime back its GOMAXPROCS: the value the
// GOMAXPROCS environment variable set, which the runtime keeps, or else
// its default, which it keeps in step with the CPUs and the cgroup's CPU
// limit (runtime.SetDefaultGOMAXPROCS: setting a value stops that). The
// daemon never sets GOMAXPROCS otherwise.
func restoreGOMAXPROCS(base int) {
	if _, ok := os.LookupEnv("GOMAXPROCS"); ok {
		runtime.GOMAXPROCS(base)
		return
	}
	runtime.SetDefaultGOMAXPROCS()
}
