//go:build linux

package cifs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// fakeKernel is a kernel with CIFS: mount(2) records the call and adds a
// mount that /proc/self/mountinfo would show, with the superblock options
// the cifs module prints (user and domain, never the password).
type fakeKernel struct {
	mu       sync.Mutex
	mounts   []fakeMount
	calls    []string
	datas    []string
	mountErr error
	statErr  map[string]error
	umntErr  map[string]error
}

type fakeMount struct {
	source, target, fstype, data string
}

func newFakeKernel() *fakeKernel {
	return &fakeKernel{statErr: map[string]error{}, umntErr: map[string]error{}}
}

func (k *fakeKernel) Mount(source, target, fstype string, flags uintptr, data string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls = append(k.calls, fmt.Sprintf("mount %s %s %s %#x", source, target, fstype, flags))
	k.datas = append(k.datas, data)
	if k.mountErr != nil {
		return k.mountErr
	}
	k.mounts = append(k.mounts, fakeMount{source, target, fstype, data})
	return nil
}

func (k *fakeKernel) Unmount(target string, flags int) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls = append(k.calls, fmt.Sprintf("umount %s %d", target, flags))
	if err := k.umntErr[target]; err != nil && flags&unix.MNT_DETACH == 0 {
		return err
	}
	for i := len(k.mounts) - 1; i >= 0; i-- {
		if k.mounts[i].target == target {
			k.mounts = append(k.mounts[:i], k.mounts[i+1:]...)
			delete(k.statErr, target)
			return nil
		}
	}
	return unix.EINVAL
}

func (k *fakeKernel) Mounts() ([]mountinfo.Mount, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := []mountinfo.Mount{{ID: 1, MountPoint: "/", FSType: "ext4", Source: "/dev/vda"}}
	for i, m := range k.mounts {
		var super []string
		for _, o := range strings.Split(m.data, ",") {
			if !strings.HasPrefix(o, "password=") && o != "" {
				super = append(super, o)
			}
		}
		out = append(out, mountinfo.Mount{ID: 100 + i, MountPoint: m.target, FSType: m.fstype, Source: m.source, SuperOptions: "rw," + strings.Join(super, ",")})
	}
	return out, nil
}

func (k *fakeKernel) Stat(path string, _ time.Duration) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.statErr[path]
}

func (k *fakeKernel) lastData() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.datas) == 0 {
		return ""
	}
	return k.datas[len(k.datas)-1]
}

func (k *fakeKernel) callLog() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]string(nil), k.calls...)
}

func (k *fakeKernel) mountCount() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.mounts)
}

// fakeCheck accepts user "alice" or "bob" with password "pw,1" on any
// share but \\srv\missing, and counts its calls.
type fakeCheck struct {
	mu    sync.Mutex
	calls int
	err   error
}

func (c *fakeCheck) check(_ context.Context, m smb.Mapping, _ int, _ time.Duration) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if c.err != nil {
		return "", c.err
	}
	if m.Share == `\\srv\missing` {
		return "", errdefs.Errorf(errdefs.ErrNotFound, "share %s not found", m.Share)
	}
	u, _ := splitUser(m.Username)
	u, _, _ = strings.Cut(u, "@")
	if (!strings.EqualFold(u, "alice") && !strings.EqualFold(u, "bob")) || m.Password != "pw,1" {
		return "", errdefs.Errorf(errdefs.ErrPermissionDenied, "logon failure for user %q on %s", m.Username, m.Share)
	}
	return "192.0.2.10", nil
}

type fixture struct {
	h     *Host
	k     *fakeKernel
	c     *fakeCheck
	root  string
	work  string
	share smb.Mapping
}

func newFixture(t *testing.T, cfg Config) *fixture {
	t.Helper()
	f := &fixture{k: newFakeKernel(), c: &fakeCheck{}, root: filepath.Join(t.TempDir(), "smb"), work: t.TempDir()}
	cfg.MountRoot = f.root
	cfg.WorkingDirs = []string{f.work}
	h, err := newHost(cfg, f.k, f.c.check)
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	f.share = smb.Mapping{Share: `\\srv\share`, RemotePath: `\\srv\share\PV-1\data`, LocalPath: filepath.Join(f.work, "pod-vol"), Username: "alice", Password: "pw,1"}
	return f
}

