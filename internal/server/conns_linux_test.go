package server

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/poll"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// boundedListener is a tracking listener with a per-user bound on a Unix
// socket of its own, closed at the test's end, and a dial function for
// it whose connections are closed at the end too.
func boundedListener(t *testing.T, perUID int) (*trackingListener, func() net.Conn) {
	t.Helper()
	return limitedListener(t, &connLimits{perUID: perUID})
}

// limitedListener is boundedListener with the bounds given whole.
func limitedListener(t *testing.T, limits *connLimits) (*trackingListener, func() net.Conn) {
	t.Helper()
	path := filepath.Join(sockdir.New(t, "raw"), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	l := newTrackingListener(ln, limits)
	t.Cleanup(func() { _ = l.Close() })
	if l.raw == nil {
		t.Fatal("a Unix listener with bounds has no raw listening socket")
	}
	return l, func() net.Conn {
		t.Helper()
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
}

// acceptAll accepts from l until Accept fails, handing over each
// connection; the channel is closed then.
func acceptAll(l *trackingListener) <-chan net.Conn {
	accepted := make(chan net.Conn, 8)
	go func() {
		defer close(accepted)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	return accepted
}

// next waits for the next accepted connection.
func next(t *testing.T, accepted <-chan net.Conn, what string) net.Conn {
	t.Helper()
	select {
	case c, ok := <-accepted:
		if !ok {
			t.Fatalf("%s: Accept failed", what)
		}
		return c
	case <-time.After(10 * time.Second):
		t.Fatalf("%s was not accepted", what)
		return nil
	}
}

// wantClosed checks that the daemon's side closed the client's c: a read
// ends (EOF or a reset) instead of timing out.
func wantClosed(t *testing.T, c net.Conn, what string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("%s is still open (read: %v)", what, err)
	}
}

// TestQueuedConnectionsJudgedBelowThePoller: connections already queued
// when Accept runs are taken with accept4 (acceptRaw's path, since
// accept4 finds them at once): the ones within the per-user bound become
// Unix connections whose peer is still readable, the others are closed
// before any handshake, and a closed connection gives its place back.
// Issue 23: refusing a storm's connections through net's Accept cost a
// poller registration, an address lookup and a finalizer each.
func TestQueuedConnectionsJudgedBelowThePoller(t *testing.T) {
	l, dial := boundedListener(t, 2)
	clients := []net.Conn{dial(), dial(), dial(), dial()} // queued, none accepted yet
	accepted := acceptAll(l)
	me := strconv.Itoa(os.Getuid())
	var kept []net.Conn
	for range 2 {
		c := next(t, accepted, "one of the first two queued connections")
		kept = append(kept, c)
		if uid, ok := peerUID(c.(*trackedConn).NetConn()); !ok || uid != me {
			t.Errorf("an admitted connection's peer user: %q, %v; want %s", uid, ok, me)
		}
	}
	// The third and fourth are over the bound of 2: closed at once.
	for i, c := range clients[2:] {
		wantClosed(t, c, "queued connection "+strconv.Itoa(i+3)+", over the bound,")
	}
	select {
	case c := <-accepted:
		t.Fatalf("a connection over the bound was accepted: %v", c)
	default:
	}
	// The first two talk: the accepted side is the client's peer.
	if _, err := clients[0].Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	_ = kept[0].SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(kept[0], buf); err != nil || buf[0] != 'x' {
		t.Fatalf("reading what the client sent on the accepted connection: %q, %v", buf, err)
	}
	// Closing one gives its place to the next.
	_ = kept[0].Close()
	dial()
	next(t, accepted, "a connection within the bound again (one closed)")
}

// TestRawAcceptWaitsThenJudges: with nothing queued, Accept waits for
// the listening socket to be readable and judges what arrives by the
// same bounds: a connection over them is closed, the next within them
// accepted.
func TestRawAcceptWaitsThenJudges(t *testing.T) {
	l, dial := boundedListener(t, 1)
	accepted := acceptAll(l)
	// Each dial comes after the loop has judged the one before, so it
	// usually finds the loop waiting (nothing queued);
	// should it be queued instead, accept4 must judge it alike.
	dial()
	held := next(t, accepted, "the first connection")
	wantClosed(t, dial(), "a connection over the bound of 1")
	_ = held.Close()
	dial()
	next(t, accepted, "a connection within the bound again")
}

// TestRawAcceptEndsWhenClosed: closing the listener while Accept loops
// ends it with net.ErrClosed, which gRPC's Serve takes as its end.
func TestRawAcceptEndsWhenClosed(t *testing.T) {
	l, dial := boundedListener(t, 1)
	done := make(chan error, 1)
	go func() {
		for {
			if _, err := l.Accept(); err != nil {
				done <- err
				return
			}
		}
	}()
	for range 20 { // a storm over the bound while it closes
		dial()
	}
	_ = l.Close()
	wantAcceptClosed(t, done, "Accept")
}

// wantAcceptClosed waits for the error of an Accept that was running when
// its listener closed: net.ErrClosed, which gRPC's Serve takes as its end.
func wantAcceptClosed(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("%s after Close: %v, want net.ErrClosed", what, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return after the listener closed", what)
	}
}

// TestRawAcceptCloseLeavesNoDescriptor: the listener waits on a
// duplicate of its socket (rawListener), which would keep the socket
// listening were it left open; Close closes it, ending an Accept that
// waits on it, and no descriptor of the process refers to the socket
// any more. The check follows the socket itself, not a count of the
// process's descriptors: other tests' connections and goroutines open
// and close descriptors of their own meanwhile (a count flaked in CI).
func TestRawAcceptCloseLeavesNoDescriptor(t *testing.T) {
	l, _ := boundedListener(t, 1)
	if l.rawFile == nil {
		t.Fatal("a Unix listener with bounds has no duplicate of its socket to wait on")
	}
	socket := descriptorTarget(t, l.rawFile)
	if held := descriptorsOf(t, socket); len(held) < 2 {
		t.Fatalf("descriptors %v refer to %s, want the listener's and its duplicate", held, socket)
	}
	done := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		done <- err
	}()
	time.Sleep(50 * time.Millisecond) // Accept waits: nothing is queued
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	wantAcceptClosed(t, done, "a waiting Accept")
	if held := descriptorsOf(t, socket); len(held) != 0 {
		t.Errorf("descriptors %v still refer to the listener's %s after Close", held, socket)
	}
}

// descriptorTarget is what /proc/self/fd says f's descriptor refers
// to, such as "socket:[1234]", which names the socket whatever the
// descriptor. It reads the descriptor through SyscallConn, as f.Fd()
// would put f in blocking mode and end its deadlines.
func descriptorTarget(t *testing.T, f *os.File) string {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var target string
	var readErr error
	if err := rc.Control(func(fd uintptr) {
		target, readErr = os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd)))
	}); err != nil {
		t.Fatal(err)
	}
	if readErr != nil {
		t.Fatal(readErr)
	}
	return target
}

