package wirecompat

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	diskv1 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1"
	diskv1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1alpha1"
	diskv1beta1 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1beta1"
	diskv1beta2 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1beta2"
	diskv1beta3 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1beta3"
	fsv1 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v1"
	fsv1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v1alpha1"
	fsv1beta1 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v1beta1"
	fsv1beta2 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v1beta2"
	fsv2alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v2alpha1"
	iscsiv1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/iscsi/v1alpha1"
	iscsiv1alpha2 "github.com/kubernetes-csi/csi-proxy/client/api/iscsi/v1alpha2"
	smbv1 "github.com/kubernetes-csi/csi-proxy/client/api/smb/v1"
	smbv1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/smb/v1alpha1"
	smbv1beta1 "github.com/kubernetes-csi/csi-proxy/client/api/smb/v1beta1"
	smbv1beta2 "github.com/kubernetes-csi/csi-proxy/client/api/smb/v1beta2"
	systemv1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/system/v1alpha1"
	volumev1 "github.com/kubernetes-csi/csi-proxy/client/api/volume/v1"
	volumev1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/volume/v1alpha1"
	volumev1beta1 "github.com/kubernetes-csi/csi-proxy/client/api/volume/v1beta1"
	volumev1beta2 "github.com/kubernetes-csi/csi-proxy/client/api/volume/v1beta2"
	volumev1beta3 "github.com/kubernetes-csi/csi-proxy/client/api/volume/v1beta3"
	volumev2alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/volume/v2alpha1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// groupVersion pairs one of our .proto files with upstream's.
type groupVersion struct {
	group, version string
	// ours is the path of our file relative to the api root (and the name
	// protoc gives it).
	ours string
	// theirs is the name upstream's stub registers in GlobalFiles: the
	// full github.com/kubernetes-csi/csi-proxy/client/api/<group>/<version>/api.proto
	// unless served says otherwise (three old stubs were generated from
	// other directories).
	theirs string
}

func (g groupVersion) String() string { return g.group + "/" + g.version }

const upstreamPrefix = "github.com/kubernetes-csi/csi-proxy/client/api/"

// served lists the 23 group-versions csi-node-proxy serves: every one that
// upstream csi-proxy v1.3.0 serves.
var served = []groupVersion{
	{"disk", "v1alpha1", "", ""},
	{"disk", "v1beta1", "", "disk/v1beta1/api.proto"},
	{"disk", "v1beta2", "", ""},
	{"disk", "v1beta3", "", ""},
	{"disk", "v1", "", ""},
	{"volume", "v1alpha1", "", ""},
	{"volume", "v1beta1", "", "volume/v1beta1/api.proto"},
	{"volume", "v1beta2", "", "client/api/volume/v1beta2/api.proto"},
	{"volume", "v1beta3", "", ""},
	{"volume", "v1", "", ""},
	{"volume", "v2alpha1", "", ""},
	{"filesystem", "v1alpha1", "", ""},
	{"filesystem", "v1beta1", "", ""},
	{"filesystem", "v1beta2", "", ""},
	{"filesystem", "v1", "", ""},
	{"filesystem", "v2alpha1", "", ""},
	{"smb", "v1alpha1", "", ""},
	{"smb", "v1beta1", "", ""},
	{"smb", "v1beta2", "", ""},
	{"smb", "v1", "", ""},
	{"iscsi", "v1alpha1", "", ""},
	{"iscsi", "v1alpha2", "", ""},
	{"system", "v1alpha1", "", ""},
}

func init() {
	for i := range served {
		g := &served[i]
		g.ours = g.group + "/" + g.version + "/" + g.group + ".proto"
		if g.theirs == "" {
			g.theirs = upstreamPrefix + g.group + "/" + g.version + "/api.proto"
		}
	}
}

const (
	wantServices = 23
	wantMethods  = 139
)

