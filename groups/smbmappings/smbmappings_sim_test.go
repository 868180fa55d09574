package smbmappings_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/simtest"
)

var ctx = context.Background()

const (
	kubelet  = `C:\var\lib\kubelet`
	password = "Correct-Horse-9"
	staging  = kubelet + `\plugins\kubernetes.io\csi\smb.csi.k8s.io\`
)

// simNode is the simulated node with both SMB groups on it and a clock
// the test moves.
type simNode struct {
	smb  *smb.Service
	maps *smbmappings.Service
	fs   *filesystem.Service
	h    *simulated.Host
	now  time.Time
}

func (n *simNode) advance(d time.Duration) { n.now = n.now.Add(d) }

func newSimNode(t *testing.T) *simNode {
	t.Helper()
	cfg := simulated.DefaultConfig(nil)
	cfg.SMBShares = []simulated.SMBShare{
		{Path: `\\files\vols`, Username: `CORP\csi`, Password: password, Dirs: []string{"pvc-1", "pvc-2"}},
		{Path: `\\files\old`, Username: `CORP\csi`, Password: password},
		{Path: `\\files\bob`, Username: `CORP\bob`, Password: password},
		{Path: `\\nas2\data`, Username: `CORP\csi`, Password: password},
	}
	h := simtest.Node(t, cfg)
	paths := simtest.Paths(t, h)
	simtest.Must(t, h.MkdirAll(staging+`pv-a`))
	simtest.Must(t, h.MkdirAll(staging+`pv-b`))
	n := &simNode{h: h, now: time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)}
	h.SetClock(func() time.Time { return n.now })
	n.smb = smb.NewService(h.SMB(), paths)
	n.maps = smbmappings.NewService(h.SMBMappingsGroup(), n.smb, paths)
	n.maps.SetNow(func() time.Time { return n.now })
	n.fs = filesystem.NewService(h.Filesystem(), paths)
	return n
}

// stage maps remote for the node and links local to it, as csi-driver-smb's
// NodeStageVolume does through the SMB group.
func (n *simNode) stage(t *testing.T, remote, local string) {
	t.Helper()
	_, err := n.smb.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{RemotePath: remote, LocalPath: local, Username: `CORP\csi`, Password: password})
	simtest.Must(t, err)
}

func (n *simNode) list(t *testing.T) map[string]smbmappings.SmbGlobalMapping {
	t.Helper()
	r, err := n.maps.ListSmbGlobalMappings(ctx, &smbmappings.ListSmbGlobalMappingsRequest{})
	simtest.Must(t, err)
	out := map[string]smbmappings.SmbGlobalMapping{}
	for _, m := range r.Mappings {
		out[m.RemotePath] = *m
	}
	if !slices.IsSortedFunc(r.Mappings, func(a, b *smbmappings.SmbGlobalMapping) int { return strings.Compare(a.RemotePath, b.RemotePath) }) {
		t.Errorf("List is not sorted by remote path: %+v", r.Mappings)
	}
	return out
}

// TestSimListShowsStatusLinksAndAge: two volumes on one share are one
// mapping with two links; a mapping made without a link is listed with
// none; ages come from the host's clock; a link into a share no mapping
// serves is reported Missing.
func TestSimListShowsStatusLinksAndAge(t *testing.T) {
	n := newSimNode(t)
	n.stage(t, `\\files\vols\pvc-1`, staging+`pv-a\mount`)
	n.advance(time.Minute)
	n.stage(t, `\\FILES\vols\pvc-2`, staging+`pv-b\mount`)
	_, err := n.smb.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{RemotePath: `\\files\old`, Username: `CORP\csi`, Password: password})
	simtest.Must(t, err)
	n.advance(time.Minute)

	got := n.list(t)
	if len(got) != 2 {
		t.Fatalf("List = %+v; want two mappings", got)
	}
	vols := got[`\\files\vols`]
	if vols.Status != smbmappings.StatusOK || vols.AgeSeconds != 120 || vols.AgeIsFirstSeen {
		t.Errorf(`\\files\vols = %+v; want OK, 120 s old by the host's record`, vols)
	}
	if want := []string{staging + `pv-a\mount`, staging + `pv-b\mount`}; !slices.Equal(vols.Links, want) {
		t.Errorf(`links into \\files\vols = %q; want %q`, vols.Links, want)
	}
	if old := got[`\\files\old`]; len(old.Links) != 0 || old.AgeSeconds != 60 {
		t.Errorf(`\\files\old = %+v; want no links, 60 s old`, old)
	}
	if c, ok := n.maps.Census(); !ok || c.Mappings != 2 || c.NotOK != 0 {
		t.Errorf("Census = %+v, %v; want 2 mappings, 0 not OK", c, ok)
	}

	// Removing the mapping behind the links leaves them: Missing.
	_, err = n.smb.RemoveSmbGlobalMapping(ctx, &smb.RemoveSmbGlobalMappingRequest{RemotePath: `\\files\vols`})
	simtest.Must(t, err)
	if m := n.list(t)[`\\files\vols`]; m.Status != smbmappings.StatusMissing || len(m.Links) != 2 {
		t.Errorf(`after removing the mapping, \\files\vols = %+v; want Missing with its two links`, m)
	}
}

