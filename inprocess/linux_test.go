//go:build linux

package inprocess

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/internal/callgate"
)

// TestAuditUnwritable: while a record cannot be written (/dev/full answers
// every write with ENOSPC), calls that change the node are refused, the
// first one included, as by the daemon, and reads go on.
func TestAuditUnwritable(t *testing.T) {
	n := simNode(t, Options{AuditLog: "/dev/full", AuditReads: true})
	ctx := t.Context()
	for _, dir := range []string{`\a`, `\b`} {
		_, err := n.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: kubelet + dir})
		if !errors.Is(err, errdefs.ErrUnavailable) || err.Error() != callgate.ErrAuditUnavailable.Error() {
			t.Fatalf("Mkdir %s with the audit log failing: %v", dir, err)
		}
		if ok, err := n.Filesystem().PathExists(ctx, &filesystem.PathExistsRequest{Path: kubelet + dir}); err != nil || ok.Exists {
			t.Errorf("read with the audit log failing: %+v, %v; want it answered, and %s not created", ok, err, dir)
		}
	}
}

// TestRealBackend drives the Linux filesystem backend in-process, as the
// daemon's --host=linux would, in a temporary working directory: what the
// calls report is what the kernel shows.
func TestRealBackend(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the Linux backends need root (as the daemon does)")
	}
	dir := t.TempDir()
	log := filepath.Join(t.TempDir(), "audit.log")
	n, err := New(t.Context(), Options{Host: HostLinux, KubeletPath: dir, AuditLog: log})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ctx := t.Context()
	src, link := filepath.Join(dir, "plugins", "vol"), filepath.Join(dir, "pods", "p1", "mount")
	for _, p := range []string{src, filepath.Dir(link)} {
		if _, err := n.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: p}); err != nil {
			t.Fatalf("Mkdir %s: %v", p, err)
		}
	}
	if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
		t.Fatalf("Mkdir made no directory: %v", err)
	}
	if _, err := n.Filesystem().CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{SourcePath: src, TargetPath: link}); err != nil {
		t.Fatalf("CreateSymlink: %v", err)
	}
	if got, err := os.Readlink(link); err != nil || got != src {
		t.Errorf("link points to %q (%v), want %q", got, err, src)
	}
	if _, err := n.Filesystem().Rmdir(ctx, &filesystem.RmdirRequest{Path: link, Force: true}); err != nil {
		t.Fatalf("Rmdir: %v", err)
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("link still there: %v", err)
	}
	if _, err := os.Stat(src); err != nil {
		t.Errorf("Rmdir of the link removed its target: %v", err)
	}
	// Outside the working directory the real backend is never reached.
	if _, err := n.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: "/etc/inprocess-test"}); !errors.Is(err, errdefs.ErrInvalidArgument) && !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("Mkdir outside the working dir: %v", err)
	}
	if _, err := os.Stat("/etc/inprocess-test"); !os.IsNotExist(err) {
		t.Errorf("/etc/inprocess-test exists: %v", err)
	}
	if lines := readAudit(t, log); len(lines) != 5 {
		t.Errorf("%d audit records, want 5 (2 Mkdir, CreateSymlink, Rmdir, refused Mkdir)", len(lines))
	}
}
