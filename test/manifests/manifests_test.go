package manifests

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
)

// root is the repository root, relative to this module.
const root = "../.."

// admissionGaps: see Set.AdmissionGaps. None today: every pod in deploy/
// and examples/ that mounts the endpoints uses an account the admission
// ConfigMap allows. An entry here would turn that check into a logged gap.
var admissionGaps = map[string]string{}

var (
	schemaOnce sync.Once
	theSchema  *Schema

	daemonOnce sync.Once
	theDaemon  *Daemon
	daemonErr  error
)

// schemaFor returns the schema, built once per test binary.
func schemaFor(t *testing.T) *Schema {
	t.Helper()
	schemaOnce.Do(func() { theSchema = NewSchema() })
	return theSchema
}

// daemonFor builds the daemon once per test binary.
func daemonFor(t *testing.T) *Daemon {
	t.Helper()
	daemonOnce.Do(func() { theDaemon, daemonErr = BuildDaemon() })
	if daemonErr != nil {
		t.Fatal(daemonErr)
	}
	return theDaemon
}

// TestMain removes the daemon binary daemonFor built (daemonbin).
func TestMain(m *testing.M) { os.Exit(daemonbin.Main(m)) }

// loadSet reads and schema-checks every manifest in files.
func loadSet(t *testing.T, files []string) (*Set, []error) {
	t.Helper()
	s := &Set{Daemon: daemonFor(t)}
	var errs []error
	for _, f := range files {
		docs, e := schemaFor(t).LoadFile(f)
		s.Docs = append(s.Docs, docs...)
		errs = append(errs, e...)
	}
	return s, errs
}

// TestManifests validates every manifest, unit and README under deploy/
// and examples/.
func TestManifests(t *testing.T) {
	manifests, units, readmes, err := Files(root, "deploy", "examples")
	if err != nil {
		t.Fatal(err)
	}
	if len(manifests) == 0 || len(units) == 0 {
		t.Fatalf("found %d manifests and %d units under deploy/ and examples/", len(manifests), len(units))
	}
	s, errs := loadSet(t, manifests)
	s.AdmissionGaps = admissionGaps
	errs = append(errs, s.Check()...)
	for _, e := range errs {
		t.Error(e)
	}
	for _, n := range s.Notes {
		t.Log("KNOWN GAP: " + n)
	}
	kinds := map[string]int{}
	for _, d := range s.Docs {
		kinds[d.GVK.Kind]++
	}
	t.Logf("%d documents in %d files: %v", len(s.Docs), len(manifests), kinds)

	for _, f := range units {
		t.Run(filepath.Base(f), func(t *testing.T) {
			u, err := ParseUnit(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range CheckUnit(u, s.Daemon) {
				t.Error(e)
			}
			switch err := VerifyUnit(u, s.Daemon, t.TempDir()); {
			case errors.Is(err, exec.ErrNotFound):
				t.Log("systemd-analyze is not installed: unit syntax not verified")
			case err != nil:
				t.Error(err)
			}
		})
	}
	for _, f := range readmes {
		for _, e := range CheckReadme(f, s.Daemon) {
			t.Error(e)
		}
	}
}

// TestTheDeploymentsThatMatter makes sure the walk found what the issue
// asks for, so a moved file cannot silently leave the checks.
func TestTheDeploymentsThatMatter(t *testing.T) {
	manifests, _, _, err := Files(root, "deploy", "examples")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := loadSet(t, manifests)
	want := map[string]func(*appsv1.DaemonSet) bool{
		"csi-node-proxy-windows": func(ds *appsv1.DaemonSet) bool {
			return isHostProcess(&ds.Spec.Template.Spec)
		},
		"csi-node-proxy-linux": func(ds *appsv1.DaemonSet) bool {
			return ds.Spec.Template.Spec.NodeSelector["kubernetes.io/os"] == "linux"
		},
		"csi-node-proxy-example-windows": func(ds *appsv1.DaemonSet) bool { return mountsEndpoints(&ds.Spec.Template.Spec) },
		"csi-node-proxy-example-linux":   func(ds *appsv1.DaemonSet) bool { return mountsEndpoints(&ds.Spec.Template.Spec) },
	}
	kinds := map[string]bool{}
	for _, d := range s.Docs {
		kinds[d.GVK.Kind] = true
		if ds, ok := d.Object.(*appsv1.DaemonSet); ok {
			if f := want[ds.Name]; f != nil {
				if !f(ds) {
					t.Errorf("%s is not what it should be", d)
				}
				delete(want, ds.Name)
			}
		}
	}
	for name := range want {
		t.Errorf("DaemonSet %s not found under deploy/ or examples/", name)
	}
	for _, k := range []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ConfigMap", "ServiceAccount"} {
		if !kinds[k] {
			t.Errorf("no %s found under deploy/ or examples/", k)
		}
	}
}

// TestInvalid feeds broken manifests and units from testdata/invalid and
// expects each to fail with the errors its "# want:" lines name. Each is
// checked together with deploy/admission, as a real set would be.
func TestInvalid(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("only %d invalid cases", len(files))
	}
	admission, _, _, err := Files(root, "deploy/admission")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var wants []string
			for _, line := range strings.Split(string(data), "\n") {
				if w, ok := strings.CutPrefix(line, "# want: "); ok {
					wants = append(wants, w)
				}
			}
			if len(wants) == 0 {
				t.Fatal("no # want: lines")
			}
			var errs []error
			switch {
			case strings.HasSuffix(f, ".service"):
				u, err := ParseUnit(f)
				if err != nil {
					t.Fatal(err)
				}
				errs = CheckUnit(u, daemonFor(t))
				if err := VerifyUnit(u, daemonFor(t), t.TempDir()); err != nil && !errors.Is(err, exec.ErrNotFound) {
					errs = append(errs, err)
				} else if errors.Is(err, exec.ErrNotFound) {
					wants = slicesWithout(wants, "systemd-analyze")
				}
			case strings.HasSuffix(f, ".md"):
				errs = CheckReadme(f, daemonFor(t))
			default:
				s, e := loadSet(t, append([]string{f}, admission...))
				errs = append(e, s.Check()...)
			}
			if len(errs) == 0 {
				t.Fatalf("no error; want %q", wants)
			}
			var all strings.Builder
			for _, e := range errs {
				all.WriteString(e.Error() + "\n")
			}
			for _, w := range wants {
				if !strings.Contains(all.String(), w) {
					t.Errorf("errors lack %q:\n%s", w, all.String())
				}
			}
			t.Logf("%d errors, as expected:\n%s", len(errs), all.String())
		})
	}
}

// slicesWithout drops the wants that mention s.
func slicesWithout(wants []string, s string) []string {
	var out []string
	for _, w := range wants {
		if !strings.Contains(w, s) {
			out = append(out, w)
		}
	}
	return out
}
