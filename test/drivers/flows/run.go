package flows

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// flowTimeout bounds one flow.
const flowTimeout = 60 * time.Second

// csiNames are the drivers' CSI names, as they appear in kubelet paths.
var csiNames = map[string]string{
	"azuredisk": "disk.csi.azure.com",
	"aws-ebs":   "ebs.csi.aws.com",
	"gcp-pd":    "pd.csi.storage.gke.io",
	"vsphere":   "csi.vsphere.vmware.com",
	"smb":       "smb.csi.k8s.io",
}

// Run runs every flow of every driver in every environment of the plan
// against p, as subtests named <env>/<driver>/<CSI call>/<case>. The host
// behind p must hold p's Fixture.
func (pl *Plan) Run(t *testing.T, p Proxy) {
	pl.RunApplicable(t, p, func(FlowID) string { return "" })
}

func (pl *Plan) runBlock(t *testing.T, p Proxy, node groups.Node, e int, env Env, d int, name string, s int, sc blockScenario) {
	ctx, cancel := context.WithTimeout(context.Background(), flowTimeout)
	defer cancel()
	tr := newTracer(p)
	b := base{p: tr.proxy(), env: env, loc: env.local(tr)}
	var drv blockDriver
	switch {
	case node != nil:
		md := newMounterBlock(tr, node, b, name, pl.newMounter)
		defer md.log.check(t)
		drv = md
	default:
		switch name {
		case "azuredisk":
			var flush error
			drv = azureDisk{base: b, flush: &flush}
		case "aws-ebs":
			drv = awsEBS{b}
		case "gcp-pd":
			drv = gcpPD{b}
		case "vsphere":
			drv = vSphere{b}
		}
	}
	n := pl.diskNumber(e, d, s)
	v := &Vol{
		VolumeID:   fmt.Sprintf("%s-volume-%d", name, n),
		LUN:        strconv.Itoa(int(pl.lun(n))),
		DeviceName: gcpDeviceName(n),
		DiskUUID:   vsphereUUID(n),
		Disk:       n,
		DiskSize:   DiskSize,
	}
	if name == "aws-ebs" {
		v.VolumeID = awsVolumeID(n)
	}
	v.Staging, v.Publish = kubeletPaths(env, csiNames[name], v.VolumeID, "pvc-"+v.VolumeID)
	sc.run(&blockRun{flowRun: flowRun{t: t, ctx: ctx, env: env, tr: tr}, drv: drv, v: v})
}

// flowRun is what a block flow and an SMB flow both do around the driver:
// the kubelet's own directory work and the probes of the host, which go
// through the untraced proxy so that they never count as the driver's
// calls.
type flowRun struct {
	t   *testing.T
	ctx context.Context
	env Env
	tr  *tracer
}

// raw is the untraced proxy the flows probe the host with.
func (s *flowRun) raw() Proxy { return s.tr.p }

// mkdirAll is the kubelet's MkdirAll.
func (s *flowRun) mkdirAll(path string) {
	s.t.Helper()
	if err := s.env.kubeletMkdirAll(s.ctx, s.tr, path); err != nil {
		s.t.Fatalf("kubelet MkdirAll(%s): %v", path, err)
	}
}

// exists probes the host for path.
func (s *flowRun) exists(path string) bool {
	s.t.Helper()
	r, err := s.raw().Filesystem.PathExists(s.ctx, &filesystem.PathExistsRequest{Path: s.env.resolve(path)})
	if err != nil {
		s.t.Fatalf("PathExists(%s): %v", path, err)
	}
	return r.Exists
}

// blockRun is one flow of a block driver.
type blockRun struct {
	flowRun
	drv blockDriver
	v   *Vol
}

