package manifests

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

// kustomizationFiles are the names kustomize reads a kustomization from.
var kustomizationFiles = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// isKustomizationFile reports whether a file name is one kustomize reads.
func isKustomizationFile(name string) bool { return slices.Contains(kustomizationFiles, name) }

// kustomizationKind returns the kind of the kustomization in dir
// ("Kustomization" or "Component"), or "" if dir has none.
func kustomizationKind(dir string) string {
	for _, n := range kustomizationFiles {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			continue
		}
		var k struct {
			Kind string `json:"kind"`
		}
		if yaml.Unmarshal(data, &k) != nil || k.Kind == "" {
			return "Kustomization" // kustomize's default kind
		}
		return k.Kind
	}
	return ""
}

// isComponent reports whether dir is a kustomize component, which only a
// kustomization can build.
func isComponent(dir string) bool { return kustomizationKind(dir) == "Component" }

// isChart reports whether dir is a Helm chart.
func isChart(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "Chart.yaml"))
	return err == nil
}

// Kustomizations lists every directory under root (relative to base) that
// kustomize can build (kind Kustomization; components are built through
// them), as paths joined to base like Files', sorted.
func Kustomizations(base, root string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(filepath.Join(base, root), func(p string, e os.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return err
		}
		if kustomizationKind(p) == "Kustomization" {
			dirs = append(dirs, p)
		}
		return nil
	})
	return dirs, err
}

// Kustomize builds the kustomization in dir with kustomize's own library
// (what kubectl apply -k and kustomize build run), from the disk, with
// kustomize's default options: no plugins, no remote bases, load
// restrictions on (a kustomization reads files only under its root, bases
// and components excepted).
func Kustomize(dir string) ([]byte, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	out, err := m.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	return out, nil
}

// Rendered is one manifest file a Helm chart rendered.
type Rendered struct {
	// Name is the template's path, such as csi-node-proxy/templates/daemonset.yaml.
	Name string
	Data []byte
}

// LoadChart loads the Helm chart in dir as helm install would.
func LoadChart(dir string) (*chart.Chart, error) {
	c, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("loading the chart %s: %w", dir, err)
	}
	return c, nil
}

// RenderChart renders a chart the way helm template does without a
// cluster: the user's values are coalesced with values.yaml and checked
// against values.schema.json, then every template is executed with the
// release and default capabilities (no lookup: no cluster). It returns the
// manifests, sorted by name, and NOTES.txt.
func RenderChart(c *chart.Chart, release, namespace string, vals map[string]any) (manifests []Rendered, notes string, err error) {
	opts := chartutil.ReleaseOptions{Name: release, Namespace: namespace, Revision: 1, IsInstall: true}
	values, err := chartutil.ToRenderValues(c, vals, opts, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, "", fmt.Errorf("values: %w", err)
	}
	files, err := engine.Render(c, values)
	if err != nil {
		return nil, "", err
	}
	for name, data := range files {
		switch {
		case filepath.Base(name) == "NOTES.txt":
			notes = data
		case filepath.Ext(name) == ".yaml" || filepath.Ext(name) == ".yml":
			manifests = append(manifests, Rendered{Name: name, Data: []byte(data)})
		}
	}
	slices.SortFunc(manifests, func(a, b Rendered) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return manifests, notes, nil
}
