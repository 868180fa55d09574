package server

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// TestQueuedConnectionsJudgedBelowThePoller: connections already queued
// when Accept runs are taken with accept4 (acceptRaw's path, since
// accept4 finds them at once): the ones within the per-user bound become
// Unix connections whose peer is still readable, the others are closed
// before any handshake, and a closed connection gives its place back.
// Issue 23: refusing a storm's connections through net's Accept cost a
// poller registration, an address lookup and a finalizer each.
func TestQueuedConnectionsJudgedBelowThePoller(t *testing.T) {
	path := filepath.Join(sockdir.New(t, "raw"), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	l := newTrackingListener(ln, &connLimits{perUID: 2})
	t.Cleanup(func() { _ = l.Close() })
	if l.raw == nil {
		t.Fatal("a Unix listener with bounds has no raw listening socket")
	}
	dial := func() net.Conn {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	clients := []net.Conn{dial(), dial(), dial(), dial()} // queued, none accepted yet

	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	me := strconv.Itoa(os.Getuid())
	var kept []net.Conn
	for range 2 {
		select {
		case c := <-accepted:
			kept = append(kept, c)
			if uid, ok := peerUID(c.(*trackedConn).NetConn()); !ok || uid != me {
				t.Errorf("an admitted connection's peer user: %q, %v; want %s", uid, ok, me)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the first two queued connections were not accepted")
		}
	}
	// The third and fourth are over the bound of 2: closed at once.
	for i, c := range clients[2:] {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		// EOF or a reset: closed by the daemon; a timeout: still open.
		if _, err := c.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("queued connection %d over the bound is still open (read: %v)", i+3, err)
		}
	}
	select {
	case c := <-accepted:
		t.Fatalf("a connection over the bound was accepted: %v", c.RemoteAddr())
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
	select {
	case <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("a connection within the bound again (one closed) was not accepted")
	}
}

// TestRawAcceptWaitsThenJudges: with nothing queued, Accept waits in
// net's Accept and judges what arrives by the same bounds: a connection
// over them is closed, the next within them accepted.
func TestRawAcceptWaitsThenJudges(t *testing.T) {
	path := filepath.Join(sockdir.New(t, "raw"), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	l := newTrackingListener(ln, &connLimits{perUID: 1})
	t.Cleanup(func() { _ = l.Close() })
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	// Each dial comes after the loop has judged the one before, so it
	// usually finds the loop waiting in net's Accept (nothing queued);
	// should it be queued instead, accept4 must judge it alike.
	first, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	var held net.Conn
	select {
	case held = <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("the first connection was not accepted")
	}
	second, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	_ = second.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := second.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a connection over the bound of 1 is still open (read: %v)", err)
	}
	_ = held.Close()
	third, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	select {
	case <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("a connection within the bound again was not accepted")
	}
}

// TestRawAcceptEndsWhenClosed: closing the listener while Accept loops
// ends it with net.ErrClosed, which gRPC's Serve takes as its end.
func TestRawAcceptEndsWhenClosed(t *testing.T) {
	path := filepath.Join(sockdir.New(t, "raw"), "s.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	l := newTrackingListener(ln, &connLimits{perUID: 1})
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
		if c, err := net.Dial("unix", path); err == nil {
			defer c.Close()
		}
	}
	_ = l.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Accept did not return after the listener closed")
	}
}
