//go:build linux

package cifs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/hostdaemon"
)

// TestCheckShare_RealSmbd checks shares and credentials against a real
// smbd: the pre-mount check NewSmbGlobalMapping runs on every call.
func TestCheckShare_RealSmbd(t *testing.T) {
	srv := startSmbd(t)
	ctx := context.Background()
	good := smb.Mapping{Share: `\\127.0.0.1\share`, RemotePath: `\\127.0.0.1\share`, Username: "root", Password: smbdPassword}

	t.Run("success", func(t *testing.T) {
		ip, err := checkShare(ctx, good, srv.port, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if ip != "127.0.0.1" {
			t.Errorf("ip = %q, want 127.0.0.1", ip)
		}
	})
	t.Run("share name in another case", func(t *testing.T) {
		m := good
		m.Share = `\\127.0.0.1\SHARE`
		if _, err := checkShare(ctx, m, srv.port, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("wrong password is PermissionDenied without the password", func(t *testing.T) {
		m := good
		m.Password = "Wr0ng,Passw0rd"
		_, err := checkShare(ctx, m, srv.port, 5*time.Second)
		if !errors.Is(err, errdefs.ErrPermissionDenied) {
			t.Fatalf("err = %v, want ErrPermissionDenied", err)
		}
		want := `logon failure for user "root" on \\127.0.0.1\share`
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %q, want it to contain %q", err, want)
		}
		for _, secret := range []string{m.Password, smbdPassword, "Wr0ng", "Secr3t"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q contains the secret %q", err, secret)
			}
		}
	})
	t.Run("unknown user is PermissionDenied", func(t *testing.T) {
		m := good
		m.Username = `WORKGROUP\nobody`
		if _, err := checkShare(ctx, m, srv.port, 5*time.Second); !errors.Is(err, errdefs.ErrPermissionDenied) {
			t.Fatalf("err = %v, want ErrPermissionDenied", err)
		}
	})
	t.Run("unknown share is NotFound", func(t *testing.T) {
		m := good
		m.Share = `\\127.0.0.1\nosuchshare`
		_, err := checkShare(ctx, m, srv.port, 5*time.Second)
		if !errors.Is(err, errdefs.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
		if !strings.Contains(err.Error(), "the network name cannot be found") {
			t.Errorf("err = %q", err)
		}
	})
	t.Run("full mapping with the fake kernel", func(t *testing.T) {
		// The real check against smbd, then the mount through the fake
		// kernel: what the kernel would receive.
		k := newFakeKernel()
		root := t.TempDir()
		h, err := newHost(Config{MountRoot: root, Port: srv.port, RequirePrivacy: true}, k, checkShare)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.NewSmbGlobalMapping(ctx, good); err != nil {
			t.Fatal(err)
		}
		want := "vers=3,ip=127.0.0.1,port=" + strconv.Itoa(srv.port) + ",seal,username=root,password=Secr3t,,pa=ss!"
		if got := k.lastData(); got != want {
			t.Errorf("mount data = %q, want %q", got, want)
		}
	})
}

// TestNewSmbGlobalMapping_RealSmbd_KernelHasNoCIFS runs the real backend,
// real kernel included, against a real smbd: the credential check passes
// and mount(2) fails with ENODEV, as on kernels without CIFS such as CI's.
func TestNewSmbGlobalMapping_RealSmbd_KernelHasNoCIFS(t *testing.T) {
	if fs, err := os.ReadFile("/proc/filesystems"); err == nil && strings.Contains(string(fs), "\tcifs\n") {
		t.Skip("this kernel has CIFS; the ENODEV path cannot happen here")
	}
	srv := startSmbd(t)
	m := smb.Mapping{Share: `\\127.0.0.1\share`, RemotePath: `\\127.0.0.1\share\pv`, Username: "root", Password: smbdPassword}
	root := filepath.Join(t.TempDir(), "smb")
	work := t.TempDir()
	h, err := New(Config{MountRoot: root, Port: srv.port, RequirePrivacy: true, WorkingDirs: []string{work}})
	if err != nil {
		t.Fatal(err)
	}
	m.LocalPath = filepath.Join(work, "link")
	err = h.NewSmbGlobalMapping(context.Background(), m)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("err = %v, want ErrFailedPrecondition", err)
	}
	if !strings.Contains(err.Error(), "the kernel has no CIFS support (mount: no such device)") {
		t.Errorf("err = %q", err)
	}
	if strings.Contains(err.Error(), "Secr3t") {
		t.Errorf("error %q contains the password", err)
	}
	dir, _ := h.MountDir(m.Share, Permissions{})
	if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("mount directory %s left behind: %v", dir, err)
	}
	if _, err := os.Lstat(m.LocalPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("local link %s created although the mount failed: %v", m.LocalPath, err)
	}
	if err := h.RemoveSmbGlobalMapping(context.Background(), m.Share); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("RemoveSmbGlobalMapping after the failure: %v, want ErrNotFound", err)
	}
}

// TestCheckShare_NothingListening needs no server: a closed port is
// ErrUnavailable, quickly.
func TestCheckShare_NothingListening(t *testing.T) {
	port := hostdaemon.FreePort(t) // free now, so nothing listens there
	m := smb.Mapping{Share: `\\127.0.0.1\share`, RemotePath: `\\127.0.0.1\share`, Username: "root", Password: "pw"}
	start := time.Now()
	_, err := checkShare(context.Background(), m, port, 5*time.Second)
	if !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("err = %q, want the cause", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestCheckShare_UnknownHost: a host name that does not resolve is
// NotFound, as Windows says "the network path was not found".
func TestCheckShare_UnknownHost(t *testing.T) {
	m := smb.Mapping{Share: `\\no-such-host.invalid\share`, RemotePath: `\\no-such-host.invalid\share`, Username: "root", Password: "pw"}
	_, err := checkShare(context.Background(), m, 445, 5*time.Second)
	if !errors.Is(err, errdefs.ErrNotFound) && !errors.Is(err, errdefs.ErrUnavailable) {
		// A resolver that cannot be reached at all gives Unavailable.
		t.Fatalf("err = %v, want ErrNotFound (or ErrUnavailable without DNS)", err)
	}
}
