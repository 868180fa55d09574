package server

import (
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
)

// registry mirrors the group-versions the daemon serves.
var registry = []adapter.API{
	{Group: "disk", Version: "v1"},
	{Group: "volume", Version: "v1"},
	{Group: "volume", Version: "v2alpha1"},
	{Group: "filesystem", Version: "v1"},
	{Group: "filesystem", Version: "v2alpha1"},
	{Group: "smb", Version: "v1"},
	{Group: "iscsi", Version: "v1alpha2"},
	{Group: "system", Version: "v1alpha1"},
}

func names(apis []adapter.API) string {
	var n []string
	for _, a := range apis {
		n = append(n, a.Group+"-"+a.Version)
	}
	return strings.Join(n, ",")
}

func TestSelectAPIs(t *testing.T) {
	all := names(registry)
	for _, tc := range []struct{ spec, want string }{
		{"", all},
		{"all", all},
		{" ALL ", all},
		{"disk-v1,volume-v2alpha1", "disk-v1,volume-v2alpha1"},
		{"volume-v2alpha1,disk-v1", "disk-v1,volume-v2alpha1"}, // registry order
		{"volume", "volume-v1,volume-v2alpha1"},
		{"volume,volume-v1, ,", "volume-v1,volume-v2alpha1"},
		{"csi-proxy-smb-v1", "smb-v1"},
		{"Disk-V1", "disk-v1"},
	} {
		got, err := SelectAPIs(registry, tc.spec)
		if err != nil {
			t.Errorf("SelectAPIs(%q): %v", tc.spec, err)
			continue
		}
		if names(got) != tc.want {
			t.Errorf("SelectAPIs(%q) = %s, want %s", tc.spec, names(got), tc.want)
		}
	}
}

func TestSelectAPIsUnknown(t *testing.T) {
	for _, spec := range []string{"disk-v2", "dsk", "disk-v1,nope", ","} {
		_, err := SelectAPIs(registry, spec)
		if err == nil {
			t.Errorf("SelectAPIs(%q) succeeded", spec)
			continue
		}
		for _, valid := range []string{"disk, disk-v1", "volume-v2alpha1", "system-v1alpha1"} {
			if !strings.Contains(err.Error(), valid) {
				t.Errorf("SelectAPIs(%q) error %q does not list %q", spec, err, valid)
			}
		}
	}
	if _, err := SelectAPIs(nil, "disk"); err == nil || !strings.Contains(err.Error(), "no API is registered") {
		t.Errorf("SelectAPIs on an empty registry: %v", err)
	}
}