func TestNewSmbGlobalMapping_FakeKernel_Success(t *testing.T) {
	f := newFixture(t, Config{Port: 445, RequirePrivacy: true})
	if err := f.h.NewSmbGlobalMapping(context.Background(), f.share); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(f.root, "srv+share")
	wantCalls := []string{fmt.Sprintf("mount //srv/share %s cifs %#x", dir, unix.MS_NOSUID|unix.MS_NODEV)}
	if got := f.k.callLog(); strings.Join(got, "\n") != strings.Join(wantCalls, "\n") {
		t.Errorf("kernel calls = %q, want %q", got, wantCalls)
	}
	if got, want := f.k.lastData(), "vers=3,ip=192.0.2.10,port=445,seal,username=alice,password=pw,,1"; got != want {
		t.Errorf("mount data = %q, want %q", got, want)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("mount dir %s: %v %v", dir, fi, err)
	}
	target, err := os.Readlink(f.share.LocalPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "PV-1", "data"); target != want {
		t.Errorf("link target = %q, want %q (sub-path in its own case)", target, want)
	}
}

func TestNewSmbGlobalMapping_FakeKernel_MountOptions(t *testing.T) {
	for name, tc := range map[string]struct {
		cfg  Config
		user string
		want string
	}{
		"no privacy":      {Config{Port: 4455}, "alice", "vers=3,ip=192.0.2.10,port=4455,username=alice,password=pw,,1"},
		"domain user":     {Config{RequirePrivacy: true}, `CORP\alice`, "vers=3,ip=192.0.2.10,port=445,seal,username=alice,domain=CORP,password=pw,,1"},
		"UPN stays whole": {Config{}, "alice@corp.example", "vers=3,ip=192.0.2.10,port=445,username=alice@corp.example,password=pw,,1"},
		"pinned version":  {Config{Version: "3.1.1"}, "alice", "vers=3.1.1,ip=192.0.2.10,port=445,username=alice,password=pw,,1"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, tc.cfg)
			m := f.share
			m.Username = tc.user
			if err := f.h.NewSmbGlobalMapping(context.Background(), m); err != nil {
				t.Fatal(err)
			}
			if got := f.k.lastData(); got != tc.want {
				t.Errorf("mount data = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNewSmbGlobalMapping_FakeKernel_Reuse(t *testing.T) {
	f := newFixture(t, Config{})
	ctx := context.Background()
	if err := f.h.NewSmbGlobalMapping(ctx, f.share); err != nil {
		t.Fatal(err)
	}
	// The same user again (another case, another PV on the share, the
	// same link): reused, one mount.
	again := f.share
	again.Username = "ALICE"
	if err := f.h.NewSmbGlobalMapping(ctx, again); err != nil {
		t.Fatal(err)
	}
	other := f.share
	other.RemotePath = `\\srv\share\pv-2`
	other.LocalPath = filepath.Join(f.work, "pod-vol-2")
	if err := f.h.NewSmbGlobalMapping(ctx, other); err != nil {
		t.Fatal(err)
	}
	if n := f.k.mountCount(); n != 1 {
		t.Errorf("%d mounts, want 1: %q", n, f.k.callLog())
	}
	if f.c.calls != 3 {
		t.Errorf("credential checks = %d, want one per call (3)", f.c.calls)
	}
	// A wrong password is refused even though the share is mapped.
	bad := f.share
	bad.Password = "guess"
	if err := f.h.NewSmbGlobalMapping(ctx, bad); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("wrong password on a mapped share: %v, want ErrPermissionDenied", err)
	}
}

// TestNewSmbGlobalMapping_FakeKernel_OtherUserReusesHealthyMount follows
// upstream csi-proxy (pkg/server/smb/server.go NewSmbGlobalMapping, commit
// eeba4706), which reuses any healthy mapping of the share whatever the
// user name: csi-driver-smb stages several PVs of one share, possibly as
// another user or the same user spelled otherwise. Here the caller's
// credentials are still checked against the server first.
func TestNewSmbGlobalMapping_FakeKernel_OtherUserReusesHealthyMount(t *testing.T) {
	f := newFixture(t, Config{})
	ctx := context.Background()
	if err := f.h.NewSmbGlobalMapping(ctx, f.share); err != nil {
		t.Fatal(err)
	}
	for i, user := range []string{`CORP\bob`, `alice@corp.example`, `CORP\alice`} {
		m := f.share
		m.Username = user
		m.LocalPath = filepath.Join(f.work, fmt.Sprintf("vol-%d", i))
		if err := f.h.NewSmbGlobalMapping(ctx, m); err != nil {
			t.Fatalf("mapping the share again as %q: %v; want the healthy mount reused", user, err)
		}
		if _, err := os.Readlink(m.LocalPath); err != nil {
			t.Errorf("no link for %q: %v", user, err)
		}
	}
	if n := f.k.mountCount(); n != 1 {
		t.Errorf("%d mounts, want the one of alice reused: %q", n, f.k.callLog())
	}
	if !strings.Contains(f.k.lastData(), "username=alice") {
		t.Errorf("mount data %q: the mount should stay alice's", f.k.lastData())
	}
	// The credentials are checked even when the mount is reused.
	bad := f.share
	bad.Username, bad.Password = `CORP\bob`, "guess"
	bad.LocalPath = filepath.Join(f.work, "bad")
	if err := f.h.NewSmbGlobalMapping(ctx, bad); !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("bob with a wrong password on a mapped share: %v, want ErrPermissionDenied", err)
	}
	if _, err := os.Lstat(bad.LocalPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("link made despite the refused credentials: %v", err)
	}
}

func TestNewSmbGlobalMapping_FakeKernel_StaleIsRecreated(t *testing.T) {
	for name, statErr := range map[string]error{
		"EIO":       &os.PathError{Op: "stat", Path: "x", Err: unix.EIO},
		"ENOTCONN":  &os.PathError{Op: "stat", Path: "x", Err: unix.ENOTCONN},
		"EHOSTDOWN": &os.PathError{Op: "stat", Path: "x", Err: unix.EHOSTDOWN},
		"hung stat": errStatTimeout,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, Config{})
			ctx := context.Background()
			if err := f.h.NewSmbGlobalMapping(ctx, f.share); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(f.root, "srv+share")
			f.k.mu.Lock()
			f.k.statErr[dir] = statErr
			f.k.mu.Unlock()
			// Even another user may map a stale share: the old mapping is
			// dead, as on Windows, where a stale mapping is re-created.
			bob := f.share
			bob.Username = "bob"
			if err := f.h.NewSmbGlobalMapping(ctx, bob); err != nil {
				t.Fatal(err)
			}
			calls := f.k.callLog()
			want := []string{
				fmt.Sprintf("mount //srv/share %s cifs %#x", dir, unix.MS_NOSUID|unix.MS_NODEV),
				fmt.Sprintf("umount %s %d", dir, unix.MNT_DETACH),
				fmt.Sprintf("mount //srv/share %s cifs %#x", dir, unix.MS_NOSUID|unix.MS_NODEV),
			}
			if strings.Join(calls, "\n") != strings.Join(want, "\n") {
				t.Errorf("kernel calls = %q, want %q", calls, want)
			}
			if !strings.Contains(f.k.lastData(), "username=bob") {
				t.Errorf("re-created with %q", f.k.lastData())
			}
		})
	}
}

