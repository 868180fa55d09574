//go:build linux

package hostset

import (
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blockdev"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/cifs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
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
	table := testutil.CopyMountTable(t)
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

// TestLinuxSMBPermissions: Config.SMBPermissions are the CIFS backend's
// permissions for every mount, and the smbPermissions of the policy rule
// that allowed the call (its decision in the call's context, as the call
// gate puts it) override them field by field; a call allowed by a rule
// that sets none, or without a decision, gets the node's.
func TestLinuxSMBPermissions(t *testing.T) {
	c := smbConfig(Config{
		Host: Linux, WorkingDirs: []string{t.TempDir()},
		SMBPermissions: &policy.SMBPermissions{UID: ptr(uint32(7)), FileMode: 0o750, DirMode: 0o750, SELinuxContext: "system_u:object_r:container_file_t:s0"},
	})
	node := cifs.Permissions{UID: cifs.UID32(7), FileMode: 0o750, DirMode: 0o750, SELinuxContext: "system_u:object_r:container_file_t:s0"}
	if !reflect.DeepEqual(c.Permissions, node) {
		t.Errorf("the node's permissions %+v, want %+v", c.Permissions, node)
	}
	driver := policy.NewDecisionContext(t.Context(), policy.Decision{Allowed: true, Rule: "smb-driver",
		SMBPermissions: &policy.SMBPermissions{GID: ptr(uint32(2000)), FileMode: 0o770}})
	got, ok := c.PermissionsFor(driver)
	want := cifs.Permissions{UID: cifs.UID32(7), GID: cifs.UID32(2000), FileMode: 0o770, DirMode: 0o750, SELinuxContext: "system_u:object_r:container_file_t:s0"}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("the driver's permissions %+v, %v; want %+v", got, ok, want)
	}
	if got, ok := c.PermissionsFor(policy.NewDecisionContext(t.Context(), policy.Decision{Allowed: true, Rule: "other"})); ok {
		t.Errorf("a call allowed by a rule without SMB permissions got %+v", got)
	}
	if got, ok := c.PermissionsFor(t.Context()); ok {
		t.Errorf("a call without a decision got %+v", got)
	}
	if d := smbConfig(Config{Host: Linux}); !reflect.DeepEqual(d.Permissions, cifs.DefaultConfig().Permissions) {
		t.Errorf("without SMBPermissions: %+v, want cifs' defaults", d.Permissions)
	}
	// The node's default is the backend's.
	if r := (Config{}).Resolved(); !reflect.DeepEqual(smbConfig(r).Permissions, cifs.DefaultConfig().Permissions) {
		t.Errorf("the resolved default SMB permissions %+v are not cifs' defaults %+v", smbConfig(r).Permissions, cifs.DefaultConfig().Permissions)
	}
}

func ptr[T any](v T) *T { return &v }

// TestLinuxDiskReadTimeout: Config.LinuxDiskReadTimeout is the block
// backend's DiskReadTimeout, its default when 0.
func TestLinuxDiskReadTimeout(t *testing.T) {
	for given, want := range map[time.Duration]time.Duration{0: blockdev.DefaultDiskReadTimeout, 3 * time.Second: 3 * time.Second} {
		s, err := New(Config{Host: Linux, WorkingDirs: []string{t.TempDir()}, LinuxDiskReadTimeout: given})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Disk.(interface{ Config() blockdev.Config }).Config().DiskReadTimeout; got != want {
			t.Errorf("LinuxDiskReadTimeout %v: the backend waits %v, want %v", given, got, want)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}
}

// TestLinuxDefaults: the node defaults hostset owns are the ones the
// block backend falls back to when used on its own, so a driver sees
// the same node whichever builds it.
func TestLinuxDefaults(t *testing.T) {
	if want := []string{LinuxKubeletPath}; !slices.Equal(blockdev.DefaultMountRoots, want) {
		t.Errorf("blockdev.DefaultMountRoots = %v, want %v", blockdev.DefaultMountRoots, want)
	}
	if blockdev.DefaultFilesystem != DefaultLinuxFilesystem {
		t.Errorf("blockdev.DefaultFilesystem = %q, want %q", blockdev.DefaultFilesystem, DefaultLinuxFilesystem)
	}
	if blockdev.DefaultDiskReadTimeout != DefaultLinuxDiskReadTimeout {
		t.Errorf("blockdev.DefaultDiskReadTimeout = %v, want %v", blockdev.DefaultDiskReadTimeout, DefaultLinuxDiskReadTimeout)
	}
	if cifs.DefaultFileMode != DefaultSMBMode || cifs.DefaultDirMode != DefaultSMBMode {
		t.Errorf("cifs.DefaultFileMode, DefaultDirMode = %#o, %#o, want %#o", cifs.DefaultFileMode, cifs.DefaultDirMode, DefaultSMBMode)
	}
}