// descriptorsOf lists the process's descriptors that refer to target.
func descriptorsOf(t *testing.T, target string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var held []string
	for _, e := range ents {
		// A descriptor closed since ReadDir has no link: not held.
		if got, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && got == target {
			held = append(held, e.Name())
		}
	}
	return held
}

// TestAcceptRefusesUserBehindItsPace: a connection of a user whose turn
// to be identified is further away than maxPaceWait is closed at accept,
// as the handshake would refuse it, and never reaches gRPC; once the
// user's turn is near again, its next connection is admitted. Issue 23:
// a user churning connections had hundreds a second admitted only for
// the handshake to refuse them.
func TestAcceptRefusesUserBehindItsPace(t *testing.T) {
	pace := newPacer(100, 1) // one at once, then 10 ms apart
	l, dial := limitedListener(t, &connLimits{perUID: 8, pace: pace})
	me := uidKey(strconv.Itoa(os.Getuid()))
	// Take the user's turns until its next one is a whole maxPaceWait
	// and a little more away.
	now := time.Now()
	for pace.pending(me, now) <= maxPaceWait+time.Second {
		if _, ok := pace.reserve(me, now, time.Hour); !ok {
			t.Fatal("reserve refused a turn within an hour")
		}
	}
	accepted := acceptAll(l)
	wantClosed(t, dial(), "a connection of a user more than maxPaceWait behind its pace")
	select {
	case c := <-accepted:
		t.Fatalf("a connection of a user behind its pace was accepted: %v", c)
	default:
	}
	// Back within the pace (a fresh pacer state for the user): admitted.
	pace.mu.Lock()
	delete(pace.tat, me)
	pace.mu.Unlock()
	dial()
	next(t, accepted, "a connection of a user within its pace")
}

