package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
)

// Every record names its schema, the node, the request ID the client
// sent, and the caller's executable and process start time.
func TestRecordProvenanceFields(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, Options{Node: "node-a"})
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	err := l.Log(Record{
		Time: time.Now(), Group: "disk", Version: "v1", Method: "PartitionDisk", Decision: Allow,
		RequestID: "req-42",
		Caller:    identity.Caller{PID: 7, Executable: "/usr/bin/driver", StartTime: started},
	})
	if err != nil {
		t.Fatal(err)
	}
	recs := auditlog.Parse(t, buf.Bytes())
	if len(recs) != 1 {
		t.Fatalf("%d records: %s", len(recs), buf.String())
	}
	got := recs[0]
	if got.Schema != SchemaVersion || got.Node != "node-a" || got.RequestID != "req-42" ||
		got.Caller.Executable != "/usr/bin/driver" || got.Caller.StartTime != "2026-01-02T03:04:05Z" {
		t.Errorf("record %s", buf.String())
	}
}

// The audit file is never opened through a symbolic link: a link planted
// at its path (pointing at a file the daemon should not append to) makes
// Open fail instead of writing through it.
func TestOpenRefusesSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("O_NOFOLLOW is a Unix flag; Windows is not tested here")
	}
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "audit.log")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	l, err := Open(link, Options{})
	if err == nil {
		_ = l.Log(Record{Method: "PartitionDisk"})
		_ = l.Close()
		t.Fatal("Open followed a symbolic link")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("the link's target changed: %q", b)
	}
}

// Records name the caller's workload (pod namespace and name, container
// name, ServiceAccount) when the node told it, and leave it out otherwise.
func TestRecordWorkloadFields(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, Options{})
	for _, c := range []identity.Caller{
		{PID: 7, PodNamespace: "kube-system", PodName: "csi-azuredisk-node-x7k2p", ContainerName: "azuredisk", ServiceAccount: "csi-azuredisk-node-sa"},
		{PID: 8},
	} {
		if err := l.Log(Record{Time: time.Now(), Group: "disk", Version: "v1", Method: "PartitionDisk", Decision: Allow, Caller: c}); err != nil {
			t.Fatal(err)
		}
	}
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	if len(lines) != 2 {
		t.Fatalf("%d lines", len(lines))
	}
	got := auditlog.Parse(t, lines[0])[0]
	if got.Caller.PodNamespace != "kube-system" || got.Caller.PodName != "csi-azuredisk-node-x7k2p" || got.Caller.ContainerName != "azuredisk" || got.Caller.ServiceAccount != "csi-azuredisk-node-sa" {
		t.Errorf("record %s", lines[0])
	}
	if bytes.Contains(lines[1], []byte("pod_namespace")) || bytes.Contains(lines[1], []byte("container_name")) || bytes.Contains(lines[1], []byte("service_account")) {
		t.Errorf("unknown workload written: %s", lines[1])
	}
}