// TestSimRebootThenReconcile is csi-driver-smb#1219's node: after a
// reboot the mappings are Disconnected and the links behind them dead.
// Reconcile re-creates the one links use, with the request's
// credentials, leaves the unreferenced one, and a wrong password changes
// nothing and does not leak.
func TestSimRebootThenReconcile(t *testing.T) {
	n := newSimNode(t)
	n.stage(t, `\\files\vols\pvc-1`, staging+`pv-a\mount`)
	_, err := n.smb.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{RemotePath: `\\files\old`, Username: `CORP\csi`, Password: password})
	simtest.Must(t, err)
	n.h.RebootSMB()

	got := n.list(t)
	if got[`\\files\vols`].Status != smbmappings.StatusDisconnected || got[`\\files\old`].Status != smbmappings.StatusDisconnected {
		t.Fatalf("after a reboot List = %+v; want both Disconnected", got)
	}
	if c, _ := n.maps.Census(); c.NotOK != 2 {
		t.Errorf("Census = %+v; want 2 not OK", c)
	}
	if r, err := n.fs.IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: staging + `pv-a\mount`}); err != nil || r.IsSymlink {
		t.Fatalf("before reconcile the link resolves (%+v, %v); the reboot model is wrong", r, err)
	}

	_, err = n.maps.ReconcileSmbGlobalMapping(ctx, &smbmappings.ReconcileSmbGlobalMappingRequest{RemotePath: `\\files\vols`, Username: `CORP\csi`, Password: "wrong"})
	simtest.WantKind(t, err, errdefs.ErrPermissionDenied)
	if strings.Contains(err.Error(), "wrong") {
		t.Errorf("the error %q quotes the password", err)
	}

	r, err := n.maps.ReconcileSmbGlobalMapping(ctx, &smbmappings.ReconcileSmbGlobalMappingRequest{RemotePath: `\\files\vols\pvc-1`, Username: `CORP\csi`, Password: password})
	simtest.Must(t, err)
	if r.Action != smbmappings.ActionRecreated || r.PreviousStatus != smbmappings.StatusDisconnected || r.RemotePath != `\\files\vols` || len(r.Links) != 1 {
		t.Errorf("Reconcile = %+v; want Recreated from Disconnected with one link", r)
	}
	if r, err := n.fs.IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: staging + `pv-a\mount`}); err != nil || !r.IsSymlink {
		t.Errorf("after reconcile the link does not resolve: %+v, %v", r, err)
	}
	// Again: healthy now, nothing done.
	r, err = n.maps.ReconcileSmbGlobalMapping(ctx, &smbmappings.ReconcileSmbGlobalMappingRequest{RemotePath: `\\files\vols`, Username: `CORP\csi`, Password: password})
	simtest.Must(t, err)
	if r.Action != smbmappings.ActionHealthy {
		t.Errorf("second Reconcile = %+v; want Healthy", r)
	}
	// The unreferenced one is left for Collect.
	r, err = n.maps.ReconcileSmbGlobalMapping(ctx, &smbmappings.ReconcileSmbGlobalMappingRequest{RemotePath: `\\files\old`, Username: `CORP\csi`, Password: password})
	simtest.Must(t, err)
	if r.Action != smbmappings.ActionUnreferenced {
		t.Errorf("Reconcile of an unreferenced mapping = %+v; want Unreferenced", r)
	}
	if got := n.list(t); got[`\\files\old`].Status != smbmappings.StatusDisconnected {
		t.Errorf(`Reconcile touched the unreferenced mapping: %+v`, got[`\\files\old`])
	}
}

