package audit_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
)

// TestEveryMethodClassified: every method of every API the daemon can
// serve is a read or a mutation, decided on purpose.
func TestEveryMethodClassified(t *testing.T) {
	total := 0
	for _, api := range adapter.All() {
		ms, err := server.MethodsOf(api)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			total++
			if audit.Classify(m) == audit.Unclassified {
				t.Errorf("%s: method %s is neither read nor mutate in the audit table", api.Name(), m)
			}
		}
	}
	if total < 53 {
		t.Errorf("only %d methods served; the current API versions alone have 53", total)
	}
	for m, want := range map[string]audit.Kind{
		"PartitionDisk": audit.Mutate, "FormatVolume": audit.Mutate, "NewSmbGlobalMapping": audit.Mutate,
		"SetMutualChapSecret": audit.Mutate, "StartService": audit.Mutate, "Rescan": audit.Mutate,
		"WriteVolumeCache": audit.Mutate, "ListDiskLocations": audit.Read, "PathExists": audit.Read,
		"IsSymlink": audit.Read, "DiscoverTargetPortal": audit.Read, "GetService": audit.Read,
		"NoSuchMethod": audit.Unclassified,
		// Older versions' RPCs are what the model method they call is: by
		// //convgen:rename, or by the hand-written handler of disk
		// v1alpha1's GetDiskNumberByName, which lists the disks' IDs.
		"DismountVolume": audit.Mutate, "LinkPath": audit.Mutate, "SetAttachState": audit.Mutate,
		"IsMountPoint": audit.Read, "DiskStats": audit.Read, "GetVolumeIDFromMount": audit.Read,
		"GetDiskNumberByName": audit.Read,
		// Names no served version or model has are not known.
		"PathValid": audit.Unclassified, "GetVolumeIDFromMountPoint": audit.Unclassified,
	} {
		if got := audit.Classify(m); got != want {
			t.Errorf("Classify(%s) = %v, want %v", m, got, want)
		}
	}
}

// TestEveryModelMethodClassified: every method of every group's
// Interface, which is what library mode's calls are named, is a read or a
// mutation.
func TestEveryModelMethodClassified(t *testing.T) {
	total := 0
	for _, iface := range []reflect.Type{
		reflect.TypeFor[disk.Interface](), reflect.TypeFor[volume.Interface](), reflect.TypeFor[filesystem.Interface](),
		reflect.TypeFor[smb.Interface](), reflect.TypeFor[iscsi.Interface](), reflect.TypeFor[system.Interface](),
	} {
		for i := range iface.NumMethod() {
			total++
			if m := iface.Method(i).Name; audit.Classify(m) == audit.Unclassified {
				t.Errorf("%s.%s is neither read nor mutate", iface, m)
			}
		}
	}
	if total < 38 {
		t.Errorf("only %d model methods checked; the six groups had 38 when this was written", total)
	}
}

func record(method string) audit.Record {
	return audit.Record{
		Time:     time.Date(2025, 1, 2, 15, 4, 5, 123456789, time.FixedZone("x", 3600)),
		Endpoint: "csi-proxy-smb-v1", Group: "smb", Version: "v1", Method: method, FullMethod: "/v1.Smb/" + method,
		Caller: identity.Caller{PID: 42, HasUnixIDs: true, UID: 0, GID: 0, ContainerID: strings.Repeat("a", 64),
			PodUID: "6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f", Runtime: "containerd"},
		Decision: audit.Allow, Rule: "smb",
		Model: &smb.NewSmbGlobalMappingRequest{RemotePath: `\\srv\share`, Username: "u", Password: "hunter2-secret"},
		Code:  errdefs.OK, Duration: 1500 * time.Microsecond,
	}
}

func TestRecordFormat(t *testing.T) {
	var b strings.Builder
	l := audit.New(&b, audit.Options{})
	if err := l.Log(record("NewSmbGlobalMapping")); err != nil {
		t.Fatal(err)
	}
	win := record("RemoveSmbGlobalMapping")
	win.Caller = identity.Caller{PID: 9, WindowsSID: "S-1-5-18", WindowsAccount: `NT AUTHORITY\SYSTEM`}
	win.Decision, win.Rule, win.Reason, win.Code, win.Message = audit.Deny, "", "no rule allows it", errdefs.PermissionDenied, "caller ... may not"
	if err := l.Log(win); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "hunter2") {
		t.Fatalf("secret in the audit log: %s", out)
	}
	ls := auditlog.Parse(t, []byte(out))
	if len(ls) != 2 {
		t.Fatalf("%d lines:\n%s", len(ls), out)
	}
	a := ls[0]
	if a.Time != "2025-01-02T14:04:05.123456789Z" || a.Endpoint != "csi-proxy-smb-v1" || a.Group != "smb" || a.Version != "v1" ||
		a.Method != "NewSmbGlobalMapping" || a.FullMethod != "/v1.Smb/NewSmbGlobalMapping" || a.Kind != "mutate" ||
		a.Decision != "allow" || a.Rule != "smb" || a.Code != "OK" || a.DurationMS == nil || *a.DurationMS != 1.5 {
		t.Errorf("record %+v", a)
	}
	if c := a.Caller; c.UID == nil || *c.UID != 0 || c.GID == nil || *c.GID != 0 || c.PID != 42 || c.PodUID == "" || c.ContainerID != strings.Repeat("a", 64) {
		t.Errorf("caller %+v", c)
	}
	if a.Request["password"] != "REDACTED" || a.Request["remote_path"] != `\\srv\share` || a.Request["username"] != "u" {
		t.Errorf("request %v", a.Request)
	}
	w := ls[1]
	if w.Caller.UID != nil {
		t.Errorf("a Windows caller got a uid: %+v", w.Caller)
	}
	if w.Caller.WindowsAccount != `NT AUTHORITY\SYSTEM` || w.Decision != "deny" || w.Reason != "no rule allows it" || w.Code != "PermissionDenied" {
		t.Errorf("record %+v", w)
	}
}

