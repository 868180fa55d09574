package server

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	iscsiv1alpha2 "github.com/csi-node-proxy/csi-node-proxy/api/iscsi/v1alpha2"
	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
)

func TestRedactSmb(t *testing.T) {
	in := &smbv1.NewSmbGlobalMappingRequest{
		RemotePath: `\\srv\share`,
		LocalPath:  `C:\var\lib\kubelet\x`,
		Username:   `DOM\user`,
		Password:   "hunter2",
	}
	out := Redact(in).(*smbv1.NewSmbGlobalMappingRequest)
	if out.Password != Redacted {
		t.Errorf("password = %q, want %q", out.Password, Redacted)
	}
	if out.RemotePath != in.RemotePath || out.LocalPath != in.LocalPath || out.Username != in.Username {
		t.Errorf("non-secret fields changed: %v", out)
	}
	if in.Password != "hunter2" {
		t.Errorf("Redact changed its input: %v", in)
	}
	// An empty secret stays empty: the log then shows none was sent.
	if got := Redact(&smbv1.NewSmbGlobalMappingRequest{Username: "u"}).(*smbv1.NewSmbGlobalMappingRequest); got.Password != "" {
		t.Errorf("empty password became %q", got.Password)
	}
}

func TestRedactIscsi(t *testing.T) {
	in := &iscsiv1alpha2.ConnectTargetRequest{
		TargetPortal: &iscsiv1alpha2.TargetPortal{TargetAddress: "10.0.0.1", TargetPort: 3260},
		Iqn:          "iqn.2000-01.com.example:t",
		AuthType:     iscsiv1alpha2.AuthenticationType_MUTUAL_CHAP,
		ChapUsername: "chapuser",
		ChapSecret:   "0123456789ab",
	}
	out := Redact(in).(*iscsiv1alpha2.ConnectTargetRequest)
	if out.ChapSecret != Redacted {
		t.Errorf("chap_secret = %q", out.ChapSecret)
	}
	if out.ChapUsername != "chapuser" || out.Iqn != in.Iqn || out.AuthType != in.AuthType ||
		!proto.Equal(out.TargetPortal, in.TargetPortal) {
		t.Errorf("non-secret fields changed: %v", out)
	}

	m := Redact(&iscsiv1alpha2.SetMutualChapSecretRequest{MutualChapSecret: "0123456789abcdef"}).(*iscsiv1alpha2.SetMutualChapSecretRequest)
	if m.MutualChapSecret != Redacted {
		t.Errorf("MutualChapSecret = %q", m.MutualChapSecret)
	}
}

func TestRedactNil(t *testing.T) {
	if Redact(nil) != nil {
		t.Error("Redact(nil) != nil")
	}
	var typedNil *smbv1.NewSmbGlobalMappingRequest
	if got := Redact(typedNil); got != proto.Message(typedNil) {
		t.Errorf("Redact(typed nil) = %v", got)
	}
}

// dynamicMessage builds, at run time, a message type with secrets in every
// place Redact must reach: nested messages, lists of messages, maps of
// messages and of strings, repeated strings, bytes and a number.
//
//	message Inner { string name = 1; string db_password = 2; }
//	message Outer {
//	  Inner inner = 1; repeated Inner items = 2; map<string, Inner> by_name = 3;
//	  map<string, string> secrets = 4; repeated string old_passwords = 5;
//	  bytes secret_blob = 6; int32 pin_secret = 7; string user = 8;
//	}
func dynamicMessage(t *testing.T) protoreflect.MessageDescriptor {
	t.Helper()
	str := descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()
	msg := descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum()
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	rep := descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum()
	field := func(name string, num int32, l *descriptorpb.FieldDescriptorProto_Label, typ *descriptorpb.FieldDescriptorProto_Type, typeName string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Label: l, Type: typ}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		return f
	}
	entry := func(name string, typ *descriptorpb.FieldDescriptorProto_Type, typeName string) *descriptorpb.DescriptorProto {
		return &descriptorpb.DescriptorProto{
			Name:    proto.String(name),
			Field:   []*descriptorpb.FieldDescriptorProto{field("key", 1, opt, str, ""), field("value", 2, opt, typ, typeName)},
			Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
		}
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("redacttest.proto"),
		Package: proto.String("redacttest"),
		Syntax:  proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("Inner"), Field: []*descriptorpb.FieldDescriptorProto{
				field("name", 1, opt, str, ""),
				field("db_password", 2, opt, str, ""),
			}},
			{
				Name: proto.String("Outer"),
				Field: []*descriptorpb.FieldDescriptorProto{
					field("inner", 1, opt, msg, ".redacttest.Inner"),
					field("items", 2, rep, msg, ".redacttest.Inner"),
					field("by_name", 3, rep, msg, ".redacttest.Outer.ByNameEntry"),
					field("secrets", 4, rep, msg, ".redacttest.Outer.SecretsEntry"),
					field("old_passwords", 5, rep, str, ""),
					field("secret_blob", 6, opt, descriptorpb.FieldDescriptorProto_TYPE_BYTES.Enum(), ""),
					field("pin_secret", 7, opt, descriptorpb.FieldDescriptorProto_TYPE_INT32.Enum(), ""),
					field("user", 8, opt, str, ""),
				},
				NestedType: []*descriptorpb.DescriptorProto{
					entry("ByNameEntry", msg, ".redacttest.Inner"),
					entry("SecretsEntry", str, ""),
				},
			},
		},
	}
	fd, err := protodesc.NewFile(fdp, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fd.Messages().ByName("Outer")
}

