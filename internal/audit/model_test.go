package audit_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
)

// TestModelRecords: a model request is written with its fields'
// snake_case names, zero fields left out as protojson leaves out unset
// ones, and every field its type declares secret (guard:"secret")
// replaced, whatever its name.
func TestModelRecords(t *testing.T) {
	cases := []struct {
		model any
		want  map[string]any
	}{
		{&smb.NewSmbGlobalMappingRequest{RemotePath: `\\srv\share`, LocalPath: `C:\k\x`, Username: "u", Password: "hunter2-secret"},
			map[string]any{"remote_path": `\\srv\share`, "local_path": `C:\k\x`, "username": "u", "password": audit.Redacted}},
		{&iscsi.ConnectTargetRequest{TargetPortal: &iscsi.TargetPortal{TargetAddress: "10.0.0.1", TargetPort: 3260}, IQN: "iqn.2001-04.com.example:t",
			AuthType: iscsi.AuthMutualCHAP, ChapUsername: "u", ChapSecret: "hunter2-secret"},
			map[string]any{"target_portal": map[string]any{"target_address": "10.0.0.1", "target_port": float64(3260)}, "iqn": "iqn.2001-04.com.example:t",
				"auth_type": iscsi.AuthMutualCHAP.String(), "chap_username": "u", "chap_secret": audit.Redacted}},
		{&smb.RemoveSmbGlobalMappingRequest{}, map[string]any{}},
		{&smbmappings.ReconcileSmbGlobalMappingRequest{RemotePath: `\\srv\share`, Username: "u", Password: "hunter2-secret"},
			map[string]any{"remote_path": `\\srv\share`, "username": "u", "password": audit.Redacted}},
		{&smbmappings.CollectSmbGlobalMappingsRequest{DryRun: true}, map[string]any{"dry_run": true}},
	}
	for _, c := range cases {
		var b strings.Builder
		m := record("X")
		m.Model = c.model
		if err := audit.New(&b, audit.Options{}).Log(m); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "hunter2") {
			t.Errorf("secret in the audit log: %s", b.String())
		}
		if got := auditlog.Parse(t, []byte(b.String()))[0].Request; !reflect.DeepEqual(got, c.want) {
			t.Errorf("%T written as %#v, want %#v", c.model, got, c.want)
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
	m.Model = &iscsi.SetMutualChapSecretRequest{MutualChapSecret: "hunter2-secret"}
	if err := audit.New(&b, audit.Options{}).Log(m); err != nil {
		t.Fatal(err)
	}
	if got := auditlog.Parse(t, []byte(b.String()))[0].Request; !reflect.DeepEqual(got, map[string]any{"mutual_chap_secret": audit.Redacted}) {
		t.Errorf("request %v", got)
	}
}

// TestRedactModel: a field declared secret is never rendered, whatever
// its type; a string one shows that it was sent. Names decide nothing: a
// field called Password that is not declared secret is written.
func TestRedactModel(t *testing.T) {
	type inner struct {
		Key []byte `guard:"secret"`
	}
	got := audit.RedactModel(struct {
		Token    string `guard:"secret"`
		Pin      int    `guard:"secret"`
		Nested   []inner
		Keys     map[string]string `guard:"secret"`
		Empty    string            `guard:"secret"`
		Password string            `guard:"-"`
		Count    int
	}{"p", 1234, []inner{{Key: []byte("s")}}, map[string]string{"a": "s"}, "", "shown", 3})
	want := map[string]any{"token": audit.Redacted, "nested": []any{map[string]any{}}, "password": "shown", "count": 3}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RedactModel = %#v, want %#v", got, want)
	}
}