// stage is the kubelet's NodeStageVolume: MkdirAll of the staging dir, then
// NodeStage until it succeeds. A failed attempt is allowed only at the
// driver's known defect (once, on a fresh disk) or at an answer the flow
// made the proxy lose; anything else fails the flow at its step.
func (s *blockRun) stage(fresh bool) {
	s.t.Helper()
	s.mkdirAll(s.v.Staging)
	known := s.drv.KnownStageFailure()
	sawKnown := false
	for attempt := 1; attempt <= 4; attempt++ {
		err := s.drv.NodeStage(s.ctx, s.v)
		if err == nil {
			if fresh && known != "" && !sawKnown {
				s.t.Errorf("NodeStageVolume: %s succeeded; upstream csi-proxy refuses it, so the driver's first NodeStage fails there", known)
			}
			s.probeStaged()
			return
		}
		switch step := failedStep(err); {
		case step == known && !sawKnown:
			sawKnown = true
			s.t.Logf("NodeStageVolume attempt %d failed at %s, the driver's known defect (upstream fails it too): %v; kubelet retries", attempt, step, err)
		case errors.Is(err, ErrAnswerLost):
			s.t.Logf("NodeStageVolume attempt %d: the answer of %s was lost; kubelet retries", attempt, step)
		default:
			s.t.Fatalf("NodeStageVolume (attempt %d) fails at step %s: %v", attempt, step, err)
		}
	}
	s.t.Fatalf("NodeStageVolume still failing after 4 attempts")
}

// volumeAt probes the host for the volume mounted at path and its disk.
func (s *blockRun) volumeAt(path string) (string, uint32, error) {
	id, err := s.raw().Volume.GetVolumeIDFromTargetPath(s.ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: s.env.resolve(path)})
	if err != nil {
		return "", 0, err
	}
	n, err := s.raw().Volume.GetDiskNumberFromVolumeID(s.ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: id.VolumeID})
	if err != nil {
		return id.VolumeID, 0, err
	}
	return id.VolumeID, n.DiskNumber, nil
}

// probeStaged checks what a staged volume must look like: a formatted
// volume of the right disk mounted at the staging path, the disk online.
func (s *blockRun) probeStaged() {
	s.t.Helper()
	id, n, err := s.volumeAt(s.v.Staging)
	if err != nil {
		s.t.Fatalf("after NodeStageVolume: no volume at the staging path: %v", err)
	}
	if n != s.v.Disk {
		s.t.Fatalf("after NodeStageVolume: the staging path holds a volume of disk %d, want disk %d", n, s.v.Disk)
	}
	f, err := s.raw().Volume.IsVolumeFormatted(s.ctx, &volume.IsVolumeFormattedRequest{VolumeID: id})
	if err != nil || !f.Formatted {
		s.t.Errorf("after NodeStageVolume: volume formatted = %v, %v", f, err)
	}
	st, err := s.raw().Disk.GetDiskState(s.ctx, &disk.GetDiskStateRequest{DiskNumber: s.v.Disk})
	if err != nil || !st.IsOnline {
		s.t.Errorf("after NodeStageVolume: disk online = %v, %v", st, err)
	}
}

// countSince counts calls of method since mark m.
func (s *blockRun) countSince(m int, method string) int {
	n := 0
	for _, c := range s.tr.since(m) {
		if c == method {
			n++
		}
	}
	return n
}

// publish is the kubelet's NodePublishVolume: MkdirAll of the pod
// volume's parent, then NodePublish; the pod then sees the volume.
func (s *blockRun) publish() {
	s.t.Helper()
	s.mkdirAll(s.env.parent(s.v.Publish))
	if err := s.drv.NodePublish(s.ctx, s.v); err != nil {
		s.t.Fatalf("NodePublishVolume fails: %v", err)
	}
	ln, err := s.raw().Filesystem.IsSymlink(s.ctx, &filesystem.IsSymlinkRequest{Path: s.env.resolve(s.v.Publish)})
	if err != nil || !ln.IsSymlink {
		s.t.Fatalf("after NodePublishVolume: the publish path is not a link: %v, %v", ln, err)
	}
}

func (s *blockRun) unpublish() {
	s.t.Helper()
	if err := s.drv.NodeUnpublish(s.ctx, s.v); err != nil {
		s.t.Fatalf("NodeUnpublishVolume fails: %v", err)
	}
	if s.exists(s.v.Publish) {
		s.t.Errorf("after NodeUnpublishVolume: the publish path is still there")
	}
}

// unstage is NodeUnstageVolume of a staged volume: the staging path goes,
// the disk goes offline when the driver does that, and a flush the driver
// would only log must not have failed.
func (s *blockRun) unstage() {
	s.t.Helper()
	if err := s.drv.NodeUnstage(s.ctx, s.v); err != nil {
		s.t.Fatalf("NodeUnstageVolume fails: %v", err)
	}
	if sr, ok := s.drv.(interface{ SilentFailure() error }); ok {
		if err := sr.SilentFailure(); err != nil {
			s.t.Errorf("NodeUnstageVolume: the flush before unmount failed, which the driver only logs (data may be lost): %v", err)
		}
	}
	if s.exists(s.v.Staging) {
		s.t.Errorf("after NodeUnstageVolume: the staging path is still there")
	}
	if s.drv.TakesDiskOffline() {
		st, err := s.raw().Disk.GetDiskState(s.ctx, &disk.GetDiskStateRequest{DiskNumber: s.v.Disk})
		if err != nil || st.IsOnline {
			s.t.Errorf("after NodeUnstageVolume: disk online = %v, %v; the driver took it offline", st, err)
		}
	}
}

