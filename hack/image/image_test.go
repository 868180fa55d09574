package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"debug/pe"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

var allPlatforms = []Platform{{"linux", "amd64", ""}, {"linux", "arm64", "v8"}, {"windows", "amd64", ""}}

var (
	distOnce sync.Once
	distDir  string
	distErr  error
)

// compiledPlatforms are the platforms make test compiles the daemon for
// anyway (make cross): realDist builds real binaries for these.
var compiledPlatforms = []Platform{allPlatforms[0], allPlatforms[2]}

// realDist builds the daemon and the CLI once per test process, as make
// release does (static, -trimpath, stripped), for compiledPlatforms; go's
// build cache makes later runs a link each. GOFLAGS is kept, as make
// release keeps it, so that under make test (TEST_GOFLAGS) the packages
// compiled for the other builds serve these too. linux/arm64 gets stand-in
// files naming themselves as such: compiling the tree for linux/arm64 cost
// a cold make test about 120 CPU seconds, all of it for this test (issue
// 26), and the builder treats every platform's files alike (the other
// tests use stand-ins throughout). That the tree builds for linux/arm64 is
// checked by cmd/internal/platformcheck (a type check, in make unit) and by
// make release, which compiles it.
func realDist(t *testing.T) string {
	t.Helper()
	distOnce.Do(func() {
		distDir, distErr = os.MkdirTemp("", "imagetest-dist-")
		if distErr != nil {
			return
		}
		// The daemon and the CLI are in the cmd module.
		root, err := filepath.Abs("../../cmd")
		if err != nil {
			distErr = err
			return
		}
		for _, p := range allPlatforms {
			dir := filepath.Join(distDir, p.OS+"-"+p.Arch)
			if !slices.Contains(compiledPlatforms, p) {
				if distErr = os.MkdirAll(dir, 0o755); distErr != nil {
					return
				}
				for _, n := range []string{"csi-node-proxy", "csi-node-proxyctl"} {
					if distErr = os.WriteFile(filepath.Join(dir, n), []byte("stand-in "+n+" for "+p.String()+"\n"), 0o755); distErr != nil {
						return
					}
				}
				continue
			}
			cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", dir+string(filepath.Separator),
				"./csi-node-proxy", "./csi-node-proxyctl")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch, "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -buildvcs=false"))
			if out, err := cmd.CombinedOutput(); err != nil {
				distErr = errors.New(p.String() + ": " + err.Error() + "\n" + string(out))
				return
			}
		}
	})
	if distErr != nil {
		t.Fatalf("building the binaries: %v", distErr)
	}
	return distDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if distDir != "" {
		os.RemoveAll(distDir)
	}
	os.Exit(code)
}

var epoch = time.Unix(1700000000, 0).UTC()

func options(dist, out string) Options {
	return Options{Dist: dist, Out: out, License: "../../LICENSE", Platforms: allPlatforms,
		Version: "v1.2.3", Revision: "0123456789abcdef0123456789abcdef01234567", Created: epoch}
}

