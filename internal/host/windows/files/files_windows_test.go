//go:build windows

package files

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
)

// TestRealSymlinkLifecycle creates a directory symlink with the real Win32
// calls, checks IsSymlink, and removes the link with Rmdir(force) without
// touching the target.
// wineFakesLinks is why the symlink tests need real Windows
// (windows-under-wine.md §4, pitfall 7).
const wineFakesLinks = "Wine's CreateSymbolicLinkW is a stub that reports success and creates nothing, and it fakes reparse points"

func TestRealSymlinkLifecycle(t *testing.T) {
	testutil.RequireRealWindows(t, wineFakesLinks)
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "link")
	if err := h.Mkdir(ctx, filepath.Join(target, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "keep.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := h.CreateSymlink(ctx, target, link); err != nil {
		if errors.Is(err, windows.ERROR_PRIVILEGE_NOT_HELD) {
			t.Skip("the test process lacks SeCreateSymbolicLinkPrivilege: run it elevated or with Developer Mode")
		}
		t.Fatal(err)
	}
	if err := h.CreateSymlink(ctx, target+`\`, link); err != nil {
		t.Errorf("second CreateSymlink to the same target: %v", err)
	}
	if ok, err := h.IsSymlink(ctx, link); err != nil || !ok {
		t.Errorf("IsSymlink(link) = %v, %v", ok, err)
	}
	if ok, err := h.IsSymlink(ctx, target); err != nil || ok {
		t.Errorf("IsSymlink(dir) = %v, %v", ok, err)
	}
	if ok, err := h.PathExists(ctx, filepath.Join(link, "keep.txt")); err != nil || !ok {
		t.Errorf("PathExists through the link = %v, %v", ok, err)
	}
	if err := h.Rmdir(ctx, link, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(target, "keep.txt")); err != nil {
		t.Errorf("Rmdir(force) on the link touched its target: %v", err)
	}
	// A tree holding a link: the tree goes, the link's target stays.
	tree := filepath.Join(dir, "tree")
	if err := h.Mkdir(ctx, filepath.Join(tree, "a")); err != nil {
		t.Fatal(err)
	}
	if err := h.CreateSymlink(ctx, target, filepath.Join(tree, "a", "l")); err != nil {
		t.Fatal(err)
	}
	if err := h.Rmdir(ctx, tree, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(target, "keep.txt")); err != nil {
		t.Errorf("Rmdir(force) on a tree followed a link inside it: %v", err)
	}
	if ok, _ := h.PathExists(ctx, tree); ok {
		t.Error("tree still exists")
	}
}

// TestRealDirectories runs Mkdir, PathExists, IsSymlink and Rmdir on plain
// directories and files with the real Win32 calls, including a read-only
// file and a path longer than MAX_PATH (the \\?\ form). It does not skip
// under Wine: Wine implements directories, attributes and long paths, only
// reparse points are fake there.
func TestRealDirectories(t *testing.T) {
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d := filepath.Join(t.TempDir(), "a")
	if err := h.Mkdir(ctx, filepath.Join(d, "b", "c")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "b", "ro.txt"), []byte("x"), 0o444); err != nil {
		t.Fatal(err)
	}
	if ok, err := h.PathExists(ctx, filepath.Join(d, "b", "c")); err != nil || !ok {
		t.Errorf("PathExists = %v, %v", ok, err)
	}
	if ok, err := h.IsSymlink(ctx, d); err != nil || ok {
		t.Errorf("IsSymlink(dir) = %v, %v", ok, err)
	}
	if err := h.Rmdir(ctx, d, false); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Errorf("Rmdir without force on a tree: %v", err)
	}
	if err := h.Rmdir(ctx, d, true); err != nil {
		t.Fatal(err)
	}
	if ok, err := h.PathExists(ctx, d); err != nil || ok {
		t.Errorf("after Rmdir: PathExists = %v, %v", ok, err)
	}
	if err := h.Rmdir(ctx, d, true); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("Rmdir of a missing path: %v", err)
	}
	long := filepath.Join(t.TempDir(), "l")
	for len(long) < 300 {
		long = filepath.Join(long, "abcdefghij")
	}
	if err := h.Mkdir(ctx, long); err != nil {
		t.Fatalf("Mkdir of a %d-character path: %v", len(long), err)
	}
	if ok, err := h.PathExists(ctx, long); err != nil || !ok {
		t.Errorf("PathExists(long) = %v, %v", ok, err)
	}
	if err := h.Rmdir(ctx, filepath.Dir(filepath.Dir(long)), true); err != nil {
		t.Errorf("Rmdir of a long tree: %v", err)
	}
}
