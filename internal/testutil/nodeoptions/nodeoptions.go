// Package nodeoptions is the one table of a node's options as the three
// ways of configuring a node spell them: the daemon's flags, library
// mode's inprocess.Options and the CLI's --local flags. Each spelling's
// own test runs every row through its real path and checks that the node
// it gets resolves to the row's expected hostset.Config (the daemon: its
// flags, then hostset.NewNode; library mode: inprocess.New; the CLI: its
// flags to inprocess.Options, which must be the row's Options, whose node
// library mode's test resolves). An option one mode lacks, or maps
// differently, fails a test instead of drifting.
//
// The rows use the simulated host, which every OS runs; the Linux
// backend options still reach the resolved Config, and internal/hostset's
// tests follow them from there into the Linux backends.
package nodeoptions

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// Case is one option set three ways.
type Case struct {
	// Name names the option.
	Name string
	// Daemon are the daemon's flags, after --host=simulated (and
	// --cri-endpoint=, so no container runtime is asked).
	Daemon []string
	// Local are the CLI's flags, after --local --host=simulated; nil
	// when --local has no such option, and NotLocal says why.
	Local    []string
	NotLocal string
	// Options are library mode's, Host left to the runner
	// (HostSimulated).
	Options inprocess.Options
	// Want changes the resolved defaults (Default) into what the option
	// makes of them.
	Want func(*hostset.Config)
}

// Default is the resolved configuration of a node on the simulated host
// with no option given: the daemon's defaults, which library mode's zero
// Options and a bare --local mean too.
func Default() hostset.Config {
	return hostset.Config{
		Host:                 hostset.Simulated,
		WorkingDirs:          []string{hostset.WindowsKubeletPath},
		RequirePrivacy:       true,
		PolicyReloadInterval: policy.DefaultReloadInterval,
	}.Resolved()
}

// Expected is the resolved configuration c's option makes.
func Expected(c Case) hostset.Config {
	cfg := Default()
	if c.Want != nil {
		c.Want(&cfg)
	}
	return cfg
}

