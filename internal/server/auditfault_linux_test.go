//go:build linux

package server

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditfault"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
)

// simKubelet is the simulated host's kubelet directory.
const simKubelet = simulated.DefaultKubeletDir

// simServer serves the filesystem v1 API of a fresh simulated host,
// auditing to al, and returns the host and a client.
func simServer(t *testing.T, al *audit.Logger) (*simulated.Host, filesystemv1.FilesystemClient) {
	t.Helper()
	set, svc := simNode(t)
	var api adapter.API
	for _, a := range adapter.All() {
		if a.Group == "filesystem" && a.Version == "v1" {
			api = a
		}
	}
	cfg := testConfig(t)
	cfg.Audit = al
	s, err := New(cfg, groups.Set{Filesystem: svc.Filesystem}, []adapter.API{api})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(callCtx(t)) })
	return set.Simulated, filesystemv1.NewFilesystemClient(dial(t, s.Endpoints()[0].Address))
}

// changes counts the records of changes that were made.
func changes(recs []auditlog.Record) int {
	n := 0
	for _, r := range recs {
		if r.Kind == "mutate" && r.Code != "Unavailable" {
			n++
		}
	}
	return n
}

// fillLog appends whole read records to the audit file at path until it
// cannot grow any more: the last page of a file on a full tmpfs still
// has room.
func fillLog(t *testing.T, path string) {
	t.Helper()
	l, err := audit.Open(path, audit.Options{Reserve: -1}) // read records fill it: no reserve
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for range 100 {
		if l.Log(audit.Record{Method: "PathExists", Decision: audit.Allow}) != nil {
			return
		}
	}
	t.Fatal("the audit file still grows on a full file system")
}

// TestAuditFaultsChangeNothing breaks the audit log three ways while the
// server runs on the simulated host: /dev/full, a full tmpfs, and a log
// file removed with its path made unopenable. In each, no change reaches
// the host (the very first included), every change is answered
// Unavailable, reads go on, every line of the file is a complete JSON
// record, and every change that happened (before the break, and after the
// repair) has its intent and outcome.
func TestAuditFaultsChangeNothing(t *testing.T) {
	captureLogs(t, 0)
	for _, tc := range auditfault.Faults(fillLog) {
		t.Run(tc.Name, func(t *testing.T) {
			path, brk, repair := tc.Setup(t)
			al, err := audit.Open(path, audit.Options{Sync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { al.Close() })
			h, fs := simServer(t, al)
			exists := func(name string) bool {
				ok, err := h.Filesystem().PathExists(t.Context(), simKubelet+`\`+name)
				if err != nil {
					t.Fatal(err)
				}
				return ok
			}
			mkdir := func(name string) error {
				_, err := fs.Mkdir(callCtx(t), &filesystemv1.MkdirRequest{Path: simKubelet + `\` + name})
				return err
			}
			regular := path != "/dev/full"
			if regular { // a change while the log works is made and audited
				if err := mkdir("before"); err != nil || !exists("before") {
					t.Fatalf("Mkdir with a working audit log: %v", err)
				}
				if got := readAudit(t, path); len(got) != 1 || got[0].Code != "OK" {
					t.Fatalf("records before the break: %+v", got)
				}
			}
			brk()
			for _, name := range []string{"a", "b", "c"} {
				if err := mkdir(name); status.Code(err) != codes.Unavailable {
					t.Errorf("Mkdir %s with the audit log broken = %v, want Unavailable", name, err)
				}
				if exists(name) {
					t.Errorf("Mkdir %s changed the host while its record could not be written", name)
				}
			}
			if r, err := fs.PathExists(callCtx(t), &filesystemv1.PathExistsRequest{Path: simKubelet + `\a`}); err != nil || r.Exists {
				t.Errorf("read with the audit log broken: %+v, %v", r, err)
			}
			if al.Healthy() {
				t.Error("the audit log reports healthy while it cannot be written")
			}
			if regular && tc.Name != "removed-unopenable" {
				if n := changes(readAudit(t, path)); n != 1 {
					t.Errorf("%d changes recorded while broken, want only the one before", n)
				}
			}
			if repair == nil {
				return
			}
			repair()
			if err := mkdir("after"); err != nil || !exists("after") {
				t.Fatalf("Mkdir after the repair: %v", err)
			}
			got := readAudit(t, path)
			if last := got[len(got)-1]; last.Method != "Mkdir" || last.Code != "OK" || !al.Healthy() {
				t.Errorf("records after the repair %+v, healthy %v", got, al.Healthy())
			}
		})
	}
}