// TestSimReconcileCreatesMissingMapping: links survive a mapping that is
// gone (a non-persistent mapping after a reboot); Reconcile makes it.
func TestSimReconcileCreatesMissingMapping(t *testing.T) {
	n := newSimNode(t)
	n.stage(t, `\\files\vols\pvc-1`, staging+`pv-a\mount`)
	_, err := n.smb.RemoveSmbGlobalMapping(ctx, &smb.RemoveSmbGlobalMappingRequest{RemotePath: `\\files\vols`})
	simtest.Must(t, err)
	r, err := n.maps.ReconcileSmbGlobalMapping(ctx, &smbmappings.ReconcileSmbGlobalMappingRequest{RemotePath: `\\files\vols`, Username: `CORP\csi`, Password: password})
	simtest.Must(t, err)
	if r.Action != smbmappings.ActionCreated || r.PreviousStatus != smbmappings.StatusMissing {
		t.Errorf("Reconcile = %+v; want Created from Missing", r)
	}
	if m := n.h.SMBMappings(); len(m) != 1 || m[0].Status != simulated.SMBOK {
		t.Errorf("mappings = %+v; want one OK", m)
	}
}

// TestSimCollectRemovesOnlyOldUnreferenced: Collect keeps what links use
// and what is younger than the grace period, dry-run removes nothing, and
// a mapping a link was made to meanwhile is kept.
func TestSimCollectRemovesOnlyOldUnreferenced(t *testing.T) {
	n := newSimNode(t)
	n.stage(t, `\\files\vols\pvc-1`, staging+`pv-a\mount`)
	for _, share := range []string{`\\files\old`, `\\nas2\data`} {
		_, err := n.smb.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{RemotePath: share, Username: `CORP\csi`, Password: password})
		simtest.Must(t, err)
	}
	n.advance(20 * time.Minute)
	_, err := n.smb.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{RemotePath: `\\files\vols`, Username: `CORP\csi`, Password: password})
	simtest.Must(t, err)
	simtest.Must(t, n.h.SetSMBStatus(`\\nas2\data`, simulated.SMBUnavailable))

	dry, err := n.maps.CollectSmbGlobalMappings(ctx, &smbmappings.CollectSmbGlobalMappingsRequest{DryRun: true})
	simtest.Must(t, err)
	if names(dry.Removed) != `\\files\old \\nas2\data` {
		t.Errorf("dry run would remove %q; want the two unreferenced 20-minute-old mappings", names(dry.Removed))
	}
	if len(n.h.SMBMappings()) != 3 {
		t.Fatalf("a dry run removed mappings: %+v", n.h.SMBMappings())
	}

	// A link made after the dry run keeps \\files\old.
	n.stage(t, `\\files\old`, staging+`pv-b\mount`)
	r, err := n.maps.CollectSmbGlobalMappings(ctx, &smbmappings.CollectSmbGlobalMappingsRequest{})
	simtest.Must(t, err)
	if names(r.Removed) != `\\nas2\data` || len(r.KeptYoung) != 0 {
		t.Errorf("Collect removed %q, kept young %q; want only \\\\nas2\\data", names(r.Removed), names(r.KeptYoung))
	}
	if got := n.h.SMBMappings(); len(got) != 2 {
		t.Errorf("after Collect the mappings are %+v; want \\\\files\\old and \\\\files\\vols", got)
	}
	if c, _ := n.maps.Census(); c.Mappings != 2 || c.NotOK != 0 {
		t.Errorf("Census after Collect = %+v; want 2 mappings, none not OK", c)
	}

	// A fresh unreferenced mapping is kept by the default grace period,
	// and a short grace lets it go.
	_, err = n.smb.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{RemotePath: `\\nas2\data`, Username: `CORP\csi`, Password: password})
	simtest.Must(t, err)
	n.advance(time.Minute)
	r, err = n.maps.CollectSmbGlobalMappings(ctx, &smbmappings.CollectSmbGlobalMappingsRequest{})
	simtest.Must(t, err)
	if len(r.Removed) != 0 || names(r.KeptYoung) != `\\nas2\data` {
		t.Errorf("Collect of a 1-minute-old mapping: removed %q, kept %q; want it kept", names(r.Removed), names(r.KeptYoung))
	}
	r, err = n.maps.CollectSmbGlobalMappings(ctx, &smbmappings.CollectSmbGlobalMappingsRequest{GraceSeconds: 30})
	simtest.Must(t, err)
	if names(r.Removed) != `\\nas2\data` {
		t.Errorf("Collect with 30 s grace removed %q; want \\\\nas2\\data", names(r.Removed))
	}
}

