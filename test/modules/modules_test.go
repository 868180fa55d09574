package modules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
)

// rootModule is the module drivers import: client, client/mounter,
// inprocess, errdefs, the group models.
const rootModule = "github.com/csi-node-proxy/csi-node-proxy"

// rootDir is the root module's directory, relative to this package.
var rootDir = filepath.Join("..", "..")

// goCmd runs the go command in dir with extra environment and returns its
// stdout; a failure ends the test with its stderr.
func goCmd(t *testing.T, dir string, env []string, args ...string) []byte {
	t.Helper()
	out, err := goCmdErr(dir, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func goCmdErr(dir string, env []string, args ...string) ([]byte, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("the go command is needed: %w", err)
	}
	cmd := exec.Command(goTool, args...)
	cmd.Dir = dir
	// Never through a workspace: each module is checked as it stands.
	cmd.Env = append(append(os.Environ(), "GOWORK=off"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go %s (in %s): %w\n%s", strings.Join(args, " "), dir, err, stderr.Bytes())
	}
	return stdout.Bytes(), nil
}

// readGoMod parses the go.mod in dir.
func readGoMod(t *testing.T, dir string) *modfile.File {
	t.Helper()
	path := filepath.Join(dir, "go.mod")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(path, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Go == nil {
		t.Fatalf("%s states no go directive", path)
	}
	return f
}

// listedModule is what go list -m -json prints of a module.
type listedModule struct {
	Path      string
	Version   string
	Main      bool
	GoVersion string
}

// listModules returns go list -m -json all of the module in dir.
func listModules(t *testing.T, dir string, env []string) []listedModule {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(goCmd(t, dir, env, "list", "-m", "-json", "all")))
	var mods []listedModule
	for {
		var m listedModule
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return mods
		} else if err != nil {
			t.Fatal(err)
		}
		mods = append(mods, m)
	}
}

// goVersionLess orders go directives ("1.26", "1.26.0", "1.26rc1") as
// the go command does, through semver: "1.26" is "1.26.0".
func goVersionLess(a, b string) bool {
	return semver.Compare(goSemver(a), goSemver(b)) < 0
}

func goSemver(v string) string {
	if strings.Count(v, ".") == 1 {
		v += ".0"
	}
	return "v" + v
}

// TestGoDirective: the root module's go directive is the highest go
// directive of its dependencies. Lower, and the go command refuses the
// module (a dependency needs a newer Go); higher, and every driver's
// go mod tidy raises its go line to ours for nothing. When a dependency
// update raises the highest one, this names it: raise ours with
// go mod edit -go=<that> in the root module, and say so in the README.
func TestGoDirective(t *testing.T) {
	root := readGoMod(t, rootDir)
	var maxGo, setBy string
	for _, m := range listModules(t, rootDir, nil) {
		if m.Main || m.GoVersion == "" {
			continue
		}
		if maxGo == "" || goVersionLess(maxGo, m.GoVersion) {
			maxGo, setBy = m.GoVersion, m.Path+"@"+m.Version
		} else if m.GoVersion == maxGo {
			setBy += ", " + m.Path + "@" + m.Version
		}
	}
	if maxGo == "" {
		t.Fatal("no dependency of the root module states a go directive; the listing is broken")
	}
	if got := root.Go.Version; got != maxGo {
		t.Errorf("the root module says go %s; its dependencies allow go %s at the oldest (set by %s): run go mod edit -go=%s in the root module and update the README's go line",
			got, maxGo, setBy, maxGo)
	}
	t.Logf("go %s, set by %s", maxGo, setBy)
}

// toolModules are modules only the repository's tools need: the
// generators (convgen's engine reads packages with golang.org/x/tools)
// and these checks (golang.org/x/mod). They live in the cmd module and
// in this one, so that a driver requiring the root module never has them
// as a requirement of ours.
var toolModules = []string{"golang.org/x/tools", "golang.org/x/mod"}

// TestRootRequiresNoTools: the root module's go.mod, which every driver's
// module graph holds, requires none of toolModules. A requirement appears
// when a root package or test imports one (go mod tidy adds it); move that
// code to the cmd module, as convgen's engine was (cmd/internal/convgen).
func TestRootRequiresNoTools(t *testing.T) {
	root := readGoMod(t, rootDir)
	if len(root.Require) == 0 {
		t.Fatal("the root module's go.mod requires nothing; the parse is broken")
	}
	for _, r := range root.Require {
		for _, tool := range toolModules {
			if r.Mod.Path == tool || strings.HasPrefix(r.Mod.Path, tool+"/") {
				t.Errorf("the root module requires %s, a module only the tools need: move the code that imports it to the cmd module (go mod why -m %s in the root names it)", r.Mod, r.Mod.Path)
			}
		}
	}
}

// checkVersion is the version the root module is packed at: a release
// version no tag will ever have, so the throwaway module cache can never
// mix it up with a published one.
const checkVersion = "v0.999.0-offline.check"

// TestOfflineGoGet is a release rehearsal, offline: a release is a tag
// of the root module, so a driver's go get of that tag must resolve and
// build with nothing but what the tag holds. The root module is packed
// from the working tree into a file-system module proxy exactly as the
// go command would serve a tag (golang.org/x/mod/zip: nested modules,
// cmd/ among them, left out); every other module comes from the download
// cache of the usual module cache, read as a second file:// proxy. A
// throwaway GOMODCACHE keeps the trial version out of the usual cache,
// and the checksum database is off: this zip is not a published one.
func TestOfflineGoGet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a driver module from a cold module cache; skipped with -short")
	}
	root, err := filepath.Abs(rootDir)
	if err != nil {
		t.Fatal(err)
	}
	rootGo := readGoMod(t, root).Go.Version
	tmp := t.TempDir()
	proxy, driver, modcache := filepath.Join(tmp, "proxy"), filepath.Join(tmp, "driver"), filepath.Join(tmp, "modcache")
	for _, d := range []string{proxy, driver} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The go command makes the module cache read-only; let TempDir's
	// cleanup remove it.
	t.Cleanup(func() { _, _ = goCmdErr(tmp, []string{"GOMODCACHE=" + modcache}, "clean", "-modcache") })

	packModule(t, proxy, root, rootModule, checkVersion)

	usualCache := strings.TrimSpace(string(goCmd(t, root, nil, "env", "GOMODCACHE")))
	sources := fileURL(proxy) + "," + fileURL(filepath.Join(usualCache, "cache", "download"))
	prefetch := os.Getenv(prefetchEnv) != ""
	if prefetch {
		// Third-party modules may also come from the go command's
		// usual proxy: a driver that does not link Prometheus selects
		// lower versions of some modules (go.yaml.in/yaml/v3) than the
		// root module's build list, which the root module's go mod
		// download never fetched.
		sources += "," + strings.TrimSpace(string(goCmd(t, root, nil, "env", "GOPROXY")))
	}
	env := []string{
		"GOPROXY=" + sources,
		"GOMODCACHE=" + modcache,
		// -trimpath: build cache hits although the module cache is new
		// each run; the rest of GOFLAGS as make set it (make test's
		// flags), so that those hits include the packages make's other
		// builds compiled.
		"GOFLAGS=" + strings.TrimSpace("-mod=mod -trimpath "+os.Getenv("GOFLAGS")),
		"GOSUMDB=off", "GONOSUMDB=", "GOPRIVATE=", "GONOPROXY=", "GOINSECURE=",
		// The go line the driver ends with is checked below; no
		// toolchain may be fetched to reach it.
		"GOTOOLCHAIN=local",
	}

	// A driver as one starts today: an older go line than ours, which
	// go get raises to ours and no further.
	if err := os.WriteFile(filepath.Join(driver, "go.mod"), []byte("module example.com/driver\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(driver, "main.go"), []byte(driverMain), 0o644); err != nil {
		t.Fatal(err)
	}
	goCmd(t, driver, env, "get", rootModule+"@"+checkVersion)
	goCmd(t, driver, env, "mod", "tidy")
	if prefetch {
		// What the driver selects is known once go mod tidy has run:
		// building it here would compile every dependency in a
		// configuration nothing else shares (.ci/run runs this
		// outside make, with cgo on), minutes of a cold CI run.
		saveSelectedModules(t, driver, env)
		return
	}
	for _, goos := range []string{"linux", "windows"} {
		goCmd(t, driver, append(env, "GOOS="+goos, "GOARCH=amd64"), "build", "./...")
	}

	d := readGoMod(t, driver)
	if len(d.Replace) > 0 {
		t.Errorf("the driver's go.mod needs a replace: %v", d.Replace)
	}
	if d.Go.Version != rootGo {
		t.Errorf("the driver's go line became %s, want %s (the root module's)", d.Go.Version, rootGo)
	}
	if d.Toolchain != nil {
		t.Errorf("the driver's go.mod got a toolchain line: %s", d.Toolchain.Name)
	}
	// The module graph as go mod graph prints it, which needs only the
	// modules' go.mod files (go list -m all would need every module's
	// .info, which the download cache lacks for modules the go command
	// only ever read the go.mod of).
	seen := map[string]bool{}
	var ours []string
	for _, field := range strings.Fields(string(goCmd(t, driver, env, "mod", "graph"))) {
		if seen[field] {
			continue
		}
		seen[field] = true
		if path, _, _ := strings.Cut(field, "@"); path == rootModule || strings.HasPrefix(path, rootModule+"/") {
			ours = append(ours, field)
		}
	}
	if want := rootModule + "@" + checkVersion; len(ours) != 1 || ours[0] != want {
		t.Errorf("the driver's module graph holds %v of this repository's modules, want only %s (never the cmd module)", ours, want)
	}
}

