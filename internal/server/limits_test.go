package server

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
	systemv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/system/v1alpha1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity/grpccreds"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// TestMessageSizeBound: the largest legitimate request (an SMB mapping
// with two 32,767-byte paths and the longest user name and password)
// passes; a larger message is refused with ResourceExhausted. gRPC's
// default would take 4 MB, and allocate that much per stream.
func TestMessageSizeBound(t *testing.T) {
	s := start(t, testConfig(t), smbAPI())
	c := smbv1.NewSmbClient(dial(t, s.Endpoints()[0].Address))
	legit := &smbv1.NewSmbGlobalMappingRequest{
		RemotePath: `\\` + strings.Repeat("r", 32765), LocalPath: `C:\` + strings.Repeat("l", 32764),
		Username: strings.Repeat("u", 256), Password: strings.Repeat("p", 1024),
	}
	if _, err := c.NewSmbGlobalMapping(callCtx(t), legit); err != nil {
		t.Errorf("the largest legitimate request: %v", err)
	}
	huge := &smbv1.NewSmbGlobalMappingRequest{RemotePath: strings.Repeat("r", DefaultMaxRecvMsgSize)}
	if _, err := c.NewSmbGlobalMapping(callCtx(t), huge); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a message over %d bytes: %v, want ResourceExhausted", DefaultMaxRecvMsgSize, err)
	}
}

// TestStreamsPerConnection: past MaxConcurrentStreams a connection's next
// call waits for one to end; it neither runs nor fails.
func TestStreamsPerConnection(t *testing.T) {
	f := newFakeSystem()
	cfg := testConfig(t)
	cfg.Limits.MaxConcurrentStreams = 2
	s := start(t, cfg, systemAPI(f))
	c := systemv1alpha1.NewSystemClient(dial(t, s.Endpoints()[0].Address))
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for range 3 {
		wg.Go(func() {
			_, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "block"})
			errs <- err
		})
	}
	for range 2 {
		select {
		case <-f.started:
		case <-time.After(10 * time.Second):
			t.Fatal("two calls did not start")
		}
	}
	select {
	case <-f.started:
		t.Error("a third call ran on a connection limited to two streams")
	case <-time.After(300 * time.Millisecond):
	}
	close(f.release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a call: %v", err)
		}
	}
}

// TestCallsPerCaller: a caller with MaxCallsPerCaller calls in progress
// (over several connections) has its next call refused at once with
// ResourceExhausted; once one ends it may call again.
func TestCallsPerCaller(t *testing.T) {
	f := newFakeSystem()
	cfg := testConfig(t)
	cfg.Limits.MaxCallsPerCaller = 2
	s := start(t, cfg, systemAPI(f))
	addr := s.Endpoints()[0].Address
	var wg sync.WaitGroup
	for range 2 {
		c := systemv1alpha1.NewSystemClient(dial(t, addr)) // a connection each
		wg.Go(func() { _, _ = c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "block"}) })
	}
	for range 2 {
		<-f.started
	}
	c := systemv1alpha1.NewSystemClient(dial(t, addr))
	begin := time.Now()
	_, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "ok"})
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("a third call of the same caller: %v, want ResourceExhausted", err)
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("the refusal took %v; it must not wait", d)
	}
	close(f.release)
	wg.Wait()
	if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "ok"}); err != nil {
		t.Errorf("a call after the others ended: %v", err)
	}
}

// TestIdleConnectionClosed: a connection that sent nothing is closed
// after ConnectionTimeout, and one with no call for MaxConnectionIdle is
// told to go away; a client reconnects transparently.
func TestIdleConnectionClosed(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits.ConnectionTimeout = 300 * time.Millisecond
	cfg.Limits.MaxConnectionIdle = 300 * time.Millisecond
	s := start(t, cfg, systemAPI(newFakeSystem()))
	addr := s.Endpoints()[0].Address

	raw, err := transport.Dial(callCtx(t), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	_ = raw.SetReadDeadline(time.Now().Add(10 * time.Second))
	begin := time.Now()
	if _, err := io.Copy(io.Discard, raw); err != nil && !errors.Is(err, net.ErrClosed) {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("a connection that sent nothing is still open after 10 s")
		}
	}
	if d := time.Since(begin); d > 5*time.Second {
		t.Errorf("a silent connection was closed after %v", d)
	}

	cc := dial(t, addr)
	c := systemv1alpha1.NewSystemClient(cc)
	if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "ok"}); err != nil {
		t.Fatal(err)
	}
	// The server's GOAWAY moves the client's connection to IDLE.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for st := cc.GetState(); st.String() == "READY"; st = cc.GetState() {
		if !cc.WaitForStateChange(ctx, st) {
			t.Fatal("the idle connection was not closed within 10 s")
		}
	}
	if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "ok"}); err != nil {
		t.Errorf("a call after the idle close: %v", err)
	}
}

// TestTotalConnections: past MaxConns a new connection is closed at
// accept; one closing makes room again.
func TestTotalConnections(t *testing.T) {
	cfg := testConfig(t)
	cfg.Limits.MaxConns = 2
	cfg.Limits.MaxConnsPerUID = -1
	s := start(t, cfg, systemAPI(newFakeSystem()))
	addr := s.Endpoints()[0].Address
	var held []net.Conn
	for range 2 {
		c, err := transport.Dial(callCtx(t), addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	if !refused(t, addr) {
		t.Error("a third connection was kept open past MaxConns 2")
	}
	held[0].Close()
	c := systemv1alpha1.NewSystemClient(dial(t, addr))
	var err error
	waitFor(t, "a call once a connection closed", func() bool {
		_, err = c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "ok"})
		return err == nil
	})
	held[1].Close()
}

// refused tells whether the daemon closes a new connection to addr at
// once (it reads end of file within 2 s, before any handshake).
func refused(t *testing.T, addr string) bool {
	t.Helper()
	c, err := transport.Dial(callCtx(t), addr)
	if err != nil {
		return true
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err = c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && (!errors.As(err, &ne) || !ne.Timeout())
}

// containerCreds identifies every connection as the container it names,
// or, with sid set, as a Windows caller of that account outside any
// known container (a HostProcess container or a host process: what a
// named pipe's client looks like once identified).
type containerCreds struct {
	credentials.TransportCredentials
	container, sid string
}

func (c containerCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return conn, &grpccreds.AuthInfo{AuthInfo: identity.AuthInfo{Caller: identity.Caller{ContainerID: c.container, WindowsSID: c.sid}}}, nil
}

// TestConnectionsPerWindowsAccount_ConstructedCallers: a named pipe tells
// nothing of its client at accept, so once identified a Windows account
// holding MaxConnsPerUID connections has its next one fail the handshake,
// while another account's succeeds (issue 23: no per-user bound on
// Windows before). Constructed callers: no Windows here.
func TestConnectionsPerWindowsAccount_ConstructedCallers(t *testing.T) {
	conns := &counter{}
	handshake := func(sid string) error {
		lc := &limitedCreds{TransportCredentials: containerCreds{sid: sid}, max: 32, perAccount: 2, conns: conns}
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		_, _, err := lc.ServerHandshake(a)
		return err
	}
	for i := range 2 {
		if err := handshake("S-1-5-21-1-2-3-1001"); err != nil {
			t.Fatalf("connection %d of an account under its bound: %v", i+1, err)
		}
	}
	if err := handshake("S-1-5-21-1-2-3-1001"); err == nil {
		t.Error("a third connection of one Windows account passed its bound of 2")
	}
	if err := handshake("S-1-5-18"); err != nil {
		t.Errorf("another account next to a full one: %v", err)
	}
}

// TestConnectionsPerContainer: once identified, a container holding
// MaxConnsPerContainer connections has its next one fail the handshake,
// while another container's succeeds; closing one makes room.
func TestConnectionsPerContainer(t *testing.T) {
	conns := &counter{}
	handshake := func(container string) (net.Conn, error) {
		lc := &limitedCreds{TransportCredentials: containerCreds{container: container}, max: 2, conns: conns}
		a, b := net.Pipe()
		t.Cleanup(func() { b.Close() })
		c, _, err := lc.ServerHandshake(a)
		return c, err
	}
	var held []net.Conn
	for range 2 {
		c, err := handshake("hostile")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	if _, err := handshake("hostile"); err == nil {
		t.Error("a third connection of one container passed MaxConnsPerContainer 2")
	}
	if _, err := handshake("driver"); err != nil {
		t.Errorf("another container next to a full one: %v", err)
	}
	held[0].Close()
	held[0].Close() // a second Close gives nothing back twice
	if _, err := handshake("hostile"); err != nil {
		t.Errorf("after one closed: %v", err)
	}
	if _, err := handshake("hostile"); err == nil {
		t.Error("a double Close freed two places")
	}
}

// countingConn counts the bytes a client wrote.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.n.Add(int64(n))
	return n, err
}

// TestOversizedMessageNotTaken: a 4 MB request is refused from its
// length prefix: the daemon never lets the client send it (flow control
// stops the client once the stream is refused), so it never holds it.
// Without the bound the daemon reads, and allocates, all 4 MB.
func TestOversizedMessageNotTaken(t *testing.T) {
	s := start(t, testConfig(t), smbAPI())
	addr := s.Endpoints()[0].Address
	var written atomic.Int64
	opts := append(transport.DialOptions(),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			c, err := transport.Dial(ctx, addr)
			if err != nil {
				return nil, err
			}
			return countingConn{Conn: c, n: &written}, nil
		}),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(8<<20)))
	cc, err := grpc.NewClient(transport.Target(addr), opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	huge := &smbv1.NewSmbGlobalMappingRequest{RemotePath: strings.Repeat("r", 4_000_000)}
	_, err = smbv1.NewSmbClient(cc).NewSmbGlobalMapping(callCtx(t), huge)
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a 4 MB request: %v, want ResourceExhausted", err)
	}
	cc.Close() // everything the client will ever write is written
	if n := written.Load(); n > 1<<20 {
		t.Errorf("the client sent %d bytes of a 4 MB request before it was refused; the daemon took them", n)
	}
	t.Logf("bytes the client could send of a 4,000,000-byte request: %d (%v)", written.Load(), err)
}
