package simulated_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
)

const (
	chapIQN      = "iqn.2003-01.org.example:chap"
	openIQN      = "iqn.2003-01.org.example:open"
	chapSecret   = "0123456789ab"
	mutualSecret = "ba9876543210"
)

var (
	portal = iscsi.Portal{Address: "10.0.0.10", Port: 3260}
	other  = iscsi.Portal{Address: "10.0.0.99", Port: 3260}
)

func iscsiHost(t *testing.T) *simulated.Host {
	t.Helper()
	cfg := simulated.DefaultConfig(nil)
	cfg.ISCSITargets = []simulated.ISCSITarget{
		{Portal: iscsi.Portal{Address: "10.0.0.10"}, IQN: chapIQN, ChapUsername: "initiator", ChapSecret: chapSecret, MutualSecret: mutualSecret,
			LUNs: []simulated.DiskSpec{{Size: 1 << 30, Page83: "lun0"}}},
		{Portal: portal, IQN: openIQN, LUNs: []simulated.DiskSpec{{Size: 512 << 20}, {Size: 256 << 20, Offline: true}}},
		{Portal: iscsi.Portal{Address: "10.0.0.11", Port: 3261}, IQN: "iqn.2003-01.org.example:elsewhere"},
	}
	return newHost(t, cfg)
}

func TestIscsiPortals(t *testing.T) {
	h := iscsiHost(t)
	is := h.ISCSI()
	wantErr(t, is.AddTargetPortal(ctx, other), errdefs.ErrNotFound, "no iSCSI portal answers at 10.0.0.99:3260")
	wantErr(t, is.AddTargetPortal(ctx, iscsi.Portal{Address: "10.0.0.11", Port: 3260}), errdefs.ErrNotFound)
	must(t, is.AddTargetPortal(ctx, portal))
	must(t, is.AddTargetPortal(ctx, portal)) // idempotent
	must(t, is.AddTargetPortal(ctx, iscsi.Portal{Address: "10.0.0.11", Port: 3261}))
	got, err := is.ListTargetPortals(ctx)
	if want := []iscsi.Portal{portal, {Address: "10.0.0.11", Port: 3261}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ListTargetPortals = %v, %v; want %v", got, err, want)
	}
	// Discovery contacts the portal, registered or not.
	iqns, err := is.DiscoverTargetPortal(ctx, portal)
	if err != nil || !reflect.DeepEqual(iqns, []string{chapIQN, openIQN}) {
		t.Errorf("DiscoverTargetPortal = %v, %v", iqns, err)
	}
	must(t, is.RemoveTargetPortal(ctx, portal))
	wantErr(t, is.RemoveTargetPortal(ctx, portal), errdefs.ErrNotFound)
	if iqns, err := is.DiscoverTargetPortal(ctx, portal); err != nil || len(iqns) != 2 {
		t.Errorf("DiscoverTargetPortal(unregistered) = %v, %v", iqns, err)
	}
	_, err = is.DiscoverTargetPortal(ctx, other)
	wantErr(t, err, errdefs.ErrNotFound)
}

func TestIscsiConnectAttachesDisks(t *testing.T) {
	h := iscsiHost(t)
	is := h.ISCSI()
	login := iscsi.Login{Portal: portal, IQN: openIQN}
	wantErr(t, is.ConnectTarget(ctx, login), errdefs.ErrFailedPrecondition, "not registered")
	must(t, is.AddTargetPortal(ctx, portal))
	wantErr(t, is.ConnectTarget(ctx, iscsi.Login{Portal: portal, IQN: "iqn.2003-01.org.example:nope"}), errdefs.ErrNotFound)
	// No session: an empty list, as upstream (csi-proxy pkg/os/iscsi/api.go
	// GetTargetDisks, commit eeba4706); a target the portal does not offer
	// is NotFound.
	none, err := is.TargetDisks(ctx, portal, openIQN)
	if err != nil || none == nil || len(none) != 0 {
		t.Fatalf("TargetDisks without a session = %#v, %v; want an empty list", none, err)
	}
	_, err = is.TargetDisks(ctx, portal, "iqn.2003-01.org.example:nope")
	wantErr(t, err, errdefs.ErrNotFound)

	must(t, is.ConnectTarget(ctx, login))
	disks, err := is.TargetDisks(ctx, portal, openIQN)
	if err != nil || !reflect.DeepEqual(disks, []uint32{3, 4}) {
		t.Fatalf("TargetDisks = %v, %v; want [3 4]", disks, err)
	}
	all := h.ListDisks()
	if d := all[3]; d.Size != 512<<20 || !d.Online || d.PartitionStyle != "RAW" || d.ISCSITarget != openIQN {
		t.Errorf("disk 3 = %+v", d)
	}
	if d := all[4]; d.Online {
		t.Errorf("disk 4 = %+v; want offline, as its spec says", d)
	}
	wantErr(t, h.RemoveDisk(3), errdefs.ErrFailedPrecondition, "disconnect the target")

	// Connected again: success, same disks.
	must(t, is.ConnectTarget(ctx, login))
	if again, _ := is.TargetDisks(ctx, portal, openIQN); !reflect.DeepEqual(again, disks) {
		t.Errorf("TargetDisks after reconnect = %v", again)
	}

	// Put a file on the LUN, disconnect, reconnect: it is still there.
	id := formatted(t, h, 3)
	must(t, h.Volume().MountVolume(ctx, id, kubelet+`\lun`))
	must(t, h.WriteFile(kubelet+`\lun\f`, []byte("on the target")))
	must(t, is.DisconnectTarget(ctx, portal, openIQN))
	if n := len(h.ListDisks()); n != 3 {
		t.Errorf("%d disks after disconnect; want 3", n)
	}
	_, err = h.Disk().DiskSize(ctx, 3)
	wantErr(t, err, errdefs.ErrNotFound)
	if ok, _ := h.Filesystem().IsSymlink(ctx, kubelet+`\lun`); ok {
		t.Error("the mount point still leads somewhere")
	}
	must(t, is.DisconnectTarget(ctx, portal, openIQN)) // no session: success
	if none, err := is.TargetDisks(ctx, portal, openIQN); err != nil || len(none) != 0 {
		t.Errorf("TargetDisks after disconnect = %v, %v; want an empty list", none, err)
	}

	must(t, is.ConnectTarget(ctx, login))
	if got, err := h.ReadFile(kubelet + `\lun\f`); err != nil || string(got) != "on the target" {
		t.Errorf("after reconnecting: %q, %v", got, err)
	}
}