// prefetchEnv, set, makes TestOfflineGoGet fill the usual module cache
// with every third-party module version the fresh driver selects,
// fetching what it lacks from the go command's usual proxy, instead of
// checking offline. .ci/run sets it once before make test, so that the
// check itself needs no network on a machine whose cache started empty.
const prefetchEnv = "CSI_NODE_PROXY_PREFETCH_DRIVER_MODULES"

// saveSelectedModules downloads into the usual module cache every module
// version the driver in dir selected, but this repository's trial
// version (which must never reach the usual cache).
func saveSelectedModules(t *testing.T, dir string, env []string) {
	t.Helper()
	var want []string
	for _, m := range listModules(t, dir, env) {
		if m.Main || m.Path == rootModule || strings.HasPrefix(m.Path, rootModule+"/") || m.Version == "" {
			continue
		}
		want = append(want, m.Path+"@"+m.Version)
	}
	if len(want) == 0 {
		t.Fatal("the driver selected no third-party module: nothing to prefetch is wrong")
	}
	// The usual cache and proxy: only the environment of this process.
	goCmd(t, t.TempDir(), nil, append([]string{"mod", "download"}, want...)...)
	t.Logf("prefetched %d module versions a fresh driver selects into the usual module cache", len(want))
}

// driverMain is the fresh driver: it imports what a driver imports (the
// client, its mounter, library mode, the error kinds); blank imports where
// the API is not the point.
const driverMain = `package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	_ "github.com/csi-node-proxy/csi-node-proxy/client/mounter"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	_ "github.com/csi-node-proxy/csi-node-proxy/inprocess"
)

func main() {
	c, err := client.Dial(context.Background(), client.Options{})
	if err != nil {
		fmt.Println(err, errors.Is(err, errdefs.ErrUnavailable))
		return
	}
	defer c.Close()
}
`

// fileURL is path as a file:// URL for GOPROXY.
func fileURL(path string) string {
	return "file://" + filepath.ToSlash(path)
}