// upstreamFiles are the upstream descriptors, referenced explicitly so the
// packages are linked and registered. The new-style stubs expose File_…
// variables; the old golang/protobuf ones (every v1alpha and the v1beta1 and
// v1beta2 versions that predate the new style, iscsi v1alpha2, system
// v1alpha1) register through proto.RegisterFile, which also lands in
// GlobalFiles.
var upstreamFiles = map[string]protoreflect.FileDescriptor{
	"disk/v1":             diskv1.File_github_com_kubernetes_csi_csi_proxy_client_api_disk_v1_api_proto,
	"disk/v1beta3":        diskv1beta3.File_github_com_kubernetes_csi_csi_proxy_client_api_disk_v1beta3_api_proto,
	"volume/v1":           volumev1.File_github_com_kubernetes_csi_csi_proxy_client_api_volume_v1_api_proto,
	"volume/v1beta3":      volumev1beta3.File_github_com_kubernetes_csi_csi_proxy_client_api_volume_v1beta3_api_proto,
	"volume/v2alpha1":     volumev2alpha1.File_github_com_kubernetes_csi_csi_proxy_client_api_volume_v2alpha1_api_proto,
	"filesystem/v1":       fsv1.File_github_com_kubernetes_csi_csi_proxy_client_api_filesystem_v1_api_proto,
	"filesystem/v1beta2":  fsv1beta2.File_github_com_kubernetes_csi_csi_proxy_client_api_filesystem_v1beta2_api_proto,
	"filesystem/v2alpha1": fsv2alpha1.File_github_com_kubernetes_csi_csi_proxy_client_api_filesystem_v2alpha1_api_proto,
	"smb/v1":              smbv1.File_github_com_kubernetes_csi_csi_proxy_client_api_smb_v1_api_proto,
	"smb/v1beta2":         smbv1beta2.File_github_com_kubernetes_csi_csi_proxy_client_api_smb_v1beta2_api_proto,
	// Old style: no File_ variable; touch a type so the package is linked.
	"disk/v1alpha1":       registered((*diskv1alpha1.RescanRequest)(nil)),
	"disk/v1beta1":        registered((*diskv1beta1.RescanRequest)(nil)),
	"disk/v1beta2":        registered((*diskv1beta2.RescanRequest)(nil)),
	"volume/v1alpha1":     registered((*volumev1alpha1.FormatVolumeRequest)(nil)),
	"volume/v1beta1":      registered((*volumev1beta1.FormatVolumeRequest)(nil)),
	"volume/v1beta2":      registered((*volumev1beta2.FormatVolumeRequest)(nil)),
	"filesystem/v1alpha1": registered(fsv1alpha1.PathContext_PLUGIN),
	"filesystem/v1beta1":  registered(fsv1beta1.PathContext_PLUGIN),
	"smb/v1alpha1":        registered((*smbv1alpha1.RemoveSmbGlobalMappingRequest)(nil)),
	"smb/v1beta1":         registered((*smbv1beta1.RemoveSmbGlobalMappingRequest)(nil)),
	"iscsi/v1alpha1":      registered(iscsiv1alpha1.AuthenticationType_NONE),
	"iscsi/v1alpha2":      registered(iscsiv1alpha2.AuthenticationType_NONE),
	"system/v1alpha1":     registered(systemv1alpha1.ServiceStatus_UNKNOWN),
}

// registered returns nil; the descriptor is fetched from GlobalFiles.
func registered(any) protoreflect.FileDescriptor { return nil }

// theirFile returns upstream's descriptor for g, always checking that it is
// registered in GlobalFiles under the expected path.
func theirFile(t *testing.T, g groupVersion) protoreflect.FileDescriptor {
	t.Helper()
	fd, err := protoregistry.GlobalFiles.FindFileByPath(g.theirs)
	if err != nil {
		t.Fatalf("%s: upstream descriptor %s not registered: %v", g, g.theirs, err)
	}
	if v := upstreamFiles[g.String()]; v != nil && v != fd {
		t.Fatalf("%s: File_ variable and GlobalFiles entry differ", g)
	}
	return fd
}

// protoRoot is our api directory; WIRECOMPAT_PROTO_ROOT overrides it, e.g.
// to check a deliberately broken copy.
func protoRoot() string {
	if r := os.Getenv("WIRECOMPAT_PROTO_ROOT"); r != "" {
		return r
	}
	return filepath.Join("..", "..", "api")
}

