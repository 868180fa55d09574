// Package helmchart packages a Helm chart directory the way helm package
// does, and writes the chart repository index (index.yaml) that helm repo
// index would, without the helm binary: the release tooling runs it
// (hack/release.sh, through hack/helmchart/helmpackage), and CI may not download
// helm. The archive is deterministic: its entries are sorted, owned by
// root, 0644, and stamped with one given time, and the gzip header carries
// no name or time, so one source tree and time always give one digest.
//
// The layout follows helm's (helm.sh/helm/v3 pkg/chartutil/save.go,
// v3.22.0): every entry is below a directory named after the chart,
// Chart.yaml first; the index fields are those of pkg/repo's ChartVersion.
package helmchart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Metadata is the part of Chart.yaml the index repeats.
type Metadata struct {
	APIVersion  string   `json:"apiVersion"`
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	AppVersion  string   `json:"appVersion,omitempty"`
	Description string   `json:"description,omitempty"`
	Type        string   `json:"type,omitempty"`
	KubeVersion string   `json:"kubeVersion,omitempty"`
	Home        string   `json:"home,omitempty"`
	Sources     []string `json:"sources,omitempty"`
	Keywords    []string `json:"keywords,omitempty"`
}

// Package is a packaged chart.
type Package struct {
	Metadata Metadata
	// Archive is the .tgz; FileName its name, <name>-<version>.tgz.
	Archive  []byte
	FileName string
	// Digest is the archive's SHA-256, hex, as index.yaml records it.
	Digest string
}

// versionLine and appVersionLine are Chart.yaml's top-level version keys,
// rewritten in place so the file keeps its comments.
var (
	versionLine    = regexp.MustCompile(`(?m)^version:.*$`)
	appVersionLine = regexp.MustCompile(`(?m)^appVersion:.*$`)
)

// setKey replaces the one line re matches with key: "value".
func setKey(data []byte, re *regexp.Regexp, key, value string) ([]byte, error) {
	if n := len(re.FindAll(data, -1)); n != 1 {
		return nil, fmt.Errorf("the chart's Chart.yaml has %d top-level %s lines, want 1", n, key)
	}
	return re.ReplaceAll(data, []byte(fmt.Sprintf("%s: %q", key, value))), nil
}

// Build packages the chart in dir. A non-empty version or appVersion
// replaces Chart.yaml's (as helm package --version and --app-version do,
// in the archive only). Every regular file below dir is packaged; the
// chart has no .helmignore, and Build refuses one rather than ignore it.
func Build(dir, version, appVersion string, mtime time.Time) (*Package, error) {
	chartYAML, err := os.ReadFile(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		return nil, err
	}
	if version != "" {
		if chartYAML, err = setKey(chartYAML, versionLine, "version", version); err != nil {
			return nil, err
		}
	}
	if appVersion != "" {
		if chartYAML, err = setKey(chartYAML, appVersionLine, "appVersion", appVersion); err != nil {
			return nil, err
		}
	}
	var md Metadata
	if err := yaml.Unmarshal(chartYAML, &md); err != nil {
		return nil, fmt.Errorf("the chart's Chart.yaml: %w", err)
	}
	if md.Name == "" || md.Version == "" || md.APIVersion == "" {
		return nil, fmt.Errorf("the chart's Chart.yaml: name %q, version %q, apiVersion %q: all are required", md.Name, md.Version, md.APIVersion)
	}
	var files []string
	err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case e.IsDir():
			return nil
		case rel == ".helmignore":
			return fmt.Errorf("%s: .helmignore is not supported; keep only chart files in the directory", p)
		case !e.Type().IsRegular():
			return fmt.Errorf("%s: not a regular file", p)
		case rel != "Chart.yaml":
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(files)

	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	add := func(name string, data []byte) error {
		hdr := &tar.Header{
			Name: path.Join(md.Name, name), Mode: 0o644, Size: int64(len(data)),
			ModTime: mtime.UTC().Truncate(time.Second), Typeflag: tar.TypeReg, Format: tar.FormatPAX,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	if err := add("Chart.yaml", chartYAML); err != nil {
		return nil, err
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		if err := add(f, data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(buf.Bytes())
	return &Package{
		Metadata: md,
		Archive:  buf.Bytes(),
		FileName: fmt.Sprintf("%s-%s.tgz", md.Name, md.Version),
		Digest:   hex.EncodeToString(sum[:]),
	}, nil
}

// indexEntry is one chart version of index.yaml: Chart.yaml's fields and
// where and when it was packaged.
type indexEntry struct {
	Metadata
	URLs    []string `json:"urls"`
	Created string   `json:"created"`
	Digest  string   `json:"digest"`
}

// index is index.yaml.
type index struct {
	APIVersion string                  `json:"apiVersion"`
	Entries    map[string][]indexEntry `json:"entries"`
	Generated  string                  `json:"generated"`
}

// Index returns index.yaml for the packages, each at baseURL/<FileName>
// (just FileName, relative to the index, when baseURL is empty), created
// and generated at the given time.
func Index(pkgs []*Package, baseURL string, created time.Time) ([]byte, error) {
	stamp := created.UTC().Format(time.RFC3339)
	idx := index{APIVersion: "v1", Entries: map[string][]indexEntry{}, Generated: stamp}
	for _, p := range pkgs {
		url := p.FileName
		if baseURL != "" {
			url = strings.TrimSuffix(baseURL, "/") + "/" + p.FileName
		}
		idx.Entries[p.Metadata.Name] = append(idx.Entries[p.Metadata.Name], indexEntry{
			Metadata: p.Metadata, URLs: []string{url}, Created: stamp, Digest: p.Digest,
		})
	}
	return yaml.Marshal(idx)
}
