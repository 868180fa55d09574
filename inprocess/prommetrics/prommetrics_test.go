package prommetrics_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess/prommetrics"
	"github.com/csi-node-proxy/csi-node-proxy/internal/metrics"
	"github.com/csi-node-proxy/csi-node-proxy/internal/version"
)

const onlyBIOS = "rules:\n- name: bios\n  callers: [{any: true}]\n  allow: [{methods: [system.GetBIOSSerialNumber]}]\n"

// TestCallsCounted: an allowed call and a denied one are counted as the
// daemon counts them, under its names.
func TestCallsCounted(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := prommetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	n, err := inprocess.New(t.Context(), inprocess.Options{Host: inprocess.HostSimulated, PolicyData: []byte(onlyBIOS), Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if _, err := n.System().GetBIOSSerialNumber(t.Context(), &system.GetBIOSSerialNumberRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Disk().Rescan(t.Context(), nil); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Fatalf("Rescan: %v, want a denial", err)
	}
	v := inprocess.Version
	for _, c := range []struct {
		name   string
		values []string
	}{
		{"csi_node_proxy_calls_total", []string{"system", v, "GetBIOSSerialNumber", "OK", "bios"}},
		{"csi_node_proxy_calls_total", []string{"disk", v, "Rescan", "PermissionDenied", "none"}},
		{"csi_node_proxy_denied_calls_total", []string{"disk", v, "Rescan", "no_rule"}},
	} {
		if got := value(t, reg, c.name, c.values); got != 1 {
			t.Errorf("%s%v = %v, want 1", c.name, c.values, got)
		}
	}
	if got := value(t, reg, "csi_node_proxy_in_flight_calls", []string{"system", v}); got != 0 {
		t.Errorf("in flight after the calls: %v", got)
	}
	if _, err := prommetrics.New(reg); err == nil {
		t.Error("a second Metrics on one registry registered")
	}
}

// TestNamesAreTheDaemons: every series has the name and label names of the
// daemon's (internal/metrics).
func TestNamesAreTheDaemons(t *testing.T) {
	d := metrics.New(version.Info{})
	d.CallDenied("disk", "v1", "Rescan", metrics.DeniedNoRule)
	ic := d.UnaryServerInterceptor(metrics.Endpoint{Group: "disk", Version: "v1", Service: "v1.Disk"})
	_, _ = ic(context.Background(), nil, &grpc.UnaryServerInfo{FullMethod: "/v1.Disk/Rescan"},
		func(context.Context, any) (any, error) { return nil, nil })
	daemon := labelNames(t, d.Registry())

	reg := prometheus.NewRegistry()
	m, err := prommetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.CallStarted("disk", inprocess.Version, "Rescan")
	m.CallDone("disk", inprocess.Version, "Rescan", "OK", "", 0)
	m.CallDenied("disk", inprocess.Version, "Rescan", "no_rule")
	ours := labelNames(t, reg)
	if len(ours) != 3 {
		t.Errorf("series %v, want three", ours)
	}
	for name, labels := range ours {
		if want, ok := daemon[name]; !ok || !slices.Equal(labels, want) {
			t.Errorf("%s%v; the daemon has %s%v", name, labels, name, want)
		}
	}
}

// labelNames returns each family's label names, sorted.
func labelNames(t *testing.T, g prometheus.Gatherer) map[string][]string {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, mf := range mfs {
		var names []string
		for _, l := range mf.GetMetric()[0].GetLabel() {
			names = append(names, l.GetName())
		}
		slices.Sort(names)
		out[mf.GetName()] = names
	}
	return out
}

// value returns the value of the series of name whose label values, in
// label order, are values; -1 when there is none.
func value(t *testing.T, g prometheus.Gatherer, name string, values []string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if matchLabels(m, values) {
				switch {
				case m.Counter != nil:
					return m.GetCounter().GetValue()
				case m.Gauge != nil:
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	return -1
}

// matchLabels tells whether m's label values, in the registry's (sorted
// by name) order, are values in the order of the declared labels.
func matchLabels(m *dto.Metric, values []string) bool {
	have := map[string]bool{}
	for _, l := range m.GetLabel() {
		have[l.GetValue()] = true
	}
	for _, v := range values {
		if !have[v] {
			return false
		}
	}
	return len(values) == len(m.GetLabel())
}

// TestSMBMappingGauges: library mode reports the node's SMB global
// mappings under the daemon's gauge names (internal/metrics), from the
// census the SMB mappings group takes on each List, Reconcile or Collect
// call: absent before the first, then the count and how many are not OK,
// and a mapping gone Disconnected (the simulated host's RebootSMB) shows
// at the next census.
func TestSMBMappingGauges(t *testing.T) {
	const (
		share    = `\\fileserver\share`
		mappings = "csi_node_proxy_smb_global_mappings"
		notOK    = "csi_node_proxy_smb_global_mappings_not_ok"
		observed = "csi_node_proxy_smb_global_mappings_observed_timestamp_seconds"
	)
	ctx := t.Context()
	reg := prometheus.NewPedanticRegistry()
	m, err := prommetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := simulated.DefaultConfig([]string{`C:\var\lib\kubelet`})
	cfg.SMBShares = []simulated.SMBShare{{Path: share, Username: "CONTOSO\\csi", Password: "pw-123456"}}
	n, err := inprocess.New(ctx, inprocess.Options{Host: inprocess.HostSimulated, Simulated: &cfg, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if got := value(t, reg, mappings, nil); got != -1 {
		t.Fatalf("%s before any census = %v, want absent", mappings, got)
	}
	if _, err := n.SMB().NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{RemotePath: share, Username: "CONTOSO\\csi", Password: "pw-123456"}); err != nil {
		t.Fatal(err)
	}
	census := func(wantMappings, wantNotOK float64) {
		t.Helper()
		if _, err := n.SMBMappings().ListSmbGlobalMappings(ctx, &smbmappings.ListSmbGlobalMappingsRequest{}); err != nil {
			t.Fatal(err)
		}
		if got := value(t, reg, mappings, nil); got != wantMappings {
			t.Errorf("%s = %v, want %v", mappings, got, wantMappings)
		}
		if got := value(t, reg, notOK, nil); got != wantNotOK {
			t.Errorf("%s = %v, want %v", notOK, got, wantNotOK)
		}
		if got := value(t, reg, observed, nil); got <= 0 {
			t.Errorf("%s = %v, want a time", observed, got)
		}
	}
	census(1, 0)
	n.Simulated().RebootSMB()
	census(1, 1)
}
