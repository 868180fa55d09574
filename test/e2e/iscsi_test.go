package e2e

import (
	"slices"
	"strconv"
	"testing"

	"google.golang.org/grpc/codes"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	iscsiv1alpha2 "github.com/csi-node-proxy/csi-node-proxy/api/iscsi/v1alpha2"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
)

// TestIscsiV1alpha2 calls every method of iscsi v1alpha2.
func TestIscsiV1alpha2(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	c := e.iscsi

	oneWay := &iscsiv1alpha2.TargetPortal{TargetAddress: portalOneWay} // port 0: 3260
	mutual := &iscsiv1alpha2.TargetPortal{TargetAddress: portalMutual, TargetPort: mutualPort}
	nowhere := &iscsiv1alpha2.TargetPortal{TargetAddress: "10.9.9.9"}
	badPortals := []struct {
		portal *iscsiv1alpha2.TargetPortal
		substr string
	}{
		{nil, "target_portal is missing"},
		{&iscsiv1alpha2.TargetPortal{}, "target_portal.target_address is empty"},
		{&iscsiv1alpha2.TargetPortal{TargetAddress: "bad_host!"}, "is neither an IP address nor a host name"},
		{&iscsiv1alpha2.TargetPortal{TargetAddress: portalOneWay, TargetPort: 70000}, "is not a TCP port"},
	}
	login := func(p *iscsiv1alpha2.TargetPortal, iqn string, auth iscsiv1alpha2.AuthenticationType, user, secret string) *iscsiv1alpha2.ConnectTargetRequest {
		return &iscsiv1alpha2.ConnectTargetRequest{TargetPortal: p, Iqn: iqn, AuthType: auth, ChapUsername: user, ChapSecret: secret}
	}
	oneWayLogin := login(oneWay, iqnOneWay, iscsiv1alpha2.AuthenticationType_ONE_WAY_CHAP, chapUser, oneWaySecret)
	mutualLogin := login(mutual, iqnMutual, iscsiv1alpha2.AuthenticationType_MUTUAL_CHAP, chapUser, mutualChap)
	connect := func(req *iscsiv1alpha2.ConnectTargetRequest) error {
		_, err := c.ConnectTarget(ctx, req)
		return err
	}
	disconnect := func(p *iscsiv1alpha2.TargetPortal, iqn string) error {
		_, err := c.DisconnectTarget(ctx, &iscsiv1alpha2.DisconnectTargetRequest{TargetPortal: p, Iqn: iqn})
		return err
	}
	addPortal := func(p *iscsiv1alpha2.TargetPortal) error {
		_, err := c.AddTargetPortal(ctx, &iscsiv1alpha2.AddTargetPortalRequest{TargetPortal: p})
		return err
	}
	removePortal := func(p *iscsiv1alpha2.TargetPortal) error {
		_, err := c.RemoveTargetPortal(ctx, &iscsiv1alpha2.RemoveTargetPortalRequest{TargetPortal: p})
		return err
	}
	portals := func() []string {
		t.Helper()
		r, err := c.ListTargetPortals(ctx, &iscsiv1alpha2.ListTargetPortalsRequest{})
		ok(t, "ListTargetPortals", err)
		var out []string
		for _, p := range r.GetTargetPortals() {
			out = append(out, p.GetTargetAddress()+":"+strconv.Itoa(int(p.GetTargetPort())))
		}
		return out
	}
	targetDisks := func(p *iscsiv1alpha2.TargetPortal, iqn string) ([]string, error) {
		r, err := c.GetTargetDisks(ctx, &iscsiv1alpha2.GetTargetDisksRequest{TargetPortal: p, Iqn: iqn})
		return r.GetDiskIDs(), err
	}
	diskSize := func(n string) (int64, error) {
		num, err := strconv.ParseUint(n, 10, 32)
		if err != nil {
			return 0, err
		}
		r, err := e.disk.GetDiskStats(ctx, &diskv1.GetDiskStatsRequest{DiskNumber: uint32(num)})
		return r.GetTotalBytes(), err
	}

	// ListTargetPortals and DiscoverTargetPortal before anything is added.
	if got := portals(); len(got) != 0 {
		t.Errorf("ListTargetPortals at start = %q, want none", got)
	}
	r, err := c.DiscoverTargetPortal(ctx, &iscsiv1alpha2.DiscoverTargetPortalRequest{TargetPortal: oneWay})
	ok(t, "DiscoverTargetPortal", err)
	if want := []string{iqnOneWay, iqnOpen}; !slices.Equal(r.GetIqns(), want) {
		t.Errorf("DiscoverTargetPortal(%s) = %q, want %q", portalOneWay, r.GetIqns(), want)
	}
	r, err = c.DiscoverTargetPortal(ctx, &iscsiv1alpha2.DiscoverTargetPortalRequest{TargetPortal: mutual})
	ok(t, "DiscoverTargetPortal", err)
	if want := []string{iqnMutual}; !slices.Equal(r.GetIqns(), want) {
		t.Errorf("DiscoverTargetPortal(%s:%d) = %q, want %q", portalMutual, mutualPort, r.GetIqns(), want)
	}
	_, err = c.DiscoverTargetPortal(ctx, &iscsiv1alpha2.DiscoverTargetPortalRequest{TargetPortal: nowhere})
	wantErr(t, "DiscoverTargetPortal(nothing there)", err, codes.NotFound, "no iSCSI portal answers at 10.9.9.9:3260")
	_, err = c.DiscoverTargetPortal(ctx, &iscsiv1alpha2.DiscoverTargetPortalRequest{TargetPortal: &iscsiv1alpha2.TargetPortal{TargetAddress: portalMutual}})
	wantErr(t, "DiscoverTargetPortal(wrong port)", err, codes.NotFound, "no iSCSI portal answers")
	for _, bp := range badPortals {
		_, err := c.DiscoverTargetPortal(ctx, &iscsiv1alpha2.DiscoverTargetPortalRequest{TargetPortal: bp.portal})
		wantErr(t, "DiscoverTargetPortal(bad portal)", err, codes.InvalidArgument, bp.substr)
	}

	// ConnectTarget needs a registered portal.
	wantErr(t, "ConnectTarget(portal not added)", connect(oneWayLogin), codes.FailedPrecondition, "is not registered; add it with AddTargetPortal first")

	// AddTargetPortal
	twice(t, "AddTargetPortal", func() error { return addPortal(oneWay) })
	ok(t, "AddTargetPortal", addPortal(mutual))
	if got, want := portals(), []string{portalOneWay + ":3260", portalMutual + ":3261"}; !slices.Equal(got, want) {
		t.Errorf("ListTargetPortals = %q, want %q", got, want)
	}
	wantErr(t, "AddTargetPortal(nothing there)", addPortal(nowhere), codes.NotFound, "no iSCSI portal answers")
	for _, bp := range badPortals {
		wantErr(t, "AddTargetPortal(bad portal)", addPortal(bp.portal), codes.InvalidArgument, bp.substr)
	}

	// ConnectTarget failures.
	wantErr(t, "ConnectTarget(wrong secret)", connect(login(oneWay, iqnOneWay, iscsiv1alpha2.AuthenticationType_ONE_WAY_CHAP, chapUser, wrongSecret)),
		codes.PermissionDenied, "CHAP authentication failed for target "+iqnOneWay+": wrong CHAP user name or secret")
	wantErr(t, "ConnectTarget(wrong user)", connect(login(oneWay, iqnOneWay, iscsiv1alpha2.AuthenticationType_ONE_WAY_CHAP, "someone-else", oneWaySecret)),
		codes.PermissionDenied, "wrong CHAP user name or secret")
	wantErr(t, "ConnectTarget(no CHAP to a CHAP target)", connect(login(oneWay, iqnOneWay, iscsiv1alpha2.AuthenticationType_NONE, "", "")),
		codes.PermissionDenied, "the target requires CHAP")
	wantErr(t, "ConnectTarget(CHAP to an open target)", connect(login(oneWay, iqnOpen, iscsiv1alpha2.AuthenticationType_ONE_WAY_CHAP, chapUser, oneWaySecret)),
		codes.PermissionDenied, "the target is not configured for CHAP")
	wantErr(t, "ConnectTarget(unknown target)", connect(login(oneWay, "iqn.2003-01.org.example:nope", iscsiv1alpha2.AuthenticationType_NONE, "", "")),
		codes.NotFound, "is not offered at portal 10.0.0.10:3260")
	wantErr(t, "ConnectTarget(target at another portal)", connect(login(oneWay, iqnMutual, iscsiv1alpha2.AuthenticationType_NONE, "", "")),
		codes.NotFound, "is not offered at portal")
	for _, tc := range []struct {
		req    *iscsiv1alpha2.ConnectTargetRequest
		substr string
	}{
		{login(oneWay, "", iscsiv1alpha2.AuthenticationType_NONE, "", ""), "iqn is empty"},
		{login(oneWay, "not-an-iqn", iscsiv1alpha2.AuthenticationType_NONE, "", ""), "is not an iSCSI name"},
		{login(oneWay, "iqn.2003-01.org.example:has space", iscsiv1alpha2.AuthenticationType_NONE, "", ""), "is not an iSCSI name"},
		{login(oneWay, iqnOneWay, iscsiv1alpha2.AuthenticationType(7), chapUser, oneWaySecret), "auth_type 7 is not NONE, ONE_WAY_CHAP or MUTUAL_CHAP"},
		{login(oneWay, iqnOneWay, iscsiv1alpha2.AuthenticationType_ONE_WAY_CHAP, chapUser, "short"), "chap_secret must be 12 to 16 bytes long, not 5"},
		{login(oneWay, iqnOneWay, iscsiv1alpha2.AuthenticationType_ONE_WAY_CHAP, chapUser, "seventeen-bytes!!"), "chap_secret must be 12 to 16 bytes long, not 17"},
		{login(oneWay, iqnOneWay, iscsiv1alpha2.AuthenticationType_ONE_WAY_CHAP, "", oneWaySecret), "chap_username must be 1 to 223 bytes long"},
		{login(oneWay, iqnOpen, iscsiv1alpha2.AuthenticationType_NONE, chapUser, ""), "must be empty with auth_type NONE"},
	} {
		wantErr(t, "ConnectTarget(invalid)", connect(tc.req), codes.InvalidArgument, tc.substr)
	}
	for _, bp := range badPortals {
		wantErr(t, "ConnectTarget(bad portal)", connect(login(bp.portal, iqnOneWay, iscsiv1alpha2.AuthenticationType_NONE, "", "")), codes.InvalidArgument, bp.substr)
	}
	if got := e.host.ListDisks(); len(got) != 4 {
		t.Fatalf("failed logins attached disks: %d disks, want 4", len(got))
	}

	// ConnectTarget with one-way CHAP, twice: the LUN becomes disk 4, the
	// lowest free number.
	twice(t, "ConnectTarget(one-way CHAP)", func() error { return connect(oneWayLogin) })
	disks, err := targetDisks(oneWay, iqnOneWay)
	ok(t, "GetTargetDisks", err)
	if !slices.Equal(disks, []string{"4"}) {
		t.Fatalf("GetTargetDisks(%s) = %q, want [4]", iqnOneWay, disks)
	}
	if size, err := diskSize("4"); err != nil || size != 1<<30 {
		t.Errorf("size of the LUN's disk = %d, %v; want 1 GiB", size, err)
	}
	ids, err := e.disk.ListDiskIDs(ctx, &diskv1.ListDiskIDsRequest{})
	ok(t, "ListDiskIDs", err)
	if id := ids.GetDiskIDs()[4]; id.GetPage83() != "60014050000000000000000000000a01" || id.GetSerialNumber() != "LUN-ONEWAY" {
		t.Errorf("IDs of the LUN's disk = %v, want the LUN's page 0x83 and serial", id)
	}

	// Mutual CHAP: needs the initiator's secret, and the target must prove
	// it.
	wantErr(t, "ConnectTarget(mutual CHAP, no initiator secret)", connect(mutualLogin), codes.FailedPrecondition, "set it with SetMutualChapSecret")
	setMutual := func(s string) error {
		_, err := c.SetMutualChapSecret(ctx, &iscsiv1alpha2.SetMutualChapSecretRequest{MutualChapSecret: s})
		return err
	}
	wantErr(t, "SetMutualChapSecret(short)", setMutual("short"), codes.InvalidArgument, "MutualChapSecret must be 12 to 16 bytes long, not 5")
	wantErr(t, "SetMutualChapSecret(long)", setMutual("seventeen-bytes!!"), codes.InvalidArgument, "MutualChapSecret must be 12 to 16 bytes long, not 17")
	wantErr(t, "SetMutualChapSecret(control character)", setMutual("twelve\tbytes"), codes.InvalidArgument, "MutualChapSecret contains a control character")
	ok(t, "SetMutualChapSecret(wrong)", setMutual(wrongSecret))
	wantErr(t, "ConnectTarget(mutual CHAP, target cannot prove)", connect(mutualLogin), codes.PermissionDenied, "the target did not prove the initiator's mutual CHAP secret")
	ok(t, "SetMutualChapSecret", setMutual(mutualProof))
	wantErr(t, "ConnectTarget(mutual CHAP, wrong secret)",
		connect(login(mutual, iqnMutual, iscsiv1alpha2.AuthenticationType_MUTUAL_CHAP, chapUser, wrongSecret)), codes.PermissionDenied, "wrong CHAP user name or secret")
	wantErr(t, "ConnectTarget(mutual CHAP to a one-way target)",
		connect(login(oneWay, iqnOpen, iscsiv1alpha2.AuthenticationType_MUTUAL_CHAP, chapUser, mutualChap)), codes.PermissionDenied, "not configured for CHAP")
	twice(t, "ConnectTarget(mutual CHAP)", func() error { return connect(mutualLogin) })
	if disks, err := targetDisks(mutual, iqnMutual); err != nil || !slices.Equal(disks, []string{"5"}) {
		t.Errorf("GetTargetDisks(%s) = %q, %v; want [5]", iqnMutual, disks, err)
	}
	if size, err := diskSize("5"); err != nil || size != 512<<20 {
		t.Errorf("size of the mutual LUN's disk = %d, %v; want 512 MiB", size, err)
	}

	// GetTargetDisks failures.
	// No session: an empty list, as upstream (issue 11 item 9).
	if disks, err := targetDisks(oneWay, iqnOpen); err != nil || len(disks) != 0 {
		t.Errorf("GetTargetDisks(no session) = %q, %v; want an empty list", disks, err)
	}
	_, err = targetDisks(oneWay, "iqn.2003-01.org.example:nope")
	wantErr(t, "GetTargetDisks(unknown target)", err, codes.NotFound, "is not offered at portal")
	_, err = targetDisks(oneWay, "not-an-iqn")
	wantErr(t, "GetTargetDisks(bad IQN)", err, codes.InvalidArgument, "is not an iSCSI name")
	for _, bp := range badPortals {
		_, err := targetDisks(bp.portal, iqnOneWay)
		wantErr(t, "GetTargetDisks(bad portal)", err, codes.InvalidArgument, bp.substr)
	}

	// The LUN's contents live on the target across sessions: partition it,
	// log out and in again, and its volume is back.
	_, err = e.disk.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: 4})
	ok(t, "PartitionDisk(LUN)", err)
	vols, err := e.vol1.ListVolumesOnDisk(ctx, &volumev1.ListVolumesOnDiskRequest{DiskNumber: 4})
	ok(t, "ListVolumesOnDisk(LUN)", err)

	// DisconnectTarget, twice: the LUN's disk detaches.
	twice(t, "DisconnectTarget", func() error { return disconnect(oneWay, iqnOneWay) })
	if disks, err := targetDisks(oneWay, iqnOneWay); err != nil || len(disks) != 0 {
		t.Errorf("GetTargetDisks(after logout) = %q, %v; want an empty list", disks, err)
	}
	_, err = diskSize("4")
	wantErr(t, "GetDiskStats(detached LUN)", err, codes.NotFound, "disk 4 does not exist")
	ok(t, "DisconnectTarget(never connected)", disconnect(oneWay, iqnOpen))
	wantErr(t, "DisconnectTarget(bad IQN)", disconnect(oneWay, "not-an-iqn"), codes.InvalidArgument, "is not an iSCSI name")
	wantErr(t, "DisconnectTarget(empty IQN)", disconnect(oneWay, ""), codes.InvalidArgument, "iqn is empty")
	for _, bp := range badPortals {
		wantErr(t, "DisconnectTarget(bad portal)", disconnect(bp.portal, iqnOneWay), codes.InvalidArgument, bp.substr)
	}
	ok(t, "ConnectTarget(again)", connect(oneWayLogin))
	again, err := e.vol1.ListVolumesOnDisk(ctx, &volumev1.ListVolumesOnDiskRequest{DiskNumber: 4})
	ok(t, "ListVolumesOnDisk(LUN after re-login)", err)
	if len(vols.GetVolumeIds()) != 1 || !slices.Equal(again.GetVolumeIds(), vols.GetVolumeIds()) {
		t.Errorf("LUN volumes: before logout %q, after re-login %q; want the same one", vols.GetVolumeIds(), again.GetVolumeIds())
	}
	// An open target needs no CHAP; its LUN takes the next free number.
	ok(t, "ConnectTarget(open target)", connect(login(oneWay, iqnOpen, iscsiv1alpha2.AuthenticationType_NONE, "", "")))
	if disks, err := targetDisks(oneWay, iqnOpen); err != nil || !slices.Equal(disks, []string{"6"}) {
		t.Errorf("GetTargetDisks(%s) = %q, %v; want [6]", iqnOpen, disks, err)
	}

	// RemoveTargetPortal: sessions stay connected, as on Windows.
	ok(t, "RemoveTargetPortal", removePortal(mutual))
	if got, want := portals(), []string{portalOneWay + ":3260"}; !slices.Equal(got, want) {
		t.Errorf("ListTargetPortals after removing one = %q, want %q", got, want)
	}
	if disks, err := targetDisks(mutual, iqnMutual); err != nil || !slices.Equal(disks, []string{"5"}) {
		t.Errorf("GetTargetDisks(%s) after removing its portal = %q, %v; want [5]", iqnMutual, disks, err)
	}
	wantErr(t, "RemoveTargetPortal(not registered)", removePortal(mutual), codes.NotFound, "portal 10.0.0.11:3261 is not registered")
	wantErr(t, "RemoveTargetPortal(never added)", removePortal(nowhere), codes.NotFound, "is not registered")
	for _, bp := range badPortals {
		wantErr(t, "RemoveTargetPortal(bad portal)", removePortal(bp.portal), codes.InvalidArgument, bp.substr)
	}
	ok(t, "RemoveTargetPortal", removePortal(&iscsiv1alpha2.TargetPortal{TargetAddress: portalOneWay, TargetPort: 3260}))
	if got := portals(); len(got) != 0 {
		t.Errorf("ListTargetPortals after removing all = %q, want none", got)
	}
	for _, tgt := range []struct {
		p   *iscsiv1alpha2.TargetPortal
		iqn string
	}{{oneWay, iqnOneWay}, {oneWay, iqnOpen}, {mutual, iqnMutual}} {
		ok(t, "DisconnectTarget", disconnect(tgt.p, tgt.iqn))
	}
	if got := e.host.ListDisks(); len(got) != 4 {
		t.Errorf("after every logout %d disks remain, want the 4 local ones", len(got))
	}
}
