package server

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/callgate"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
)

// captureRegistrar keeps the service an adapter registers, so a test can
// call its handlers as gRPC does, without a connection.
type captureRegistrar struct {
	desc *grpc.ServiceDesc
	impl any
}

func (r *captureRegistrar) RegisterService(desc *grpc.ServiceDesc, impl any) {
	r.desc, r.impl = desc, impl
}

// outsideObjects is a node on which every volume is mounted outside any
// rule's roots.
type outsideObjects struct{}

func (outsideObjects) VolumeMounts(context.Context, string) ([]string, error) {
	return []string{"/elsewhere"}, nil
}
func (outsideObjects) VolumeDisk(context.Context, string) (uint32, error)    { return 1, nil }
func (outsideObjects) DiskVolumes(context.Context, uint32) ([]string, error) { return nil, nil }
func (outsideObjects) DiskFacts(context.Context, uint32) (policy.DiskFacts, error) {
	return policy.DiskFacts{}, nil
}

// leafField is one scalar field of a request, reached through nested
// messages.
type leafField struct {
	path []protoreflect.FieldDescriptor
}

func (f leafField) String() string {
	var names []string
	for _, fd := range f.path {
		names = append(names, string(fd.Name()))
	}
	return strings.Join(names, ".")
}

// leaves lists every string and integer field of md, in nested messages
// too; a map field fails the test, which would have to learn it.
func leaves(t *testing.T, md protoreflect.MessageDescriptor, prefix []protoreflect.FieldDescriptor) []leafField {
	var out []leafField
	fs := md.Fields()
	for i := range fs.Len() {
		fd := fs.Get(i)
		p := append(append([]protoreflect.FieldDescriptor(nil), prefix...), fd)
		switch {
		case fd.IsMap():
			t.Errorf("%s: map field %s: the confinement test cannot fill it yet", md.FullName(), fd.Name())
		case fd.Kind() == protoreflect.MessageKind:
			if len(prefix) < 4 {
				out = append(out, leaves(t, fd.Message(), p)...)
			}
		case fd.Kind() == protoreflect.StringKind, fd.Kind() == protoreflect.Uint32Kind, fd.Kind() == protoreflect.Uint64Kind,
			fd.Kind() == protoreflect.Int64Kind, fd.Kind() == protoreflect.Int32Kind:
			out = append(out, leafField{path: p})
		}
	}
	return out
}

// badValue is what the test puts in a field: a relative path (no path
// root holds it), a volume mounted outside every root, the disk numbered
// 9, which the rule does not list.
const badValue = 9

// set puts badValue in f of m, creating the messages on the way.
func (f leafField) set(m protoreflect.Message) {
	for _, fd := range f.path[:len(f.path)-1] {
		m = m.Mutable(fd).Message()
	}
	fd := f.path[len(f.path)-1]
	var v protoreflect.Value
	switch fd.Kind() {
	case protoreflect.StringKind:
		v = protoreflect.ValueOfString(fmt.Sprint(badValue))
	case protoreflect.Uint32Kind:
		v = protoreflect.ValueOfUint32(badValue)
	case protoreflect.Uint64Kind:
		v = protoreflect.ValueOfUint64(badValue)
	case protoreflect.Int64Kind:
		v = protoreflect.ValueOfInt64(badValue)
	case protoreflect.Int32Kind:
		v = protoreflect.ValueOfInt32(badValue)
	}
	if fd.IsList() {
		m.Mutable(fd).List().Append(v)
		return
	}
	m.Set(fd, v)
}

// carries tells whether one of the arguments the gate reads from the
// model holds badValue.
func carries(args []policy.Arg) (policy.ArgKind, bool) {
	for _, a := range args {
		if (a.Kind == policy.ArgDisk && a.Disk == badValue) || (a.Kind != policy.ArgDisk && a.Value == fmt.Sprint(badValue)) {
			return a.Kind, true
		}
	}
	return 0, false
}

