//go:build linux

package cifs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

// TestNewSmbGlobalMapping_FakeKernel_DefaultPermissions: the daemon's
// configuration (DefaultConfig) lets a non-root pod write: file_mode and
// dir_mode 0777, in a directory of their own so mounts made before
// (root:root 0755, at srv+share) are not reused.
func TestNewSmbGlobalMapping_FakeKernel_DefaultPermissions(t *testing.T) {
	cfg := DefaultConfig()
	f := newFixture(t, cfg)
	if err := f.h.NewSmbGlobalMapping(context.Background(), f.share); err != nil {
		t.Fatal(err)
	}
	if got, want := f.k.lastData(), "vers=3,ip=192.0.2.10,port=445,seal,file_mode=0777,dir_mode=0777,username=alice,password=pw,,1"; got != want {
		t.Errorf("mount data = %q, want %q", got, want)
	}
	dir := filepath.Join(f.root, "srv+share+f0777-d0777")
	if target, err := os.Readlink(f.share.LocalPath); err != nil || target != filepath.Join(dir, "PV-1", "data") {
		t.Errorf("link = %q, %v; want into %s", target, err, dir)
	}
	if got, err := f.h.MountDir(f.share.Share, cfg.Permissions); err != nil || got != dir {
		t.Errorf("MountDir = %q, %v; want %q", got, err, dir)
	}
}

// TestNewSmbGlobalMapping_FakeKernel_PermissionOptions pins the mount data
// for each permission setting.
func TestNewSmbGlobalMapping_FakeKernel_PermissionOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		perms   Permissions
		want    string
		wantDir string
	}{
		"none: the kernel's defaults": {Permissions{}, "vers=3,ip=192.0.2.10,port=445,username=alice,password=pw,,1", "srv+share"},
		"fsGroup style (csi-driver-smb with volumeMountGroup)": {
			Permissions{GID: UID32(2000), FileMode: 0o774, DirMode: 0o775},
			"vers=3,ip=192.0.2.10,port=445,gid=2000,file_mode=0774,dir_mode=0775,username=alice,password=pw,,1",
			"srv+share+g2000-f0774-d0775",
		},
		"owner and group": {
			Permissions{UID: UID32(1000), GID: UID32(0), FileMode: 0o700, DirMode: 0o700},
			"vers=3,ip=192.0.2.10,port=445,uid=1000,gid=0,file_mode=0700,dir_mode=0700,username=alice,password=pw,,1",
			"srv+share+u1000-g0-f0700-d0700",
		},
		"SELinux context with categories, quoted": {
			Permissions{SELinuxContext: "system_u:object_r:container_file_t:s0:c1,c2"},
			`vers=3,ip=192.0.2.10,port=445,context="system_u:object_r:container_file_t:s0:c1,c2",username=alice,password=pw,,1`,
			"srv+share+c" + hashName("system_u:object_r:container_file_t:s0:c1,c2")[:12],
		},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, Config{Permissions: tc.perms})
			if err := f.h.NewSmbGlobalMapping(context.Background(), f.share); err != nil {
				t.Fatal(err)
			}
			if got := f.k.lastData(); got != tc.want {
				t.Errorf("mount data = %q, want %q", got, tc.want)
			}
			if _, err := os.Stat(filepath.Join(f.root, tc.wantDir)); err != nil {
				t.Errorf("mount directory: %v", err)
			}
			ms, _ := f.k.Mounts()
			for _, m := range ms {
				if strings.Contains(m.SuperOptions, "pw") {
					t.Errorf("the mount table shows the password: %q", m.SuperOptions)
				}
			}
		})
	}
}