func TestIscsiChap(t *testing.T) {
	h := iscsiHost(t)
	is := h.ISCSI()
	must(t, is.AddTargetPortal(ctx, portal))
	oneWay := iscsi.Login{Portal: portal, IQN: chapIQN, AuthType: iscsi.AuthOneWayCHAP, Username: "initiator", Secret: chapSecret}

	none := iscsi.Login{Portal: portal, IQN: chapIQN}
	wantErr(t, is.ConnectTarget(ctx, none), errdefs.ErrPermissionDenied, "requires CHAP")
	bad := oneWay
	bad.Secret = "wrong-secret"
	err := is.ConnectTarget(ctx, bad)
	wantErr(t, err, errdefs.ErrPermissionDenied, "CHAP authentication failed")
	if strings.Contains(err.Error(), "wrong-secret") || strings.Contains(err.Error(), chapSecret) {
		t.Errorf("the error %q contains a secret", err)
	}
	bad = oneWay
	bad.Username = "intruder"
	wantErr(t, is.ConnectTarget(ctx, bad), errdefs.ErrPermissionDenied)
	// CHAP against a target without CHAP.
	wantErr(t, is.ConnectTarget(ctx, iscsi.Login{Portal: portal, IQN: openIQN, AuthType: iscsi.AuthOneWayCHAP, Username: "u", Secret: chapSecret}),
		errdefs.ErrPermissionDenied, "not configured for CHAP")

	// Mutual CHAP needs the initiator's secret, and the right one.
	mutual := oneWay
	mutual.AuthType = iscsi.AuthMutualCHAP
	wantErr(t, is.ConnectTarget(ctx, mutual), errdefs.ErrFailedPrecondition, "SetMutualChapSecret")
	must(t, is.SetMutualChapSecret(ctx, "not-the-one!"))
	err = is.ConnectTarget(ctx, mutual)
	wantErr(t, err, errdefs.ErrPermissionDenied, "mutual CHAP")
	if strings.Contains(err.Error(), "not-the-one!") || strings.Contains(err.Error(), mutualSecret) {
		t.Errorf("the error %q contains a secret", err)
	}
	if n := len(h.ListDisks()); n != 3 {
		t.Fatalf("failed logins attached disks: %d disks", n)
	}
	must(t, is.SetMutualChapSecret(ctx, mutualSecret))
	must(t, is.ConnectTarget(ctx, mutual))
	if disks, err := is.TargetDisks(ctx, portal, chapIQN); err != nil || len(disks) != 1 {
		t.Errorf("TargetDisks = %v, %v", disks, err)
	}
	must(t, is.DisconnectTarget(ctx, portal, chapIQN))
	must(t, is.ConnectTarget(ctx, oneWay)) // one-way CHAP is enough for this target
}

func TestIscsiViewAppliesDefaultPort(t *testing.T) {
	h := iscsiHost(t)
	zero := iscsi.Portal{Address: "10.0.0.10"}
	must(t, h.ISCSI().AddTargetPortal(ctx, zero))
	must(t, h.ISCSI().ConnectTarget(ctx, iscsi.Login{Portal: zero, IQN: openIQN}))
	if got, _ := h.ISCSI().ListTargetPortals(ctx); !reflect.DeepEqual(got, []iscsi.Portal{portal}) {
		t.Errorf("ListTargetPortals = %v; want %v", got, []iscsi.Portal{portal})
	}
}