// TestRawAcceptOutOfDescriptors: when accept4 takes the process's last
// free descriptor, the connection cannot become a net.Conn (FileConn
// duplicates it). Accept then fails with a temporary error, which gRPC's
// Serve answers by backing off and accepting again, and the connection's
// place within the bound is given back: the next connection, once
// descriptors are free, is admitted under the bound of 1.
func TestRawAcceptOutOfDescriptors(t *testing.T) {
	l, dial := boundedListener(t, 1)
	lost := dial() // queued: accept4 takes it
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	// The limit is the lowest free descriptor number plus one: accept4
	// gets that one, and FileConn's duplicate finds none.
	free := lowestFreeFD(t)
	lim := old
	lim.Cur = uint64(free + 1)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			_ = c.Close()
		}
		res <- err
	}()
	var err error
	select {
	case err = <-res:
	case <-time.After(10 * time.Second):
		// Looping on: each connection accepted into the freed
		// descriptor and lost again.
		_ = unix.Setrlimit(unix.RLIMIT_NOFILE, &old)
		t.Fatal("Accept with one descriptor free did not return")
	}
	if rerr := unix.Setrlimit(unix.RLIMIT_NOFILE, &old); rerr != nil {
		t.Fatal(rerr)
	}
	var te interface{ Temporary() bool }
	if err == nil || !errors.As(err, &te) || !te.Temporary() {
		t.Fatalf("Accept with one descriptor free: %v, want a temporary error", err)
	}
	if !errors.Is(err, unix.EMFILE) {
		t.Errorf("Accept with one descriptor free: %v, want it to say EMFILE", err)
	}
	wantClosed(t, lost, "the connection that could not be taken over")
	dial()
	c := next(t, acceptAll(l), "the next connection, under a bound of 1 (the lost one's place given back)")
	_ = c.Close()
}

// lowestFreeFD returns the lowest descriptor number the process does not
// use, which the kernel gives the next descriptor.
func lowestFreeFD(t *testing.T) int {
	t.Helper()
	for fd := 0; ; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); errors.Is(err, unix.EBADF) {
			return fd
		}
	}
}

