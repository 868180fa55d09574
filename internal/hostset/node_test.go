package hostset

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/objecthost"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// simKubelet is the simulated host's kubelet directory.
const simKubelet = simulated.DefaultKubeletDir

// allowAll is a policy allowing every call, under the name "all".
const allowAll = "rules:\n- {name: all, callers: [{any: true}], allow: [{methods: ['*']}]}\n"

// countingCloser counts Closes of a Set, through Hooks.Instrument.
type countingCloser struct{ n int }

func (c *countingCloser) Close() error { c.n++; return nil }

// counted returns hooks whose Instrument makes c the Set's Closer.
func counted(c *countingCloser) Hooks {
	return Hooks{Instrument: func(s Set) Set { s.Closer = c; return s }}
}

// writeFile creates a file only its owner may write, as the policy must
// be.
func writeFile(t *testing.T, path, data string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNewNode: NewNode builds the host, the Services confined to the
// working directories and the allowed services, the policy, the audit
// log and the gate holding them, from the resolved Config; Close closes
// the audit log and the host, once.
func TestNewNode(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.log")
	var closes countingCloser
	n, err := NewNode(Config{
		Host: Simulated, WorkingDirs: []string{simKubelet}, AllowedServices: []string{"svc"},
		PolicyData: []byte(allowAll), AuditLog: log, NodeName: "node-1",
	}, counted(&closes))
	if err != nil {
		t.Fatal(err)
	}
	if n.Backends.Simulated == nil || n.Groups.Disk == nil || n.Groups.System == nil {
		t.Fatalf("node incomplete: %+v", n)
	}
	if n.Gate.Policy == nil || !slices.Equal(n.Gate.Policy.Policy().Rules(), []string{"all"}) || n.Gate.Audit == nil || n.Gate.Objects == nil {
		t.Errorf("gate %+v: want the policy, the audit log and the object answers", n.Gate)
	}
	if got := n.Config(); got.NodeName != "node-1" || got.LinuxFilesystem != DefaultLinuxFilesystem || got.SMBPermissions == nil {
		t.Errorf("Config() = %+v, want it resolved", got)
	}
	ctx := t.Context()
	if _, err := n.Groups.System.StartService(ctx, &system.StartServiceRequest{Name: "other"}); err == nil {
		t.Error("a service outside AllowedServices was started")
	}
	if _, err := n.Groups.Disk.ListDiskIDs(ctx, &disk.ListDiskIDsRequest{}); err != nil {
		t.Errorf("ListDiskIDs: %v", err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil || closes.n != 1 {
		t.Errorf("second Close: %v, host closed %d times; want nil, once", err, closes.n)
	}
	if _, err := os.Stat(log); err != nil {
		t.Errorf("the audit log was not opened: %v", err)
	}
}

// TestNewNodeRefusals: what a node cannot honour is refused, and what was
// built before is closed.
func TestNewNodeRefusals(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, filepath.Join(dir, "policy.yaml"), allowAll)
	for name, c := range map[string]struct {
		cfg  Config
		want string
	}{
		"two policies": {Config{PolicyFile: pol, PolicyData: []byte(allowAll)}, "not both"},
		"smb modes":    {Config{SMBPermissions: &policy.SMBPermissions{FileMode: 0o1777}}, "fileMode"},
		"no policy":    {Config{PolicyFile: filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
		"bad policy":   {Config{PolicyData: []byte("rules:\n")}, "no rules"},
		"no audit dir": {Config{AuditLog: filepath.Join(dir, "missing", "audit.log")}, "audit.log"},
		"relative dir": {Config{WorkingDirs: []string{"relative"}}, "relative"},
	} {
		c.cfg.Host = Simulated
		if c.cfg.WorkingDirs == nil {
			c.cfg.WorkingDirs = []string{simKubelet}
		}
		var closes countingCloser
		n, err := NewNode(c.cfg, counted(&closes))
		if err == nil {
			_ = n.Close()
			t.Errorf("%s: NewNode succeeded", name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to say %q", name, err, c.want)
		}
		built := !slices.Contains([]string{"two policies", "smb modes", "relative dir"}, name) // refused before the host exists
		if want := map[bool]int{true: 1, false: 0}[built]; closes.n != want {
			t.Errorf("%s: the host was closed %d times, want %d", name, closes.n, want)
		}
	}
}

// TestNodeReload: Reload reopens the audit log and reloads the policy
// file; a file that no longer loads keeps the policy in force and is
// returned. The policy file is also watched every PolicyReloadInterval,
// and a reload that installs a policy tells Hooks.PolicyReloaded.
func TestNodeReload(t *testing.T) {
	dir := t.TempDir()
	pol := writeFile(t, filepath.Join(dir, "policy.yaml"), allowAll)
	reloaded := make(chan []string, 10)
	hooks := Hooks{PolicyReloaded: func(p *policy.Policy) { reloaded <- p.Rules() }}
	n, err := NewNode(Config{Host: Simulated, WorkingDirs: []string{simKubelet}, PolicyFile: pol,
		AuditLog: filepath.Join(dir, "audit.log"), PolicyReloadInterval: 10 * time.Millisecond}, hooks)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	writeFile(t, pol, strings.Replace(allowAll, "name: all", "name: watched", 1))
	select {
	case rules := <-reloaded:
		if !slices.Equal(rules, []string{"watched"}) {
			t.Errorf("the watcher installed %v", rules)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the policy file was not watched")
	}
	if err := n.Reload(); err != nil {
		t.Errorf("Reload of an unchanged file: %v", err)
	}
	writeFile(t, pol, "rules: [")
	if err := n.Reload(); err == nil {
		t.Error("Reload of a broken file succeeded")
	}
	if got := n.Gate.Policy.Policy().Rules(); !slices.Equal(got, []string{"watched"}) {
		t.Errorf("after a broken file the rules are %v, want the previous policy's", got)
	}
	// Rotated as logrotate does, by rename; Windows cannot rename an open
	// file (rotation there is copy and truncate), so there ReopenAudit
	// reopens the file in place.
	if runtime.GOOS != "windows" {
		if err := os.Rename(filepath.Join(dir, "audit.log"), filepath.Join(dir, "audit.log.1")); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.ReopenAudit(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "audit.log")); err != nil {
		t.Errorf("ReopenAudit did not create the file again: %v", err)
	}

	// Without a policy or an audit log, there is nothing to reload.
	bare, err := NewNode(Config{Host: Simulated, WorkingDirs: []string{simKubelet}}, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if err := bare.Reload(); err != nil || bare.Gate.Policy != nil || bare.Gate.Audit != nil {
		t.Errorf("a node without policy or audit log: Reload %v, gate %+v", err, bare.Gate)
	}
}

// TestNodeInstrument: the Services run on the backends Hooks.Instrument
// returns, while the object answers read the backends as built.
func TestNodeInstrument(t *testing.T) {
	wrapped := false
	n, err := NewNode(Config{Host: Simulated, WorkingDirs: []string{simKubelet}}, Hooks{Instrument: func(s Set) Set {
		s.Disk = wrappedDisk{s.Disk, &wrapped}
		return s
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := n.Groups.Disk.ListDiskIDs(t.Context(), &disk.ListDiskIDsRequest{}); err != nil || !wrapped {
		t.Errorf("ListDiskIDs: %v; through the instrumented backend: %v", err, wrapped)
	}
	o, ok := n.Gate.Objects.(*objecthost.HostObjects)
	if !ok || o.Disk == n.Backends.Disk || o.Mounts == nil {
		t.Errorf("the object answers %+v read the instrumented backends, or cannot tell mounts", n.Gate.Objects)
	}
}

// wrappedDisk is a decorator of a disk backend that notes it was used.
type wrappedDisk struct {
	disk.Host
	used *bool
}

func (w wrappedDisk) ListDiskIDs(ctx context.Context) (map[uint32]disk.DiskIDs, error) {
	*w.used = true
	return w.Host.ListDiskIDs(ctx)
}

// TestResolved: Resolved fills the node's defaults and keeps what is
// given; NewNode builds from the resolved Config.
func TestResolved(t *testing.T) {
	t.Setenv("NODE_NAME", "from-env")
	got := Config{}.Resolved()
	want := Config{LinuxFilesystem: DefaultLinuxFilesystem, LinuxDiskReadTimeout: DefaultLinuxDiskReadTimeout,
		SMBPermissions: &policy.SMBPermissions{FileMode: DefaultSMBMode, DirMode: DefaultSMBMode}, NodeName: "from-env"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Resolved defaults %+v, want %+v", got, want)
	}
	given := Config{LinuxFilesystem: "xfs", LinuxDiskReadTimeout: time.Second, SMBPermissions: &policy.SMBPermissions{DirMode: 0o700}, NodeName: "n", LinuxHostMountTable: "none"}
	if got := given.Resolved(); !reflect.DeepEqual(got, given) {
		t.Errorf("Resolved changed what was given: %+v, want %+v", got, given)
	}
}

// TestAuditOptions: the audit log is opened with the Config's reads,
// sync and node name.
func TestAuditOptions(t *testing.T) {
	got := auditOptions(Config{AuditReads: true, AuditSync: true, NodeName: "n"}, Hooks{})
	if !got.Reads || !got.Sync || got.Node != "n" {
		t.Errorf("audit options %+v", got)
	}
	if got := auditOptions(Config{}, Hooks{}); got.Reads || got.Sync || got.Node != "" {
		t.Errorf("audit options of a zero Config %+v, want none set", got)
	}
}

// The node's policy gives a drive-less Windows path the drive the
// services give it: a rule rooted in the kubelet directory allows what
// EKS kubelets send (\var\lib\kubelet\...), as the services serve it.
func TestNodePolicyDriveLessPaths(t *testing.T) {
	n, err := NewNode(Config{
		Host: Simulated, WorkingDirs: []string{simKubelet},
		PolicyData: []byte("rules:\n- {name: k, callers: [{any: true}], allow: [{methods: ['*']}], pathRoots: ['" + simKubelet + "']}\n"),
	}, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	drivel := simKubelet[2:] + `\pods\abc`
	c := policy.Call{Group: "filesystem", Method: "Mkdir", Inspected: true, Args: []policy.Arg{{Field: "path", Kind: policy.ArgPath, Value: drivel}}}
	if d := n.Gate.Policy.Decide(c); !d.Allowed {
		t.Errorf("%s: %+v, want allowed", drivel, d)
	}
}
