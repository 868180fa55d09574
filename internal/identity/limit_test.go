package identity

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// Connections beyond MaxIdentifying wait for a slot and are refused when
// none frees in time; a freed slot serves the next.
func TestHandshakeBoundsConcurrentIdentification(t *testing.T) {
	c := NewCredentials(Options{MaxIdentifying: 1})
	c.wait = 50 * time.Millisecond
	release := make(chan struct{})
	entered := make(chan struct{})
	c.identify = func(net.Conn, Options, acceptMark) (Caller, *process) {
		entered <- struct{}{}
		<-release
		return Caller{Incomplete: "test"}, nil
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	first := make(chan error, 1)
	go func() { _, _, err := c.ServerHandshake(a); first <- err }()
	<-entered
	if _, _, err := c.ServerHandshake(b); !errors.Is(err, ErrTooManyConnections) || !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("second connection while the first is identified: %v, want ErrTooManyConnections", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	c.identify = func(net.Conn, Options, acceptMark) (Caller, *process) { return Caller{}, nil }
	if _, _, err := c.ServerHandshake(b); err != nil {
		t.Errorf("after the slot was freed: %v", err)
	}
}
