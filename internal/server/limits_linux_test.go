package server

import (
	"net"
	"testing"

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
