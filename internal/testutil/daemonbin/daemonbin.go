// Package daemonbin builds the csi-node-proxy daemon for tests, once per
// test process, and starts it so that a daemon that dies before it is
// ready fails the test at once instead of leaving it to go test's timeout.
//
// The daemon lives in the cmd module (cmd/go.mod), not in the modules the
// tests are in, so it cannot be built by import path from them: the
// helper finds the repository's root from the working directory and runs
// go build -C <root>/cmd ./csi-node-proxy, never through a workspace. Every
// test of the repository that needs the daemon binary uses it, from the
// root module and from the modules under test/ and examples/ that require
// the root module (the internal rule is by import path, so they may
// import it).
package daemonbin

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// rootModule is the module path on the root go.mod's module line.
const rootModule = "github.com/csi-node-proxy/csi-node-proxy"

// build is one flavour of the daemon binary, built on first use.
type build struct {
	once sync.Once
	path string
	err  error
}

var (
	mu     sync.Mutex
	binDir string // holds every binary this process built; Remove deletes it
	builds = map[bool]*build{false: {}, true: {}}
)

// ErrNoGo is returned (wrapped) by Build when there is no go command on
// PATH to build the daemon with.
var ErrNoGo = errors.New("no go command on PATH to build the daemon")

// RepoRoot returns the repository's root directory: the nearest directory
// at or above the working directory whose go.mod is the root module's and
// which has cmd/go.mod. Tests run in their package's directory, which is
// inside the repository whichever module the package belongs to.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; {
		if isRepoRoot(d) {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no directory at or above %s holds the %s module with cmd/go.mod", dir, rootModule)
		}
		d = parent
	}
}

// isRepoRoot tells whether dir holds the root module's go.mod and the cmd
// module.
func isRepoRoot(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, "cmd", "go.mod")); err != nil {
		return false
	}
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if mod, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(mod), `"`) == rootModule
		}
	}
	return false
}

// Build returns the path of the daemon binary, built on the first call in
// this process (with -race when race is true) and reused afterwards: a
// package's tests share one build instead of linking the daemon per test.
// The binary lives in a temporary directory that Remove deletes.
//
// Without the race detector the daemon is built as the release is
// (hack/release.sh): static (CGO_ENABLED=0) and -trimpath, whatever the
// test binary was built with. The tests then run what is shipped, and the
// build shares its compiled packages with every other build of that
// configuration (the Makefile's NORACE_TARGETS: make cross, lint, the
// hostile load), so only the link is left to do. Issue 26: built as the
// race-enabled test binaries' environment had it (cgo on, local paths),
// it was a configuration of its own, and a cold make test compiled the
// daemon and all it imports once more for it.
func Build(race bool) (string, error) {
	b := builds[race]
	b.once.Do(func() { b.path, b.err = doBuild(race) })
	return b.path, b.err
}

func doBuild(race bool) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoGo, err)
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	mu.Lock()
	if binDir == "" {
		if binDir, err = os.MkdirTemp("", "daemonbin"); err != nil {
			mu.Unlock()
			return "", err
		}
	}
	dir := binDir
	mu.Unlock()
	name := "csi-node-proxy"
	if race {
		name += "-race"
	}
	bin := filepath.Join(dir, name+exeSuffix())
	args := []string{"build", "-C", filepath.Join(root, "cmd"), "-o", bin}
	// Never through a workspace: the daemon builds from the cmd module
	// and the root module it replaces with the working copy, as a release
	// does.
	env := append(os.Environ(), "GOWORK=off")
	if race {
		args = append(args, "-race") // needs cgo: the environment's setting stays
	} else {
		args = append(args, "-trimpath")
		env = append(env, "CGO_ENABLED=0")
	}
	args = append(args, "./csi-node-proxy")
	cmd := exec.Command(goTool, args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build the daemon (go %s): %w\n%s", strings.Join(args, " "), err, out.Bytes())
	}
	return bin, nil
}

// exeSuffix is the executable suffix of the GOOS this test binary is for,
// which is what go build builds for.
func exeSuffix() string {
	if filepath.Separator == '\\' {
		return ".exe"
	}
	return ""
}

// Binary returns the daemon built without the race detector, failing tb
// if it cannot be built.
func Binary(tb testing.TB) string {
	tb.Helper()
	return mustBuild(tb, false)
}

// BinaryRace returns the daemon built with the race detector when this
// test binary runs with it (Race), and otherwise the same as Binary.
func BinaryRace(tb testing.TB) string {
	tb.Helper()
	return mustBuild(tb, Race)
}

func mustBuild(tb testing.TB, race bool) string {
	tb.Helper()
	bin, err := Build(race)
	if err != nil {
		tb.Fatal(err)
	}
	return bin
}

// Remove deletes what Build built in this process. Call it from TestMain
// after m.Run; a later Build in the same process fails.
func Remove() {
	mu.Lock()
	defer mu.Unlock()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
}

// Main runs the tests of a package that has no TestMain of its own and
// removes the binaries: func TestMain(m *testing.M) { os.Exit(daemonbin.Main(m)) }.
func Main(m *testing.M) int {
	defer Remove()
	return m.Run()
}