// ourFiles compiles our 23 protos with protoc into a private registry (never
// GlobalFiles: the names would clash with upstream's).
func ourFiles(t *testing.T) *protoregistry.Files {
	t.Helper()
	protoc := os.Getenv("PROTOC")
	if protoc == "" {
		var err error
		if protoc, err = exec.LookPath("protoc"); err != nil {
			t.Fatalf("protoc not found (install protobuf-compiler or set PROTOC): %v", err)
		}
	}
	out := filepath.Join(t.TempDir(), "ours.binpb")
	args := []string{"-I", protoRoot(), "--descriptor_set_out=" + out}
	for _, g := range served {
		args = append(args, g.ours)
	}
	cmd := exec.Command(protoc, args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", protoc, strings.Join(args, " "), err, b)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(raw, &set); err != nil {
		t.Fatalf("parse %s: %v", out, err)
	}
	files, err := protodesc.NewFiles(&set)
	if err != nil {
		t.Fatalf("build descriptors from %s: %v", out, err)
	}
	return files
}

// TestDescriptorsMatchUpstream is the wire identity check: for each served
// group-version our .proto must declare exactly what upstream's does.
func TestDescriptorsMatchUpstream(t *testing.T) {
	ours := ourFiles(t)
	var services, methods [2]int
	for _, g := range served {
		t.Run(g.group+"_"+g.version, func(t *testing.T) {
			o, err := ours.FindFileByPath(g.ours)
			if err != nil {
				t.Fatalf("our %s: %v", g.ours, err)
			}
			th := theirFile(t, g)
			for i, fd := range []protoreflect.FileDescriptor{o, th} {
				services[i] += fd.Services().Len()
				for j := 0; j < fd.Services().Len(); j++ {
					methods[i] += fd.Services().Get(j).Methods().Len()
				}
			}
			for _, d := range compareFiles(o, th) {
				t.Error(d)
			}
			// Declaration order is not part of the wire format, but keeping
			// it equal keeps our descriptors and generated code comparable
			// with upstream's line by line, so a drift fails too.
			for _, n := range orderNotes(o, th) {
				t.Error("declaration order differs from upstream (not a wire difference):", n)
			}
		})
	}
	for i, side := range []string{"ours", "upstream"} {
		if services[i] != wantServices || methods[i] != wantMethods {
			t.Errorf("%s: %d services, %d methods; want %d and %d", side, services[i], methods[i], wantServices, wantMethods)
		}
	}
}

