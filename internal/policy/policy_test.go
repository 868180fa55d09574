package policy

import (
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

const (
	cid = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	pod = "6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
)

var knownMethods = map[string][]string{
	"disk":       {"ListDiskLocations", "PartitionDisk", "GetDiskStats"},
	"volume":     {"MountVolume", "ListVolumesOnDisk", "FormatVolume"},
	"filesystem": {"PathExists", "Mkdir", "Rmdir", "CreateSymlink"},
	"smb":        {"NewSmbGlobalMapping"},
	"system":     {"GetBIOSSerialNumber", "StartService"},
}

const example = `
rules:
- name: azuredisk
  callers:
  - uids: [0]
    podUIDs: ["` + pod + `"]
  - windowsAccounts: ['NT AUTHORITY\SYSTEM']
  allow:
  - groups: [disk, volume, filesystem]
    methods: ["*"]
  - methods: ["system.GetBIOSSerialNumber"]
  pathRoots: ['C:\var\lib\kubelet\plugins\disk.csi.azure.com', 'C:\var\lib\kubelet\pods']
- name: readers
  callers: [{any: true}]
  allow:
  - groups: [disk]
    versions: [v1]
    methods: ["List*", "Get*"]
- name: smb-driver
  callers:
  - gids: [2000]
  - containerIDs: ["` + cid + `"]
  - windowsGroups: ["S-1-5-21-1-2-3-1001"]
  allow:
  - methods: ["smb.*"]
  pathRoots: ['C:\var\lib\kubelet\plugins\smb.csi.k8s.io']
`

func mustParse(t *testing.T, s string) *Policy {
	t.Helper()
	p, err := Parse([]byte(s), Options{Style: hostpath.Windows, Methods: knownMethods})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func root(extra ...func(*identity.Caller)) identity.Caller {
	c := identity.Caller{PID: 10, HasUnixIDs: true, UID: 0, GID: 0, ContainerID: cid, PodUID: pod}
	for _, f := range extra {
		f(&c)
	}
	return c
}

func TestDecide(t *testing.T) {
	p := mustParse(t, example)
	if got := p.Rules(); strings.Join(got, ",") != "azuredisk,readers,smb-driver" {
		t.Errorf("Rules() = %v", got)
	}
	other := identity.Caller{PID: 11, HasUnixIDs: true, UID: 1000, GID: 1000}
	system := identity.Caller{PID: 12, WindowsSID: "S-1-5-18", WindowsAccount: `NT AUTHORITY\System`}
	unknown := identity.Caller{Incomplete: "no idea"}
	inGroup := identity.Caller{HasUnixIDs: true, UID: 1000, GID: 1000, Groups: []uint32{5, 2000}}
	winGroup := identity.Caller{WindowsSID: "S-1-5-21-9", WindowsGroupSIDs: []string{"s-1-5-21-1-2-3-1001"}}
	plugin := `C:\var\lib\kubelet\plugins\disk.csi.azure.com\pv1`
	for _, tc := range []struct {
		name   string
		call   Call
		rule   string // "" = denied
		reason string
	}{
		{"root in the pod", Call{Caller: root(), Group: "disk", Version: "v1", Method: "PartitionDisk", Inspected: true, Args: []Arg{diskArg(1)}}, "azuredisk", ""},
		{"root in another pod", Call{Caller: root(func(c *identity.Caller) { c.PodUID = "11111111-2222-3333-4444-555555555555" }), Group: "disk", Version: "v1", Method: "PartitionDisk"}, "", "no rule allows it"},
		{"root without a known pod", Call{Caller: root(func(c *identity.Caller) { c.PodUID = "" }), Group: "disk", Method: "PartitionDisk"}, "", "no rule allows it"},
		{"other uid, mutating", Call{Caller: other, Group: "disk", Version: "v1", Method: "PartitionDisk"}, "", "no rule allows it"},
		{"other uid, read", Call{Caller: other, Group: "disk", Version: "v1", Method: "ListDiskLocations"}, "readers", ""},
		{"other uid, read, other version", Call{Caller: other, Group: "disk", Version: "v1beta3", Method: "ListDiskLocations"}, "", "no rule allows it"},
		{"unidentified, read", Call{Caller: unknown, Group: "disk", Version: "v1", Method: "GetDiskStats"}, "readers", ""},
		{"unidentified, mutating", Call{Caller: unknown, Group: "disk", Version: "v1", Method: "PartitionDisk"}, "", "no rule allows it"},
		{"system account, case-insensitive", Call{Caller: system, Group: "system", Version: "v1alpha1", Method: "GetBIOSSerialNumber", Inspected: true, Args: []Arg{}}, "azuredisk", ""},
		{"system account, method not allowed", Call{Caller: system, Group: "system", Method: "StartService"}, "", "no rule allows it"},
		{"path inside", Call{Caller: root(), Group: "filesystem", Method: "Mkdir", Inspected: true, Args: []Arg{pathArg("path", plugin)}}, "azuredisk", ""},
		{"path inside, other case and slashes", Call{Caller: root(), Group: "filesystem", Method: "Mkdir", Inspected: true, Args: []Arg{pathArg("path", `c:/VAR/lib/kubelet/plugins/disk.csi.azure.com/x`)}}, "azuredisk", ""},
		{"path root itself", Call{Caller: root(), Group: "filesystem", Method: "Mkdir", Inspected: true, Args: []Arg{pathArg("path", `C:\var\lib\kubelet\pods`)}}, "azuredisk", ""},
		{"path beside a root", Call{Caller: root(), Group: "filesystem", Method: "Mkdir", Inspected: true, Args: []Arg{pathArg("path", `C:\var\lib\kubelet\pods-x\a`)}}, "", "outside the path roots"},
		{"path elsewhere", Call{Caller: root(), Group: "filesystem", Method: "Rmdir", Inspected: true, Args: []Arg{pathArg("path", `C:\Windows\System32`)}}, "", `path "C:\\Windows\\System32" is outside`},
		{"traversal", Call{Caller: root(), Group: "filesystem", Method: "Rmdir", Inspected: true, Args: []Arg{pathArg("path", plugin+`\..\..\..\..\..\Windows`)}}, "", "not a valid path"},
		{"second path outside", Call{Caller: root(), Group: "filesystem", Method: "CreateSymlink", Inspected: true, Args: []Arg{pathArg("source_path", plugin), pathArg("target_path", `D:\secret`)}}, "", "target_path"},
		{"volume target path", Call{Caller: root(), Group: "volume", Method: "MountVolume", Inspected: true, Args: []Arg{volumeArg("x"), pathArg("target_path", plugin)}}, "azuredisk", ""},
		{"no request under roots", Call{Caller: root(), Group: "volume", Method: "MountVolume"}, "", "cannot be inspected"},
		{"supplementary group", Call{Caller: inGroup, Group: "smb", Method: "NewSmbGlobalMapping", Inspected: true, Args: []Arg{pathArg("local_path", `C:\var\lib\kubelet\plugins\smb.csi.k8s.io\m`)}}, "smb-driver", ""},
		{"remote path is not a host path", Call{Caller: inGroup, Group: "smb", Method: "NewSmbGlobalMapping", Inspected: true, Args: []Arg{}}, "smb-driver", ""},
		{"container", Call{Caller: identity.Caller{ContainerID: strings.ToUpper(cid)}, Group: "smb", Method: "NewSmbGlobalMapping", Inspected: true, Args: []Arg{}}, "smb-driver", ""},
		{"windows group", Call{Caller: winGroup, Group: "smb", Method: "RemoveSmbGlobalMapping", Inspected: true, Args: []Arg{}}, "smb-driver", ""},
		{"windows group, other group", Call{Caller: winGroup, Group: "disk", Method: "PartitionDisk"}, "", "no rule allows it"},
	} {
		d := p.Decide(tc.call)
		switch {
		case tc.rule != "" && (!d.Allowed || d.Rule != tc.rule):
			t.Errorf("%s: %+v, want allowed by %s", tc.name, d, tc.rule)
		case tc.rule == "" && (d.Allowed || !strings.Contains(d.Reason, tc.reason)):
			t.Errorf("%s: %+v, want denied with %q", tc.name, d, tc.reason)
		}
	}
	// No policy allows everything; an empty one nothing.
	if d := (*Policy)(nil).Decide(Call{Caller: unknown, Group: "disk", Method: "PartitionDisk"}); !d.Allowed {
		t.Error("nil policy denied")
	}
	if d := (&Policy{style: hostpath.Windows}).Decide(Call{Caller: root(), Group: "disk", Method: "PartitionDisk"}); d.Allowed {
		t.Error("empty policy allowed")
	}
}

func TestDenialMessage(t *testing.T) {
	p := mustParse(t, example)
	c := Call{Caller: identity.Caller{PID: 7, HasUnixIDs: true, UID: 1000, GID: 1000, PodUID: pod}, Group: "disk", Version: "v1", Method: "PartitionDisk"}
	d := p.Decide(c)
	want := "caller pid 7 uid 1000 gid 1000 pod " + pod + " may not call disk.PartitionDisk: no rule allows it"
	if got := d.Message(c); got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

func TestPOSIXPaths(t *testing.T) {
	p, err := Parse([]byte(`
rules:
- name: linux
  callers: [{uids: [0]}]
  allow: [{methods: ["*"]}]
  pathRoots: [/var/lib/kubelet/plugins/x, /var/lib/kubelet/pods]
`), Options{Style: hostpath.POSIX})
	if err != nil {
		t.Fatal(err)
	}
	for path, ok := range map[string]bool{
		"/var/lib/kubelet/pods/abc":       true,
		"/var/lib/kubelet/plugins/x":      true,
		"/var/lib/kubelet/plugins/xy":     false,
		"/VAR/lib/kubelet/pods/abc":       false,
		"/var/lib/kubelet/pods/../../etc": false,
		`C:\var\lib\kubelet\pods`:         false,
	} {
		d := p.Decide(Call{Caller: root(), Group: "filesystem", Method: "Mkdir", Inspected: true, Args: []Arg{pathArg("path", path)}})
		if d.Allowed != ok {
			t.Errorf("%s: %+v, want allowed=%v", path, d, ok)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for name, tc := range map[string]struct{ yaml, want string }{
		"not yaml":          {"rules: [", "parse policy"},
		"unknown field":     {"rules:\n- name: a\n  callers: [{uid: [0]}]\n  allow: [{methods: ['*']}]\n", "unknown field"},
		"misspelt key":      {"rule:\n- name: a\n", "unknown field"},
		"duplicate key":     {"rules: []\nrules: []\n", "parse policy"},
		"case-variant key":  {"rules:\n- name: a\n  callers: [{uids: [0]}]\n  allow: [{methods: ['*']}]\n  pathRoots: [/var/lib/kubelet/plugins/a]\n  pathroots: ['/']\n", `unknown field "rules[0].pathroots"`},
		"case-variant only": {"rules:\n- name: a\n  callers: [{uids: [0]}]\n  allow: [{methods: ['*']}]\n  PathRoots: ['/']\n", `unknown field "rules[0].PathRoots"`},
		"case-variant top":  {"Rules:\n- {name: a, callers: [{uids: [0]}], allow: [{methods: ['*']}]}\n", `unknown field "Rules"`},
		"nested duplicate":  {"rules:\n- name: a\n  callers: [{uids: [0], uids: [1]}]\n  allow: [{methods: ['*']}]\n", "parse policy"},
		"selector case":     {"rules:\n- {name: a, callers: [{UIDs: [0]}], allow: [{methods: ['*']}]}\n", `unknown field "rules[0].callers[0].UIDs"`},
		"rules key null":    {"rules:\n", "no rules"},
		"bad mode":          {"mode: audit\nrules: []\n", `mode "audit"`},
		"unknown preset":    {"presets: [azure-disk]\nrules: []\n", `preset "azure-disk": no such preset for Windows nodes`},
		"preset name twice": {"presets: [smb]\nrules:\n- {name: smb, callers: [{uids: [0]}], allow: [{methods: ['*']}]}\n", "used twice"},
		"empty file":        {"", "no rules"},
		"no name":           {"rules:\n- callers: [{uids: [0]}]\n  allow: [{methods: ['*']}]\n", "name must be"},
		"duplicate name":    {"rules:\n- {name: a, callers: [{uids: [0]}], allow: [{methods: ['*']}]}\n- {name: a, callers: [{uids: [1]}], allow: [{methods: ['*']}]}\n", "used twice"},
		"no callers":        {"rules:\n- {name: a, allow: [{methods: ['*']}]}\n", "no callers"},
		"empty selector":    {"rules:\n- {name: a, callers: [{}], allow: [{methods: ['*']}]}\n", "empty"},
		"any plus uid":      {"rules:\n- {name: a, callers: [{any: true, uids: [0]}], allow: [{methods: ['*']}]}\n", "any cannot be combined"},
		"negative uid":      {"rules:\n- {name: a, callers: [{uids: [-1]}], allow: [{methods: ['*']}]}\n", "parse policy"},
		"short container":   {"rules:\n- {name: a, callers: [{containerIDs: [abc]}], allow: [{methods: ['*']}]}\n", "not a full container ID"},
		"bad pod":           {"rules:\n- {name: a, callers: [{podUIDs: [nope]}], allow: [{methods: ['*']}]}\n", "not a pod UID"},
		"group name as SID": {"rules:\n- {name: a, callers: [{windowsGroups: [Administrators]}], allow: [{methods: ['*']}]}\n", "not a SID"},
		"allows nothing":    {"rules:\n- {name: a, callers: [{uids: [0]}]}\n", "allows nothing"},
		"no methods":        {"rules:\n- {name: a, callers: [{uids: [0]}], allow: [{groups: [disk]}]}\n", "no methods"},
		"bad pattern":       {"rules:\n- {name: a, callers: [{uids: [0]}], allow: [{methods: ['[']}]}\n", "syntax error"},
		"unknown group":     {"rules:\n- {name: a, callers: [{uids: [0]}], allow: [{groups: [disks], methods: ['*']}]}\n", `unknown group "disks"`},
		"unknown method":    {"rules:\n- {name: a, callers: [{uids: [0]}], allow: [{groups: [disk], methods: [PartitionDisks]}]}\n", `no method "PartitionDisks"`},
		"method elsewhere":  {"rules:\n- {name: a, callers: [{uids: [0]}], allow: [{groups: [disk], methods: [Mkdir]}]}\n", `no method "Mkdir"`},
		"qualified outside": {"rules:\n- {name: a, callers: [{uids: [0]}], allow: [{groups: [disk], methods: [volume.MountVolume]}]}\n", "leaves out"},
		"relative root":     {"rules:\n- {name: a, callers: [{uids: [0]}], allow: [{methods: ['*']}], pathRoots: ['var\\lib']}\n", "pathRoots"},
		"UNC root":          {"rules:\n- {name: a, callers: [{uids: [0]}], allow: [{methods: ['*']}], pathRoots: ['\\\\srv\\share']}\n", "pathRoots"},
	} {
		_, err := Parse([]byte(tc.yaml), Options{Style: hostpath.Windows, Methods: knownMethods})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
	if _, err := Parse([]byte(example), Options{}); err == nil {
		t.Error("parsed without a path style")
	}
	// Every problem is reported at once.
	_, err := Parse([]byte("rules:\n- {name: a, callers: [{}], allow: [{groups: [disks], methods: ['*']}]}\n"), Options{Style: hostpath.Windows, Methods: knownMethods})
	if err == nil || !strings.Contains(err.Error(), "empty") || !strings.Contains(err.Error(), "unknown group") {
		t.Errorf("all problems: %v", err)
	}
}

// pathArg, diskArg and volumeArg are the arguments the call gate reads
// from a model request's guarded fields.
func pathArg(field, v string) Arg { return Arg{Field: field, Kind: ArgPath, Value: v} }
func diskArg(n uint32) Arg        { return Arg{Field: "disk_number", Kind: ArgDisk, Disk: n} }
func volumeArg(id string) Arg     { return Arg{Field: "volume_id", Kind: ArgVolume, Value: id} }
