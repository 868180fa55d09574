package audit_test

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

// TestTruncate: a string over the bound keeps its beginning, never half a
// character, and says how long it was.
func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		s    string
		max  int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc" + audit.TruncatedMarker + "4 bytes]"},
		{"aé", 2, "a" + audit.TruncatedMarker + "3 bytes]"}, // é is two bytes: not split
	} {
		if got := audit.Truncate(tc.s, tc.max); got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.s, tc.max, got, tc.want)
		}
	}
}

// TestRecordStringsBounded: every string of a record is bounded, the
// request's lists too, and '<', '>' and '&' are written as themselves.
func TestRecordStringsBounded(t *testing.T) {
	var buf bytes.Buffer
	l := audit.New(&buf, audit.Options{})
	long := strings.Repeat("<&>", 100_000)
	err := l.Log(audit.Record{
		Endpoint: long, Group: long, Version: long, Method: long, FullMethod: long, RequestID: long,
		Caller: identity.Caller{Executable: long, ContainerID: long, PodUID: long, PodNamespace: long, PodName: long,
			ContainerName: long, ServiceAccount: long, Runtime: long, WindowsSID: long, WindowsAccount: long,
			WindowsGroupSIDs: []string{long, long}, Incomplete: long},
		Decision: long, Rule: long, Reason: long, Message: long,
		Model: &filesystem.MkdirRequest{Path: long},
	})
	if err != nil {
		t.Fatal(err)
	}
	line := buf.String()
	// 21 strings of at most 512 bytes, two of 1 KiB, a request of 4 KiB,
	// markers and keys: under 20 KiB.
	if len(line) > 20<<10 {
		t.Errorf("record of %d bytes", len(line))
	}
	if strings.Contains(line, `\u003c`) || strings.Contains(line, `\u0026`) || !strings.Contains(line, "<&><&>") {
		t.Errorf("HTML-escaped: %.200q", line)
	}
	if n := strings.Count(line, audit.TruncatedMarker); n < 20 {
		t.Errorf("%d truncation markers, want one per string", n)
	}

	// A request of many strings: its lists and its total are bounded.
	buf.Reset()
	many := make([]string, 10_000)
	for i := range many {
		many[i] = strings.Repeat("x", 1000)
	}
	if err := l.Log(audit.Record{Model: &volume.MountVolumeRequest{VolumeID: long, TargetPath: long}, Message: strings.Join(many[:3], "")}); err != nil {
		t.Fatal(err)
	}
	if len(buf.String()) > 12<<10 {
		t.Errorf("record of a request with two huge strings is %d bytes", buf.Len())
	}
	rendered := audit.RedactModel(&struct{ Options []string }{many}).(map[string]any)["options"].([]any)
	if len(rendered) != audit.MaxRequestElements+1 || rendered[audit.MaxRequestElements] != "…[9936 more elements]" {
		t.Errorf("a list of 10000 strings rendered as %d elements, last %v", len(rendered), rendered[len(rendered)-1])
	}
	total := 0
	for _, e := range rendered {
		total += len(e.(string))
	}
	if total > audit.MaxRequestBytes+audit.MaxRequestElements*(audit.MinKept+40) {
		t.Errorf("a list of 10000 strings rendered as %d bytes", total)
	}
}

// TestFailureLogOmitsRecord: a record that cannot be written is logged to
// the daemon's log by ID, method and size, never whole (a 28 MB record
// once became a 28 MB line of the daemon's log).
func TestFailureLogOmitsRecord(t *testing.T) {
	var out bytes.Buffer
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	klog.SetOutput(&out)
	t.Cleanup(func() {
		klog.SetOutput(nil)
		_ = fs.Set("logtostderr", "true")
	})
	l := audit.New(&failingWriter{broken: true}, audit.Options{})
	secretish := "/var/lib/kubelet/" + strings.Repeat("p", 3000)
	r := audit.Record{ID: "0123456789abcdef", FullMethod: "/v1.Filesystem/Mkdir", Model: &filesystem.MkdirRequest{Path: secretish}}
	if err := l.Log(r); err == nil {
		t.Fatal("the write did not fail")
	}
	klog.Flush()
	got := out.String()
	if !strings.Contains(got, "0123456789abcdef") || !strings.Contains(got, "/v1.Filesystem/Mkdir") || !strings.Contains(got, "bytes=") {
		t.Errorf("the failure log line lacks the record's ID, method or size: %q", got)
	}
	if strings.Contains(got, "pppp") || strings.Contains(got, "record=") {
		t.Errorf("the failure log line copies the record: %.300q", got)
	}
	if len(got) > 1024 {
		t.Errorf("the failure log line is %d bytes", len(got))
	}
}
