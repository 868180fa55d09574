package flows

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/groups"
)

// DiskSize is the size of every data disk of the fixture: 1 GiB, the
// smallest Azure/GCE/EBS disk, so that the drivers' GiB rounding matters.
const DiskSize = 1 << 30

// BIOSSerial is the fixture's BIOS serial number, in the form VMware VMs
// report it; VMUUID is what vsphere-csi-driver turns it into.
const (
	BIOSSerial = "VMware-42 1c 2b 3d 4e 5f 60 71-82 93 a4 b5 c6 d7 e8 f9"
	VMUUID     = "421c2b3d-4e5f-6071-8293-a4b5c6d7e8f9"
)

// SMB account of every fixture share.
const (
	SMBUser     = `CONTOSO\csi`
	SMBPassword = "Secr3t!pw"
)

// DiskFixture is one data disk the host must have at start.
type DiskFixture struct {
	// Number is the disk number.
	Number uint32
	// Size is the size in bytes (DiskSize).
	Size int64
	// Location is "adapter:bus:target:lun"; the LUN is the disk number
	// (less 1000 in a mounter plan, see lun), unique on the node.
	Location string
	// Page83 and Serial are what ListDiskIDs must report.
	Page83, Serial string
	// Offline attaches the disk offline (SAN policy OfflineShared).
	Offline bool
	// Flow is the flow the disk belongs to, so that a runner whose host
	// carries out only some flows builds only their disks.
	Flow FlowID
}

// ShareFixture is one SMB share the network must offer.
type ShareFixture struct {
	// Path is \\server\share; each scenario has its own server, as
	// Windows allows one user name per server.
	Path string
	// Username and Password are the account allowed to map it.
	Username, Password string
	// Dirs exist on the share (one per volume).
	Dirs []string
	// Flow is the flow the share belongs to.
	Flow FlowID
}

// Fixture is the world a runner must build before Plan.Run: RAW data disks
// (no partition table) online unless Offline, the shares, the BIOS serial.
// The host's kubelet directory is `C:\var\lib\kubelet` on Windows-style
// hosts (or whatever KubeletDir the runner's Env names on others).
type Fixture struct {
	Disks      []DiskFixture
	Shares     []ShareFixture
	BIOSSerial string
}

// blockScenario is a flow of a block driver; disk tells whether it needs a
// disk of its own and offline whether that disk arrives offline.
type blockScenario struct {
	name    string
	disk    bool
	offline bool
	run     func(s *blockRun)
}

// smbScenario is a flow of csi-driver-smb.
type smbScenario struct {
	name string
	run  func(s *smbRun)
}

// Plan ties environments, the fixture and the flows together: each
// (environment, driver, flow) gets disks and shares of its own, so flows
// never see each other's state and run in any order on one host.
type Plan struct {
	envs []Env
	// viaMounter runs the drivers' node operations through client/mounter
	// (NewMounterPlan) instead of their own raw calls.
	viaMounter bool
	// newMounter makes the mounters of a mounter plan's flows.
	newMounter NewMounter
}

// NewPlan returns the plan for the given environments (at most 9).
func NewPlan(envs ...Env) *Plan {
	if len(envs) > 9 {
		panic("flows: at most 9 environments")
	}
	return &Plan{envs: envs}
}

// blockDrivers are the names of the block drivers, in disk-number order.
var blockDrivers = []string{"azuredisk", "aws-ebs", "gcp-pd", "vsphere"}

// mounterDiskBase is added to the disk numbers of a mounter plan, so that
// a runner can build one world holding both plans' disks (the Linux
// backend's loop disks) without two flows sharing a disk.
const mounterDiskBase = 1000

// diskNumber is the disk of (environment, driver, scenario).
func (pl *Plan) diskNumber(env, drv, sc int) uint32 {
	n := uint32(10 + env*100 + drv*20 + sc)
	if pl.viaMounter {
		n += mounterDiskBase
	}
	return n
}

// identities of disk n for the driver that owns it.
func diskIdentity(drv string, n uint32) (page83, serial string) {
	switch drv {
	case "aws-ebs":
		return fmt.Sprintf("6002248000000000000000000000%04x", n), awsSerial(n)
	case "gcp-pd":
		// GCE page 0x83 ends with the device name.
		return "Google  PersistentDisk  " + gcpDeviceName(n), gcpDeviceName(n)
	case "vsphere":
		return vsphereUUID(n), fmt.Sprintf("6000c29%025x", n)
	}
	return fmt.Sprintf("60022480%024x", n), fmt.Sprintf("AZ-%04d", n)
}