// TestNewSmbGlobalMapping_FakeKernel_PermissionsPerCaller: the policy hook
// chooses per caller; each set of permissions is its own mount of the
// share, and removing the share removes them all, as Windows removes its
// one mapping for everyone.
func TestNewSmbGlobalMapping_FakeKernel_PermissionsPerCaller(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PermissionsFor = func(ctx context.Context) (Permissions, bool) {
		c, ok := identity.FromContext(ctx)
		if !ok || !c.HasUnixIDs || c.UID != 1000 {
			return Permissions{}, false
		}
		return Permissions{GID: UID32(3000), FileMode: 0o770, DirMode: 0o2770 &^ 0o2000}, true
	}
	f := newFixture(t, cfg)
	ctx := context.Background()
	driverA := identity.NewContext(ctx, identity.Caller{HasUnixIDs: true, UID: 1000})
	driverB := identity.NewContext(ctx, identity.Caller{HasUnixIDs: true, UID: 0})

	a := f.share
	if err := f.h.NewSmbGlobalMapping(driverA, a); err != nil {
		t.Fatal(err)
	}
	if got, want := f.k.lastData(), "vers=3,ip=192.0.2.10,port=445,seal,gid=3000,file_mode=0770,dir_mode=0770,username=alice,password=pw,,1"; got != want {
		t.Errorf("caller A: mount data = %q, want %q", got, want)
	}
	b := f.share
	b.RemotePath, b.LocalPath = `\\srv\share\PV-2`, filepath.Join(f.work, "pod-vol-2")
	if err := f.h.NewSmbGlobalMapping(driverB, b); err != nil {
		t.Fatal(err)
	}
	if got, want := f.k.lastData(), "vers=3,ip=192.0.2.10,port=445,seal,file_mode=0777,dir_mode=0777,username=alice,password=pw,,1"; got != want {
		t.Errorf("caller B: mount data = %q, want %q", got, want)
	}
	if f.k.mountCount() != 2 {
		t.Fatalf("%d mounts, want one per set of permissions", f.k.mountCount())
	}
	// Caller A again reuses its own mount.
	if err := f.h.NewSmbGlobalMapping(driverA, a); err != nil || f.k.mountCount() != 2 {
		t.Errorf("remap by A: %v, %d mounts", err, f.k.mountCount())
	}
	for local, dir := range map[string]string{a.LocalPath: "srv+share+g3000-f0770-d0770", b.LocalPath: "srv+share+f0777-d0777"} {
		if target, err := os.Readlink(local); err != nil || !strings.HasPrefix(target, filepath.Join(f.root, dir)+"/") {
			t.Errorf("link %s = %q, %v; want into %s", local, target, err, dir)
		}
	}
	if err := f.h.RemoveSmbGlobalMapping(ctx, f.share.Share); err != nil {
		t.Fatal(err)
	}
	if f.k.mountCount() != 0 {
		t.Errorf("%d mounts left after RemoveSmbGlobalMapping", f.k.mountCount())
	}
	entries, _ := os.ReadDir(f.root)
	if len(entries) != 0 {
		t.Errorf("mount directories left: %v", entries)
	}
	if err := f.h.RemoveSmbGlobalMapping(ctx, f.share.Share); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("second remove: %v, want ErrNotFound", err)
	}
}

