package v2compat

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the repository, two directories up.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// Import prefixes: the tree's in this repository, upstream's in a driver.
const (
	ourPrefix      = "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/"
	upstreamPrefix = "github.com/kubernetes-csi/csi-proxy/v2/pkg/"
)

// driverGoMod is the driver module's go.mod: upstream's v2 library at the
// version vsphere-csi-driver pins, and the one replace line (plus the one
// for the root module, which a release would not need: v2compat's go.mod
// requires a published version of it).
const driverGoMod = `module example.com/v2driver

go 1.26.0

require (
	github.com/csi-node-proxy/csi-node-proxy v0.0.0-00010101000000-000000000000
	github.com/kubernetes-csi/csi-proxy/v2 v2.0.0-alpha.2
)

replace github.com/kubernetes-csi/csi-proxy/v2 => REPO/v2compat

replace github.com/csi-node-proxy/csi-node-proxy => REPO
`

// driverTest runs the flows in the driver module, on the simulated host
// through library mode with a policy and an audit log, and checks that
// the log holds the read-only clear (PR #438's SetDiskReadOnly).
const driverTest = `package v2mounters

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
	"github.com/csi-node-proxy/csi-node-proxy/upstreamv2"
)

const policy = "rules:\n- name: v2-driver\n  callers: [{any: true}]\n  allow: [{groups: [disk, volume, filesystem, system], methods: [\"*\"]}]\n  pathRoots: ['C:\\var\\lib\\kubelet']\n"

func world(t *testing.T) (World, string) {
	log := filepath.Join(t.TempDir(), "audit.log")
	cfg := Config(` + "`C:\\var\\lib\\kubelet`" + `)
	if err := upstreamv2.Configure(inprocess.Options{Host: inprocess.HostSimulated, Simulated: &cfg, PolicyData: []byte(policy), AuditLog: log}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = upstreamv2.Close() })
	n, err := upstreamv2.SharedNode()
	if err != nil {
		t.Fatal(err)
	}
	sim := n.(*inprocess.Node).Simulated()
	return World{KubeletDir: ` + "`C:\\var\\lib\\kubelet`" + `, Grow: sim.ResizeDisk,
		ReattachReadOnly: func(d uint32) error { return sim.SetDiskReadOnlyAttribute(d, true) }}, log
}

func TestAWSEBSThroughReplace(t *testing.T) {
	w, _ := world(t)
	RunAWSEBS(t, w)
}

func TestVSphereThroughReplace(t *testing.T) {
	w, log := world(t)
	RunVSphere(t, w)
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), ` + "`\"method\":\"SetDiskReadOnly\"`" + `) {
		t.Fatalf("no audit record of SetDiskReadOnly in:\n%s", b)
	}
}
`

// writeDriverModule lays out the driver module in a temporary directory.
func writeDriverModule(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	dir := t.TempDir()
	pkg := filepath.Join(dir, "v2mounters")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "test", "drivers", "v2mounters")
	for _, name := range []string{"awsebs.go", "vsphere.go", "flows.go"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if !strings.Contains(text, ourPrefix) {
			t.Fatalf("%s imports nothing of the upstreamv2 tree", name)
		}
		// The one change a driver makes, the other way round.
		text = strings.ReplaceAll(text, `"`+ourPrefix, `"`+upstreamPrefix)
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"go.mod":                     strings.ReplaceAll(driverGoMod, "REPO", filepath.ToSlash(root)),
		"v2mounters/replace_test.go": driverTest,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The checksums of the root module's and v2compat's dependencies.
	var sums []byte
	for _, f := range []string{filepath.Join(root, "go.sum"), filepath.Join(root, "v2compat", "go.sum")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, b...)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sums, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// goCmd runs the go command in dir, offline, and fails the test with its
// output on failure.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	// GOFLAGS keeps what make set (-trimpath and make test's flags), so
	// that the root module's packages compiled for make cross serve
	// these builds too.
	goflags := strings.TrimSpace(os.Getenv("GOFLAGS") + " -mod=mod")
	cmd.Env = append(os.Environ(), append([]string{"GOWORK=off", "GOFLAGS=" + goflags, "GOPROXY=off"}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in the driver module: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestReplaceLine: the drivers' v2 mounters, as upstream's import paths
// spell them, build for Windows against this repository by the replace
// line alone, and their node flows pass through it on the simulated host.
func TestReplaceLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module twice; not in -short")
	}
	dir := writeDriverModule(t)
	goCmd(t, dir, []string{"GOOS=windows", "GOARCH=amd64"}, "vet", "./...")
	out := goCmd(t, dir, nil, "test", "-count=1", "-v", "./...")
	for _, name := range []string{"TestAWSEBSThroughReplace", "TestVSphereThroughReplace"} {
		if !strings.Contains(out, "--- PASS: "+name) {
			t.Errorf("%s did not pass:\n%s", name, out)
		}
	}
	// Upstream's own module must not be what got built: the replace line
	// stands in for it.
	list := goCmd(t, dir, nil, "list", "-m", "-f", "{{.Path}} {{.Replace}}", "github.com/kubernetes-csi/csi-proxy/v2")
	if !strings.Contains(list, filepath.ToSlash(filepath.Join(repoRoot(t), "v2compat"))) {
		t.Errorf("go list -m: %s; want upstream's v2 replaced by v2compat", list)
	}
}
