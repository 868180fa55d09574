//go:build linux

package hostset

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blockdev"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/cifs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
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

// TestLinuxSMBPermissions: Config.SMBPermissions are the CIFS backend's
// permissions for every mount, and the policy's smbPermissions for the
// mapping's caller override them field by field; a caller no rule gives
// any, or a call without a caller, gets the daemon's.
func TestLinuxSMBPermissions(t *testing.T) {
	p, err := policy.Parse([]byte(`
rules:
- name: smb-driver
  callers: [{uids: [1000]}]
  allow: [{groups: [smb], methods: ["*"]}]
  smbPermissions: {gid: 2000, fileMode: 0770}
`), policy.Options{Style: hostpath.POSIX})
	if err != nil {
		t.Fatal(err)
	}
	var store *policy.Store // given after the host is built, as the daemon does
	c := smbConfig(Config{
		Host: Linux, WorkingDirs: []string{t.TempDir()},
		SMBPermissions: &policy.SMBPermissions{UID: ptr(uint32(7)), FileMode: 0o750, DirMode: 0o750, SELinuxContext: "system_u:object_r:container_file_t:s0"},
		Policy:         func() *policy.Store { return store },
	})
	daemon := cifs.Permissions{UID: cifs.UID32(7), FileMode: 0o750, DirMode: 0o750, SELinuxContext: "system_u:object_r:container_file_t:s0"}
	if !reflect.DeepEqual(c.Permissions, daemon) {
		t.Errorf("the daemon's permissions %+v, want %+v", c.Permissions, daemon)
	}
	store = policy.Static(p)
	driver := identity.NewContext(t.Context(), identity.Caller{HasUnixIDs: true, UID: 1000})
	got, ok := c.PermissionsFor(driver)
	want := cifs.Permissions{UID: cifs.UID32(7), GID: cifs.UID32(2000), FileMode: 0o770, DirMode: 0o750, SELinuxContext: "system_u:object_r:container_file_t:s0"}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("the driver's permissions %+v, %v; want %+v", got, ok, want)
	}
	if got, ok := c.PermissionsFor(identity.NewContext(t.Context(), identity.Caller{HasUnixIDs: true, UID: 5})); ok {
		t.Errorf("a caller no rule gives SMB permissions got %+v", got)
	}
	if got, ok := c.PermissionsFor(t.Context()); ok {
		t.Errorf("a call without a caller got %+v", got)
	}
	if d := smbConfig(Config{Host: Linux}); !reflect.DeepEqual(d.Permissions, cifs.DefaultConfig().Permissions) || d.PermissionsFor != nil {
		t.Errorf("without SMBPermissions or a policy: %+v, want cifs' defaults and no per-caller choice", d.Permissions)
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
}