// blockScenarios are the flows every block driver runs.
var blockScenarios = []blockScenario{
	{name: "NodeStageVolume/first-stage-raw", disk: true, run: func(s *blockRun) {
		m := s.tr.mark()
		s.stage(true)
		if got := s.countSince(m, "FormatVolume"); got != 1 {
			s.t.Errorf("NodeStageVolume of a RAW disk formatted it %d times, want 1", got)
		}
	}},
	{name: "NodeStageVolume/arrives-offline", disk: true, offline: true, run: func(s *blockRun) {
		s.stage(true)
	}},
	{name: "NodeStageVolume/restage-after-unstage", disk: true, run: func(s *blockRun) {
		s.stage(true)
		s.unstage()
		m := s.tr.mark()
		s.stage(false)
		if got := s.countSince(m, "FormatVolume"); got != 0 {
			s.t.Errorf("re-staging formatted the volume again (%d FormatVolume): data lost", got)
		}
	}},
	{name: "NodeStageVolume/retry-after-lost-answer", disk: true, offline: true, run: func(s *blockRun) {
		// The host partitions the disk, the answer never arrives; the
		// retry partitions an already partitioned disk.
		s.tr.loseAnswer("PartitionDisk", 1)
		m := s.tr.mark()
		s.stage(true)
		if got := s.countSince(m, "PartitionDisk"); got < 2 {
			s.t.Errorf("PartitionDisk called %d times; the lost answer should have made the driver retry it", got)
		}
		if got := s.countSince(m, "FormatVolume"); got != 1 {
			s.t.Errorf("FormatVolume called %d times over the retries, want 1", got)
		}
	}},
	{name: "NodePublishVolume", disk: true, run: func(s *blockRun) {
		s.stage(true)
		s.publish()
	}},
	{name: "NodeGetVolumeStats/publish-path", disk: true, run: func(s *blockRun) {
		s.stage(true)
		s.publish()
		st, err := s.drv.NodeGetVolumeStats(s.ctx, s.v)
		if err != nil {
			s.t.Fatalf("NodeGetVolumeStats on the publish path fails: %v", err)
		}
		if st.OnlyExistence {
			s.t.Logf("the driver reads the numbers itself (GetDiskFreeSpaceEx); only PathExists went through csi-proxy")
			return
		}
		if st.Total <= 0 || st.Total > s.v.DiskSize || st.Used < 0 || st.Used > st.Total || st.Available != st.Total-st.Used {
			s.t.Errorf("NodeGetVolumeStats = %+v for a %d-byte disk", st, s.v.DiskSize)
		}
	}},
	{name: "NodeExpandVolume/publish-path", disk: true, run: func(s *blockRun) {
		s.stage(true)
		s.publish()
		capacity, err := s.drv.NodeExpand(s.ctx, s.v, s.v.DiskSize)
		if err != nil {
			s.t.Fatalf("NodeExpandVolume on the publish path fails: %v", err)
		}
		if roundUpGiB(capacity) < roundUpGiB(s.v.DiskSize) {
			s.t.Errorf("NodeExpandVolume reports %d bytes for %d asked", capacity, s.v.DiskSize)
		}
	}},
	{name: "NodeUnpublishVolume", disk: true, run: func(s *blockRun) {
		s.stage(true)
		s.publish()
		s.unpublish()
		if _, n, err := s.volumeAt(s.v.Staging); err != nil || n != s.v.Disk {
			s.t.Errorf("after NodeUnpublishVolume: the staging mount is damaged: disk %d, %v", n, err)
		}
	}},
	{name: "NodeUnstageVolume/mounted", disk: true, run: func(s *blockRun) {
		s.stage(true)
		s.publish()
		s.unpublish()
		s.unstage()
	}},
	{name: "NodeUnstageVolume/left-behind", run: func(s *blockRun) {
		// The kubelet made the staging dir, NodeStage never mounted it
		// (it answered an error kubelet then gave up on).
		s.mkdirAll(s.v.Staging)
		err := s.drv.NodeUnstage(s.ctx, s.v)
		if !s.drv.LeftBehindUnstageFails() {
			if err != nil {
				s.t.Fatalf("NodeUnstageVolume of an unmounted staging dir fails: %v", err)
			}
			if c, ok := s.drv.(interface{ CleansLeftBehind() bool }); ok && c.CleansLeftBehind() && s.exists(s.v.Staging) {
				s.t.Errorf("after NodeUnstageVolume: the unmounted staging dir is still there")
			}
			return
		}
		// The driver fails on any error here, upstream's included.
		if err == nil || failedStep(err) != "GetVolumeIDFromTargetPath" {
			s.t.Fatalf("NodeUnstageVolume = %v; the driver fails at GetVolumeIDFromTargetPath on an unmounted dir (upstream too)", err)
		}
		s.t.Logf("the driver's NodeUnstageVolume fails here on upstream csi-proxy too (kubelet retries until the dir is removed): %v", err)
	}},
	{name: "NodeUnstageVolume/already-gone", run: func(s *blockRun) {
		if err := s.drv.NodeUnstage(s.ctx, s.v); err != nil {
			s.t.Fatalf("NodeUnstageVolume of a staging path that is gone fails: %v", err)
		}
	}},
}