// TestRemoveSmbGlobalMapping_FakeKernel_OtherSharesStay: removing
// \\srv\share leaves \\srv\share2 and \\srv\sh mounted, whose directory
// names share a prefix with it.
func TestRemoveSmbGlobalMapping_FakeKernel_OtherSharesStay(t *testing.T) {
	f := newFixture(t, DefaultConfig())
	ctx := context.Background()
	for _, s := range []string{`\\srv\share`, `\\srv\share2`, `\\srv\sh`} {
		m := f.share
		m.Share, m.RemotePath, m.LocalPath = s, s, ""
		if err := f.h.NewSmbGlobalMapping(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.h.RemoveSmbGlobalMapping(ctx, `\\srv\share`); err != nil {
		t.Fatal(err)
	}
	var left []string
	ms, _ := f.k.Mounts()
	for _, m := range ms[1:] {
		left = append(left, filepath.Base(m.MountPoint))
	}
	if want := "srv+share2+f0777-d0777 srv+sh+f0777-d0777"; strings.Join(left, " ") != want {
		t.Errorf("mounts left = %q, want %q", left, want)
	}
}

// TestNewSmbGlobalMapping_FakeKernel_BadPolicyPermissions: permissions a
// policy gives that cannot be mount options are refused, nothing mounted.
func TestNewSmbGlobalMapping_FakeKernel_BadPolicyPermissions(t *testing.T) {
	for name, p := range map[string]Permissions{
		"setuid file mode":   {FileMode: 0o4777},
		"quote in context":   {SELinuxContext: `system_u:object_r:x:s0",uid=0`},
		"context not a type": {SELinuxContext: "container_file_t"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := Config{PermissionsFor: func(context.Context) (Permissions, bool) { return p, true }}
			f := newFixture(t, cfg)
			if err := f.h.NewSmbGlobalMapping(context.Background(), f.share); !errors.Is(err, errdefs.ErrInvalidArgument) {
				t.Errorf("err = %v, want ErrInvalidArgument", err)
			}
			if f.k.mountCount() != 0 {
				t.Error("mounted anyway")
			}
			if _, err := newHost(Config{Permissions: p}, newFakeKernel(), nil); err == nil {
				t.Error("the same permissions as daemon defaults were accepted")
			}
		})
	}
}

// TestNewSmbGlobalMapping_FakeKernel_PasswordCannotInjectLSMOptions: the
// kernel's LSM option parsers split the data at every comma outside
// quotes before cifs undoes its doubled-comma escape, so a password
// holding ",context=..." would set a label; such passwords are refused.
func TestNewSmbGlobalMapping_FakeKernel_PasswordCannotInjectLSMOptions(t *testing.T) {
	anyPassword := func(context.Context, smb.Mapping, int, time.Duration) (string, error) { return "192.0.2.10", nil }
	for pw, refused := range map[string]bool{
		"x,context=system_u:object_r:spc_t:s0": true,
		"x,fscontext=a:b:c:s0":                 true,
		"x,,rootcontext=a:b:c:s0":              true,
		"x,seclabel":                           true,
		"x,smackfsroot=*":                      true,
		"a,b=c,d":                              false,
		// An open quote keeps the rest one token, for SELinux as here.
		`q",context=a:b:c:s0`: false,
	} {
		k := newFakeKernel()
		h, err := newHost(Config{MountRoot: filepath.Join(t.TempDir(), "smb"), Permissions: Permissions{SELinuxContext: "system_u:object_r:container_file_t:s0"}}, k, anyPassword)
		if err != nil {
			t.Fatal(err)
		}
		err = h.NewSmbGlobalMapping(context.Background(), smb.Mapping{Share: `\\srv\share`, RemotePath: `\\srv\share`, Username: "alice", Password: pw})
		switch {
		case refused && !errors.Is(err, errdefs.ErrInvalidArgument):
			t.Errorf("password %q: err = %v, want ErrInvalidArgument", pw, err)
		case refused && k.mountCount() != 0:
			t.Errorf("password %q: mounted anyway", pw)
		case refused && strings.Contains(err.Error(), pw):
			t.Errorf("password %q: the error quotes it: %v", pw, err)
		case !refused && err != nil:
			t.Errorf("password %q: %v, want success", pw, err)
		}
	}
}

func TestPermissionsValidate(t *testing.T) {
	for _, ok := range []Permissions{{}, {UID: UID32(0), GID: UID32(4294967295), FileMode: 0o777, DirMode: 0o1}, {SELinuxContext: "system_u:object_r:container_file_t:s0-s0:c0.c1023"}} {
		if err := ok.Validate(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
	for _, bad := range []Permissions{{DirMode: os.ModeDir | 0o755}, {FileMode: os.ModeSticky | 0o777}, {SELinuxContext: "a:b:c:s0 x"}, {SELinuxContext: strings.Repeat("a:", 200)}} {
		if err := bad.Validate(); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("%+v: %v, want ErrInvalidArgument", bad, err)
		}
	}
}
