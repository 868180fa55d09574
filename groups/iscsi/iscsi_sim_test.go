package iscsi_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/simtest"
)

var ctx = context.Background()

const (
	iqn    = "iqn.2003-01.org.example:t1"
	secret = "0123456789abcd"
)

func simService(t *testing.T) (*iscsi.Service, *simulated.Host) {
	t.Helper()
	cfg := simulated.DefaultConfig(nil)
	cfg.ISCSITargets = []simulated.ISCSITarget{{
		Portal: iscsi.Portal{Address: "192.168.1.5"}, IQN: iqn, ChapUsername: "node1", ChapSecret: secret,
		LUNs: []simulated.DiskSpec{{Size: 1 << 30}, {Size: 2 << 30}, {Size: 3 << 30}},
	}}
	h := simtest.Node(t, cfg)
	return iscsi.NewService(h.ISCSI()), h
}

func TestSimPortZeroMeans3260(t *testing.T) {
	s, _ := simService(t)
	p := &iscsi.TargetPortal{TargetAddress: "192.168.1.5"} // port 0
	_, err := s.AddTargetPortal(ctx, &iscsi.AddTargetPortalRequest{TargetPortal: p})
	simtest.Must(t, err)
	l, err := s.ListTargetPortals(ctx, &iscsi.ListTargetPortalsRequest{})
	if err != nil || len(l.TargetPortals) != 1 || *l.TargetPortals[0] != (iscsi.TargetPortal{TargetAddress: "192.168.1.5", TargetPort: 3260}) {
		t.Fatalf("ListTargetPortals = %+v, %v", l, err)
	}
	d, err := s.DiscoverTargetPortal(ctx, &iscsi.DiscoverTargetPortalRequest{TargetPortal: &iscsi.TargetPortal{TargetAddress: "192.168.1.5", TargetPort: 3260}})
	if err != nil || !reflect.DeepEqual(d.IQNs, []string{iqn}) {
		t.Errorf("DiscoverTargetPortal = %+v, %v", d, err)
	}
	// Registered as :3260, removable as port 0.
	_, err = s.RemoveTargetPortal(ctx, &iscsi.RemoveTargetPortalRequest{TargetPortal: p})
	simtest.Must(t, err)
	_, err = s.AddTargetPortal(ctx, &iscsi.AddTargetPortalRequest{TargetPortal: &iscsi.TargetPortal{TargetAddress: "192.168.1.5", TargetPort: 3261}})
	simtest.WantKind(t, err, errdefs.ErrNotFound)
	_, err = s.AddTargetPortal(ctx, &iscsi.AddTargetPortalRequest{})
	simtest.WantKind(t, err, errdefs.ErrInvalidArgument)
}

func TestSimConnectAndDisks(t *testing.T) {
	s, h := simService(t)
	p := &iscsi.TargetPortal{TargetAddress: "192.168.1.5"}
	_, err := s.AddTargetPortal(ctx, &iscsi.AddTargetPortalRequest{TargetPortal: p})
	simtest.Must(t, err)
	req := &iscsi.ConnectTargetRequest{TargetPortal: p, IQN: iqn, AuthType: iscsi.AuthOneWayCHAP, ChapUsername: "node1", ChapSecret: "wrong-secret-1"}
	_, err = s.ConnectTarget(ctx, req)
	simtest.WantKind(t, err, errdefs.ErrPermissionDenied)
	if strings.Contains(err.Error(), "wrong-secret-1") || strings.Contains(err.Error(), secret) {
		t.Errorf("the error %q contains a secret", err)
	}
	_, err = s.ConnectTarget(ctx, &iscsi.ConnectTargetRequest{TargetPortal: p, IQN: iqn})
	simtest.WantKind(t, err, errdefs.ErrPermissionDenied) // the target needs CHAP
	_, err = s.ConnectTarget(ctx, &iscsi.ConnectTargetRequest{TargetPortal: p, IQN: iqn, ChapSecret: secret})
	simtest.WantKind(t, err, errdefs.ErrInvalidArgument) // CHAP fields with NONE
	_, err = s.ConnectTarget(ctx, &iscsi.ConnectTargetRequest{TargetPortal: p, IQN: "not an iqn"})
	simtest.WantKind(t, err, errdefs.ErrInvalidArgument)

	req.ChapSecret = secret
	_, err = s.ConnectTarget(ctx, req)
	simtest.Must(t, err)
	_, err = s.ConnectTarget(ctx, req)
	simtest.Must(t, err) // idempotent
	d, err := s.GetTargetDisks(ctx, &iscsi.GetTargetDisksRequest{TargetPortal: p, IQN: iqn})
	if err != nil || !reflect.DeepEqual(d.DiskIDs, []string{"3", "4", "5"}) {
		t.Fatalf("GetTargetDisks = %+v, %v; want disks 3, 4 and 5", d, err)
	}
	if n := len(h.ListDisks()); n != 6 {
		t.Errorf("%d disks; want 6", n)
	}
	_, err = s.DisconnectTarget(ctx, &iscsi.DisconnectTargetRequest{TargetPortal: p, IQN: iqn})
	simtest.Must(t, err)
	d, err = s.GetTargetDisks(ctx, &iscsi.GetTargetDisksRequest{TargetPortal: p, IQN: iqn})
	if err != nil || d.DiskIDs == nil || len(d.DiskIDs) != 0 {
		t.Errorf("GetTargetDisks after disconnect = %+v, %v; want an empty list, as upstream", d, err)
	}
	if n := len(h.ListDisks()); n != 3 {
		t.Errorf("%d disks after disconnect; want 3", n)
	}
}
