package manifests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// TestPresetComponents builds both DaemonSets with each
// deploy/components/preset-<driver> component (one at a time, and two
// together), through the usual checks (the real daemon parses each
// command line, so a preset a node OS lacks fails), and requires each
// DaemonSet to name exactly the presets of the components that apply to
// its OS. Every preset but node-admin has its component.
func TestPresetComponents(t *testing.T) {
	abs := func(p string) string {
		a, err := filepath.Abs(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, name := range policy.PresetNames(hostpath.POSIX) {
		if name == policy.NodeAdminPreset {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, "deploy", "components", "preset-"+name, "kustomization.yaml")); err != nil {
			t.Errorf("preset %s has no component: %v", name, err)
		}
	}
	for _, set := range [][]string{{"azuredisk"}, {"aws-ebs"}, {"gcp-pd"}, {"smb"}, {"azurefile"}, {"vsphere"}, {"local-static-provisioner"}, {"example"}, {"azuredisk", "smb"}} {
		t.Run(strings.Join(set, "+"), func(t *testing.T) {
			dir := t.TempDir()
			// kustomize takes bases and components by relative path only.
			abs := func(p string) string {
				r, err := filepath.Rel(dir, abs(p))
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			k := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - " + abs("deploy/linux") + "\n  - " + abs("deploy/windows") + "\ncomponents:\n"
			for _, n := range set {
				k += "  - " + abs("deploy/components/preset-"+n) + "\n"
			}
			if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := Kustomize(dir)
			if err != nil {
				t.Fatal(err)
			}
			s := checkRendered(t, "kustomize build with "+strings.Join(set, ", "), out, nil)
			seen := 0
			for _, d := range s.Docs {
				ds, ok := d.Object.(*appsv1.DaemonSet)
				if !ok {
					continue
				}
				seen++
				windows := strings.HasSuffix(ds.Name, "-windows")
				var want []string
				for _, n := range set {
					if _, err := policy.PresetData(map[bool]hostpath.Style{false: hostpath.POSIX, true: hostpath.Windows}[windows], n); err == nil {
						want = append(want, "--policy-preset="+n)
					}
				}
				var got []string
				c := proxyContainer(t, ds)
				for _, a := range slices.Concat(c.Command, c.Args) { // Windows: all in command
					if strings.HasPrefix(a, "--policy-preset=") {
						got = append(got, a)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s: presets %q, want %q", ds.Name, got, want)
				}
			}
			if seen != 2 {
				t.Errorf("%d DaemonSets rendered, want 2", seen)
			}
		})
	}
}
