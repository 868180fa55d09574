package audit_test

import (
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	iscsiv1alpha2 "github.com/csi-node-proxy/csi-node-proxy/api/iscsi/v1alpha2"
	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
)

// TestModelRecordsMatchWire: a model request is written exactly as the
// daemon writes the wire message carrying the same values, secrets
// redacted the same way, so library mode's records read like the
// daemon's.
func TestModelRecordsMatchWire(t *testing.T) {
	cases := []struct {
		model any
		wire  proto.Message
	}{
		{&smb.NewSmbGlobalMappingRequest{RemotePath: `\\srv\share`, LocalPath: `C:\k\x`, Username: "u", Password: "hunter2-secret"},
			&smbv1.NewSmbGlobalMappingRequest{RemotePath: `\\srv\share`, LocalPath: `C:\k\x`, Username: "u", Password: "hunter2-secret"}},
		{&iscsi.ConnectTargetRequest{TargetPortal: &iscsi.TargetPortal{TargetAddress: "10.0.0.1", TargetPort: 3260}, IQN: "iqn.2001-04.com.example:t",
			AuthType: iscsi.AuthMutualCHAP, ChapUsername: "u", ChapSecret: "hunter2-secret"},
			&iscsiv1alpha2.ConnectTargetRequest{TargetPortal: &iscsiv1alpha2.TargetPortal{TargetAddress: "10.0.0.1", TargetPort: 3260}, Iqn: "iqn.2001-04.com.example:t",
				AuthType: iscsiv1alpha2.AuthenticationType_MUTUAL_CHAP, ChapUsername: "u", ChapSecret: "hunter2-secret"}},
		{&smb.RemoveSmbGlobalMappingRequest{}, &smbv1.RemoveSmbGlobalMappingRequest{}},
	}
	for _, c := range cases {
		var b strings.Builder
		l := audit.New(&b, audit.Options{Redact: server.Redact})
		m := record("X")
		m.Request, m.Model = nil, c.model
		w := record("X")
		w.Request = c.wire
		if err := l.Log(m); err != nil {
			t.Fatal(err)
		}
		if err := l.Log(w); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "hunter2") {
			t.Errorf("secret in the audit log: %s", b.String())
		}
		ls := auditlog.Parse(t, []byte(b.String()))
		if !reflect.DeepEqual(ls[0].Request, ls[1].Request) {
			t.Errorf("%T written as %v; the wire message as %v", c.model, ls[0].Request, ls[1].Request)
		}
	}
}

// TestModelNamesAreSnakeCase: model fields are always written in
// snake_case, even where an upstream wire version spells a field
// otherwise (iscsi v1alpha2's SetMutualChapSecretRequest has a field
// named MutualChapSecret); the redaction rule does not care about case.
func TestModelNamesAreSnakeCase(t *testing.T) {
	var b strings.Builder
	m := record("SetMutualChapSecret")
	m.Request, m.Model = nil, &iscsi.SetMutualChapSecretRequest{MutualChapSecret: "hunter2-secret"}
	if err := audit.New(&b, audit.Options{}).Log(m); err != nil {
		t.Fatal(err)
	}
	if got := auditlog.Parse(t, []byte(b.String()))[0].Request; !reflect.DeepEqual(got, map[string]any{"mutual_chap_secret": audit.Redacted}) {
		t.Errorf("request %v", got)
	}
}

// TestRedactModel: a secret of any type is never rendered; a string one
// shows that it was sent.
func TestRedactModel(t *testing.T) {
	type inner struct{ Secret []byte }
	got := audit.RedactModel(struct {
		Password   string
		PinSecret  int
		Nested     []inner
		APISecrets map[string]string
		Empty      string
		Count      int
	}{"p", 1234, []inner{{Secret: []byte("s")}}, map[string]string{"a": "s"}, "", 3})
	want := map[string]any{"password": audit.Redacted, "nested": []any{map[string]any{}}, "count": 3}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RedactModel = %#v, want %#v", got, want)
	}
}