// TestEveryVersionConfinedAlike is the confinement table, derived from
// what the daemon serves: for every method of every served API version
// and every string or integer field of its request (nested ones too),
// the field alone is set to a value outside a confining rule (a relative
// path, a volume mounted outside the roots, disk 9 where only disk 1 is
// the rule's). Whenever that value reaches the group model as a path,
// disk or volume argument, whatever the version spells the field (diskID,
// disk_number, mount, target_path), the call is refused PermissionDenied
// before any group runs, and its audit record names the wire version and
// method called. A value the adapter refuses to convert never reaches
// the gate (InvalidArgument). The four bypasses seen with name-guessing
// walkers (v1beta2 SetAttachState, v1alpha1 and v1beta1 PartitionDisk,
// v1beta1 DiskStats) are among the rows and are checked by name.
func TestEveryVersionConfinedAlike(t *testing.T) {
	p, err := policy.Parse([]byte(`
rules:
- name: confined
  callers: [{any: true}]
  allow: [{methods: ["*"]}]
  pathRoots: [/allowed]
  objects: {onlyMountedBeneathPathRoots: true, diskNumbers: [1]}
`), policy.Options{Style: hostpath.POSIX, Methods: callgate.Methods})
	if err != nil {
		t.Fatal(err)
	}
	// Behind the gate, the groups on a simulated node: what the gate
	// lets through runs there, harmlessly.
	_, svc := simNode(t)
	var records strings.Builder
	gate := &callgate.Gate{
		Policy: policy.Static(p), Objects: outsideObjects{}, Audit: audit.New(&records, audit.Options{DenialBurst: -1}), // every denial: the test counts them
		Outcome: statusOutcome,
	}
	guarded := gate.Guard(svc)
	caller := identity.Caller{HasUnixIDs: true, UID: 1000}
	confined := map[row]policy.ArgKind{}
	rows, refusedEarly := 0, 0
	for _, api := range adapter.All() {
		reg := &captureRegistrar{}
		api.Register(reg, guarded)
		sd, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(reg.desc.ServiceName))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range reg.desc.Methods {
			in := sd.(protoreflect.ServiceDescriptor).Methods().ByName(protoreflect.Name(m.MethodName)).Input()
			mt, err := protoregistry.GlobalTypes.FindMessageByName(in.FullName())
			if err != nil {
				t.Fatal(err)
			}
			full := "/" + reg.desc.ServiceName + "/" + m.MethodName
			for _, f := range leaves(t, in, nil) {
				rows++
				req := mt.New()
				f.set(req)
				w := &callgate.Wire{Endpoint: api.Name(), Group: api.Group, Version: api.Version, Method: m.MethodName, FullMethod: full, Caller: &caller}
				before := records.Len()
				_, err := m.Handler(reg.impl, callgate.WithWire(t.Context(), w), func(v any) error {
					proto.Merge(v.(proto.Message), req.Interface())
					return nil
				}, nil)
				where := fmt.Sprintf("%s %s{%s: %d}", api.Name(), m.MethodName, f, badValue)
				if !w.Reached() {
					refusedEarly++
					if errdefs.CodeOf(err) != errdefs.InvalidArgument && !strings.Contains(err.Error(), "InvalidArgument") {
						t.Errorf("%s: refused before the gate with %v, want InvalidArgument", where, err)
					}
					continue
				}
				args, ok := callgate.ArgsOf(w.Model())
				if !ok {
					t.Errorf("%s: the gate cannot read the model request %T", where, w.Model())
					continue
				}
				kind, ok := carries(args)
				if !ok {
					continue
				}
				confined[row{api.Group, api.Version, m.MethodName, f.String()}] = kind
				rf := w.Refusal()
				if rf == nil || rf.Code != errdefs.PermissionDenied {
					t.Errorf("%s: the value reached the model as a %v argument, and the call was not refused (%v)", where, kind, err)
					continue
				}
				recs := auditlog.Parse(t, []byte(records.String()[before:]))
				if len(recs) != 1 || recs[0].Decision != "deny" || recs[0].Version != api.Version || recs[0].Method != m.MethodName ||
					recs[0].FullMethod != full || recs[0].Code != "PermissionDenied" {
					t.Errorf("%s: audit records %+v, want one denial naming %s", where, recs, full)
				}
			}
		}
	}
	for _, bypass := range []row{
		{"disk", "v1beta2", "SetAttachState", "diskID"},
		{"disk", "v1beta1", "PartitionDisk", "diskID"},
		{"disk", "v1alpha1", "PartitionDisk", "diskID"},
		{"disk", "v1beta1", "DiskStats", "diskID"},
		{"disk", "v1", "SetDiskState", "disk_number"},
		{"volume", "v1alpha1", "MountVolume", "path"},
		{"smb", "v1", "NewSmbGlobalMapping", "local_path"},
	} {
		if _, ok := confined[bypass]; !ok {
			t.Errorf("%s.%s's %s is not among the confined rows", bypass.version, bypass.method, bypass.field)
		}
	}
	checkConfinedGolden(t, confined)
	kinds := map[policy.ArgKind]int{}
	for _, k := range confined {
		kinds[k]++
	}
	t.Logf("%d fields of every served method tried: %d confined (%d paths, %d disks, %d volumes), %d refused before the gate",
		rows, len(confined), kinds[policy.ArgPath], kinds[policy.ArgDisk], kinds[policy.ArgVolume], refusedEarly)
	if kinds[policy.ArgPath] == 0 || kinds[policy.ArgDisk] == 0 || kinds[policy.ArgVolume] == 0 {
		t.Errorf("some kind of argument was never confined: %v", kinds)
	}
}

// row is one confined argument: a field of a method's request in one
// served version.
type row struct{ group, version, method, field string }

// confinedGolden lists every confined row with its kind, one a line: a
// change to what the gate confines (a guard tag, a conversion) shows in
// review as a change to this file. CSI_NODE_PROXY_UPDATE_GOLDEN=1
// rewrites it.
const confinedGolden = "testdata/confined-arguments.txt"

var kindNames = map[policy.ArgKind]string{policy.ArgPath: "path", policy.ArgDisk: "disk", policy.ArgVolume: "volume"}

func checkConfinedGolden(t *testing.T, confined map[row]policy.ArgKind) {
	t.Helper()
	var lines []string
	for r, k := range confined {
		lines = append(lines, fmt.Sprintf("%s %s %s %s %s", r.group, r.version, r.method, r.field, kindNames[k]))
	}
	slices.Sort(lines)
	got := "# group version method field kind: every request argument the call gate confines,\n" +
		"# from TestEveryVersionConfinedAlike (CSI_NODE_PROXY_UPDATE_GOLDEN=1 go test ./internal/server -run TestEveryVersionConfinedAlike rewrites it)\n" +
		strings.Join(lines, "\n") + "\n"
	if os.Getenv("CSI_NODE_PROXY_UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(confinedGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(confinedGolden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) == got {
		return
	}
	wantSet := map[string]bool{}
	for _, l := range strings.Split(string(want), "\n") {
		wantSet[l] = true
	}
	for _, l := range lines {
		if !wantSet[l] {
			t.Errorf("newly confined, not in %s: %s", confinedGolden, l)
		}
		delete(wantSet, l)
	}
	for l := range wantSet {
		if l != "" && !strings.HasPrefix(l, "#") {
			t.Errorf("no longer confined: %s", l)
		}
	}
}
