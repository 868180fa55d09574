package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// TestValidationBeforePrompt: a malformed argument of a mutating command
// is refused (exit 6) before the confirmation prompt and before the node
// is opened: the operator is never asked to confirm what cannot run.
func TestValidationBeforePrompt(t *testing.T) {
	open := func(context.Context, *globals, string) (groups.Node, error) {
		t.Error("a malformed command opened the node")
		return nil, nil
	}
	for _, args := range [][]string{
		{"fs", "mkdir", "relative\\dir"},
		{"fs", "symlink", `C:\csi\a`, "rel"},
		{"volume", "mount", "", `C:\csi\m`},
		{"volume", "format", "vol\x00ume"},
		// Printable but neither backend's form: the volume group's own
		// checks, run before the prompt (issue #25).
		{"volume", "format", "bad id"},
		{"volume", "resize", `\\?\Volume{not-a-guid}\`},
		{"volume", "unmount", "a/b", `C:\csi\m`},
		{"iscsi", "connect", "not-an-iqn", "--portal", "10.0.0.1"},
		{"smb", "map", `fileserver\share`},
		{"smb", "unmap", `\\fileserver`},
		{"system", "stop-service", `a\b`},
		{"smb", "map", `\\fileserver\share`, "relative"},
	} {
		out, errOut, code := runApp(t, open, "y\n", true, args...)
		if code != exitInvalid || out != "" || strings.Contains(errOut, "Proceed?") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 6, one error line and no prompt", args, code, out, errOut)
		}
	}
	// Both path syntaxes pass the CLI's check; the daemon knows which its
	// backend takes.
	for _, p := range []string{`C:\var\lib\kubelet\x`, "/var/lib/kubelet/x"} {
		if err := checkHostPath(p); err != nil {
			t.Errorf("checkHostPath(%q): %v", p, err)
		}
	}
}

// slowVolume makes FormatVolume take a while, so progress can be seen.
type slowVolume struct {
	volume.Interface
	d time.Duration
}

func (s slowVolume) FormatVolume(ctx context.Context, req *volume.FormatVolumeRequest) (*volume.FormatVolumeResponse, error) {
	time.Sleep(s.d)
	return s.Interface.FormatVolume(ctx, req)
}

// TestProgress: on a terminal a slow call shows a line with the elapsed
// time, rewritten while it runs and erased when it ends, on stderr; stdout
// holds only the result. Without a terminal nothing is shown.
func TestProgress(t *testing.T) {
	old := progressInterval
	progressInterval = 10 * time.Millisecond
	t.Cleanup(func() { progressInterval = old })
	n := newSimNode(t, simulated.DefaultConfig(nil))
	out, _, code := runApp(t, n.opener(), "", false, "volume", "list", "--disk", "1", "-o", "json")
	var doc volumeListOutput
	if code != exitOK || json.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("volume list: %d %s", code, out)
	}
	if len(doc.Volumes) == 0 {
		if _, _, code := runApp(t, n.opener(), "", false, "disk", "partition", "1", "--yes"); code != exitOK {
			t.Fatal("partition")
		}
		out, _, _ = runApp(t, n.opener(), "", false, "volume", "list", "--disk", "1", "-o", "json")
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Volumes) == 0 {
			t.Fatalf("no volume on disk 1: %s", out)
		}
	}
	id := doc.Volumes[0].VolumeID
	n.v = slowVolume{Interface: n.v, d: 80 * time.Millisecond}

	for _, terminal := range []bool{true, false} {
		a, stdout, stderr := testApp("", false, n.opener())
		a.stderrTerminal = func() bool { return terminal }
		code := a.run([]string{"volume", "format", id, "--yes"})
		if terminal {
			// The first run formats; the second is refused as formatted
			// already, after the same progress.
			if code != exitOK || stdout.String() != "volume "+id+" is formatted\n" {
				t.Fatalf("format: exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			e := stderr.String()
			if strings.Count(e, "\r\033[KFormatting volume "+id+"... ") < 3 || !strings.Contains(e, "... 0s") || !strings.HasSuffix(e, "\r\033[K") {
				t.Errorf("progress on a terminal: %q; want the line rewritten several times and erased at the end", e)
			}
			continue
		}
		if code != exitFailure || strings.Contains(stderr.String(), "Formatting") || strings.Contains(stderr.String(), "\r") {
			t.Errorf("without a terminal: exit %d, stderr %q; want no progress", code, stderr)
		}
	}
}

// TestYAMLAndNoHeaders: -o yaml is the JSON document as YAML (the same
// field names); --no-headers drops the table's header line only.
func TestYAMLAndNoHeaders(t *testing.T) {
	n := newSimNode(t, simulated.DefaultConfig(nil))
	out, errOut, code := runApp(t, n.opener(), "", false, "disk", "stats", "1", "-o", "yaml")
	if code != exitOK || out != "disk_number: 1\nonline: true\nsize_bytes: 1073741824\n" {
		t.Errorf("-o yaml: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	full, _, _ := runApp(t, n.opener(), "", false, "disk", "list")
	bare, _, code := runApp(t, n.opener(), "", false, "disk", "list", "--no-headers")
	lines := strings.SplitN(full, "\n", 2)
	if code != exitOK || !strings.HasPrefix(lines[0], "DISK") || strings.Contains(bare, "DISK ") || len(strings.Split(bare, "\n")) != len(strings.Split(full, "\n"))-1 {
		t.Errorf("--no-headers:\n%s\nfull:\n%s", bare, full)
	}
	// A sentence (what a change did) has no header to drop.
	if out, _, _ := runApp(t, n.opener(), "", false, "fs", "mkdir", `C:\var\lib\kubelet\y`, "--yes", "--no-headers"); out != `C:\var\lib\kubelet\y is created`+"\n" {
		t.Errorf("mkdir --no-headers: %q", out)
	}
}

// TestSuggest: close words are offered, far ones are not.
func TestSuggest(t *testing.T) {
	for _, tc := range []struct {
		word string
		in   []string
		want string
	}{
		{"dsik", []string{"disk", "volume"}, "; did you mean disk?"},
		{"volum", []string{"disk", "volume"}, "; did you mean volume?"},
		{"iscs", []string{"iscsi", "smb"}, "; did you mean iscsi?"},
		{"xyz", []string{"disk", "volume"}, ""},
		{"lst", []string{"list", "ids", "stats"}, "; did you mean list?"},
	} {
		if got := didYouMean(tc.word, tc.in); got != tc.want {
			t.Errorf("didYouMean(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

// TestRenameEndpoint: the CLI's dialer maps upstream's names, which the
// client asks for, to the prefix given, in socket and pipe paths alike.
func TestRenameEndpoint(t *testing.T) {
	for _, tc := range []struct{ in, prefix, want string }{
		{"/run/x/csi-proxy-disk-v1.sock", "csi-node-proxy", "/run/x/csi-node-proxy-disk-v1.sock"},
		{`\\.\pipe\csi-proxy-volume-v2alpha1`, "p2", `\\.\pipe\p2-volume-v2alpha1`},
		{"/run/x/csi-proxy-disk-v1.sock", transport.DefaultEndpointPrefix, "/run/x/csi-proxy-disk-v1.sock"},
		{"/run/csi-proxy-x/other.sock", "p2", "/run/csi-proxy-x/other.sock"},
	} {
		if got := renameEndpoint(tc.in, tc.prefix); got != tc.want {
			t.Errorf("renameEndpoint(%q, %q) = %q, want %q", tc.in, tc.prefix, got, tc.want)
		}
	}
}
