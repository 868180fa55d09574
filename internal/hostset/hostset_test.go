package hostset

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// TestSimulated: a given simulated.Config is used, gains the working dirs
// and the extra disks, and is not changed itself; the Services built on it
// confine paths to the working dirs.
func TestSimulated(t *testing.T) {
	sc := simulated.Config{WorkingDirs: []string{`C:\csi`}, Disks: []simulated.DiskSpec{{Size: 1 << 30, Page83: "aa"}}}
	s, err := New(Config{
		Host: Simulated, WorkingDirs: []string{`C:\var\lib\kubelet`}, Simulated: &sc,
		SimDisks: []string{"size=2GiB,page83=bb"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Style != hostpath.Windows || s.Simulated == nil {
		t.Fatalf("style %v, simulated host %v", s.Style, s.Simulated)
	}
	if len(sc.WorkingDirs) != 1 || len(sc.Disks) != 1 {
		t.Errorf("the caller's Config was changed: %+v", sc)
	}
	if got := s.Simulated.WorkingDirs(); !slices.Contains(got, `C:\var\lib\kubelet`) || !slices.Contains(got, `C:\csi`) {
		t.Errorf("working dirs %v", got)
	}
	svc, err := s.Services(nil)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := svc.Disk.ListDiskIDs(t.Context(), &disk.ListDiskIDsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var page83s []string
	for _, id := range ids.DiskIDs {
		page83s = append(page83s, id.Page83)
	}
	if !slices.Contains(page83s, "aa") || !slices.Contains(page83s, "bb") {
		t.Errorf("disks' page83 IDs %v, want aa and bb among them", page83s)
	}
}

// TestRefusals: what cannot be built is refused with a message that says
// why, before anything is created.
func TestRefusals(t *testing.T) {
	sc := simulated.Config{}
	cases := map[string]struct {
		cfg  Config
		want string
	}{
		"two descriptions": {Config{Host: Simulated, Simulated: &sc, SimConfigFile: "node.json"}, "described twice"},
		"bad disk":         {Config{Host: Simulated, SimDisks: []string{"size=lots"}}, "-sim-disk"},
		"unknown":          {Config{Host: "solaris"}, `unknown host backend "solaris"`},
		"none":             {Config{}, "no real host backend"},
	}
	if runtime.GOOS != "windows" {
		cases["windows"] = struct {
			cfg  Config
			want string
		}{Config{Host: Windows}, "runs only on Windows"}
	}
	if runtime.GOOS != "linux" {
		cases["linux"] = struct {
			cfg  Config
			want string
		}{Config{Host: Linux}, "runs only on Linux"}
	}
	for name, c := range cases {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: New = %v, want an error containing %q", name, err, c.want)
		}
	}
	if _, err := (Set{Style: hostpath.Windows, WorkingDirs: []string{"relative"}}).Services(nil); err == nil {
		t.Error("Services accepted a relative working dir")
	}
}

// TestDefault: the default backend is the real one of this OS.
func TestDefault(t *testing.T) {
	want := map[string]string{"linux": Linux, "windows": Windows}[runtime.GOOS]
	if got := Default(); got != want {
		t.Errorf("Default() = %q on %s, want %q", got, runtime.GOOS, want)
	}
}
