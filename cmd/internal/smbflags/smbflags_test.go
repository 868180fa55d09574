package smbflags

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

func parse(t *testing.T, args ...string) (Values, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var v Values
	Add(fs, &v, "With --host=linux")
	return v, fs.Parse(args)
}

// TestDefaultsAreTheNodes: with no flag the values are the node's own
// defaults and Given is false.
func TestDefaultsAreTheNodes(t *testing.T) {
	v, err := parse(t)
	if err != nil {
		t.Fatal(err)
	}
	if v.Given {
		t.Error("Given with no flag")
	}
	if want := *(hostset.Config{}).Resolved().SMBPermissions; !reflect.DeepEqual(v.Permissions, want) {
		t.Errorf("defaults %+v, want the node's %+v", v.Permissions, want)
	}
}

// TestEachFlag: every flag sets its field and Given; a bad value is
// refused with the flag named.
func TestEachFlag(t *testing.T) {
	u := func(n uint32) *uint32 { return &n }
	for _, tc := range []struct {
		arg  string
		want policy.SMBPermissions
	}{
		{"--smb-uid=1000", policy.SMBPermissions{UID: u(1000), FileMode: 0o777, DirMode: 0o777}},
		{"--smb-gid=0", policy.SMBPermissions{GID: u(0), FileMode: 0o777, DirMode: 0o777}},
		{"--smb-file-mode=0640", policy.SMBPermissions{FileMode: 0o640, DirMode: 0o777}},
		{"--smb-dir-mode=750", policy.SMBPermissions{FileMode: 0o777, DirMode: 0o750}},
		{"--smb-selinux-context=", policy.SMBPermissions{FileMode: 0o777, DirMode: 0o777}},
		{"--smb-selinux-context=system_u:object_r:container_file_t:s0", policy.SMBPermissions{FileMode: 0o777, DirMode: 0o777, SELinuxContext: "system_u:object_r:container_file_t:s0"}},
	} {
		v, err := parse(t, tc.arg)
		if err != nil {
			t.Errorf("%s: %v", tc.arg, err)
			continue
		}
		if !v.Given || !reflect.DeepEqual(v.Permissions, tc.want) {
			t.Errorf("%s: %+v given=%v, want %+v given", tc.arg, v.Permissions, v.Given, tc.want)
		}
	}
	for _, bad := range []string{"--smb-uid=-1", "--smb-uid=4294967296", "--smb-gid=x", "--smb-file-mode=01777", "--smb-dir-mode=8", "--smb-file-mode=rw"} {
		if _, err := parse(t, bad); err == nil || !strings.Contains(err.Error(), strings.SplitN(bad[2:], "=", 2)[0]) {
			t.Errorf("%s: %v, want an error naming the flag", bad, err)
		}
	}
}