func awsVolumeID(n uint32) string   { return fmt.Sprintf("vol-0%016x", n) }
func gcpDeviceName(n uint32) string { return fmt.Sprintf("pvc-gce-%04d", n) }
func vsphereUUID(n uint32) string   { return fmt.Sprintf("6000c29%025x", n) }

// awsSerial is the SerialNumber Windows reports for an EBS volume on NVMe:
// the volume ID without its dash, then "_" and the namespace. AWS's own
// PowerShell that maps Windows disks to EBS volumes strips "_[^ ]*$" from
// Get-Disk's SerialNumber before turning "vol" into "vol-" (EC2 User
// Guide, "Map NVMe disks on Amazon EC2 Windows instance to volumes"), and
// aws-ebs matches with strings.Contains (@ 429e202e
// pkg/mounter/mount_windows_proxyV1.go, FindDevicePath). The exact suffix
// ("_00000001.", the namespace ID and a dot as Windows writes NVMe IDs) is
// unconfirmed: it needs a real node.
func awsSerial(n uint32) string { return fmt.Sprintf("vol0%016x_00000001.", n) }

// lun is disk n's SCSI LUN: its number, less mounterDiskBase in a mounter
// plan, since Windows reports a LUN as a byte (the Windows backend's model
// refuses more). Each plan's LUNs are unique in its own world; the one
// runner that holds both worlds (the Linux backend's loop disks) lists no
// LUN at all.
func (pl *Plan) lun(n uint32) uint32 {
	if pl.viaMounter {
		return n - mounterDiskBase
	}
	return n
}

// smbShare is the share of (environment, scenario); a mounter plan's
// servers have names of their own, for the same reason as its disks.
func (pl *Plan) smbShare(env, sc int) string {
	if pl.viaMounter {
		return fmt.Sprintf(`\\smbm-%d-%02d\share`, env, sc)
	}
	return fmt.Sprintf(`\\smb-%d-%02d\share`, env, sc)
}

// Fixture returns the world the plan's flows expect.
func (pl *Plan) Fixture() Fixture {
	f := Fixture{BIOSSerial: BIOSSerial}
	for e := range pl.envs {
		for d, drv := range blockDrivers {
			for s, sc := range blockScenarios {
				if !sc.disk {
					continue
				}
				n := pl.diskNumber(e, d, s)
				page83, serial := diskIdentity(drv, n)
				f.Disks = append(f.Disks, DiskFixture{
					Number: n, Size: DiskSize, Location: fmt.Sprintf("2:0:0:%d", pl.lun(n)),
					Page83: page83, Serial: serial, Offline: sc.offline,
					Flow: FlowID{Env: pl.envs[e].Name, Driver: drv, Name: sc.name},
				})
			}
		}
		for s := range smbScenarios {
			f.Shares = append(f.Shares, ShareFixture{
				Path: pl.smbShare(e, s), Username: SMBUser, Password: SMBPassword,
				Dirs: []string{"pvc-1", "pvc-2"},
				Flow: FlowID{Env: pl.envs[e].Name, Driver: "smb", Name: smbScenarios[s].name},
			})
		}
	}
	return f
}

// kubeletPaths returns the staging and publish paths the kubelet uses for
// a volume (pkg/volume/csi: plugins/kubernetes.io/csi/<driver>/<sha256 of
// the handle>/globalmount and pods/<uid>/volumes/kubernetes.io~csi/<pv>/mount).
func kubeletPaths(e Env, driver, volumeID, pv string) (staging, publish string) {
	sum := fmt.Sprintf("%x", sha256.Sum256([]byte(volumeID)))
	staging = e.join(e.KubeletDir, "plugins", "kubernetes.io", "csi", driver, sum, "globalmount")
	publish = e.join(e.KubeletDir, "pods", "6f1e2d3c-"+sum[:8], "volumes", "kubernetes.io~csi", pv, "mount")
	return staging, publish
}

// FlowID names one flow of a plan as its subtest does: Env is the
// environment's name; Driver is "azuredisk", "aws-ebs", "gcp-pd",
// "vsphere" or "smb"; Name is the CSI call and case
// ("NodeStageVolume/first-stage-raw", "NodeGetInfo/bios-serial").
type FlowID struct{ Env, Driver, Name string }

// String is the flow's subtest name below the test that runs the plan.
func (f FlowID) String() string { return f.Env + "/" + f.Driver + "/" + f.Name }

// NotApplicable tells, for a runner whose host cannot carry out every
// flow (a backend without the SMB group, a Linux node without the disk
// identities a driver looks for), why a flow does not apply there; ""
// means it applies and runs.
type NotApplicable func(FlowID) string

