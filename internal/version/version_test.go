package version

import (
	"regexp"
	"runtime"
	"runtime/debug"
	"testing"
)

func TestStampedValuesWin(t *testing.T) {
	t.Cleanup(func() { Version, Commit, BuildDate = "", "", "" })
	Version, Commit, BuildDate = "v1.2.3", "0123456789abcdef0123456789abcdef01234567", "2026-01-02T03:04:05Z"
	want := "csi-node-proxy v1.2.3 (commit 0123456789abcdef0123456789abcdef01234567, built 2026-01-02T03:04:05Z, " + runtime.Version() + ")"
	if got := String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := Get(); got.GoVersion != runtime.Version() {
		t.Errorf("GoVersion %q, want %q", got.GoVersion, runtime.Version())
	}
}

func TestUnstampedIsLabelledSo(t *testing.T) {
	// A test binary has no module version and, here, no VCS settings.
	got := String()
	if !regexp.MustCompile(`^csi-node-proxy \S+ \(commit \S+, built unknown, go\S+\)$`).MatchString(got) {
		t.Errorf("String() = %q", got)
	}
}

func TestFillFromBuildInfo(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		in   Info
		want Info
	}{
		{
			name: "go install of a tagged module",
			bi:   debug.BuildInfo{Main: debug.Module{Version: "v1.4.0"}},
			want: Info{Version: "v1.4.0"},
		},
		{
			name: "a dirty checkout",
			bi: debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-01-01T00:00:00Z"},
			}},
			want: Info{Commit: "abc-dirty"},
		},
		{
			name: "stamped values are kept",
			bi: debug.BuildInfo{Main: debug.Module{Version: "v9.9.9"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "abc"},
			}},
			in:   Info{Version: "v1.0.0", Commit: "def"},
			want: Info{Version: "v1.0.0", Commit: "def"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.in
			fillFromBuildInfo(&got, &tc.bi)
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
