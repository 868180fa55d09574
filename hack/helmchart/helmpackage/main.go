// Command helmpackage packages the Helm chart for a release and writes the
// chart repository's index.yaml next to it (package helmchart says how and
// why without helm). hack/release.sh runs it:
//
//	go run ./hack/helmchart/helmpackage -chart deploy/helm/csi-node-proxy \
//	    -out dist/charts -version 0.1.0 -app-version v0.1.0 -date 1700000000
//
// It prints the archive's name, size and SHA-256.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/hack/helmchart"
)

func main() {
	chartDir := flag.String("chart", "deploy/helm/csi-node-proxy", "the chart's directory")
	out := flag.String("out", "dist/charts", "directory for <name>-<version>.tgz and index.yaml (created)")
	version := flag.String("version", "", "the chart version in the archive (SemVer, no v); empty: Chart.yaml's")
	appVersion := flag.String("app-version", "", "the appVersion (image tag) in the archive; empty: Chart.yaml's")
	date := flag.Int64("date", 0, "Unix seconds stamped on every archive entry and in index.yaml (SOURCE_DATE_EPOCH); required, for reproducible output")
	baseURL := flag.String("url", "", "URL the archive is served under in index.yaml; empty: relative to index.yaml")
	flag.Parse()
	if flag.NArg() != 0 || *date <= 0 {
		fmt.Fprintln(os.Stderr, "usage: helmpackage -date UNIX-SECONDS [-chart DIR] [-out DIR] [-version V] [-app-version V] [-url URL]")
		os.Exit(2)
	}
	if err := run(*chartDir, *out, *version, *appVersion, *baseURL, time.Unix(*date, 0)); err != nil {
		fmt.Fprintln(os.Stderr, "helmpackage:", err)
		os.Exit(1)
	}
}

// run writes the archive and index.yaml.
func run(chartDir, out, version, appVersion, baseURL string, when time.Time) error {
	p, err := helmchart.Build(chartDir, version, appVersion, when)
	if err != nil {
		return err
	}
	idx, err := helmchart.Index([]*helmchart.Package{p}, baseURL, when)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, p.FileName), p.Archive, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "index.yaml"), idx, 0o644); err != nil {
		return err
	}
	fmt.Printf("%s %d bytes sha256:%s\n", filepath.Join(out, p.FileName), len(p.Archive), p.Digest)
	return nil
}
