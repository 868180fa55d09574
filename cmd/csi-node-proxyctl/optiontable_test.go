package main

import (
	"reflect"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/nodeoptions"
)

// TestOptionTable: each option of the node's option table, given as the
// CLI's --local flags, becomes the row's library-mode Options (which
// inprocess's TestOptionTable resolves to the node the daemon's flags
// make too: cmd/csi-node-proxy's TestOptionTable), and a node is built
// from them. An option --local lacks must say why.
func TestOptionTable(t *testing.T) {
	for _, c := range nodeoptions.Cases(t) {
		if c.Local == nil {
			if c.NotLocal == "" {
				t.Errorf("%s: no --local flag, and no reason why", c.Name)
			}
			continue
		}
		var g globals
		fs := newGlobalFlags(&g)
		if err := fs.Parse(append([]string{"--local", "--host=simulated"}, c.Local...)); err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		got := localOptions(&g)
		want := c.Options
		want.Host = inprocess.HostSimulated
		if want.RequirePrivacy == nil { // nil means true: --require-privacy's default
			yes := true
			want.RequirePrivacy = &yes
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: --local makes\n%+v\nwant\n%+v", c.Name, got, want)
			continue
		}
		n, err := openLocal(t.Context(), &g)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if err := n.(*inprocess.Node).Close(); err != nil {
			t.Errorf("%s: Close: %v", c.Name, err)
		}
	}
}
