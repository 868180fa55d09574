package mounter

import (
	"errors"
	"runtime"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// The mounter against a node is tested in simulated_test.go (library mode
// and the daemon) and fsgroup_linux_test.go (a real Linux node); these are
// its pure parts.

func TestNormalizeNVMeEUI(t *testing.T) {
	for in, want := range map[string]string{
		"eui.0123456789ABCDEF0011223344556677":      "0123456789abcdef0011223344556677",
		"EUI.0123456789abcdef":                      "0123456789abcdef",
		"0123_4567_89AB_CDEF_0011_2233_4455_6677.":  "0123456789abcdef0011223344556677",
		" 0123_4567_89ab_cdef_0011_2233_4455_6677 ": "0123456789abcdef0011223344556677",
	} {
		if got, ok := NormalizeNVMeEUI(in); !ok || got != want {
			t.Errorf("NormalizeNVMeEUI(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "eui.", "vol-0123", "SN-A-0001", "Google  pd-1", "___."} {
		if got, ok := NormalizeNVMeEUI(in); ok {
			t.Errorf("NormalizeNVMeEUI(%q) = %q, true; want false", in, got)
		}
	}
}

// TestSerialMatches: a serial is found as reported, and as Windows reports
// an EBS volume on NVMe (the ID, "_", the namespace), but never by
// containment or by a prefix of another disk's ID.
func TestSerialMatches(t *testing.T) {
	for _, tc := range []struct {
		got, want string
		ok        bool
	}{
		{"vol0123456789abcdef0", "vol0123456789abcdef0", true},
		{"  VOL0123456789ABCDEF0  ", "vol0123456789abcdef0", true},
		{"vol0123456789abcdef0_00000001.", "vol0123456789abcdef0", true},
		{"vol0123456789abcdef0_1", "vol0123456789abcdef0", true},
		{"vol0123456789abcdef0_", "vol0123456789abcdef0", false},
		{"vol0123456789abcdef0_.", "vol0123456789abcdef0", false},
		{"vol0123456789abcdef0_x1", "vol0123456789abcdef0", false},
		{"vol0123456789abcdef01", "vol0123456789abcdef0", false},
		{"xvol0123456789abcdef0", "vol0123456789abcdef0", false},
		{"SN-10", "SN-1", false},
		{"0025_3855_91B2_3B4D.", "0025", false},
		{"SN-1", "SN-10", false},
	} {
		if got := serialMatches(tc.got, tc.want); got != tc.ok {
			t.Errorf("serialMatches(%q, %q) = %v, want %v", tc.got, tc.want, got, tc.ok)
		}
	}
}

func TestSMBPaths(t *testing.T) {
	for in, want := range map[string][2]string{
		`\\Server\Share`:          {`\\Server\Share`, `\\server\share`},
		`\\server\share\pvc-1\`:   {`\\server\share\pvc-1`, `\\server\share`},
		`//server/share/a/b`:      {`\\server\share\a\b`, `\\server\share`},
		`\\10.0.0.5\data\x\\`:     {`\\10.0.0.5\data\x`, `\\10.0.0.5\data`},
		`\\server\\share\\sub`:    {`\\server\\share\\sub`, `\\server\share`},
		`//svc.cluster.local/s/d`: {`\\svc.cluster.local\s\d`, `\\svc.cluster.local\s`},
	} {
		remote, share, err := smbPaths(in)
		if err != nil || remote != want[0] || share != want[1] {
			t.Errorf("smbPaths(%q) = %q, %q, %v; want %q, %q", in, remote, share, err, want[0], want[1])
		}
	}
	for _, in := range []string{`\\server`, `\\server\`, `C:\share`, `server\share`, ""} {
		if _, _, err := smbPaths(in); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("smbPaths(%q): %v; want InvalidArgument", in, err)
		}
	}
}

func TestParentDir(t *testing.T) {
	for in, want := range map[string]string{
		`C:\var\lib\kubelet\pods\x\mount`:  `C:\var\lib\kubelet\pods\x`,
		`C:\var\lib\kubelet\pods\x\mount\`: `C:\var\lib\kubelet\pods\x`,
		`\var\lib\kubelet\a`:               `\var\lib\kubelet`,
		`/var/lib/kubelet/a`:               `/var/lib/kubelet`,
		`c:/var/lib/kubelet/a`:             `c:/var/lib/kubelet`,
		`C:\a`:                             "",
		`/a`:                               "",
		`a`:                                "",
	} {
		if got := parentDir(in); got != want {
			t.Errorf("parentDir(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRefStore: links are counted per share, found by target whatever its
// case or trailing separator, and the count drops as they go.
func TestRefStore(t *testing.T) {
	r := &refStore{dir: t.TempDir()}
	share := `\\server\share`
	for _, target := range []string{`C:\k\a\mount`, `C:\k\b\mount`} {
		if err := r.add(share, target, share+`\pvc`); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.add(`\\elsewhere\share`, `C:\k\c\mount`, `\\elsewhere\share`); err != nil {
		t.Fatal(err)
	}
	ref, ok, err := r.lookup(`c:\K\A\MOUNT\`)
	if err != nil || !ok || ref.share != share || ref.target != `C:\k\a\mount` || ref.remote != share+`\pvc` {
		t.Fatalf("lookup = %+v, %v, %v", ref, ok, err)
	}
	if left, err := r.remove(ref); err != nil || left != 1 {
		t.Errorf("remove first = %d, %v; want 1 left", left, err)
	}
	if _, ok, err := r.lookup(`C:\k\a\mount`); ok || err != nil {
		t.Errorf("lookup after remove = %v, %v; want not found", ok, err)
	}
	ref, _, _ = r.lookup(`C:\k\b\mount`)
	if left, err := r.remove(ref); err != nil || left != 0 {
		t.Errorf("remove last = %d, %v; want 0 left", left, err)
	}
	if ref, ok, err := r.lookup(`C:\k\c\mount`); !ok || err != nil || ref.share != `\\elsewhere\share` {
		t.Errorf("the other share's link: %+v, %v, %v", ref, ok, err)
	}
}

func TestPick(t *testing.T) {
	if n, err := pick([]uint32{4}, "x"); n != 4 || err != nil {
		t.Errorf("pick one = %d, %v", n, err)
	}
	if _, err := pick(nil, "LUN 3"); !errors.Is(err, errdefs.ErrNotFound) || err.Error() != "no disk with LUN 3: not found" {
		t.Errorf("pick none: %v", err)
	}
	if _, err := pick([]uint32{7, 2}, "LUN 0"); !errors.Is(err, errdefs.ErrFailedPrecondition) || err.Error() != "disks [2 7] all have LUN 0; refusing to pick one: failed precondition" {
		t.Errorf("pick two: %v", err)
	}
}

func TestPublishByMount(t *testing.T) {
	const linuxOS = runtime.GOOS == "linux"
	for _, tc := range []struct {
		mode           PublishMode
		source, target string
		want           bool
	}{
		{PublishAuto, "/var/lib/kubelet/plugins/d/globalmount", "/var/lib/kubelet/pods/p/volumes/v/mount", linuxOS},
		{PublishAuto, `C:\var\lib\kubelet\plugins\d\globalmount`, `C:\var\lib\kubelet\pods\p\mount`, false},
		{PublishAuto, `/var/lib/kubelet\plugins`, "/var/lib/kubelet/pods/p/mount", false},
		{PublishAuto, "var/lib/kubelet/plugins", "/var/lib/kubelet/pods/p/mount", false},
		{PublishLink, "/var/lib/kubelet/a", "/var/lib/kubelet/b", false},
		{PublishMount, `C:\a`, `C:\b`, true},
	} {
		m := New(nil, Options{Publish: tc.mode})
		if got := m.publishByMount(tc.source, tc.target); got != tc.want {
			t.Errorf("mode %d, %q → %q: publish by mount = %v, want %v", tc.mode, tc.source, tc.target, got, tc.want)
		}
	}
}
