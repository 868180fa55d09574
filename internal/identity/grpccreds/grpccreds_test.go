package grpccreds

import (
	"context"
	"testing"

	"google.golang.org/grpc/peer"

	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

func TestContext(t *testing.T) {
	if _, ok := FromContext(context.Background()); ok {
		t.Error("caller in an empty context")
	}
	c := identity.Caller{PID: 1, HasUnixIDs: true, UID: 2}
	ctx := peer.NewContext(context.Background(), &peer.Peer{AuthInfo: &AuthInfo{AuthInfo: identity.AuthInfo{Caller: c}}})
	if got, ok := FromContext(ctx); !ok || got.UID != 2 {
		t.Errorf("from peer: %+v %v", got, ok)
	}
	if p := Caller(ctx); p == nil || p.UID != 2 || p != Caller(ctx) {
		t.Errorf("Caller from peer = %+v, want the connection's one caller, the same at every call", p)
	}
	if p := Caller(context.Background()); p != nil {
		t.Errorf("Caller of no connection = %+v, want nil", p)
	}
	if got := Describe(ctx); got != c.String() {
		t.Errorf("Describe from peer = %q, want %q", got, c.String())
	}
	if got := AccountKey(ctx); got != "uid:2" {
		t.Errorf("AccountKey from peer = %q, want uid:2", got)
	}
	ctx = identity.NewContext(ctx, identity.Caller{PID: 3})
	if got := Describe(ctx); got != "pid 3" {
		t.Errorf("Describe from NewContext = %q, want the context's caller", got)
	}
	if got := AccountKey(ctx); got != "" {
		t.Errorf("AccountKey from NewContext = %q, want none (pid 3 has no account)", got)
	}
	if got, ok := FromContext(ctx); !ok || got.PID != 3 {
		t.Errorf("from NewContext: %+v %v", got, ok)
	}
	if (AuthInfo{}).AuthType() != identity.AuthType {
		t.Error("AuthType")
	}
	cr := NewCredentials(identity.Options{})
	if _, _, err := cr.ClientHandshake(context.Background(), "", nil); err == nil {
		t.Error("ClientHandshake succeeded")
	}
	if cr.Clone() == nil || cr.OverrideServerName("x") != nil || cr.Info().SecurityProtocol == "" {
		t.Error("credentials plumbing")
	}
}
