package helmchart

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// chartDir is the project's chart, which the release packages.
var chartDir = filepath.Join("..", "..", "deploy", "helm", "csi-node-proxy")

// stamp is a fixed build time.
var stamp = time.Unix(1767225600, 0) // 2026-01-01T00:00:00Z

// unpack reads a .tgz into name → content, checking the headers helm
// package would write and that the build is reproducible.
func unpack(t *testing.T, archive []byte) (names []string, files map[string][]byte) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header names %q at %v: two builds would differ", zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	files = map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg || h.Mode != 0o644 || h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(stamp) {
			t.Errorf("%s: type %c mode %o owner %d:%d time %v", h.Name, h.Typeflag, h.Mode, h.Uid, h.Gid, h.ModTime)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		files[h.Name] = data
	}
	return names, files
}

// TestBuildUnpacksToTheChart: the archive holds every file of the chart
// below csi-node-proxy/, Chart.yaml first (helm's loader wants it before
// the rest), byte for byte, and two builds are the same bytes.
func TestBuildUnpacksToTheChart(t *testing.T) {
	p, err := Build(chartDir, "", "", stamp)
	if err != nil {
		t.Fatal(err)
	}
	names, files := unpack(t, p.Archive)
	want := map[string][]byte{}
	err = filepath.WalkDir(chartDir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(chartDir, path)
		data, err := os.ReadFile(path)
		want["csi-node-proxy/"+filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 || names[0] != "csi-node-proxy/Chart.yaml" {
		t.Errorf("entries %v: Chart.yaml must come first", names)
	}
	if len(files) != len(want) || len(names) != len(want) {
		t.Errorf("archive has %d entries (%d distinct), the chart %d files", len(names), len(files), len(want))
	}
	for name, data := range want {
		if !bytes.Equal(files[name], data) {
			t.Errorf("%s differs from the chart's file (or is missing)", name)
		}
	}
	for _, n := range []string{"csi-node-proxy/values.yaml", "csi-node-proxy/values.schema.json", "csi-node-proxy/templates/_daemonset.tpl"} {
		if _, ok := files[n]; !ok {
			t.Errorf("no %s", n)
		}
	}
	again, err := Build(chartDir, "", "", stamp)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(p.Archive)
	if !bytes.Equal(again.Archive, p.Archive) || p.Digest != hex.EncodeToString(sum[:]) {
		t.Errorf("two builds differ (%s, %s) or the digest %s is not the archive's", p.Digest, again.Digest, p.Digest)
	}
	if p.FileName != "csi-node-proxy-"+p.Metadata.Version+".tgz" {
		t.Errorf("file name %s", p.FileName)
	}
	t.Logf("%s: %d bytes, sha256 %s, %d files", p.FileName, len(p.Archive), p.Digest, len(names))
}

// TestBuildSetsVersions: -version and -app-version change Chart.yaml in
// the archive only, keeping its comments, and name the file.
func TestBuildSetsVersions(t *testing.T) {
	p, err := Build(chartDir, "1.2.3", "v1.2.3", stamp)
	if err != nil {
		t.Fatal(err)
	}
	_, files := unpack(t, p.Archive)
	chart := string(files["csi-node-proxy/Chart.yaml"])
	if !strings.Contains(chart, "\nversion: \"1.2.3\"\n") || !strings.Contains(chart, "\nappVersion: \"v1.2.3\"\n") || !strings.Contains(chart, "# ") {
		t.Errorf("Chart.yaml in the archive:\n%s", chart)
	}
	if p.FileName != "csi-node-proxy-1.2.3.tgz" || p.Metadata.Version != "1.2.3" || p.Metadata.AppVersion != "v1.2.3" {
		t.Errorf("file %s, metadata %+v", p.FileName, p.Metadata)
	}
	onDisk, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(onDisk), "1.2.3") {
		t.Error("Build changed Chart.yaml on disk")
	}
}

// TestIndexNamesVersionAndDigest: index.yaml lists the chart under its
// name with its version, appVersion, the archive's digest and URL.
func TestIndexNamesVersionAndDigest(t *testing.T) {
	p, err := Build(chartDir, "1.2.3", "v1.2.3", stamp)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ base, url string }{
		{"", "csi-node-proxy-1.2.3.tgz"},
		{"https://example.com/charts/", "https://example.com/charts/csi-node-proxy-1.2.3.tgz"},
	} {
		data, err := Index([]*Package{p}, tc.base, stamp)
		if err != nil {
			t.Fatal(err)
		}
		var idx index
		if err := yaml.UnmarshalStrict(data, &idx); err != nil {
			t.Fatalf("%v\n%s", err, data)
		}
		e := idx.Entries["csi-node-proxy"]
		if idx.APIVersion != "v1" || len(idx.Entries) != 1 || len(e) != 1 || idx.Generated != "2026-01-01T00:00:00Z" {
			t.Fatalf("index.yaml:\n%s", data)
		}
		if e[0].Version != "1.2.3" || e[0].AppVersion != "v1.2.3" || e[0].Digest != p.Digest || len(e[0].URLs) != 1 || e[0].URLs[0] != tc.url || e[0].APIVersion != "v2" || e[0].Created != idx.Generated {
			t.Errorf("entry %+v", e[0])
		}
	}
}

// TestBuildRefuses: a .helmignore (whose rules Build does not implement)
// and a Chart.yaml without one version line are errors, not a silently
// different package.
func TestBuildRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Chart.yaml", "apiVersion: v2\nname: x\nversion: 1.0.0\n")
	if _, err := Build(dir, "", "", stamp); err != nil {
		t.Fatalf("a minimal chart: %v", err)
	}
	if _, err := Build(dir, "", "v1", stamp); err == nil || !strings.Contains(err.Error(), "appVersion") {
		t.Errorf("setting an appVersion Chart.yaml lacks: %v", err)
	}
	write(".helmignore", "*.bak\n")
	if _, err := Build(dir, "", "", stamp); err == nil || !strings.Contains(err.Error(), ".helmignore") {
		t.Errorf("with .helmignore: %v", err)
	}
}
