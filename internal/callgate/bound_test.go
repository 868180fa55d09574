package callgate

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
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