func TestWants(t *testing.T) {
	var none *audit.Logger
	if none.Wants("PartitionDisk", true) {
		t.Error("nil logger wants records")
	}
	l := audit.New(&strings.Builder{}, audit.Options{})
	if !l.Wants("PartitionDisk", false) || l.Wants("ListDiskLocations", false) || !l.Wants("ListDiskLocations", true) || !l.Wants("Brand new", false) {
		t.Error("Wants without reads")
	}
	if !audit.New(&strings.Builder{}, audit.Options{Reads: true}).Wants("ListDiskLocations", false) {
		t.Error("Wants with reads")
	}
}

// TestReopen rotates the file the way logrotate does: rename, then
// SIGHUP (Reopen).
func TestReopen(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("an open file cannot be renamed on Windows; rotate with copy and truncate there")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	l, err := audit.Open(path, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Log(record("NewSmbGlobalMapping")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := l.Log(record("RemoveSmbGlobalMapping")); err != nil { // still the old file
		t.Fatal(err)
	}
	if err := l.Reopen(); err != nil {
		t.Fatal(err)
	}
	if err := l.Log(record("NewSmbGlobalMapping")); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(path + ".1")
	cur, _ := os.ReadFile(path)
	if n := len(auditlog.Parse(t, old)); n != 2 {
		t.Errorf("rotated file has %d records, want 2", n)
	}
	if n := len(auditlog.Parse(t, cur)); n != 1 {
		t.Errorf("new file has %d records, want 1", n)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v, %v; want 0600", fi.Mode(), err)
	}
	// After Close, writes fail and the logger is unhealthy, and Reopen
	// does not bring it back (nor leave a file open).
	if err := l.Log(record("NewSmbGlobalMapping")); err == nil || l.Healthy() {
		t.Errorf("Log after Close = %v, healthy %v", err, l.Healthy())
	}
	if err := l.Reopen(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Reopen after Close = %v, want os.ErrClosed", err)
	}
	if err := l.Log(record("NewSmbGlobalMapping")); err == nil {
		t.Error("Log after Close and Reopen succeeded")
	}
	// A path that cannot be opened is refused at start, and on reopen the
	// old file stays in use.
	if _, err := audit.Open(filepath.Join(dir, "missing", "audit.log"), audit.Options{}); err == nil {
		t.Error("Open of an impossible path succeeded")
	}
	if _, err := audit.Open("", audit.Options{}); err == nil {
		t.Error("Open without a destination succeeded")
	}
	l2, err := audit.Open(filepath.Join(dir, "b.log"), audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if err := os.Rename(filepath.Join(dir, "b.log"), filepath.Join(dir, "b.log.1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "b.log"), 0o755); err != nil { // now unopenable
		t.Fatal(err)
	}
	if err := l2.Reopen(); err == nil {
		t.Error("Reopen onto a directory succeeded")
	}
	if err := l2.Log(record("NewSmbGlobalMapping")); err != nil {
		t.Errorf("Log after a failed Reopen: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.log.1")); len(auditlog.Parse(t, b)) != 1 {
		t.Errorf("the record after a failed Reopen is not in the old file: %q", b)
	}
	if s, err := audit.Open(audit.Stderr, audit.Options{}); err != nil || s.Reopen() != nil || s.Close() != nil {
		t.Errorf("stderr logger: %v", err)
	}
}

// failingWriter fails while broken is set.
type failingWriter struct {
	mu     sync.Mutex
	broken bool
	b      strings.Builder
}

func (f *failingWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.broken {
		return 0, errors.New("no space left on device")
	}
	return f.b.Write(p)
}

func TestHealth(t *testing.T) {
	w := &failingWriter{}
	l := audit.New(w, audit.Options{})
	if !l.Healthy() {
		t.Fatal("new logger unhealthy")
	}
	w.broken = true
	if err := l.Log(record("NewSmbGlobalMapping")); err == nil || l.Healthy() || l.Failures() != 1 {
		t.Fatalf("failed write: err %v healthy %v failures %d", err, l.Healthy(), l.Failures())
	}
	w.broken = false
	if err := l.Log(record("NewSmbGlobalMapping")); err != nil || !l.Healthy() || l.Written() != 1 {
		t.Fatalf("recovered write: err %v healthy %v written %d", err, l.Healthy(), l.Written())
	}
}

// TestConcurrentLinesDoNotInterleave writes from many goroutines to one
// file and reads back whole lines only.
func TestConcurrentLinesDoNotInterleave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := audit.Open(path, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if err := l.Log(record("NewSmbGlobalMapping")); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	l.Close()
	b, _ := os.ReadFile(path)
	if n := len(auditlog.Parse(t, b)); n != 400 {
		t.Errorf("%d lines, want 400", n)
	}
}