func TestNewSmbGlobalMapping_FakeKernel_OtherStatErrorIsReported(t *testing.T) {
	f := newFixture(t, Config{})
	ctx := context.Background()
	if err := f.h.NewSmbGlobalMapping(ctx, f.share); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(f.root, "srv+share")
	f.k.statErr[dir] = &os.PathError{Op: "stat", Path: dir, Err: unix.EACCES}
	if err := f.h.NewSmbGlobalMapping(ctx, f.share); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("err = %v, want the stat error", err)
	}
	if n := f.k.mountCount(); n != 1 {
		t.Errorf("%d mounts; a healthy-but-unreadable mount must not be replaced", n)
	}
}

func TestNewSmbGlobalMapping_FakeKernel_LocalLink(t *testing.T) {
	ctx := context.Background()
	t.Run("an identical link is success", func(t *testing.T) {
		f := newFixture(t, Config{})
		target := filepath.Join(f.root, "srv+share", "PV-1", "data")
		if err := os.Symlink(target, f.share.LocalPath); err != nil {
			t.Fatal(err)
		}
		if err := f.h.NewSmbGlobalMapping(ctx, f.share); err != nil {
			t.Fatal(err)
		}
	})
	for name, setup := range map[string]func(p string) error{
		"an existing directory": func(p string) error { return os.Mkdir(p, 0o755) },
		"an existing file":      func(p string) error { return os.WriteFile(p, nil, 0o644) },
		"a link elsewhere":      func(p string) error { return os.Symlink("/elsewhere", p) },
	} {
		t.Run(name+" is AlreadyExists and maps nothing", func(t *testing.T) {
			f := newFixture(t, Config{})
			if err := setup(f.share.LocalPath); err != nil {
				t.Fatal(err)
			}
			err := f.h.NewSmbGlobalMapping(ctx, f.share)
			if !errors.Is(err, errdefs.ErrAlreadyExists) {
				t.Fatalf("err = %v, want ErrAlreadyExists", err)
			}
			if len(f.k.callLog()) != 0 {
				t.Errorf("kernel calls %q despite the failure", f.k.callLog())
			}
		})
	}
	t.Run("a missing parent is NotFound and maps nothing", func(t *testing.T) {
		f := newFixture(t, Config{})
		m := f.share
		m.LocalPath = filepath.Join(f.work, "no", "such", "dir")
		if err := f.h.NewSmbGlobalMapping(ctx, m); !errors.Is(err, errdefs.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
		if len(f.k.callLog()) != 0 {
			t.Errorf("kernel calls %q despite the failure", f.k.callLog())
		}
	})
	t.Run("no local path: mount only", func(t *testing.T) {
		f := newFixture(t, Config{})
		m := f.share
		m.LocalPath = ""
		if err := f.h.NewSmbGlobalMapping(ctx, m); err != nil {
			t.Fatal(err)
		}
		if f.k.mountCount() != 1 {
			t.Error("not mounted")
		}
	})
}

// TestNewSmbGlobalMapping_FakeKernel_LinkEscape: a link planted below the
// working directory that leads out of it cannot redirect local_path:
// PermissionDenied, nothing mapped, nothing created outside. A link that
// stays inside is followed, as the filesystem group follows it.
func TestNewSmbGlobalMapping_FakeKernel_LinkEscape(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	for name, link := range map[string]string{
		"absolute link out":       outside,
		"relative link out":       "../", // made relative to the working directory below
		"link to /proc magic":     "/proc/self/cwd",
		"chain through a link in": "escape",
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, Config{})
			if err := os.Symlink(outside, filepath.Join(f.work, "escape")); err != nil {
				t.Fatal(err)
			}
			planted := filepath.Join(f.work, "planted")
			if link == "../" {
				rel, err := filepath.Rel(f.work, outside)
				if err != nil {
					t.Fatal(err)
				}
				link = rel
			}
			if err := os.Symlink(link, planted); err != nil {
				t.Fatal(err)
			}
			m := f.share
			m.LocalPath = filepath.Join(planted, "pod-vol")
			err := f.h.NewSmbGlobalMapping(ctx, m)
			if !errors.Is(err, errdefs.ErrPermissionDenied) || !strings.Contains(err.Error(), m.LocalPath) {
				t.Fatalf("err = %v, want ErrPermissionDenied naming %s", err, m.LocalPath)
			}
			if len(f.k.callLog()) != 0 {
				t.Errorf("kernel calls %q despite the refusal", f.k.callLog())
			}
			// The link step alone, as if the checks had passed.
			if err := f.h.makeLink(m.LocalPath, "/target"); !errors.Is(err, errdefs.ErrPermissionDenied) {
				t.Fatalf("makeLink = %v, want ErrPermissionDenied", err)
			}
			entries, err := os.ReadDir(outside)
			if err != nil || len(entries) != 0 {
				t.Fatalf("the directory outside holds %v (%v); want nothing", entries, err)
			}
		})
	}
	t.Run("a link that stays inside is followed", func(t *testing.T) {
		f := newFixture(t, Config{})
		if err := os.Mkdir(filepath.Join(f.work, "pods"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(f.work, "pods"), filepath.Join(f.work, "in")); err != nil {
			t.Fatal(err)
		}
		m := f.share
		m.LocalPath = filepath.Join(f.work, "in", "pod-vol")
		if err := f.h.NewSmbGlobalMapping(ctx, m); err != nil {
			t.Fatal(err)
		}
		if got, err := os.Readlink(filepath.Join(f.work, "pods", "pod-vol")); err != nil || got != filepath.Join(f.root, "srv+share", "PV-1", "data") {
			t.Fatalf("link = %q, %v", got, err)
		}
	})
	t.Run("without working directories no link is made", func(t *testing.T) {
		h, err := newHost(Config{MountRoot: filepath.Join(t.TempDir(), "smb")}, newFakeKernel(), (&fakeCheck{}).check)
		if err != nil {
			t.Fatal(err)
		}
		local := filepath.Join(t.TempDir(), "pod-vol")
		m := smb.Mapping{Share: `\\srv\share`, RemotePath: `\\srv\share\pv`, LocalPath: local, Username: "alice", Password: "pw"}
		if err := h.NewSmbGlobalMapping(ctx, m); !errors.Is(err, errdefs.ErrFailedPrecondition) {
			t.Fatalf("err = %v, want ErrFailedPrecondition", err)
		}
		if _, err := os.Lstat(local); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a link was made: %v", err)
		}
	})
}

