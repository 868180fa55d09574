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