// Only returns the part of the fixture the flows that apply need.
func (f Fixture) Only(na NotApplicable) Fixture {
	out := Fixture{BIOSSerial: f.BIOSSerial}
	for _, d := range f.Disks {
		if na(d.Flow) == "" {
			out.Disks = append(out.Disks, d)
		}
	}
	for _, s := range f.Shares {
		if na(s.Flow) == "" {
			out.Shares = append(out.Shares, s)
		}
	}
	return out
}

// RunApplicable is Run for a host that carries out only some flows: the
// subtests are Run's, with the same names; a flow na gives a reason for
// skips with that reason (go test -v and the JSON stream show it), so no
// flow is left out silently, and every other flow runs and asserts
// exactly as under Run. The host behind p must hold p.Fixture().Only(na).
func (pl *Plan) RunApplicable(t *testing.T, p Proxy, na NotApplicable) {
	pl.run(t, p, nil, na, "on this host")
}

// run runs the plan's flows against p; node is the same node as a
// groups.Node for a mounter plan (nil otherwise). A flow na gives a reason
// for is skipped with it ("<flow> does not apply <where>: <reason>"). Each
// flow's outcome is counted, and the counts logged at the end (go test
// -v), so that a runner's report can say how many flows passed and how
// many did not apply.
func (pl *Plan) run(t *testing.T, p Proxy, node groups.Node, na NotApplicable, where string) {
	applies := func(t *testing.T, id FlowID) {
		t.Helper()
		if why := na(id); why != "" {
			t.Skipf("%s does not apply %s: %s", id, where, why)
		}
	}
	var passed, skipped, failed int
	count := func(t *testing.T) {
		switch {
		case t.Skipped():
			skipped++
		case t.Failed():
			failed++
		default:
			passed++
		}
	}
	for e, env := range pl.envs {
		t.Run(env.Name, func(t *testing.T) {
			for d, name := range blockDrivers {
				for s, sc := range blockScenarios {
					t.Run(name+"/"+sc.name, func(t *testing.T) {
						defer count(t)
						applies(t, FlowID{Env: env.Name, Driver: name, Name: sc.name})
						pl.runBlock(t, p, node, e, env, d, name, s, sc)
					})
				}
			}
			t.Run("vsphere/NodeGetInfo/bios-serial", func(t *testing.T) {
				defer count(t)
				applies(t, FlowID{Env: env.Name, Driver: "vsphere", Name: "NodeGetInfo/bios-serial"})
				runNodeGetInfo(t, p, env)
			})
			smbState := &smbDriver{refs: map[string]map[string]bool{}}
			var stateDir string
			if node != nil {
				stateDir = t.TempDir() // the mounter's SMB link records, kept across the env's flows
			}
			for s, sc := range smbScenarios {
				t.Run("smb/"+sc.name, func(t *testing.T) {
					defer count(t)
					applies(t, FlowID{Env: env.Name, Driver: "smb", Name: sc.name})
					pl.runSMB(t, p, node, e, env, smbState, stateDir, s, sc)
				})
			}
		})
	}
	t.Logf("flows: %d passed, %d not applicable, %d failed", passed, skipped, failed)
}

// runNodeGetInfo is vsphere's NodeGetInfo flow, as Run runs it.
func runNodeGetInfo(t *testing.T, p Proxy, env Env) {
	ctx, cancel := context.WithTimeout(context.Background(), flowTimeout)
	defer cancel()
	tr := newTracer(p)
	drv := vSphere{base{p: tr.proxy(), env: env, loc: env.local(tr)}}
	got, err := drv.nodeUUID(ctx)
	if err != nil {
		t.Fatalf("NodeGetInfo: %v", err)
	}
	if got != VMUUID {
		t.Errorf("NodeGetInfo: node UUID %q from BIOS serial, want %q", got, VMUUID)
	}
}

// runSMB is one csi-driver-smb flow, as Run runs it: with the driver's
// own code (state holds its reference count across the environment's
// flows), or through the mounter when node is set (stateDir holds the
// mounter's link records across them).
func (pl *Plan) runSMB(t *testing.T, p Proxy, node groups.Node, e int, env Env, state *smbDriver, stateDir string, s int, sc smbScenario) {
	ctx, cancel := context.WithTimeout(context.Background(), flowTimeout)
	defer cancel()
	tr := newTracer(p)
	var drv smbNodeDriver = state
	if node != nil {
		md := newMounterSMB(tr, node, stateDir, pl.newMounter)
		defer md.log.check(t)
		drv = md
	} else {
		state.base = base{p: tr.proxy(), env: env, loc: env.local(tr)}
	}
	r := &smbRun{flowRun: flowRun{t: t, ctx: ctx, env: env, tr: tr}, drv: drv, share: pl.smbShare(e, s), scenario: s}
	sc.run(r)
}