// Cases returns the table, with the files its rows name (a simulated
// node description, a policy, an audit log) created below a directory
// of tb's, which the node's constructors read or open.
func Cases(tb testing.TB) []Case {
	tb.Helper()
	dir := tb.TempDir()
	simConfig := write(tb, filepath.Join(dir, "node.json"), `{"biosSerial": "table"}`)
	// The simulated host is a Windows node: its policy's path roots are
	// Windows paths.
	pol := write(tb, filepath.Join(dir, "policy.yaml"), "rules:\n- {name: all, callers: [{any: true}], allow: [{methods: ['*']}]}\n")
	auditLog := filepath.Join(dir, "audit.log")
	const (
		kubelet = `C:\kubelet`
		extra   = `C:\csi`
		table   = "/host/proc/1/mountinfo"
		disk    = "size=2GiB,location=1:0:0:5"
		context = "system_u:object_r:container_file_t:s0"
	)
	no := false
	smb := func(f func(*policy.SMBPermissions)) *policy.SMBPermissions {
		p := &policy.SMBPermissions{FileMode: hostset.DefaultSMBMode, DirMode: hostset.DefaultSMBMode}
		f(p)
		return p
	}
	uid, gid := uint32(1000), uint32(2000)
	return []Case{
		{Name: "defaults", Daemon: []string{}, Local: []string{}},
		{
			Name: "kubelet path", Daemon: []string{"-kubelet-path=" + kubelet}, Local: []string{"--kubelet-path=" + kubelet},
			Options: inprocess.Options{KubeletPath: kubelet},
			Want:    func(c *hostset.Config) { c.WorkingDirs = []string{kubelet} },
		},
		{
			Name: "working dir", Daemon: []string{"-working-dir=" + extra}, Local: []string{"--working-dir=" + extra},
			Options: inprocess.Options{WorkingDirs: []string{extra}},
			Want:    func(c *hostset.Config) { c.WorkingDirs = []string{extra, hostset.WindowsKubeletPath} },
		},
		{
			Name: "require privacy", Daemon: []string{"-require-privacy=false"}, Local: []string{"--require-privacy=false"},
			Options: inprocess.Options{RequirePrivacy: &no},
			Want:    func(c *hostset.Config) { c.RequirePrivacy = false },
		},
		{
			Name: "allowed service", Daemon: []string{"--allowed-service=svc"}, Local: []string{"--allowed-service=svc"},
			Options: inprocess.Options{AllowedServices: []string{"svc"}},
			Want:    func(c *hostset.Config) { c.AllowedServices = []string{"svc"} },
		},
		{
			Name: "max concurrent formats", Daemon: []string{"--max-concurrent-formats=2"},
			NotLocal: "a CLI call formats at most one volume; nothing to bound",
			Options:  inprocess.Options{MaxConcurrentFormats: 2},
			Want:     func(c *hostset.Config) { c.MaxConcurrentFormats = 2 },
		},
		{
			Name: "linux filesystem", Daemon: []string{"--linux-filesystem=xfs"}, Local: []string{"--linux-filesystem=xfs"},
			Options: inprocess.Options{LinuxFilesystem: "xfs"},
			Want:    func(c *hostset.Config) { c.LinuxFilesystem = "xfs" },
		},
		{
			Name: "host mount table", Daemon: []string{"--linux-host-mount-table=" + table}, Local: []string{"--linux-host-mount-table=" + table},
			Options: inprocess.Options{LinuxHostMountTable: table},
			Want:    func(c *hostset.Config) { c.LinuxHostMountTable = table },
		},
		{
			Name: "no host mount table", Daemon: []string{"--linux-host-mount-table=none"}, Local: []string{"--linux-host-mount-table=none"},
			Options: inprocess.Options{LinuxHostMountTable: "none"},
			Want:    func(c *hostset.Config) { c.LinuxHostMountTable = "none" },
		},
		{
			Name: "disk read timeout", Daemon: []string{"--linux-disk-read-timeout=1500ms"}, Local: []string{"--linux-disk-read-timeout=1500ms"},
			Options: inprocess.Options{LinuxDiskReadTimeout: 1500 * time.Millisecond},
			Want:    func(c *hostset.Config) { c.LinuxDiskReadTimeout = 1500 * time.Millisecond },
		},
		{
			Name: "smb uid", Daemon: []string{"--smb-uid=1000"}, Local: []string{"--smb-uid=1000"},
			Options: inprocess.Options{SMBPermissions: smb(func(p *policy.SMBPermissions) { p.UID = &uid })},
			Want:    func(c *hostset.Config) { c.SMBPermissions = smb(func(p *policy.SMBPermissions) { p.UID = &uid }) },
		},
		{
			Name: "smb gid", Daemon: []string{"--smb-gid=2000"}, Local: []string{"--smb-gid=2000"},
			Options: inprocess.Options{SMBPermissions: smb(func(p *policy.SMBPermissions) { p.GID = &gid })},
			Want:    func(c *hostset.Config) { c.SMBPermissions = smb(func(p *policy.SMBPermissions) { p.GID = &gid }) },
		},
		{
			Name: "smb file mode", Daemon: []string{"--smb-file-mode=0640"}, Local: []string{"--smb-file-mode=0640"},
			Options: inprocess.Options{SMBPermissions: smb(func(p *policy.SMBPermissions) { p.FileMode = 0o640 })},
			Want:    func(c *hostset.Config) { c.SMBPermissions = smb(func(p *policy.SMBPermissions) { p.FileMode = 0o640 }) },
		},
		{
			Name: "smb dir mode", Daemon: []string{"--smb-dir-mode=0750"}, Local: []string{"--smb-dir-mode=0750"},
			Options: inprocess.Options{SMBPermissions: smb(func(p *policy.SMBPermissions) { p.DirMode = 0o750 })},
			Want:    func(c *hostset.Config) { c.SMBPermissions = smb(func(p *policy.SMBPermissions) { p.DirMode = 0o750 }) },
		},
		{
			Name: "smb selinux context", Daemon: []string{"--smb-selinux-context=" + context}, Local: []string{"--smb-selinux-context=" + context},
			Options: inprocess.Options{SMBPermissions: smb(func(p *policy.SMBPermissions) { p.SELinuxContext = context })},
			Want: func(c *hostset.Config) {
				c.SMBPermissions = smb(func(p *policy.SMBPermissions) { p.SELinuxContext = context })
			},
		},
		{
			Name: "sim config", Daemon: []string{"--sim-config=" + simConfig}, Local: []string{"--sim-config=" + simConfig},
			Options: inprocess.Options{SimConfigFile: simConfig},
			Want:    func(c *hostset.Config) { c.SimConfigFile = simConfig },
		},
		{
			Name: "sim disk", Daemon: []string{"--sim-disk=" + disk}, Local: []string{"--sim-disk=" + disk},
			Options: inprocess.Options{SimDisks: []string{disk}},
			Want:    func(c *hostset.Config) { c.SimDisks = []string{disk} },
		},
		{
			Name: "policy", Daemon: []string{"--policy=" + pol}, Local: []string{"--policy=" + pol},
			Options: inprocess.Options{PolicyFile: pol},
			Want:    func(c *hostset.Config) { c.PolicyFile = pol },
		},
		{
			Name: "policy reload interval", Daemon: []string{"--policy-reload-interval=3s"},
			NotLocal: "the CLI reads the policy once: it ends before a reload could matter",
			Options:  inprocess.Options{PolicyReloadInterval: 3 * time.Second},
			Want:     func(c *hostset.Config) { c.PolicyReloadInterval = 3 * time.Second },
		},
		{
			Name: "audit log", Daemon: []string{"--audit-log=" + auditLog}, Local: []string{"--audit-log=" + auditLog},
			Options: inprocess.Options{AuditLog: auditLog},
			Want:    func(c *hostset.Config) { c.AuditLog = auditLog },
		},
		{
			Name: "audit reads", Daemon: []string{"--audit-reads"}, Local: []string{"--audit-reads"},
			Options: inprocess.Options{AuditReads: true},
			Want:    func(c *hostset.Config) { c.AuditReads = true },
		},
		{
			Name: "audit sync", Daemon: []string{"--audit-sync"}, Local: []string{"--audit-sync"},
			Options: inprocess.Options{AuditSync: true},
			Want:    func(c *hostset.Config) { c.AuditSync = true },
		},
		{
			Name: "node name", Daemon: []string{"--node-name=node-7"}, Local: []string{"--node-name=node-7"},
			Options: inprocess.Options{NodeName: "node-7"},
			Want:    func(c *hostset.Config) { c.NodeName = "node-7" },
		},
	}
}