func TestSimCollectRefusesBadGrace(t *testing.T) {
	n := newSimNode(t)
	for _, g := range []int64{-1, smbmappings.MaxGraceSeconds + 1} {
		_, err := n.maps.CollectSmbGlobalMappings(ctx, &smbmappings.CollectSmbGlobalMappingsRequest{GraceSeconds: g})
		simtest.WantKind(t, err, errdefs.ErrInvalidArgument)
	}
	_, err := n.maps.ReconcileSmbGlobalMapping(ctx, &smbmappings.ReconcileSmbGlobalMappingRequest{RemotePath: `C:\not\a\share`})
	simtest.WantKind(t, err, errdefs.ErrInvalidArgument)
	_, err = n.maps.ReconcileSmbGlobalMapping(ctx, &smbmappings.ReconcileSmbGlobalMappingRequest{RemotePath: `\\files\vols`, Username: "a|b"})
	simtest.WantKind(t, err, errdefs.ErrInvalidArgument)
}

func names(ms []*smbmappings.SmbGlobalMapping) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.RemotePath)
	}
	return strings.Join(out, " ")
}

// TestShareOfLinkTarget: every form a link into a share is stored in.
func TestShareOfLinkTarget(t *testing.T) {
	for target, want := range map[string]string{
		`\\Server\Share\pvc-1\`:     `\\server\share`,
		`\\?\UNC\server\share\x`:    `\\server\share`,
		`\??\UNC\server\share`:      `\\server\share`,
		`\\?\\\server\share\pvc\`:   `\\server\share`,
		`//server/share/dir`:        `\\server\share`,
		`C:\var\lib\kubelet\x`:      "",
		`\\?\Volume{1234}\`:         "",
		`\\.\pipe\csi-proxy-smb-v1`: "",
		`\\server`:                  "",
		`\\?\UNC\server\sh;are\x`:   "",
	} {
		got, ok := smbmappings.ShareOfLinkTarget(target)
		if got != want || ok != (want != "") {
			t.Errorf("ShareOfLinkTarget(%q) = %q, %v; want %q", target, got, ok, want)
		}
	}
}

// TestSimCollectEndsError1219 is the error-1219 node: a leaked mapping of
// one share of a server under one user blocks every mapping of another
// share there under another user; Collect removes the leak and the next
// stage succeeds.
func TestSimCollectEndsError1219(t *testing.T) {
	n := newSimNode(t)
	_, err := n.smb.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{RemotePath: `\\files\old`, Username: `CORP\csi`, Password: password})
	simtest.Must(t, err)
	n.advance(time.Hour)
	bob := &smb.NewSmbGlobalMappingRequest{RemotePath: `\\files\bob`, LocalPath: staging + `pv-a\mount`, Username: `CORP\bob`, Password: password}
	_, err = n.smb.NewSmbGlobalMapping(ctx, bob)
	simtest.WantKind(t, err, errdefs.ErrAlreadyExists)
	r, err := n.maps.CollectSmbGlobalMappings(ctx, &smbmappings.CollectSmbGlobalMappingsRequest{})
	simtest.Must(t, err)
	if names(r.Removed) != `\\files\old` {
		t.Fatalf("Collect removed %q; want the leaked \\\\files\\old", names(r.Removed))
	}
	_, err = n.smb.NewSmbGlobalMapping(ctx, bob)
	simtest.Must(t, err)
}