// smbNodeDriver is csi-driver-smb's node code: its own (smbDriver) or
// through the mounter (mounterSMB).
type smbNodeDriver interface {
	NodeStage(ctx context.Context, v *Vol) error
	NodePublish(ctx context.Context, v *Vol) error
	NodeUnpublish(ctx context.Context, v *Vol) error
	// NodeUnstage also tells whether it removed the share's mapping.
	NodeUnstage(ctx context.Context, v *Vol) (removed bool, err error)
}

// smbRun is one flow of csi-driver-smb on its own share.
type smbRun struct {
	flowRun
	drv      smbNodeDriver
	share    string
	scenario int
}

// vol returns the volume for directory dir of the share, with the given
// secret user name and domain.
func (s *smbRun) vol(dir, user, domain string) *Vol {
	v := &Vol{
		// csi-driver-smb's volume handle form: server/share#subdir#...
		VolumeID: strings.TrimPrefix(strings.ReplaceAll(s.share, `\`, "/"), "//") + "#" + dir + "#" + s.env.Name,
		Source:   strings.ReplaceAll(s.share, `\`, "/"), SubDir: dir,
		Username: user, Domain: domain, Password: SMBPassword,
	}
	v.Staging, v.Publish = kubeletPaths(s.env, csiNames["smb"], v.VolumeID, "pv-"+dir)
	return v
}

// stage is the kubelet's NodeStageVolume: MkdirAll of the staging dir,
// then NodeStage; the staging link must then resolve.
func (s *smbRun) stage(v *Vol) {
	s.t.Helper()
	s.mkdirAll(v.Staging)
	if err := s.drv.NodeStage(s.ctx, v); err != nil {
		s.t.Fatalf("NodeStageVolume of %s as %q fails: %v", v.SubDir, smbUser(v.Username, v.Domain), err)
	}
	if !s.exists(v.Staging) {
		s.t.Fatalf("after NodeStageVolume: the staging link does not resolve")
	}
}

// unstage is NodeUnstageVolume; wantRemoved says whether it must have
// removed the share's mapping (the last volume of the share).
func (s *smbRun) unstage(v *Vol, wantRemoved bool) {
	s.t.Helper()
	removed, err := s.drv.NodeUnstage(s.ctx, v)
	if err != nil {
		s.t.Fatalf("NodeUnstageVolume of %s fails: %v", v.SubDir, err)
	}
	if removed != wantRemoved {
		s.t.Errorf("NodeUnstageVolume of %s: RemoveSmbGlobalMapping called = %v, want %v", v.SubDir, removed, wantRemoved)
	}
	if s.exists(v.Staging) {
		s.t.Errorf("after NodeUnstageVolume: the staging path is still there")
	}
}

// mappingGone proves the share is no longer mapped: with a mapping in
// place, NewSmbGlobalMapping reuses it whatever the password (upstream);
// without, a wrong password is refused.
func (s *smbRun) mappingGone() {
	s.t.Helper()
	_, err := s.raw().SMB.NewSmbGlobalMapping(s.ctx, &smb.NewSmbGlobalMappingRequest{RemotePath: s.share, Username: SMBUser, Password: "wrong password"})
	if err == nil {
		s.t.Errorf("the mapping of %s survived its last volume's NodeUnstageVolume", s.share)
	}
}

// publish is the kubelet's NodePublishVolume: MkdirAll of the pod
// volume's parent, then NodePublish; the pod's path must then resolve.
func (s *smbRun) publish(v *Vol) {
	s.t.Helper()
	s.mkdirAll(s.env.parent(v.Publish))
	if err := s.drv.NodePublish(s.ctx, v); err != nil {
		s.t.Fatalf("NodePublishVolume fails: %v", err)
	}
	if !s.exists(v.Publish) {
		s.t.Fatalf("after NodePublishVolume: the pod's path does not resolve")
	}
}

// unpublish is NodeUnpublishVolume.
func (s *smbRun) unpublish(v *Vol) {
	s.t.Helper()
	if err := s.drv.NodeUnpublish(s.ctx, v); err != nil {
		s.t.Fatalf("NodeUnpublishVolume fails: %v", err)
	}
}

// stageTwo stages two volumes of the share for the same account: pvc-1 as
// CONTOSO\csi, then pvc-2 with the given domain.
func (s *smbRun) stageTwo(domain2 string) (v1, v2 *Vol) {
	s.t.Helper()
	v1 = s.vol("pvc-1", "csi", "CONTOSO")
	v2 = s.vol("pvc-2", "csi", domain2)
	s.stage(v1)
	s.stage(v2)
	return v1, v2
}

// unstageInTurn unstages two staged volumes of the share: first must leave
// the mapping in place and last's volume working, last must remove it.
func (s *smbRun) unstageInTurn(first, last *Vol) {
	s.t.Helper()
	s.unstage(first, false)
	if !s.exists(last.Staging) {
		s.t.Fatalf("unstaging one volume broke the other volume of the same share")
	}
	s.unstage(last, true)
	s.mappingGone()
}

// smbScenarios are csi-driver-smb's flows; each has its own share.
var smbScenarios = []smbScenario{
	{name: "NodeStageVolume/first-mapping", run: func(s *smbRun) {
		v := s.vol("pvc-1", "csi", "CONTOSO")
		s.stage(v)
	}},
	{name: "NodePublishVolume", run: func(s *smbRun) {
		v := s.vol("pvc-1", "csi", "CONTOSO")
		s.stage(v)
		s.publish(v)
	}},
	{name: "NodeUnpublishVolume", run: func(s *smbRun) {
		v := s.vol("pvc-1", "csi", "CONTOSO")
		s.stage(v)
		s.publish(v)
		s.unpublish(v)
		if s.exists(v.Publish) || !s.exists(v.Staging) {
			s.t.Errorf("after NodeUnpublishVolume: publish path exists = %v, staging link resolves = %v; want false, true",
				s.exists(v.Publish), s.exists(v.Staging))
		}
	}},
	{name: "NodeUnstageVolume/last-volume-removes-mapping", run: func(s *smbRun) {
		v := s.vol("pvc-1", "csi", "CONTOSO")
		s.stage(v)
		s.publish(v)
		s.unpublish(v)
		s.unstage(v, true)
		s.mappingGone()
	}},
	{name: "SMB/several-volumes-one-share", run: func(s *smbRun) {
		v1, v2 := s.stageTwo("CONTOSO")
		s.unstageInTurn(v1, v2)
	}},
	{name: "SMB/credentials-spelled-differently", run: func(s *smbRun) {
		// Two secrets name the same account two ways: NetBIOS domain
		// (CONTOSO\csi) and DNS domain (contoso.local\csi). Upstream
		// reuses any mapping whose status is OK.
		v1, v2 := s.stageTwo("contoso.local")
		s.unstageInTurn(v2, v1)
	}},
	{name: "NodeUnstageVolume/left-behind", run: func(s *smbRun) {
		v := s.vol("pvc-1", "csi", "CONTOSO")
		s.mkdirAll(v.Staging)
		s.unstage(v, false)
	}},
	{name: "NodeUnstageVolume/already-gone", run: func(s *smbRun) {
		s.unstage(s.vol("pvc-1", "csi", "CONTOSO"), false)
	}},
}