// TestImages builds the images twice from the real binaries (linux/arm64's
// are stand-ins, see realDist) and checks that the layouts are byte for
// byte the same, then what each image holds.
func TestImages(t *testing.T) {
	dist := realDist(t)
	out1, out2 := t.TempDir(), t.TempDir()
	r1, err := Build(options(dist, out1))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Build(options(dist, out2))
	if err != nil {
		t.Fatal(err)
	}
	if r1.Windows != r2.Windows || r1.Linux != r2.Linux || r1.All != r2.All {
		t.Errorf("two builds differ:\n%+v\n%+v", r1, r2)
	}
	if f1, f2 := treeHash(t, out1), treeHash(t, out2); !maps(f1, f2) {
		t.Errorf("two builds wrote different layouts")
	}

	// The real binaries are of their platform: the builder copies what it
	// is given, so this is the build above being right.
	for _, p := range compiledPlatforms {
		checkMachine(t, filepath.Join(dist, p.OS+"-"+p.Arch), p)
	}

	license, err := os.ReadFile("../../LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	read := func(p Platform, name string) []byte {
		b, err := os.ReadFile(filepath.Join(dist, p.OS+"-"+p.Arch, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	// windows/: one image, windows/amd64, no os.version.
	win := onlyEntry(t, filepath.Join(out1, WindowsLayout), r1.Windows)
	if win.MediaType != types.OCIManifestSchema1 || win.Platform == nil || win.Platform.OS != "windows" ||
		win.Platform.Architecture != "amd64" || win.Platform.OSVersion != "" {
		t.Errorf("windows layout entry: %+v platform %+v", win, win.Platform)
	}
	wp := allPlatforms[2]
	checkImage(t, image(t, filepath.Join(out1, WindowsLayout), r1.Windows), wp, []string{WindowsEntrypoint}, WindowsUser, nil, []file{
		{"Files/", tar.TypeDir, 0o755, nil},
		{"Files/LICENSE", tar.TypeReg, 0o644, license},
		{"Files/Windows/", tar.TypeDir, 0o755, nil},
		{"Files/Windows/System32/", tar.TypeDir, 0o755, nil},
		{"Files/Windows/System32/config/", tar.TypeDir, 0o755, nil},
		{"Files/Windows/System32/config/DEFAULT", tar.TypeReg, 0o644, []byte{}},
		{"Files/Windows/System32/config/SAM", tar.TypeReg, 0o644, []byte{}},
		{"Files/Windows/System32/config/SECURITY", tar.TypeReg, 0o644, []byte{}},
		{"Files/Windows/System32/config/SOFTWARE", tar.TypeReg, 0o644, []byte{}},
		{"Files/Windows/System32/config/SYSTEM", tar.TypeReg, 0o644, []byte{}},
		{"Files/csi-node-proxy.exe", tar.TypeReg, 0o755, read(wp, "csi-node-proxy.exe")},
		{"Files/csi-node-proxyctl.exe", tar.TypeReg, 0o755, read(wp, "csi-node-proxyctl.exe")},
		{"Hives/", tar.TypeDir, 0o755, nil},
	})

	// linux/: an index of linux/amd64 and linux/arm64/v8.
	lin := onlyEntry(t, filepath.Join(out1, LinuxLayout), r1.Linux)
	if lin.MediaType != types.OCIImageIndex {
		t.Errorf("linux layout entry media type %s, want an OCI index", lin.MediaType)
	}
	lidx := index(t, filepath.Join(out1, LinuxLayout), r1.Linux)
	checkIndex(t, lidx, allPlatforms[:2], r1.Images)
	for _, p := range allPlatforms[:2] {
		img, err := lidx.Image(r1.Images[p.String()])
		if err != nil {
			t.Fatal(err)
		}
		checkImage(t, img, p, []string{LinuxEntrypoint}, LinuxUser, []string{LinuxPath}, []file{
			{"usr/", tar.TypeDir, 0o755, nil},
			{"usr/local/", tar.TypeDir, 0o755, nil},
			{"usr/local/bin/", tar.TypeDir, 0o755, nil},
			{"usr/local/bin/csi-node-proxy", tar.TypeReg, 0o755, read(p, "csi-node-proxy")},
			{"usr/local/bin/csi-node-proxyctl", tar.TypeReg, 0o755, read(p, "csi-node-proxyctl")},
			{"usr/share/", tar.TypeDir, 0o755, nil},
			{"usr/share/doc/", tar.TypeDir, 0o755, nil},
			{"usr/share/doc/csi-node-proxy/", tar.TypeDir, 0o755, nil},
			{"usr/share/doc/csi-node-proxy/LICENSE", tar.TypeReg, 0o644, license},
		})
	}

	// all/: the same three images under one index.
	onlyEntry(t, filepath.Join(out1, AllLayout), r1.All)
	checkIndex(t, index(t, filepath.Join(out1, AllLayout), r1.All), allPlatforms, r1.Images)
	if r1.Images["windows/amd64"] != r1.Windows {
		t.Errorf("all/ names windows image %s, windows/ holds %s", r1.Images["windows/amd64"], r1.Windows)
	}
}

// TestDigestFollowsInputs: the digest is reproducible because it depends on
// the inputs alone, and it does depend on each of them.
func TestDigestFollowsInputs(t *testing.T) {
	dist := fakeDist(t, "a")
	o := options(dist, t.TempDir())
	base, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	// Files written later, with other modes and times, change nothing.
	for _, p := range allPlatforms {
		dir := filepath.Join(dist, p.OS+"-"+p.Arch)
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			f := filepath.Join(dir, e.Name())
			os.Chmod(f, 0o700)
			os.Chtimes(f, time.Now(), time.Now())
		}
	}
	again, err := Build(options(dist, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if again.All != base.All {
		t.Errorf("file modes and times on disk changed the digest: %s, then %s", base.All, again.All)
	}
	o2 := options(dist, t.TempDir())
	o2.Created = epoch.Add(time.Second)
	later, err := Build(o2)
	if err != nil {
		t.Fatal(err)
	}
	if later.All == base.All || later.Windows == base.Windows || later.Linux == base.Linux {
		t.Errorf("another creation time gave the same digest")
	}
	other, err := Build(options(fakeDist(t, "b"), t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if other.Windows == base.Windows || other.Images["linux/arm64/v8"] == base.Images["linux/arm64/v8"] {
		t.Errorf("other binaries gave the same digest")
	}
}

// TestPlatformsSubset: make release-style subsets write only their layouts.
func TestPlatformsSubset(t *testing.T) {
	out := t.TempDir()
	o := options(fakeDist(t, "a"), out)
	o.Platforms = allPlatforms[:1]
	r, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Windows != (v1.Hash{}) {
		t.Errorf("windows image built for linux/amd64 alone")
	}
	if _, err := os.Stat(filepath.Join(out, WindowsLayout)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("windows/ written for linux/amd64 alone: %v", err)
	}
	checkIndex(t, index(t, filepath.Join(out, LinuxLayout), r.Linux), allPlatforms[:1], r.Images)

	o.Platforms = nil
	if _, err := Build(o); err == nil {
		t.Error("no platforms: built anyway")
	}
	o.Platforms, o.Created = allPlatforms, time.Time{}
	if _, err := Build(o); err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
		t.Errorf("no creation time: %v", err)
	}
	o.Created = epoch
	os.Remove(filepath.Join(o.Dist, "linux-arm64", "csi-node-proxyctl"))
	if _, err := Build(o); err == nil || !strings.Contains(err.Error(), "linux/arm64") {
		t.Errorf("missing CLI binary: %v", err)
	}
}

// TestOnBase puts the binaries on base images (what -linux-base and
// -windows-base do with, say, the image images/linux/Dockerfile builds): the
// base's layers come first, its settings stay, the daemon is the entrypoint.
func TestOnBase(t *testing.T) {
	dist := fakeDist(t, "a")
	baseDir := t.TempDir()
	tools, err := tarLayer([]entry{{name: "usr/sbin/mkfs.ext4", mode: 0o755, data: []byte("#!fake")}}, epoch)
	if err != nil {
		t.Fatal(err)
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range allPlatforms {
		cf := &v1.ConfigFile{OS: p.OS, Architecture: p.Arch, OSVersion: "10.0.20348.1", RootFS: v1.RootFS{Type: "layers"},
			Config: v1.Config{Env: []string{"PATH=/base/bin", "LANG=C.UTF-8"}, Cmd: []string{"bash"}, WorkingDir: "/w", Labels: map[string]string{"base": "yes"}}}
		img, err := mutate.ConfigFile(mutate.MediaType(empty.Image, types.OCIManifestSchema1), cf)
		if err != nil {
			t.Fatal(err)
		}
		if img, err = mutate.AppendLayers(img, tools); err != nil {
			t.Fatal(err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img})
	}
	if _, err := layout.Write(baseDir, idx); err != nil {
		t.Fatal(err)
	}
	o := options(dist, t.TempDir())
	o.LinuxBase, o.WindowsBase = baseDir, baseDir
	r, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	all := index(t, filepath.Join(o.Out, AllLayout), r.All)
	toolsDigest, _ := tools.Digest()
	for _, p := range allPlatforms {
		img, err := all.Image(r.Images[p.String()])
		if err != nil {
			t.Fatal(err)
		}
		layers, _ := img.Layers()
		if len(layers) != 2 {
			t.Fatalf("%s: %d layers, want the base's and ours", p, len(layers))
		}
		if d, _ := layers[0].Digest(); d != toolsDigest {
			t.Errorf("%s: first layer %s, want the base's %s", p, d, toolsDigest)
		}
		cf, _ := img.ConfigFile()
		c := cf.Config
		if !slices.Equal(c.Env, []string{"PATH=/base/bin", "LANG=C.UTF-8"}) || c.Cmd != nil || c.WorkingDir != "/w" ||
			c.Labels["base"] != "yes" || c.Labels["org.opencontainers.image.version"] != "v1.2.3" || cf.OSVersion != "" ||
			len(cf.History) != 2 || !cf.History[1].Created.Equal(epoch) || len(cf.RootFS.DiffIDs) != 2 {
			t.Errorf("%s: config %+v, history %d, diff IDs %d", p, cf, len(cf.History), len(cf.RootFS.DiffIDs))
		}
		names := layerNames(t, layers[1])
		if p.OS == "windows" && slices.Contains(names, "Files/Windows/System32/config/SYSTEM") {
			t.Errorf("windows on a base: our layer carries base-layer hives: %v", names)
		}
	}

	o.LinuxBase = t.TempDir()
	if _, err := Build(o); err == nil {
		t.Error("a base directory without a layout: built anyway")
	}
	// A base without an image for a platform is refused, not skipped.
	one := t.TempDir()
	o.LinuxBase = one
	img, _ := all.Image(r.Images["linux/amd64"])
	if _, err := layout.Write(one, mutate.AppendManifests(empty.Index, mutate.IndexAddendum{Add: img})); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(o); err == nil || !strings.Contains(err.Error(), "no image for linux/arm64") {
		t.Errorf("base without linux/arm64: %v", err)
	}
}

func TestRun(t *testing.T) {
	dist := fakeDist(t, "a")
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"-dist", dist, "-out", out, "-license", "../../LICENSE", "-version", "v1", "-revision", "abc", "-source-date-epoch", "1700000000", "-platforms", "linux/amd64,windows/amd64"}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("run: %d, %s", code, stderr.String())
	}
	for _, want := range []string{"linux/amd64", "windows/amd64", "/windows (windows/amd64 image) sha256:", "/linux (Linux index) sha256:", "/all (index of all) sha256:"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	for _, bad := range [][]string{
		{"-platforms", "darwin/arm64"},
		{"-platforms", "windows/arm64"},
		{"-source-date-epoch", "yesterday"},
		{"-version", ""},
		{"extra"},
	} {
		stderr.Reset()
		if code := run(append(slices.Clone(args), bad...), io.Discard, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", bad, code, stderr.String())
		}
	}
}

// fakeDist writes small stand-in binaries whose contents depend on tag, for
// the tests that are about digests and layouts rather than the real files.
// checkMachine checks that the daemon and the CLI in dir are executables
// for p: ELF for linux, PE for windows, of p's architecture (amd64 only:
// realDist builds no other).
func checkMachine(t *testing.T, dir string, p Platform) {
	t.Helper()
	for _, n := range []string{"csi-node-proxy", "csi-node-proxyctl"} {
		name := filepath.Join(dir, n)
		switch {
		case p.OS == "linux" && p.Arch == "amd64":
			f, err := elf.Open(name)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if f.Machine != elf.EM_X86_64 || f.Type != elf.ET_EXEC {
				t.Errorf("%s: ELF machine %v type %v, want an x86-64 executable (static)", name, f.Machine, f.Type)
			}
			f.Close()
		case p.OS == "windows" && p.Arch == "amd64":
			f, err := pe.Open(name + ".exe")
			if err != nil {
				t.Errorf("%s.exe: %v", name, err)
				continue
			}
			if f.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
				t.Errorf("%s.exe: PE machine %#x, want AMD64", name, f.Machine)
			}
			f.Close()
		default:
			t.Errorf("checkMachine: no check for %s", p)
		}
	}
}

func fakeDist(t *testing.T, tag string) string {
	t.Helper()
	dir := t.TempDir()
	for _, p := range allPlatforms {
		exe := ""
		if p.OS == "windows" {
			exe = ".exe"
		}
		d := filepath.Join(dir, p.OS+"-"+p.Arch)
		os.MkdirAll(d, 0o755)
		for _, n := range []string{"csi-node-proxy", "csi-node-proxyctl"} {
			if err := os.WriteFile(filepath.Join(d, n+exe), []byte(tag+" "+n+" "+p.String()), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

type file struct {
	name string
	typ  byte
	mode int64
	data []byte
}

func checkImage(t *testing.T, img v1.Image, p Platform, entrypoint []string, user string, env []string, want []file) {
	t.Helper()
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON {
		t.Errorf("%s: manifest %s, config %s: want OCI", p, m.MediaType, m.Config.MediaType)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.OS != p.OS || cf.Architecture != p.Arch || cf.Variant != p.Variant || cf.OSVersion != "" {
		t.Errorf("%s: config platform %s/%s/%s os.version %q", p, cf.OS, cf.Architecture, cf.Variant, cf.OSVersion)
	}
	c := cf.Config
	if !slices.Equal(c.Entrypoint, entrypoint) || c.Cmd != nil || c.User != user || !slices.Equal(c.Env, env) {
		t.Errorf("%s: entrypoint %q cmd %q user %q env %q", p, c.Entrypoint, c.Cmd, c.User, c.Env)
	}
	if !cf.Created.Equal(epoch) || len(cf.History) != 1 || !cf.History[0].Created.Equal(epoch) {
		t.Errorf("%s: created %v, history %+v", p, cf.Created, cf.History)
	}
	if c.Labels["org.opencontainers.image.version"] != "v1.2.3" || c.Labels["org.opencontainers.image.licenses"] != "Apache-2.0" ||
		c.Labels["org.opencontainers.image.revision"] != "0123456789abcdef0123456789abcdef01234567" {
		t.Errorf("%s: labels %v", p, c.Labels)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%s: layers %d, %v; want 1", p, len(layers), err)
	}
	if mt, _ := layers[0].MediaType(); mt != types.OCILayer {
		t.Errorf("%s: layer media type %s", p, mt)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	var got []file
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeDir {
			data = nil
		}
		got = append(got, file{h.Name, h.Typeflag, h.Mode, data})
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" || !h.ModTime.Equal(epoch) {
			t.Errorf("%s: %s: owner %d:%d (%q:%q), mtime %v", p, h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime)
		}
		if sd := h.PAXRecords["MSWINDOWS.rawsd"]; (p.OS == "windows") != (sd == windowsRawSD) {
			t.Errorf("%s: %s: security descriptor %q", p, h.Name, sd)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: layer has %d entries, want %d: %v", p, len(got), len(want), names(got))
	}
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		if g.name != w.name || g.typ != w.typ || g.mode != w.mode || !bytes.Equal(g.data, w.data) {
			t.Errorf("%s: entry %d: %s type %c mode %o (%d bytes), want %s type %c mode %o (%d bytes)",
				p, i, g.name, g.typ, g.mode, len(g.data), w.name, w.typ, w.mode, len(w.data))
		}
	}
}

func checkIndex(t *testing.T, idx v1.ImageIndex, want []Platform, digests map[string]v1.Hash) {
	t.Helper()
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIImageIndex || len(m.Manifests) != len(want) {
		t.Fatalf("index %s with %d manifests, want OCI with %d", m.MediaType, len(m.Manifests), len(want))
	}
	for i, d := range m.Manifests {
		p := want[i]
		if d.Platform == nil || d.Platform.OS != p.OS || d.Platform.Architecture != p.Arch || d.Platform.Variant != p.Variant ||
			d.Platform.OSVersion != "" || d.Digest != digests[p.String()] || d.MediaType != types.OCIManifestSchema1 {
			t.Errorf("index entry %d: %+v platform %+v, want %s %s", i, d, d.Platform, p, digests[p.String()])
		}
	}
}

// onlyEntry checks dir is an OCI layout whose index.json has the one entry want.
func onlyEntry(t *testing.T, dir string, want v1.Hash) v1.Descriptor {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(dir, "oci-layout")); err != nil || !strings.Contains(string(b), `"imageLayoutVersion": "1.0.0"`) {
		t.Errorf("%s/oci-layout: %q, %v", dir, b, err)
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Digest != want {
		t.Fatalf("%s: index.json %+v, want one entry %s", dir, m.Manifests, want)
	}
	return m.Manifests[0]
}

func image(t *testing.T, dir string, d v1.Hash) v1.Image {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	img, err := idx.Image(d)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func index(t *testing.T, dir string, d v1.Hash) v1.ImageIndex {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	child, err := idx.ImageIndex(d)
	if err != nil {
		t.Fatal(err)
	}
	return child
}

func layerNames(t *testing.T, l v1.Layer) []string {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var ns []string
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return ns
		}
		if err != nil {
			t.Fatal(err)
		}
		ns = append(ns, h.Name)
	}
}

func names(fs []file) []string {
	var ns []string
	for _, f := range fs {
		ns = append(ns, f.name)
	}
	return ns
}

// treeHash maps every file under dir (relative path) to its contents.
func treeHash(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		m[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// compressedLayers returns img's layers and the sum of their compressed
// sizes (what a pull downloads), failing t when the image cannot say:
// the figure the push and rootfs tests log.
func compressedLayers(t *testing.T, img v1.Image) ([]v1.Layer, int64) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var compressed int64
	for _, l := range layers {
		n, err := l.Size()
		if err != nil {
			t.Fatal(err)
		}
		compressed += n
	}
	return layers, compressed
}
