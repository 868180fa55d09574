package main

import (
	"bytes"
	"io"
	"log"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestPushToInProcessRegistry builds the linux/amd64 image alone (the
// one-platform build make image PLATFORMS=linux/amd64 does), pushes it
// with -push to a registry served in this process
// (go-containerregistry's pkg/registry), and pulls it back: the tag is
// the release version and the pushed index is the one written to all/.
func TestPushToInProcessRegistry(t *testing.T) {
	dist := realDist(t)
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	u, err := url.Parse(reg.URL)
	if err != nil {
		t.Fatal(err)
	}
	repo := u.Host + "/csi-node-proxy/csi-node-proxy" // 127.0.0.1:PORT: plain HTTP
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"-dist", dist, "-out", out, "-license", "../../LICENSE", "-platforms", "linux/amd64",
		"-version", "v0.1.0", "-revision", "0123456789abcdef0123456789abcdef01234567", "-source-date-epoch", "1700000000",
		"-push", repo}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("image -push exited %d: %s%s", code, stdout.String(), stderr.String())
	}
	t.Logf("%s", stdout.String())
	if !strings.Contains(stdout.String(), "pushed "+repo+":v0.1.0 ") {
		t.Errorf("output does not name the pushed tag:\n%s", stdout.String())
	}

	ref, err := name.ParseReference(repo + ":v0.1.0")
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	got, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	want := onlyEntry(t, out+"/"+AllLayout, got).Digest
	if got != want {
		t.Errorf("pushed index %s, all/ holds %s", got, want)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Platform == nil || m.Manifests[0].Platform.String() != "linux/amd64" {
		t.Fatalf("pushed index manifests: %+v", m.Manifests)
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if v := cf.Config.Labels["org.opencontainers.image.version"]; v != "v0.1.0" {
		t.Errorf("pushed image's version label = %q", v)
	}
	size, err := img.Size()
	if err != nil {
		t.Fatal(err)
	}
	layers, compressed := compressedLayers(t, img)
	t.Logf("linux/amd64 image: manifest %d bytes, %d layer(s), %d bytes compressed", size, len(layers), compressed)

	// A repository that is not a reference is refused before anything is
	// sent.
	if code := run([]string{"-dist", dist, "-out", t.TempDir(), "-license", "../../LICENSE", "-platforms", "linux/amd64",
		"-version", "v0.1.0", "-revision", "r", "-source-date-epoch", "1", "-push", "UPPER/Case"}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "push:") {
		t.Errorf("bad repository: exit %d, %s", code, stderr.String())
	}
}

// TestVersionFileMatchesManifests: VERSION is the one place the release
// version is written; make image tags the images with it, and every
// manifest that runs the image, and the chart's appVersion, name the same.
func TestVersionFileMatchesManifests(t *testing.T) {
	b, err := os.ReadFile("../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(b))
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).MatchString(version) {
		t.Fatalf("VERSION %q is not vMAJOR.MINOR.PATCH", version)
	}
	image := regexp.MustCompile(`image: ghcr\.io/csi-node-proxy/csi-node-proxy:(\S+)`)
	for _, f := range []string{"../../deploy/linux/csi-node-proxy.yaml", "../../deploy/windows/csi-node-proxy.yaml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ms := image.FindAllStringSubmatch(string(b), -1)
		if len(ms) == 0 {
			t.Errorf("%s names no csi-node-proxy image", f)
		}
		for _, m := range ms {
			if m[1] != version {
				t.Errorf("%s runs :%s, VERSION says %s", f, m[1], version)
			}
		}
	}
	chart, err := os.ReadFile("../../deploy/helm/csi-node-proxy/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^appVersion:\s*"?([^"\s]+)`).FindSubmatch(chart); m == nil || string(m[1]) != version {
		t.Errorf("Chart.yaml appVersion = %q, VERSION says %s", m, version)
	}
}

// TestMakeImagePushes runs make image as an operator would, for one
// platform and with PUSH naming a registry served in this process, and
// pulls the tag VERSION names back. It builds the release binaries for
// linux/amd64, so -short skips it. It leaves out the Debian tool layer
// (LINUX_TOOLS=0): TestLinuxImageFormatsWithItsOwnTools builds and runs
// that layer, and building it again here took 26 of make image's 31 s.
func TestMakeImagePushes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: make image builds the release binaries")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	u, err := url.Parse(reg.URL)
	if err != nil {
		t.Fatal(err)
	}
	repo := u.Host + "/csi-node-proxy"
	dist := t.TempDir()
	start := time.Now()
	cmd := exec.Command("make", "-C", "../..", "image", "PLATFORMS=linux/amd64", "PUSH="+repo)
	cmd.Env = append(os.Environ(), "DIST="+dist, "LINUX_TOOLS=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	t.Logf("make image PLATFORMS=linux/amd64 PUSH=%s took %s", repo, time.Since(start).Round(time.Second))
	b, err := os.ReadFile("../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(repo + ":" + strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatalf("pull %s after make image: %v\n%s", ref, err, out)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Platform.String() != "linux/amd64" {
		t.Errorf("pushed index: %+v", m.Manifests)
	}
}
