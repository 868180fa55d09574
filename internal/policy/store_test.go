package policy

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

func onlyUID(uid int) string {
	return "rules:\n- name: uid" + itoa(uid) + "\n  callers: [{uids: [" + itoa(uid) + "]}]\n  allow: [{methods: ['*']}]\n"
}

func itoa(n int) string { return strconv.Itoa(n) }

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path+".tmp", []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	// On Windows a reader that has the file open makes the rename fail
	// for a moment.
	var err error
	for range 100 {
		if err = os.Rename(path+".tmp", path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal(err)
}

// allows tells whether the store lets uid call disk.PartitionDisk.
func allows(s *Store, uid uint32) bool {
	return s.Decide(Call{Caller: identity.Caller{HasUnixIDs: true, UID: uid}, Group: "disk", Version: "v1", Method: "PartitionDisk", Inspected: true, Args: []Arg{diskArg(0)}}).Allowed
}

var opts = Options{Style: hostpath.Windows}

func TestStoreReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	write(t, path, onlyUID(0))
	s, err := Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !allows(s, 0) || allows(s, 1000) || s.Path() != path {
		t.Fatal("initial policy")
	}
	// Unchanged: nothing happens.
	if changed, err := s.Reload(); changed || err != nil {
		t.Errorf("Reload of the same file = %v, %v", changed, err)
	}
	// A valid change takes effect.
	write(t, path, onlyUID(1000))
	if changed, err := s.Reload(); !changed || err != nil {
		t.Fatalf("Reload = %v, %v", changed, err)
	}
	if allows(s, 0) || !allows(s, 1000) || s.Reloads() != 1 {
		t.Error("new policy not in force")
	}
	// A broken file keeps the last good policy, and is counted once.
	for _, broken := range []string{"rules: [", "rules:\n", "rules:\n- name: x\n  callers: [{any: true}]\n  allow: [{methods: ['*']}]\n  typo: 1\n"} {
		before := s.Failures()
		write(t, path, broken)
		for range 3 {
			if changed, err := s.Reload(); changed || err == nil {
				t.Errorf("Reload of %q = %v, %v", broken, changed, err)
			}
		}
		if s.Failures() != before+1 {
			t.Errorf("%q counted %d times", broken, s.Failures()-before)
		}
		if allows(s, 0) || !allows(s, 1000) {
			t.Errorf("%q changed the policy in force", broken)
		}
	}
	// A deleted file keeps it too: no policy file never means no policy.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reload(); err == nil {
		t.Error("Reload of a deleted file succeeded")
	}
	if !allows(s, 1000) || allows(s, 0) || allows(s, 65534) {
		t.Error("deleting the file changed the policy in force")
	}
	// Fixed again.
	write(t, path, onlyUID(0))
	if changed, err := s.Reload(); !changed || err != nil {
		t.Errorf("Reload after the fix = %v, %v", changed, err)
	}
	if !allows(s, 0) {
		t.Error("fixed policy not in force")
	}
}

func TestLoadRefusesBrokenFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "missing.yaml"), opts); err == nil {
		t.Error("missing file loaded")
	}
	path := filepath.Join(dir, "p.yaml")
	write(t, path, "rules: [")
	if _, err := Load(path, opts); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("broken file: %v", err)
	}
	if _, err := Load(dir, opts); err == nil {
		t.Error("directory loaded")
	}
	write(t, path, strings.Repeat("#", maxFileSize+1))
	if _, err := Load(path, opts); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("huge file: %v", err)
	}
	if runtime.GOOS == "windows" {
		return // the file's ACL is the operator's part there
	}
	write(t, path, onlyUID(0))
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, opts); err == nil || !strings.Contains(err.Error(), "every user") {
		t.Errorf("world-writable file: %v", err)
	}
}

// TestStoreWatch follows a ConfigMap-style update: the file is a symlink
// whose target is swapped (on Windows, where Kubernetes does not do that,
// the file is replaced).
func TestStoreWatch(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a"), onlyUID(0))
	write(t, filepath.Join(dir, "b"), onlyUID(1000))
	path := filepath.Join(dir, "policy.yaml")
	swap := func() {
		if err := os.Symlink("b", path+".new"); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	}
	if runtime.GOOS == "windows" {
		write(t, path, onlyUID(0))
		swap = func() { write(t, path, onlyUID(1000)) }
	} else if err := os.Symlink("a", path); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Watch(ctx, 10*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()

	swap()
	deadline := time.Now().Add(5 * time.Second)
	for !allows(s, 1000) {
		if time.Now().After(deadline) {
			t.Fatal("the swapped policy was not picked up")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if allows(s, 0) {
		t.Error("old policy still in force")
	}
	s.Watch(context.Background(), 0) // 0 returns at once
	if (*Store)(nil).Decide(Call{}).Allowed != true {
		t.Error("nil store denied")
	}
}

// TestStatic: a Store made from a given policy decides with it and never
// tries to read a file.
func TestStatic(t *testing.T) {
	p, err := Parse([]byte("rules:\n- name: all\n  callers: [{any: true}]\n  allow: [{methods: ['Get*']}]\n"), Options{Style: hostpath.POSIX})
	if err != nil {
		t.Fatal(err)
	}
	s := Static(p)
	if d := s.Decide(Call{Group: "disk", Method: "GetDiskStats"}); !d.Allowed || d.Rule != "all" {
		t.Errorf("allowed call: %+v", d)
	}
	if d := s.Decide(Call{Group: "disk", Method: "PartitionDisk"}); d.Allowed {
		t.Errorf("denied call: %+v", d)
	}
	if changed, err := s.Reload(); changed || err != nil || s.Failures() != 0 || s.Path() != "" {
		t.Errorf("Reload of a static store: %v %v, %d failures", changed, err, s.Failures())
	}
	s.Watch(t.Context(), time.Millisecond) // returns at once: nothing to watch
}

// TestStoreOnReload: OnReload's function sees each policy a reload
// installs, once it is in force, and nothing for an unchanged or broken
// file.
func TestStoreOnReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	write(t, path, onlyUID(0))
	s, err := Load(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	var seen [][]string
	s.OnReload(func(p *Policy) {
		if s.Policy() != p {
			t.Error("OnReload ran before its policy was in force")
		}
		seen = append(seen, p.Rules())
	})
	write(t, path, onlyUID(1000))
	if _, err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reload(); err != nil { // unchanged
		t.Fatal(err)
	}
	write(t, path, "rules: [")
	if _, err := s.Reload(); err == nil {
		t.Fatal("a broken file reloaded")
	}
	if len(seen) != 1 || len(seen[0]) != 1 || seen[0][0] != "uid1000" {
		t.Errorf("OnReload saw %v, want the one new policy [uid1000]", seen)
	}
}
