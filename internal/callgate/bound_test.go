package callgate

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"

	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// TestHugeDeniedRequestStaysSmall: a caller that sends Mkdir with a
// 4,000,000-byte path outside its rule's roots is refused, and the
// denial's audit record stays a few KiB (it was about 24 MB: the request,
// the reason and the message each held the whole path, '<' written as
// six bytes), with the cut-off parts marked and '<' written as itself.
func TestHugeDeniedRequestStaysSmall(t *testing.T) {
	p, err := policy.Parse([]byte(`
rules:
- name: driver
  callers: [{any: true}]
  allow: [{groups: [filesystem], methods: ["*"]}]
  pathRoots: [/var/lib/kubelet]
`), policy.Options{Style: hostpath.POSIX, Methods: Methods})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	g := &Gate{Policy: policy.Static(p), Audit: audit.New(&log, audit.Options{})}
	huge := "/tmp/" + strings.Repeat("<a>", 4_000_000/3)
	c := &Call{Endpoint: "test", Method: Method{Group: "filesystem", Version: "v1", Name: "Mkdir"}, FullMethod: "/v1.Filesystem/Mkdir",
		Model: &filesystem.MkdirRequest{Path: huge}, Inspected: true}
	c.Args = []policy.Arg{{Field: "path", Kind: policy.ArgPath, Value: huge}}
	if _, err := g.Do(context.Background(), c, func(context.Context) (any, error) {
		t.Error("the denied call ran")
		return nil, nil
	}); err == nil {
		t.Fatal("the call was allowed")
	} else if len(err.Error()) > 2048 {
		t.Errorf("the refusal's message is %d bytes long", len(err.Error()))
	}
	line := log.String()
	if len(line) > 8<<10 {
		t.Errorf("the denial's audit record is %d bytes long; want a few KiB", len(line))
	}
	if strings.Count(line, "\n") != 1 || !strings.Contains(line, `"decision":"deny"`) {
		t.Fatalf("want one denial record, got %.300q", line)
	}
	if strings.Contains(line, `\u003c`) || !strings.Contains(line, "/tmp/<a><a>") {
		t.Errorf("'<' is escaped or the path's beginning is missing: %.300q", line)
	}
	if !strings.Contains(line, audit.TruncatedMarker+strconv.Itoa(len(huge))+" bytes]") {
		t.Errorf("no truncation marker saying the path's length: %.300q", line)
	}
	t.Logf("audit bytes per denied 4,000,000-byte Mkdir: %d", len(line))
}

// TestDenialLogLinesRateLimited: a caller denied 1,000 times gets the
// audit log's burst of refusal lines in the daemon's log, not 1,000;
// another caller's denial is still logged.
func TestDenialLogLinesRateLimited(t *testing.T) {
	var lines []string
	g := &Gate{Policy: policy.Static(mustParse(t)), Log: funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{})}
	hostile := call("StopService")
	// Callers no other run has used: the rate is the process's.
	uid := uint32(time.Now().UnixNano()%1_000_000) + 10_000
	hostile.Caller = &identity.Caller{HasUnixIDs: true, UID: uid}
	for range 1000 {
		if _, err := g.Do(context.Background(), hostile, nil); err == nil {
			t.Fatal("a denied call was allowed")
		}
	}
	other := call("StopService")
	other.Caller = &identity.Caller{HasUnixIDs: true, UID: uid + 1}
	if _, err := g.Do(context.Background(), other, nil); err == nil {
		t.Fatal("a denied call was allowed")
	}
	if len(lines) != audit.DefaultDenialBurst+1 || !strings.Contains(lines[len(lines)-1], "uid "+strconv.Itoa(int(uid+1))) {
		t.Errorf("%d refusal lines, the last %q; want %d of the flooding caller and the other caller's", len(lines), lines[len(lines)-1], audit.DefaultDenialBurst)
	}
}

func mustParse(t *testing.T) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte("rules:\n- name: start\n  callers: [{any: true}]\n  allow: [{methods: [system.StartService]}]\n"),
		policy.Options{Style: hostpath.Windows, Methods: Methods})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
