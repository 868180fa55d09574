package inprocess_test

import (
	"reflect"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/nodeoptions"
)

// TestOptionTable: each option of the node's option table, given as
// library mode's Options, makes a node whose resolved configuration is
// the row's: the same the daemon's flags make (cmd/csi-node-proxy's
// TestOptionTable) and, through these Options, the CLI's --local flags
// (cmd/csi-node-proxyctl's TestOptionTable).
func TestOptionTable(t *testing.T) {
	cases := nodeoptions.Cases(t)
	nodeoptions.Covered(t, cases)
	for _, c := range cases {
		o := c.Options
		o.Host = inprocess.HostSimulated
		n, err := inprocess.New(t.Context(), o)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		got := inprocess.ResolvedConfig(n)
		if err := n.Close(); err != nil {
			t.Errorf("%s: Close: %v", c.Name, err)
		}
		if want := nodeoptions.Expected(c); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: library mode's node is\n%+v\nwant\n%+v", c.Name, got, want)
		}
	}
}