// TestComparerCatchesDifferences proves compareFiles is not blind: each case
// mutates a copy of an upstream descriptor and expects the named difference.
func TestComparerCatchesDifferences(t *testing.T) {
	base := func(g string) *descriptorpb.FileDescriptorProto {
		for _, gv := range served {
			if gv.String() == g {
				return protodesc.ToFileDescriptorProto(theirFile(t, gv))
			}
		}
		t.Fatalf("no group-version %s", g)
		return nil
	}
	msg := func(f *descriptorpb.FileDescriptorProto, name string) *descriptorpb.DescriptorProto {
		for _, m := range f.MessageType {
			if m.GetName() == name {
				return m
			}
		}
		t.Fatalf("no message %s", name)
		return nil
	}
	field := func(m *descriptorpb.DescriptorProto, name string) *descriptorpb.FieldDescriptorProto {
		for _, f := range m.Field {
			if f.GetName() == name {
				return f
			}
		}
		t.Fatalf("no field %s.%s", m.GetName(), name)
		return nil
	}
	cases := []struct {
		name   string
		gv     string
		mutate func(f *descriptorpb.FileDescriptorProto)
		want   string // substring of one reported difference
	}{
		{"unchanged", "disk/v1", func(*descriptorpb.FileDescriptorProto) {}, ""},
		{"field number", "disk/v1", func(f *descriptorpb.FileDescriptorProto) {
			field(msg(f, "DiskIDs"), "serial_number").Number = proto.Int32(3)
		}, "v1.DiskIDs.serial_number: number: ours 3, upstream 2"},
		{"field type", "disk/v1", func(f *descriptorpb.FileDescriptorProto) {
			field(msg(f, "GetDiskStatsResponse"), "total_bytes").Type = descriptorpb.FieldDescriptorProto_TYPE_UINT64.Enum()
		}, "v1.GetDiskStatsResponse.total_bytes: type: ours uint64, upstream int64"},
		{"field label", "volume/v1", func(f *descriptorpb.FileDescriptorProto) {
			field(msg(f, "ListVolumesOnDiskResponse"), "volume_ids").Label = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
		}, "v1.ListVolumesOnDiskResponse.volume_ids: label: ours optional, upstream repeated"},
		{"field json name", "disk/v1", func(f *descriptorpb.FileDescriptorProto) {
			field(msg(f, "ListDiskIDsResponse"), "diskIDs").JsonName = proto.String("diskIds")
		}, `v1.ListDiskIDsResponse.diskIDs: json_name: ours "diskIds", upstream "diskIDs"`},
		{"field renamed", "disk/v1", func(f *descriptorpb.FileDescriptorProto) {
			ff := field(msg(f, "DiskLocation"), "LUNID")
			ff.Name, ff.JsonName = proto.String("lun_id"), proto.String("lunId")
		}, "v1.DiskLocation.LUNID: field missing in ours"},
		{"field added", "smb/v1", func(f *descriptorpb.FileDescriptorProto) {
			m := msg(f, "RemoveSmbGlobalMappingRequest")
			m.Field = append(m.Field, &descriptorpb.FieldDescriptorProto{
				Name: proto.String("extra"), JsonName: proto.String("extra"), Number: proto.Int32(9),
				Type: descriptorpb.FieldDescriptorProto_TYPE_BOOL.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			})
		}, "v1.RemoveSmbGlobalMappingRequest.extra: field only in ours"},
		{"map value type", "disk/v1", func(f *descriptorpb.FileDescriptorProto) {
			entry := msg(f, "ListDiskLocationsResponse").NestedType[0]
			entry.Field[0].Type = descriptorpb.FieldDescriptorProto_TYPE_UINT64.Enum()
		}, "v1.ListDiskLocationsResponse.DiskLocationsEntry.key: type: ours uint64, upstream uint32"},
		{"message type_name", "iscsi/v1alpha2", func(f *descriptorpb.FileDescriptorProto) {
			field(msg(f, "ConnectTargetRequest"), "auth_type").TypeName = proto.String(".v1alpha2.OtherAuth")
			f.EnumType = append(f.EnumType, &descriptorpb.EnumDescriptorProto{
				Name:  proto.String("OtherAuth"),
				Value: []*descriptorpb.EnumValueDescriptorProto{{Name: proto.String("X"), Number: proto.Int32(0)}},
			})
		}, "v1alpha2.ConnectTargetRequest.auth_type: type_name: ours v1alpha2.OtherAuth, upstream v1alpha2.AuthenticationType"},
		{"enum value number", "system/v1alpha1", func(f *descriptorpb.FileDescriptorProto) {
			f.EnumType[0].Value[1].Number = proto.Int32(11)
		}, "v1alpha1.ServiceStatus.STOPPED: number: ours 11, upstream 1"},
		{"enum value added", "iscsi/v1alpha2", func(f *descriptorpb.FileDescriptorProto) {
			f.EnumType[0].Value = append(f.EnumType[0].Value, &descriptorpb.EnumValueDescriptorProto{Name: proto.String("KERBEROS"), Number: proto.Int32(3)})
		}, "v1alpha2.AuthenticationType.KERBEROS: value only in ours"},
		{"method output", "filesystem/v1", func(f *descriptorpb.FileDescriptorProto) {
			f.Service[0].Method[0].OutputType = proto.String(".v1.MkdirResponse")
		}, "v1.Filesystem.PathExists: output: ours v1.MkdirResponse, upstream v1.PathExistsResponse"},
		{"method streaming", "volume/v2alpha1", func(f *descriptorpb.FileDescriptorProto) {
			f.Service[0].Method[1].ServerStreaming = proto.Bool(true)
		}, "v2alpha1.Volume.MountVolume: server_streaming: ours true, upstream false"},
		{"method removed", "filesystem/v2alpha1", func(f *descriptorpb.FileDescriptorProto) {
			ms := f.Service[0].Method[:0]
			for _, m := range f.Service[0].Method {
				if m.GetName() != "RmdirContents" {
					ms = append(ms, m)
				}
			}
			f.Service[0].Method = ms
		}, "v2alpha1.Filesystem.RmdirContents: method missing in ours"},
		{"service renamed", "smb/v1", func(f *descriptorpb.FileDescriptorProto) {
			f.Service[0].Name = proto.String("SMB")
		}, "v1.Smb: service missing in ours"},
		{"package", "system/v1alpha1", func(f *descriptorpb.FileDescriptorProto) {
			f.Package = proto.String("system.v1alpha1")
			for _, m := range f.MessageType {
				for _, ff := range m.Field {
					if ff.TypeName != nil {
						ff.TypeName = proto.String(strings.Replace(ff.GetTypeName(), ".v1alpha1.", ".system.v1alpha1.", 1))
					}
				}
			}
			for _, s := range f.Service {
				for _, m := range s.Method {
					m.InputType = proto.String(strings.Replace(m.GetInputType(), ".v1alpha1.", ".system.v1alpha1.", 1))
					m.OutputType = proto.String(strings.Replace(m.GetOutputType(), ".v1alpha1.", ".system.v1alpha1.", 1))
				}
			}
		}, `package: ours "system.v1alpha1", upstream "v1alpha1"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gv := c.gv
			var g groupVersion
			for _, s := range served {
				if s.String() == gv {
					g = s
				}
			}
			fdp := base(gv)
			c.mutate(fdp)
			fdp.Name = proto.String("mutated/" + gv + ".proto") // never the registered name
			mutated, err := protodesc.NewFile(fdp, nil)         // nil resolver: private, unregistered
			if err != nil {
				t.Fatalf("build mutated descriptor: %v", err)
			}
			diffs := compareFiles(mutated, theirFile(t, g))
			if c.want == "" {
				if len(diffs) != 0 {
					t.Fatalf("unchanged copy reported differences:\n%s", strings.Join(diffs, "\n"))
				}
				return
			}
			for _, d := range diffs {
				if strings.Contains(d, c.want) {
					return
				}
			}
			t.Fatalf("want a difference containing %q, got:\n%s", c.want, strings.Join(diffs, "\n"))
		})
	}
}

// compareFiles lists every wire-relevant difference between our file and
// upstream's, each as "<our file>: <element>: <what>: ours X, upstream Y".
func compareFiles(ours, theirs protoreflect.FileDescriptor) []string {
	c := &comparer{file: ours.Path()}
	if ours.Package() != theirs.Package() {
		c.add("package: ours %q, upstream %q", ours.Package(), theirs.Package())
	}
	if ours.Syntax() != theirs.Syntax() {
		c.add("syntax: ours %v, upstream %v", ours.Syntax(), theirs.Syntax())
	}
	c.services(ours.Services(), theirs.Services())
	c.messages(ours.Messages(), theirs.Messages(), string(theirs.Package()))
	c.enums(ours.Enums(), theirs.Enums(), string(theirs.Package()))
	return c.diffs
}

type comparer struct {
	file  string
	diffs []string
}

func (c *comparer) add(format string, args ...any) {
	c.diffs = append(c.diffs, c.file+": "+fmt.Sprintf(format, args...))
}

// differ records what of element el when ours (a) and upstream's (b)
// differ, printing both with verb.
func differ[T comparable](c *comparer, el protoreflect.FullName, what, verb string, a, b T) {
	if a != b {
		c.add("%s: %s: ours "+verb+", upstream "+verb, el, what, a, b)
	}
}

// pair walks two named lists: both(name, i, j) for names on both sides,
// missing/extra for names on one side, in sorted order.
func pair[D protoreflect.Descriptor](ours, theirs []D, both func(o, t D), missing, extra func(D)) {
	om, tm := map[protoreflect.Name]D{}, map[protoreflect.Name]D{}
	var names []string
	for _, d := range ours {
		om[d.Name()] = d
		names = append(names, string(d.Name()))
	}
	for _, d := range theirs {
		tm[d.Name()] = d
		if _, ok := om[d.Name()]; !ok {
			names = append(names, string(d.Name()))
		}
	}
	sort.Strings(names)
	for _, n := range names {
		o, inO := om[protoreflect.Name(n)]
		t, inT := tm[protoreflect.Name(n)]
		switch {
		case inO && inT:
			both(o, t)
		case inT:
			missing(t)
		default:
			extra(o)
		}
	}
}

func list[D any](l interface {
	Len() int
	Get(int) D
}) []D {
	out := make([]D, l.Len())
	for i := range out {
		out[i] = l.Get(i)
	}
	return out
}

func (c *comparer) services(ours, theirs protoreflect.ServiceDescriptors) {
	pair(list(ours), list(theirs), func(o, t protoreflect.ServiceDescriptor) {
		pair(list(o.Methods()), list(t.Methods()), func(om, tm protoreflect.MethodDescriptor) {
			el := tm.FullName()
			differ(c, el, "input", "%s", om.Input().FullName(), tm.Input().FullName())
			differ(c, el, "output", "%s", om.Output().FullName(), tm.Output().FullName())
			differ(c, el, "client_streaming", "%v", om.IsStreamingClient(), tm.IsStreamingClient())
			differ(c, el, "server_streaming", "%v", om.IsStreamingServer(), tm.IsStreamingServer())
		}, func(tm protoreflect.MethodDescriptor) {
			c.add("%s: method missing in ours", tm.FullName())
		}, func(om protoreflect.MethodDescriptor) {
			c.add("%s: method only in ours", om.FullName())
		})
	}, func(t protoreflect.ServiceDescriptor) {
		c.add("%s: service missing in ours", t.FullName())
	}, func(o protoreflect.ServiceDescriptor) {
		c.add("%s: service only in ours", o.FullName())
	})
}

func (c *comparer) messages(ours, theirs protoreflect.MessageDescriptors, scope string) {
	pair(list(ours), list(theirs), func(o, t protoreflect.MessageDescriptor) {
		el := t.FullName()
		differ(c, el, "map_entry", "%v", o.IsMapEntry(), t.IsMapEntry())
		pair(list(o.Fields()), list(t.Fields()), c.field, func(tf protoreflect.FieldDescriptor) {
			c.add("%s: field missing in ours (upstream %s = %d)", tf.FullName(), tf.Kind(), tf.Number())
		}, func(of protoreflect.FieldDescriptor) {
			c.add("%s.%s: field only in ours (%s = %d)", el, of.Name(), of.Kind(), of.Number())
		})
		pair(list(o.Oneofs()), list(t.Oneofs()), func(oo, to protoreflect.OneofDescriptor) {}, func(to protoreflect.OneofDescriptor) {
			c.add("%s: oneof missing in ours", to.FullName())
		}, func(oo protoreflect.OneofDescriptor) {
			c.add("%s.%s: oneof only in ours", el, oo.Name())
		})
		differ(c, el, "reserved ranges", "%d", o.ReservedRanges().Len(), t.ReservedRanges().Len())
		c.messages(o.Messages(), t.Messages(), string(el))
		c.enums(o.Enums(), t.Enums(), string(el))
	}, func(t protoreflect.MessageDescriptor) {
		c.add("%s: message missing in ours", t.FullName())
	}, func(o protoreflect.MessageDescriptor) {
		c.add("%s.%s: message only in ours", scope, o.Name())
	})
}

func (c *comparer) field(o, t protoreflect.FieldDescriptor) {
	el := t.FullName()
	differ(c, el, "number", "%d", o.Number(), t.Number())
	differ(c, el, "type", "%s", o.Kind(), t.Kind())
	differ(c, el, "label", "%s", o.Cardinality(), t.Cardinality())
	differ(c, el, "type_name", "%s", typeName(o), typeName(t))
	differ(c, el, "json_name", "%q", o.JSONName(), t.JSONName())
	differ(c, el, "packed", "%v", o.IsPacked(), t.IsPacked())
	differ(c, el, "presence (proto3 optional)", "%v", o.HasPresence(), t.HasPresence())
	differ(c, el, "oneof", "%q", oneofName(o), oneofName(t))
}

func typeName(f protoreflect.FieldDescriptor) protoreflect.FullName {
	switch {
	case f.Message() != nil:
		return f.Message().FullName()
	case f.Enum() != nil:
		return f.Enum().FullName()
	}
	return ""
}

func oneofName(f protoreflect.FieldDescriptor) protoreflect.Name {
	if o := f.ContainingOneof(); o != nil {
		return o.Name()
	}
	return ""
}

func (c *comparer) enums(ours, theirs protoreflect.EnumDescriptors, scope string) {
	pair(list(ours), list(theirs), func(o, t protoreflect.EnumDescriptor) {
		// Enum value names are scoped to the enum's parent; report them
		// under the enum for readability.
		el := t.FullName()
		pair(list(o.Values()), list(t.Values()), func(ov, tv protoreflect.EnumValueDescriptor) {
			if a, b := ov.Number(), tv.Number(); a != b {
				c.add("%s.%s: number: ours %d, upstream %d", el, tv.Name(), a, b)
			}
		}, func(tv protoreflect.EnumValueDescriptor) {
			c.add("%s.%s: value missing in ours (upstream = %d)", el, tv.Name(), tv.Number())
		}, func(ov protoreflect.EnumValueDescriptor) {
			c.add("%s.%s: value only in ours (= %d)", el, ov.Name(), ov.Number())
		})
	}, func(t protoreflect.EnumDescriptor) {
		c.add("%s: enum missing in ours", t.FullName())
	}, func(o protoreflect.EnumDescriptor) {
		c.add("%s.%s: enum only in ours", scope, o.Name())
	})
}

// orderNotes reports declaration-order differences (methods, top-level
// messages, enums, fields) that do not change the wire format but do change
// generated code order and descriptor bytes.
func orderNotes(ours, theirs protoreflect.FileDescriptor) []string {
	var notes []string
	names := func(n int, get func(int) protoreflect.Name) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = string(get(i))
		}
		return out
	}
	cmp := func(what string, o, t []string) {
		if strings.Join(o, ",") != strings.Join(t, ",") {
			notes = append(notes, fmt.Sprintf("%s: %s order: ours %v, upstream %v", ours.Path(), what, o, t))
		}
	}
	for i := 0; i < ours.Services().Len() && i < theirs.Services().Len(); i++ {
		os, ts := ours.Services().Get(i), theirs.Services().Get(i)
		cmp(string(ts.FullName())+" method", names(os.Methods().Len(), func(j int) protoreflect.Name { return os.Methods().Get(j).Name() }),
			names(ts.Methods().Len(), func(j int) protoreflect.Name { return ts.Methods().Get(j).Name() }))
	}
	cmp("message", names(ours.Messages().Len(), func(j int) protoreflect.Name { return ours.Messages().Get(j).Name() }),
		names(theirs.Messages().Len(), func(j int) protoreflect.Name { return theirs.Messages().Get(j).Name() }))
	cmp("enum", names(ours.Enums().Len(), func(j int) protoreflect.Name { return ours.Enums().Get(j).Name() }),
		names(theirs.Enums().Len(), func(j int) protoreflect.Name { return theirs.Enums().Get(j).Name() }))
	for i := 0; i < theirs.Messages().Len(); i++ {
		tm := theirs.Messages().Get(i)
		om := ours.Messages().ByName(tm.Name())
		if om == nil {
			continue
		}
		cmp(string(tm.FullName())+" field", names(om.Fields().Len(), func(j int) protoreflect.Name { return om.Fields().Get(j).Name() }),
			names(tm.Fields().Len(), func(j int) protoreflect.Name { return tm.Fields().Get(j).Name() }))
	}
	return notes
}