func TestRedactNested(t *testing.T) {
	outerD := dynamicMessage(t)
	innerD := outerD.Fields().ByName("inner").Message()
	inner := func(name, pw string) protoreflect.Value {
		m := dynamicpb.NewMessage(innerD)
		m.Set(innerD.Fields().ByName("name"), protoreflect.ValueOfString(name))
		if pw != "" {
			m.Set(innerD.Fields().ByName("db_password"), protoreflect.ValueOfString(pw))
		}
		return protoreflect.ValueOfMessage(m)
	}
	f := outerD.Fields().ByName
	in := dynamicpb.NewMessage(outerD)
	in.Set(f("inner"), inner("a", "pw-nested"))
	items := in.Mutable(f("items")).List()
	items.Append(inner("b", "pw-list"))
	items.Append(inner("c", ""))
	byName := in.Mutable(f("by_name")).Map()
	byName.Set(protoreflect.ValueOfString("k").MapKey(), inner("d", "pw-map"))
	secrets := in.Mutable(f("secrets")).Map()
	secrets.Set(protoreflect.ValueOfString("token").MapKey(), protoreflect.ValueOfString("pw-mapvalue"))
	old := in.Mutable(f("old_passwords")).List()
	old.Append(protoreflect.ValueOfString("pw-rep1"))
	old.Append(protoreflect.ValueOfString(""))
	in.Set(f("secret_blob"), protoreflect.ValueOfBytes([]byte("pw-bytes")))
	in.Set(f("pin_secret"), protoreflect.ValueOfInt32(1234))
	in.Set(f("user"), protoreflect.ValueOfString("alice"))
	before := renderPayload(in)

	out := Redact(in)
	rendered := renderPayload(out)
	for _, secret := range []string{"pw-", "1234", "cHctYnl0ZXM"} { // the last is base64 of pw-bytes
		if strings.Contains(rendered, secret) {
			t.Errorf("redacted message still contains %q: %s", secret, rendered)
		}
	}
	for _, keep := range []string{`"alice"`, `"a"`, `"b"`, `"c"`, `"d"`, `"k"`, `"token"`} {
		if !strings.Contains(rendered, keep) {
			t.Errorf("redacted message lost %s: %s", keep, rendered)
		}
	}
	if n := strings.Count(rendered, Redacted); n != 5 {
		// inner, items[0], by_name[k], secrets[token], old_passwords[0];
		// bytes render as base64 and the number is cleared.
		t.Errorf("%d fields redacted, want 5: %s", n, rendered)
	}
	om := out.ProtoReflect()
	if got := string(om.Get(f("secret_blob")).Bytes()); got != Redacted {
		t.Errorf("secret_blob = %q", got)
	}
	if om.Has(f("pin_secret")) {
		t.Errorf("pin_secret kept: %v", om.Get(f("pin_secret")))
	}
	if l := om.Get(f("old_passwords")).List(); l.Len() != 2 || l.Get(1).String() != "" {
		t.Errorf("old_passwords = %v", l)
	}
	if after := renderPayload(in); after != before {
		t.Errorf("Redact changed its input:\n%s\n%s", before, after)
	}
}
