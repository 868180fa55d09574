package metrics

import (
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
)

// fakeCensus is an SMB mappings group that takes censuses (the test only
// calls Census).
type fakeCensus struct {
	smbmappings.Interface
	c  smbmappings.Census
	ok bool
}

func (f *fakeCensus) Census() (smbmappings.Census, bool) { return f.c, f.ok }

// TestSMBMappingGauges: the gauges are absent until a census exists, then
// show the last one and when it was taken; a group without censuses (a
// client stub) adds nothing.
func TestSMBMappingGauges(t *testing.T) {
	m := New(testBuild)
	m.TrackSMBMappings(nil)
	f := &fakeCensus{}
	m.TrackSMBMappings(f)
	fams := gather(t, m)
	if v := value(fams, "csi_node_proxy_smb_global_mappings", ""); v != -1 {
		t.Errorf("before any census smb_global_mappings = %v; want no series", v)
	}
	f.c, f.ok = smbmappings.Census{Mappings: 12, NotOK: 3, Time: time.Unix(1700000000, 0)}, true
	fams = gather(t, m)
	for name, want := range map[string]float64{
		"csi_node_proxy_smb_global_mappings":                            12,
		"csi_node_proxy_smb_global_mappings_not_ok":                     3,
		"csi_node_proxy_smb_global_mappings_observed_timestamp_seconds": 1700000000,
	} {
		if v := value(fams, name, ""); v != want {
			t.Errorf("%s = %v, want %v", name, v, want)
		}
	}
	var nilMetrics *Metrics
	nilMetrics.TrackSMBMappings(f) // a nil Metrics records nothing, and does not panic
}
