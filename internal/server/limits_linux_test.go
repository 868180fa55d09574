package server

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// TestConnectionsPerUser: a user holding MaxConnsPerUID connections has
// its next one closed at accept, while another user still connects and
// calls.
func TestConnectionsPerUser(t *testing.T) {
	testutil.RequireRoot(t)
	cfg := testConfig(t)
	cfg.Transport.SocketMode = 0o666
	cfg.Transport.SocketUID, cfg.Transport.SocketGID = 0, 0
	cfg.Limits.MaxConnsPerUID = 2
	openSocketDir(t, cfg)
	s := start(t, cfg, smbGroupAPI(&callerSmb{}))
	addr := s.Endpoints()[0].Address
	for range 2 {
		c, err := transport.Dial(callCtx(t), addr)
		if err != nil {
			t.Fatal(err)
		}
		defer func(c net.Conn) { c.Close() }(c)
	}
	if !refused(t, addr) {
		t.Error("root's third connection was kept open past MaxConnsPerUID 2")
	}
	if r := asUser(t, nobody, nobody, addr, "pw"); r.DialErr != "" || r.Code != "OK" {
		t.Errorf("another user next to root's full allowance: %+v, want its call to succeed", r)
	}
}

// TestNewConnectionsPaced: past its burst, a user's new connections wait
// their turn to be identified, and one whose turn is further away than
// maxPaceWait is closed at once; another user is not slowed (issue 23: a
// user churning connections made identification a fifth of the daemon's
// CPU).
func TestNewConnectionsPaced(t *testing.T) {
	testutil.RequireRoot(t)
	cfg := testConfig(t)
	cfg.Transport.SocketMode = 0o666
	cfg.Transport.SocketUID, cfg.Transport.SocketGID = 0, 0
	cfg.Limits.NewConnsBurstPerUID, cfg.Limits.NewConnsPerUIDPerSecond = 2, 1
	openSocketDir(t, cfg)
	s := start(t, cfg, smbGroupAPI(&callerSmb{}))
	addr := s.Endpoints()[0].Address
	// Ten at once: two without waiting, six whose turns are 1 s to 6 s
	// away (maxPaceWait), and two 7 s and 8 s away, closed. Which of the
	// ten gets which turn is the order their handshakes run in.
	conns := make([]net.Conn, 10)
	for i := range conns {
		c, err := transport.Dial(callCtx(t), addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	// Each read at once (a read after its deadline reports the deadline,
	// not a close): the daemon's HTTP/2 settings once identified, end of
	// file if closed, nothing yet while waiting.
	var closed atomic.Int32
	var wg sync.WaitGroup
	deadline := time.Now().Add(3 * time.Second)
	for _, c := range conns {
		wg.Go(func() {
			_ = c.SetReadDeadline(deadline)
			if _, err := c.Read(make([]byte, 1)); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				closed.Add(1)
			}
		})
	}
	wg.Wait()
	if closed := closed.Load(); closed != 2 {
		t.Errorf("%d of root's ten new connections closed, want the 2 whose turn was over 6 s away", closed)
	}
	if r := asUser(t, nobody, nobody, addr, "pw"); r.DialErr != "" || r.Code != "OK" {
		t.Errorf("another user next to root's paced connections: %+v, want its call to succeed", r)
	}
}
