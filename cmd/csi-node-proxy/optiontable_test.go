package main

import (
	"reflect"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/nodeoptions"
)

// TestOptionTable: each option of the node's option table, given as the
// daemon's flags, makes a node whose resolved configuration is the
// row's: the same library mode's Options make (inprocess's
// TestOptionTable) and the CLI's --local flags (cmd/csi-node-proxyctl's
// TestOptionTable).
func TestOptionTable(t *testing.T) {
	resetKlog(t)
	cases := nodeoptions.Cases(t)
	nodeoptions.Covered(t, cases)
	for _, c := range cases {
		cfg, err := parseFlagsWith(append([]string{"--host=simulated", "--cri-endpoint="}, c.Daemon...), registry)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		n, err := testNode(cfg)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		got := n.Config()
		if err := n.Close(); err != nil {
			t.Errorf("%s: Close: %v", c.Name, err)
		}
		if want := nodeoptions.Expected(c); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the daemon's node is\n%+v\nwant\n%+v", c.Name, got, want)
		}
	}
}
