package policy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

const reformatPolicy = `
rules:
- name: provisioner
  callers: [{any: true}]
  allow: [{methods: ["volume.*"]}]
  pathRoots: ['C:\mnt\fast-disks']
  allowReformat: true
- name: other
  callers: [{uids: [7]}]
  allow: [{methods: ["volume.*"]}]
`

// TestCheckReformat: a FormatVolume allowed by an allowReformat rule may
// erase a formatted volume only when it is mounted and every mount lies
// beneath the rule's roots; any other call, rule or volume is refused
// FailedPrecondition.
func TestCheckReformat(t *testing.T) {
	p, err := Parse([]byte(reformatPolicy), Options{Style: hostpath.Windows})
	if err != nil {
		t.Fatal(err)
	}
	objs := fakeObjects{
		mounts: map[string][]string{
			"beneath":   {`C:\mnt\fast-disks\vol1\`},
			"elsewhere": {`C:\mnt\fast-disks\vol2`, `C:\var\lib\kubelet\plugins\x`},
			"letter":    {`D:\`},
			"sibling":   {`C:\mnt\fast-disks-2\vol1`},
		},
		disks: map[string]uint32{"beneath": 1, "elsewhere": 2, "letter": 3, "nowhere": 4, "sibling": 5},
	}
	format := Call{Caller: identity.Caller{HasUnixIDs: true, UID: 7}, Group: "volume", Method: "FormatVolume", Inspected: true, Objects: objs}
	d := p.Decide(format)
	if !d.Allowed || d.Rule != "provisioner" {
		t.Fatalf("decision %+v", d)
	}
	ctx := NewDecisionContext(t.Context(), d)
	if err := CheckReformat(ctx, "beneath"); err != nil {
		t.Errorf("volume mounted beneath the root: %v", err)
	}
	for id, want := range map[string]string{
		"elsewhere": "outside the path roots", "letter": "outside the path roots",
		"sibling": "outside the path roots", "nowhere": "mounted nowhere",
	} {
		err := CheckReformat(ctx, id)
		if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), want) {
			t.Errorf("volume %s: %v, want FailedPrecondition %q", id, err, want)
		}
	}
	if err := CheckReformat(ctx, "gone"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("no such volume: %v, want NotFound", err)
	}
	// No grant: another method of the same rule, no decision at all.
	stats := format
	stats.Method = "GetVolumeStats"
	for name, ctx := range map[string]context.Context{
		"other method": NewDecisionContext(t.Context(), p.Decide(stats)),
		"no decision":  t.Context(),
	} {
		err := CheckReformat(ctx, "beneath")
		if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "allowReformat") {
			t.Errorf("%s: %v, want FailedPrecondition naming allowReformat", name, err)
		}
	}
}

// TestAllowReformatNeedsPathRoots: without roots the setting would reach
// every volume on the node, so such a rule does not load.
func TestAllowReformatNeedsPathRoots(t *testing.T) {
	_, err := Parse([]byte(`
rules:
- name: wide
  callers: [{any: true}]
  allow: [{methods: ["volume.FormatVolume"]}]
  allowReformat: true
`), Options{Style: hostpath.Windows})
	if err == nil || !strings.Contains(err.Error(), "allowReformat needs pathRoots") {
		t.Fatalf("got %v", err)
	}
}