// Covered fails tb unless the table sets every field of hostset.Config,
// so a field added to the node without a row (and so, perhaps, without a
// flag in some mode) is noticed. Three fields have no row: Host, which
// every runner sets (--host=simulated), and Simulated and PolicyData,
// which only library mode can give (a value in memory has no flag).
func Covered(tb testing.TB, cases []Case) {
	tb.Helper()
	set := map[string]bool{"Host": true, "Simulated": true, "PolicyData": true}
	base := Default()
	for _, c := range cases {
		got := Expected(c)
		for _, f := range changedFields(base, got) {
			set[f] = true
		}
	}
	for _, f := range configFields() {
		if !set[f] {
			tb.Errorf("no row of the option table sets hostset.Config.%s: add one, with its daemon flag, library-mode option and --local flag", f)
		}
	}
}

// write creates path holding data, readable by its owner only (the
// policy must not be writable by others), and returns path.
func write(tb testing.TB, path, data string) string {
	tb.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

// configFields are the names of hostset.Config's fields.
func configFields() []string {
	t := reflect.TypeFor[hostset.Config]()
	names := make([]string, t.NumField())
	for i := range names {
		names[i] = t.Field(i).Name
	}
	return names
}

// changedFields are the names of the fields in which a and b differ.
func changedFields(a, b hostset.Config) []string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var out []string
	for i, name := range configFields() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, name)
		}
	}
	return out
}
