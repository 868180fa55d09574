//go:build linux

package main

import (
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blockdev"
)

// TestDiskReadTimeoutDefault keeps --linux-disk-read-timeout's default
// the block backend's.
func TestDiskReadTimeoutDefault(t *testing.T) {
	if defaultDiskReadTimeout != blockdev.DefaultDiskReadTimeout {
		t.Errorf("--linux-disk-read-timeout defaults to %v, the block backend to %v", defaultDiskReadTimeout, blockdev.DefaultDiskReadTimeout)
	}
}

// TestDiskReadTimeoutReachesTheBackend: --linux-disk-read-timeout is the
// Linux block backend's DiskReadTimeout; 0 or less is refused.
func TestDiskReadTimeoutReachesTheBackend(t *testing.T) {
	resetKlog(t)
	for flag, want := range map[string]time.Duration{"": blockdev.DefaultDiskReadTimeout, "--linux-disk-read-timeout=1500ms": 1500 * time.Millisecond} {
		args := []string{"--host=linux", "-kubelet-path=" + t.TempDir()}
		if flag != "" {
			args = append(args, flag)
		}
		cfg, err := parseFlagsWith(args, registry)
		if err != nil {
			t.Fatal(err)
		}
		n, err := testNode(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := n.Backends.Disk.(interface{ Config() blockdev.Config }).Config().DiskReadTimeout; got != want {
			t.Errorf("%q: the block backend waits %v for a disk, want %v", flag, got, want)
		}
		if err := n.Close(); err != nil {
			t.Error(err)
		}
	}
	if _, err := parseFlagsWith([]string{"--linux-disk-read-timeout=0s"}, registry); err == nil {
		t.Error("--linux-disk-read-timeout=0s accepted")
	}
}