func TestNewSmbGlobalMapping_FakeKernel_Failures(t *testing.T) {
	ctx := context.Background()
	t.Run("ENODEV: the kernel has no CIFS", func(t *testing.T) {
		f := newFixture(t, Config{})
		f.k.mountErr = unix.ENODEV
		err := f.h.NewSmbGlobalMapping(ctx, f.share)
		if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "the kernel has no CIFS support (mount: no such device)") {
			t.Fatalf("err = %v", err)
		}
		if _, err := os.Stat(filepath.Join(f.root, "srv+share")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("mount directory left behind: %v", err)
		}
		if _, err := os.Lstat(f.share.LocalPath); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("link made despite the failure: %v", err)
		}
	})
	for errno, kind := range map[unix.Errno]error{
		unix.EACCES:       errdefs.ErrPermissionDenied,
		unix.EHOSTUNREACH: errdefs.ErrUnavailable,
		unix.ENOENT:       errdefs.ErrNotFound,
		unix.EOPNOTSUPP:   errdefs.ErrFailedPrecondition,
	} {
		t.Run(errno.Error(), func(t *testing.T) {
			f := newFixture(t, Config{})
			f.k.mountErr = errno
			err := f.h.NewSmbGlobalMapping(ctx, f.share)
			if !errors.Is(err, kind) {
				t.Fatalf("err = %v, want %v", err, kind)
			}
			if strings.Contains(err.Error(), "pw,1") || strings.Contains(err.Error(), "password=") {
				t.Errorf("error %q quotes the mount data", err)
			}
		})
	}
	t.Run("credential check failures stop before the kernel", func(t *testing.T) {
		f := newFixture(t, Config{})
		m := f.share
		m.Password = "nope"
		if err := f.h.NewSmbGlobalMapping(ctx, m); !errors.Is(err, errdefs.ErrPermissionDenied) {
			t.Fatalf("err = %v", err)
		}
		m = f.share
		m.Share, m.RemotePath = `\\srv\missing`, `\\srv\missing`
		if err := f.h.NewSmbGlobalMapping(ctx, m); !errors.Is(err, errdefs.ErrNotFound) {
			t.Fatalf("err = %v", err)
		}
		f.c.err = errdefs.Errorf(errdefs.ErrUnavailable, "cannot reach")
		if err := f.h.NewSmbGlobalMapping(ctx, f.share); !errors.Is(err, errdefs.ErrUnavailable) {
			t.Fatalf("err = %v", err)
		}
		if len(f.k.callLog()) != 0 {
			t.Errorf("kernel calls %q", f.k.callLog())
		}
	})
	t.Run("what the mount data cannot carry is refused", func(t *testing.T) {
		f := newFixture(t, Config{})
		for _, m := range []smb.Mapping{
			{Share: `\\srv\share`, RemotePath: `\\srv\share`, Username: "alice", Password: "a\x00b"},
			{Share: `\\srv\share`, RemotePath: `\\srv\share`, Username: "al,ice", Password: "pw,1"},
			{Share: `\\srv\share`, RemotePath: `\\srv\share`, Username: "", Password: "pw,1"},
		} {
			err := f.h.NewSmbGlobalMapping(ctx, m)
			if !errors.Is(err, errdefs.ErrInvalidArgument) {
				t.Errorf("%q: err = %v, want ErrInvalidArgument", m.Username, err)
			} else if strings.Contains(err.Error(), "a\x00b") {
				t.Errorf("error quotes the password: %q", err)
			}
		}
		if f.c.calls != 0 || len(f.k.callLog()) != 0 {
			t.Error("refused input reached the server or the kernel")
		}
	})
	t.Run("a foreign mount at the mount directory", func(t *testing.T) {
		f := newFixture(t, Config{})
		dir := filepath.Join(f.root, "srv+share")
		f.k.mounts = append(f.k.mounts, fakeMount{"tmpfs", dir, "tmpfs", ""})
		if err := f.h.NewSmbGlobalMapping(ctx, f.share); !errors.Is(err, errdefs.ErrFailedPrecondition) {
			t.Fatalf("err = %v, want ErrFailedPrecondition", err)
		}
	})
}

