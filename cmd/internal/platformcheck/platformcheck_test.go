package platformcheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// compiledEnv names the platforms this run compiles anyway (make unit sets
// it to make cross's), which TestReleasePlatformsTypeCheck leaves out.
const compiledEnv = "CSI_NODE_PROXY_COMPILED_PLATFORMS"

// TestReleasePlatformsTypeCheck type-checks the daemon, the CLI and every
// package of the root module (drivers import its library packages and build
// them for their own nodes) for each platform make release builds, but for
// those compiledEnv names. It is make test's only check of linux/arm64
// (issue 26).
func TestReleasePlatformsTypeCheck(t *testing.T) {
	script, err := os.ReadFile("../../../hack/release.sh")
	if err != nil {
		t.Fatal(err)
	}
	platforms, err := ReleasePlatforms(script)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(platforms, "linux/arm64") {
		t.Errorf("release platforms %v: linux/arm64, the one make test compiles nothing for, is missing", platforms)
	}
	compiled := strings.Fields(os.Getenv(compiledEnv))
	for _, p := range platforms {
		t.Run(strings.ReplaceAll(p, "/", "_"), func(t *testing.T) {
			if slices.Contains(compiled, p) {
				t.Skipf("%s names %s: make cross compiles it", compiledEnv, p)
			}
			r, err := TypeCheck("../..", p, nil, "./csi-node-proxy", "./csi-node-proxyctl", "github.com/csi-node-proxy/csi-node-proxy/...")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range r.Errors {
				t.Error(e)
			}
			// Not vacuous: the binaries, the library and, through them, the
			// platform's own system packages were loaded.
			sys := "golang.org/x/sys/unix"
			if strings.HasPrefix(p, "windows/") {
				sys = "golang.org/x/sys/windows"
			}
			for _, want := range []string{
				"github.com/csi-node-proxy/csi-node-proxy/cmd/csi-node-proxy",
				"github.com/csi-node-proxy/csi-node-proxy/cmd/csi-node-proxyctl",
				"github.com/csi-node-proxy/csi-node-proxy/inprocess",
				sys,
			} {
				if !r.Loaded[want] {
					t.Errorf("%s not type-checked", want)
				}
			}
			t.Logf("%s: %d packages type-checked", p, r.Packages)
		})
	}
}

// TestTypeCheckSeesPlatformFiles: an error in a file only one platform
// builds is found for that platform and for no other.
func TestTypeCheckSeesPlatformFiles(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":         "module example.com/p\n\ngo 1.22\n",
		"p.go":           "package p\n\nvar X = y + z\n",
		"y_amd64.go":     "package p\n\nvar y = 1\n",
		"y_arm64.go":     "package p\n\nvar y int = \"not an int\"\n",
		"z_linux.go":     "package p\n\nvar z = 2\n",
		"z_windows.go":   "package p\n\nvar z = undefinedOnWindows\n",
		"ignored_cgo.go": "//go:build cgo\n\npackage p\n\nvar broken int = \"cgo is off\"\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		platform string
		want     string // the file the only error is in, or "" for none
	}{
		{"linux/amd64", ""},
		{"linux/arm64", "y_arm64.go"},
		{"windows/amd64", "z_windows.go"},
	} {
		r, err := TypeCheck(dir, c.platform, []string{"GOFLAGS=", "GOWORK=off"}, "./...")
		if err != nil {
			t.Fatal(err)
		}
		if !r.Loaded["example.com/p"] {
			t.Errorf("%s: example.com/p not loaded", c.platform)
		}
		switch {
		case c.want == "" && len(r.Errors) > 0:
			t.Errorf("%s: errors %q, want none", c.platform, r.Errors)
		case c.want != "" && (len(r.Errors) != 1 || !strings.Contains(r.Errors[0], c.want)):
			t.Errorf("%s: errors %q, want one in %s", c.platform, r.Errors, c.want)
		}
	}
	if _, err := TypeCheck(dir, "linux", nil, "./..."); err == nil {
		t.Error(`platform "linux" accepted`)
	}
}

func TestReleasePlatforms(t *testing.T) {
	got, err := ReleasePlatforms([]byte("x=1\ntargets_list=${RELEASE_TARGETS:-linux/amd64,linux/arm64 windows/amd64}\n"))
	if err != nil || !slices.Equal(got, []string{"linux/amd64", "linux/arm64", "windows/amd64"}) {
		t.Errorf("got %v, %v", got, err)
	}
	for _, script := range []string{"", "targets_list=${RELEASE_TARGETS:-}\n", "  targets_list=${RELEASE_TARGETS:-linux/amd64}\n"} {
		if got, err := ReleasePlatforms([]byte(script)); err == nil {
			t.Errorf("%q: got %v, want an error", script, got)
		}
	}
}
