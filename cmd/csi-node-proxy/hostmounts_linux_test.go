//go:build linux

package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blockdev"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

// TestHostMountTableReachesTheBackend: --linux-host-mount-table becomes
// the Linux block backend's Config.HostMountTable (its default when not
// given), and a table given that cannot be read stops the daemon at
// start, naming it.
func TestHostMountTableReachesTheBackend(t *testing.T) {
	resetKlog(t)
	table := testutil.CopyMountTable(t)
	for _, tc := range []struct {
		flag, want string
	}{
		{"", blockdev.DefaultHostMountTable},
		{"--linux-host-mount-table=" + table, table},
		{"--linux-host-mount-table=none", "none"},
	} {
		args := []string{"--host=linux", "-kubelet-path=" + t.TempDir()}
		if tc.flag != "" {
			args = append(args, tc.flag)
		}
		cfg, err := parseFlagsWith(args, registry)
		if err != nil {
			t.Fatal(err)
		}
		n, err := testNode(cfg)
		if err != nil {
			t.Fatalf("%s: newNode: %v", tc.flag, err)
		}
		cb, ok := n.Backends.Disk.(interface{ Config() blockdev.Config })
		if !ok {
			t.Fatalf("the Linux disk backend %T does not tell its Config", n.Backends.Disk)
		}
		if got := cb.Config().HostMountTable; got != tc.want {
			t.Errorf("%q: the block backend reads the host's table at %q, want %q", tc.flag, got, tc.want)
		}
		if err := n.Close(); err != nil {
			t.Error(err)
		}
	}
	missing := filepath.Join(t.TempDir(), "no-such-mountinfo")
	cfg, err := parseFlagsWith([]string{"--host=linux", "-kubelet-path=" + t.TempDir(), "--linux-host-mount-table=" + missing}, registry)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := testNode(cfg); err == nil {
		_ = n.Close()
		t.Errorf("a missing --linux-host-mount-table was accepted")
	} else if !strings.Contains(err.Error(), missing) {
		t.Errorf("newNode with a missing table: %v, want it named", err)
	}
}
