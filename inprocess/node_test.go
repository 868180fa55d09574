package inprocess

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
)

// TestNodeNameInAudit: every audit record of library mode names the node
// Options.NodeName gives; without it $NODE_NAME, as the daemon's
// --node-name default.
func TestNodeNameInAudit(t *testing.T) {
	for _, tc := range []struct{ env, option, want string }{
		{"node-from-env", "", "node-from-env"},
		{"node-from-env", "node-a", "node-a"},
	} {
		t.Setenv("NODE_NAME", tc.env)
		log := filepath.Join(t.TempDir(), "audit.log")
		n := simNode(t, Options{AuditLog: log, NodeName: tc.option})
		if _, err := n.Disk().PartitionDisk(t.Context(), &disk.PartitionDiskRequest{DiskNumber: 1}); err != nil {
			t.Fatal(err)
		}
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != 2 { // the change's intent and its outcome
			t.Fatalf("%d audit records, want 2:\n%s", len(lines), b)
		}
		for _, l := range lines {
			var r struct{ Node string }
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			if r.Node != tc.want {
				t.Errorf("NODE_NAME=%q NodeName=%q: record names node %q, want %q", tc.env, tc.option, r.Node, tc.want)
			}
		}
	}
}