// TestRawListenerNeedsNonBlockingSocket: a listening socket that is not
// non-blocking cannot be waited on through the poller, so rawListener
// declines it (Accept then goes through net's Accept) instead of
// handing acceptRaw a file whose every wait fails.
func TestRawListenerNeedsNonBlockingSocket(t *testing.T) {
	ln, err := net.Listen("unix", filepath.Join(sockdir.New(t, "raw"), "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	raw, err := ln.(*net.UnixListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	setNonblock := func(nb bool) {
		t.Helper()
		var serr error
		if err := raw.Control(func(fd uintptr) { serr = unix.SetNonblock(int(fd), nb) }); err != nil || serr != nil {
			t.Fatalf("set O_NONBLOCK %v: %v %v", nb, err, serr)
		}
	}
	setNonblock(false)
	t.Cleanup(func() { setNonblock(true) })
	if f, rc := rawListener(ln); f != nil || rc != nil {
		_ = f.Close()
		t.Fatal("rawListener took a blocking listening socket")
	}
	setNonblock(true)
	f, rc := rawListener(ln)
	if f == nil || rc == nil {
		t.Fatal("rawListener declined net's non-blocking listening socket")
	}
	_ = f.Close()
}

// TestStormAcceptedAtLowestPriority: once a connection is refused, the
// accepting moves to a thread at nice 19 that hands Accept what it
// admits, while the test's thread keeps the process's priority; once
// stormQuiet passes without a refusal that thread ends (so it never runs
// another goroutine at that priority) and Accept takes connections at
// the usual priority again. Issue 23: a storm's refusals took the CPU of
// the threads serving calls; an accepting thread at nice 19 all the time
// slowed every caller's new connections on a busy node.
func TestStormAcceptedAtLowestPriority(t *testing.T) {
	base := ownThreadNice(t)
	if base == stormNice {
		t.Skipf("the test process runs at nice %d already: nothing to tell apart", base)
	}
	// Earlier tests' listeners refused connections too; closed, their
	// storm acceptors end, but a thread's end is seen a moment later.
	waitThreadsAtNice(t, stormNice, 0, "before this test's storm (earlier tests' storm acceptors, their listeners closed)")
	procs := waitGOMAXPROCS(t, 0, "before this test's storm")
	l, dial := boundedListener(t, 1)
	l.stormQuiet = 300 * time.Millisecond
	accepted := acceptAll(l)
	dial()
	held := next(t, accepted, "the first connection")
	wantClosed(t, dial(), "a connection over the bound of 1")

	storm := waitThreadsAtNice(t, stormNice, 1, "the storm acceptor")
	// The storm's thread has a P of its own (procBudget).
	if got := runtime.GOMAXPROCS(0); got != procs+1 {
		t.Errorf("GOMAXPROCS during the storm: %d, want %d (one more than before it)", got, procs+1)
	}
	if own := ownThreadNice(t); own != base {
		t.Errorf("the test's thread runs at nice %d, want the process's %d", own, base)
	}
	// During the storm, the storm acceptor admits and Accept returns it.
	_ = held.Close()
	dial()
	held = next(t, accepted, "a connection admitted during the storm")
	if got := threadsAtNice(t, stormNice); len(got) != 1 || got[0] != storm[0] {
		t.Errorf("threads at nice %d after an admission in the storm: %v, want [%d]", stormNice, got, storm[0])
	}

	// stormQuiet without a refusal: the thread ends.
	task := fmt.Sprintf("/proc/self/task/%d", storm[0])
	poll.Must(t, fmt.Sprintf("the storm acceptor's thread %d ends after the last refusal", storm[0]), 10*time.Second, 10*time.Millisecond, func() bool {
		_, err := os.Stat(task)
		return errors.Is(err, fs.ErrNotExist)
	})
	// Its P is given back.
	waitGOMAXPROCS(t, procs, "after the storm")
	// And Accept accepts on its own again.
	_ = held.Close()
	dial()
	next(t, accepted, "a connection after the storm")
	if got := threadsAtNice(t, stormNice); len(got) != 0 {
		t.Errorf("threads %v run at nice %d after the storm", got, stormNice)
	}
}

// waitGOMAXPROCS waits up to 10 s for no storm acceptor to hold an extra
// P and returns GOMAXPROCS then; want, when not 0, is the value it must
// have. A storm acceptor gives its P back from a goroutine of its own a
// moment after it ends (procBudget).
func waitGOMAXPROCS(t *testing.T, want int, when string) int {
	t.Helper()
	var got, running int
	if !poll.Until(10*time.Second, 10*time.Millisecond, func() bool {
		stormProcs.mu.Lock()
		running = stormProcs.running
		stormProcs.mu.Unlock()
		got = runtime.GOMAXPROCS(0)
		return running == 0 && (want == 0 || got == want)
	}) {
		t.Fatalf("%s: GOMAXPROCS %d with %d storm acceptors holding a P, want %d and none", when, got, running, want)
	}
	return got
}

// The main goroutine keeps the main thread for the whole test run. A
// goroutine that ends locked to the main thread does not end the thread
// (the runtime parks it for good, runtime/proc.go's mexit), so the storm
// acceptor of TestStormAcceptedAtLowestPriority must not get it: parked
// or ended, the thread runs no other goroutine, but only the end can be
// seen from /proc.
func init() { runtime.LockOSThread() }

// ownThreadNice is the nice value of the calling goroutine's thread.
func ownThreadNice(t *testing.T) int {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return threadNice(t, unix.Gettid())
}

// threadsAtNice lists this process's threads whose nice value is nice.
func threadsAtNice(t *testing.T, nice int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var tids []int
	for _, e := range entries {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if n, ok := readThreadNice(tid); ok && n == nice {
			tids = append(tids, tid)
		}
	}
	return tids
}

// waitThreadsAtNice waits up to 10 s for exactly want threads at nice.
func waitThreadsAtNice(t *testing.T, nice, want int, what string) []int {
	t.Helper()
	var got []int
	if !poll.Until(10*time.Second, 10*time.Millisecond, func() bool {
		got = threadsAtNice(t, nice)
		return len(got) == want
	}) {
		t.Fatalf("%s: threads at nice %d: %v, want %d of them", what, nice, got, want)
	}
	return got
}

// threadNice reads a thread's nice value, failing the test if it cannot.
func threadNice(t *testing.T, tid int) int {
	t.Helper()
	n, ok := readThreadNice(tid)
	if !ok {
		t.Fatalf("thread %d: no nice value in its stat", tid)
	}
	return n
}

// readThreadNice reads a thread's nice value from /proc (stat's 19th
// field; the fields after the command name, which may hold spaces, start
// at the 3rd); false if the thread is gone or its stat unreadable.
func readThreadNice(tid int) (int, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", tid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 17 {
		return 0, false
	}
	n, err := strconv.Atoi(fields[19-3])
	if err != nil {
		return 0, false
	}
	return n, true
}
