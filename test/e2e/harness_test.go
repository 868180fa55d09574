package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	filesystemv2alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v2alpha1"
	iscsiv1alpha2 "github.com/csi-node-proxy/csi-node-proxy/api/iscsi/v1alpha2"
	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
	systemv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/system/v1alpha1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	volumev2alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v2alpha1"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonserver"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// The world of testdata/sim.json, as the tests rely on it.
const (
	kubelet = `C:\var\lib\kubelet`

	// Disk 0 is the system disk (C:); 1 and 2 are RAW 1 GiB data disks; 3
	// is an offline 512 MiB disk with a RAW data partition.
	dataDisk1   uint32 = 1
	dataDisk2   uint32 = 2
	offlineDisk uint32 = 3
	missingDisk uint32 = 99

	// A well-formed volume ID no disk holds.
	missingVolume = `\\?\Volume{00000000-0000-4000-8000-0000000000e2}\`

	smbShare    = `\\fileserver\share`
	smbTeam     = `\\fileserver\team`
	smbUser     = `CONTOSO\csi`
	smbPassword = "Sh4re-P@ssw0rd!"

	portalOneWay  = "10.0.0.10" // port 3260: targets oneway and open
	portalMutual  = "10.0.0.11" // port 3261: target mutual
	mutualPort    = 3261
	iqnOneWay     = "iqn.2003-01.org.example:oneway"
	iqnMutual     = "iqn.2003-01.org.example:mutual"
	iqnOpen       = "iqn.2003-01.org.example:open"
	chapUser      = "e2e-initiator"
	oneWaySecret  = "oneway-secret1"
	mutualChap    = "mutual-chap-01"
	mutualProof   = "target-proof-01"
	wrongPassword = "Not-The-Passw0rd"
	wrongSecret   = "wrong-secret-99"

	biosSerial = "E2E-BIOS-0001"
)

// secrets must never appear in an error message or in the daemon's log.
var secrets = []string{smbPassword, wrongPassword, oneWaySecret, mutualChap, mutualProof, wrongSecret}

// allowedServices is the daemon's --allowed-service list: MSiSCSI and
// W32Time are among the simulated host's default services, W32Time has a
// running dependent (CsiTimeConsumer), RemoteRegistry is disabled and Ghost
// is not installed.
var allowedServices = []string{"MSiSCSI", "W32Time", "CsiTimeConsumer", "RemoteRegistry", "Ghost"}

// simConfig loads testdata/sim.json and adds the services: the simulated
// host's defaults (among them W32Time, running, and the disabled
// RemoteRegistry) plus CsiTimeConsumer, which depends on W32Time. JSON
// cannot say "the defaults plus this one", so the services are set here,
// and then the whole configuration is validated again.
func simConfig(t *testing.T) simulated.Config {
	t.Helper()
	cfg, err := simulated.LoadConfig(filepath.Join("testdata", "sim.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Services = append(simulated.DefaultServices(), simulated.ServiceSpec{
		Name: "CsiTimeConsumer", DisplayName: "CSI time consumer", StartType: "automatic", Status: "running", DependsOn: []string{"W32Time"},
	})
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// unixSockets tells whether the daemon serves unix sockets here (it serves
// named pipes on Windows).
const unixSockets = runtime.GOOS != "windows"

// env is one daemon stack and clients of each of its endpoints.
type env struct {
	host *simulated.Host
	srv  *server.Server
	// conns are the client connections by endpoint name
	// (csi-proxy-<group>-<version>).
	conns map[string]*grpc.ClientConn

	disk  diskv1.DiskClient
	vol1  volumev1.VolumeClient
	vol2  volumev2alpha1.VolumeClient
	fs1   filesystemv1.FilesystemClient
	fs2   filesystemv2alpha1.FilesystemClient
	smb   smbv1.SmbClient
	iscsi iscsiv1alpha2.IscsiClient
	sys   systemv1alpha1.SystemClient
}

// newEnv starts a fresh simulated host and the daemon serving every
// group-version on unix sockets in a short temporary directory, and dials
// each endpoint. Everything is torn down in t.Cleanup.
func newEnv(t *testing.T) *env {
	t.Helper()
	if !unixSockets {
		t.Skip("the e2e suite dials the daemon's unix sockets; on Windows it serves named pipes")
	}
	cfg := simConfig(t)
	n := daemonserver.Start(t, daemonserver.Options{
		Host:            hostset.Config{Host: hostset.Simulated, WorkingDirs: cfg.WorkingDirs, Simulated: &cfg},
		AllowedServices: allowedServices,
		APIs:            "all",
	})
	h, srv := n.Sim, n.Server
	e := &env{host: h, srv: srv, conns: map[string]*grpc.ClientConn{}}
	for _, ep := range srv.Endpoints() {
		conn, err := grpc.NewClient("unix://"+ep.Address,
			grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithUnaryInterceptor(calls.intercept))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		e.conns[ep.API.Name()] = conn
	}
	conn := func(name string) *grpc.ClientConn {
		c, ok := e.conns[name]
		if !ok {
			t.Fatalf("the daemon serves no endpoint %s", name)
		}
		return c
	}
	e.disk = diskv1.NewDiskClient(conn("csi-proxy-disk-v1"))
	e.vol1 = volumev1.NewVolumeClient(conn("csi-proxy-volume-v1"))
	e.vol2 = volumev2alpha1.NewVolumeClient(conn("csi-proxy-volume-v2alpha1"))
	e.fs1 = filesystemv1.NewFilesystemClient(conn("csi-proxy-filesystem-v1"))
	e.fs2 = filesystemv2alpha1.NewFilesystemClient(conn("csi-proxy-filesystem-v2alpha1"))
	e.smb = smbv1.NewSmbClient(conn("csi-proxy-smb-v1"))
	e.iscsi = iscsiv1alpha2.NewIscsiClient(conn("csi-proxy-iscsi-v1alpha2"))
	e.sys = systemv1alpha1.NewSystemClient(conn("csi-proxy-system-v1alpha1"))
	return e
}

// ok fails the test now if err is not nil.
func ok(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// wantErr checks that err is a status with code whose message contains
// substr.
func wantErr(t *testing.T, what string, err error, code codes.Code, substr string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: succeeded, want %v (%q)", what, code, substr)
		return
	}
	st, _ := status.FromError(err)
	if st.Code() != code || !strings.Contains(st.Message(), substr) {
		t.Errorf("%s: got %v %q, want %v with a message containing %q", what, st.Code(), st.Message(), code, substr)
	}
}

// twice runs a mutating call twice: drivers retry every stage step, so the
// second call must succeed too.
func twice(t *testing.T, what string, call func() error) {
	t.Helper()
	for i := 1; i <= 2; i++ {
		if err := call(); err != nil {
			t.Fatalf("%s (call %d of 2): %v", what, i, err)
		}
	}
}

// badPath is a path the path rules refuse, with the code and message.
type badPath struct {
	path   string
	code   codes.Code
	substr string
}

// badPaths are the malformed paths and the paths outside the working
// directories every path-taking method must refuse.
var badPaths = []badPath{
	{"", codes.InvalidArgument, "path is empty"},
	{`var\lib\kubelet\pods`, codes.InvalidArgument, "is not an absolute Windows path"},
	{`C:var\lib\kubelet\pods`, codes.InvalidArgument, "is not an absolute Windows path"},
	{`\\fileserver\share\pvc-1`, codes.InvalidArgument, "is a UNC or device path"},
	{`\\?\C:\var\lib\kubelet\pods`, codes.InvalidArgument, "is a UNC or device path"},
	{kubelet + `\pods\..\..\..\..\Windows`, codes.InvalidArgument, `".." element`},
	{kubelet + `\pods\bad|name`, codes.InvalidArgument, "does not allow in names"},
	{kubelet + "\\pods\\nul\x00byte", codes.InvalidArgument, "control character"},
	{`C:\Windows\System32`, codes.PermissionDenied, "is outside the working directories"},
	{`C:\var\lib\kubelet-x\pods\p`, codes.PermissionDenied, "is outside the working directories"},
	{`D:\var\lib\kubelet\pods`, codes.PermissionDenied, "is outside the working directories"},
}

// isVolumeID tells whether id has the form \\?\Volume{GUID}\ the simulated
// host gives volumes.
func isVolumeID(id string) bool {
	const prefix, suffix = `\\?\Volume{`, `}\`
	if !strings.HasPrefix(id, prefix) || !strings.HasSuffix(id, suffix) {
		return false
	}
	guid := strings.TrimSuffix(strings.TrimPrefix(id, prefix), suffix)
	return len(guid) == 36 && strings.Count(guid, "-") == 4
}

// cVolume returns the ID of the volume behind C:.
func cVolume(t *testing.T, h *simulated.Host) string {
	t.Helper()
	for _, v := range h.ListVolumes() {
		if v.DriveLetter == "C" {
			return v.ID
		}
	}
	t.Fatal("the simulated host has no C: volume")
	return ""
}

// stageVolume partitions a data disk, formats its volume and mounts it at
// a new staging directory, through disk v1, volume v1 and filesystem v1,
// as a driver's NodeStageVolume does. It returns the volume ID and the
// staging path.
func stageVolume(t *testing.T, e *env, n uint32, staging string) string {
	t.Helper()
	ctx := t.Context()
	_, err := e.disk.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: n})
	ok(t, "PartitionDisk", err)
	vols, err := e.vol1.ListVolumesOnDisk(ctx, &volumev1.ListVolumesOnDiskRequest{DiskNumber: n})
	ok(t, "ListVolumesOnDisk", err)
	if len(vols.GetVolumeIds()) != 1 {
		t.Fatalf("disk %d has volumes %q, want one", n, vols.GetVolumeIds())
	}
	id := vols.GetVolumeIds()[0]
	f, err := e.vol1.IsVolumeFormatted(ctx, &volumev1.IsVolumeFormattedRequest{VolumeId: id})
	ok(t, "IsVolumeFormatted", err)
	if !f.GetFormatted() {
		_, err = e.vol1.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: id})
		ok(t, "FormatVolume", err)
	}
	_, err = e.fs1.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: staging})
	ok(t, "Mkdir staging", err)
	_, err = e.vol1.MountVolume(ctx, &volumev1.MountVolumeRequest{VolumeId: id, TargetPath: staging})
	ok(t, "MountVolume", err)
	return id
}

// TestEndpoints checks the harness itself: the daemon serves every
// group-version upstream serves, and csi-node-proxy's own smbmappings (the older ones are exercised through
// upstream's own stubs in test/wirecompat; this suite drives the current
// eight), each on its own socket named as upstream names its pipes, in
// registry order.
func TestEndpoints(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	want := []string{
		"csi-proxy-disk-v1alpha1", "csi-proxy-disk-v1beta1", "csi-proxy-disk-v1beta2", "csi-proxy-disk-v1beta3", "csi-proxy-disk-v1",
		"csi-proxy-filesystem-v1alpha1", "csi-proxy-filesystem-v1beta1", "csi-proxy-filesystem-v1beta2", "csi-proxy-filesystem-v1",
		"csi-proxy-filesystem-v2alpha1",
		"csi-proxy-iscsi-v1alpha1", "csi-proxy-iscsi-v1alpha2",
		"csi-proxy-smb-v1alpha1", "csi-proxy-smb-v1beta1", "csi-proxy-smb-v1beta2", "csi-proxy-smb-v1",
		"csi-proxy-smbmappings-v1alpha1", // csi-node-proxy's own group (docs/compatibility.md)
		"csi-proxy-system-v1alpha1",
		"csi-proxy-volume-v1alpha1", "csi-proxy-volume-v1beta1", "csi-proxy-volume-v1beta2", "csi-proxy-volume-v1beta3", "csi-proxy-volume-v1",
		"csi-proxy-volume-v2alpha1",
	}
	eps := e.srv.Endpoints()
	if len(eps) != len(want) {
		t.Fatalf("the daemon serves %d endpoints, want %d", len(eps), len(want))
	}
	for i, ep := range eps {
		if ep.API.Name() != want[i] || filepath.Base(ep.Address) != want[i]+".sock" {
			t.Errorf("endpoint %d is %s at %s, want %s at %s.sock", i, ep.API.Name(), ep.Address, want[i], want[i])
		}
		fi, err := os.Lstat(ep.Address)
		if err != nil || fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != transport.DefaultSocketMode {
			t.Errorf("%s: lstat = %v, %v; want a socket with mode %v", ep.Address, fi, err, transport.DefaultSocketMode)
		}
	}
}

// simulatedDisk describes a RAW disk to hot-add.
func simulatedDisk(size int64, location, serial string) simulated.DiskSpec {
	return simulated.DiskSpec{Size: simulated.Size(size), Location: location, Serial: serial}
}
