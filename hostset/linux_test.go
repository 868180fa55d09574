//go:build linux

package hostset

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/host/linux/blockdev"
)

// TestLinuxSystemCloses: the Linux system backend (systemd over D-Bus,
// whose connection outlives a call) is one Set.Close closes.
func TestLinuxSystemCloses(t *testing.T) {
	s, err := New(Config{Host: Linux, WorkingDirs: []string{t.TempDir()}, LinuxFilesystem: "ext4"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.System.(io.Closer); !ok {
		t.Errorf("the Linux system backend %T has no Close, so Set.Close leaves its D-Bus connection open", s.System)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close before any call: %v", err)
	}
}

// TestLinuxHostMountTable: Config.LinuxHostMountTable is the block
// backend's HostMountTable: its default when "", else the path or none;
// a path that cannot be read fails New, naming it.
func TestLinuxHostMountTable(t *testing.T) {
	table := filepath.Join(t.TempDir(), "mountinfo")
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(table, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for given, want := range map[string]string{"": blockdev.DefaultHostMountTable, table: table, "none": "none"} {
		s, err := New(Config{Host: Linux, WorkingDirs: []string{t.TempDir()}, LinuxHostMountTable: given})
		if err != nil {
			t.Fatalf("%q: %v", given, err)
		}
		cb, ok := s.Disk.(interface{ Config() blockdev.Config })
		if !ok {
			t.Fatalf("the Linux disk backend %T does not tell its Config", s.Disk)
		}
		if got := cb.Config().HostMountTable; got != want {
			t.Errorf("LinuxHostMountTable %q: the backend reads %q, want %q", given, got, want)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}
	missing := filepath.Join(t.TempDir(), "missing")
	if s, err := New(Config{Host: Linux, WorkingDirs: []string{t.TempDir()}, LinuxHostMountTable: missing}); err == nil {
		_ = s.Close()
		t.Error("a missing host mount table was accepted")
	} else if !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing host mount table: %v, want it named", err)
	}
}
