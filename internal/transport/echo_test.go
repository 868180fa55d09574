package transport

import (
	"context"
	"net"
	"testing"
	"time"
)

// The echo pair proves a listener is live the same way on both platforms:
// unix sockets and named pipes differ in how they are made, not in what a
// byte sent through them must do.

// serveEcho accepts connections on l and echoes one byte back per
// connection, proving the listener is live.
func serveEcho(l net.Listener) {
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b := make([]byte, 1)
				if _, err := c.Read(b); err == nil {
					c.Write(b)
				}
			}()
		}
	}()
}

// roundTrip dials addr, sends a byte and fails the test unless serveEcho's
// answer comes back.
func roundTrip(t *testing.T, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, addr)
	if err != nil {
		t.Fatalf("Dial(%s): %v", addr, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte{'x'}); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := c.Read(b); err != nil || b[0] != 'x' {
		t.Fatalf("echo: %q, %v", b, err)
	}
}