func TestRemoveSmbGlobalMapping_FakeKernel(t *testing.T) {
	ctx := context.Background()
	t.Run("unmounts and removes the directory; the link stays", func(t *testing.T) {
		f := newFixture(t, Config{})
		if err := f.h.NewSmbGlobalMapping(ctx, f.share); err != nil {
			t.Fatal(err)
		}
		if err := f.h.RemoveSmbGlobalMapping(ctx, f.share.Share); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(f.root, "srv+share")
		if f.k.mountCount() != 0 {
			t.Error("still mounted")
		}
		if calls := f.k.callLog(); calls[len(calls)-1] != "umount "+dir+" 0" {
			t.Errorf("calls = %q", calls)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("mount directory stays: %v", err)
		}
		if _, err := os.Lstat(f.share.LocalPath); err != nil {
			t.Errorf("the link should stay, as on Windows: %v", err)
		}
		if err := f.h.RemoveSmbGlobalMapping(ctx, f.share.Share); !errors.Is(err, errdefs.ErrNotFound) {
			t.Errorf("second remove: %v, want ErrNotFound", err)
		}
	})
	t.Run("not mapped is NotFound", func(t *testing.T) {
		f := newFixture(t, Config{})
		err := f.h.RemoveSmbGlobalMapping(ctx, `\\srv\share`)
		if !errors.Is(err, errdefs.ErrNotFound) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("busy is detached lazily", func(t *testing.T) {
		f := newFixture(t, Config{})
		if err := f.h.NewSmbGlobalMapping(ctx, f.share); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(f.root, "srv+share")
		f.k.umntErr[dir] = unix.EBUSY
		if err := f.h.RemoveSmbGlobalMapping(ctx, f.share.Share); err != nil {
			t.Fatal(err)
		}
		calls := f.k.callLog()
		want := []string{"umount " + dir + " 0", fmt.Sprintf("umount %s %d", dir, unix.MNT_DETACH)}
		if got := calls[len(calls)-2:]; strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("calls = %q, want to end with %q", calls, want)
		}
	})
	t.Run("map again after remove", func(t *testing.T) {
		f := newFixture(t, Config{})
		m := f.share
		m.LocalPath = ""
		for i := 0; i < 2; i++ {
			if err := f.h.NewSmbGlobalMapping(ctx, m); err != nil {
				t.Fatal(err)
			}
			if err := f.h.RemoveSmbGlobalMapping(ctx, m.Share); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestMountDir(t *testing.T) {
	h, err := newHost(Config{MountRoot: "/run/smb/"}, newFakeKernel(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for share, want := range map[string]string{
		`\\srv\share`:                "/run/smb/srv+share",
		`\\SRV\Share`:                "/run/smb/srv+share",
		`\\10.0.0.1\c$`:              "/run/smb/10.0.0.1+c%24",
		`\\file-01.corp\my share`:    "/run/smb/file-01.corp+my%20share",
		`\\srv\a+b`:                  "/run/smb/srv+a%2Bb",
		`\\srv\..`:                   "/run/smb/srv+..",
		`\\srv\` + "d\u00e9p\u00f4t": "/run/smb/srv+d%C3%A9p%C3%B4t",
	} {
		got, err := h.MountDir(share, Permissions{})
		if err != nil || got != want {
			t.Errorf("MountDir(%q) = %q, %v; want %q", share, got, err, want)
		}
	}
	long := `\\` + strings.Repeat("s", 200) + `\` + strings.Repeat("\u00e9", 60)
	if got, err := h.MountDir(long, Permissions{}); err != nil || len(filepath.Base(got)) > 255 || !strings.HasPrefix(filepath.Base(got), "h-") {
		t.Errorf("MountDir(long) = %q, %v", got, err)
	}
	for _, bad := range []string{`srv\share`, `\\srv`, `\\srv\`, `\\srv\a\b`} {
		if _, err := h.MountDir(bad, Permissions{}); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("MountDir(%q): %v, want ErrInvalidArgument", bad, err)
		}
	}
}

func TestNew_Config(t *testing.T) {
	if _, err := New(Config{MountRoot: "relative"}); err == nil {
		t.Error("relative mount root accepted")
	}
	if _, err := New(Config{Port: 70000}); err == nil {
		t.Error("port 70000 accepted")
	}
	if _, err := New(Config{Version: "3,seal"}); err == nil {
		t.Error("a version that injects options accepted")
	}
	d := DefaultConfig()
	if !d.RequirePrivacy || d.Port != 445 || d.MountRoot != DefaultMountRoot || d.Version != "3" {
		t.Errorf("DefaultConfig() = %+v", d)
	}
}
