package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Where the images put things. The deploy manifests and images/linux/Dockerfile
// name the same paths; the tests hold them together.
const (
	// LinuxEntrypoint is the daemon in the Linux image (deploy/linux/csi-node-proxy.yaml's command).
	LinuxEntrypoint = "/usr/local/bin/csi-node-proxy"
	// LinuxUser is root: mount(2), block-device ioctls and sysfs writes need it,
	// and the DaemonSet runs the container privileged anyway.
	LinuxUser = "0:0"
	// LinuxPath lets the daemon find mkfs.ext4, mkfs.xfs and iscsiadm when the
	// image has a base that carries them (Debian puts them in /usr/sbin and /sbin).
	LinuxPath = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	// WindowsEntrypoint is relative: a HostProcess container starts in the
	// directory holding the image's files (%CONTAINER_SANDBOX_MOUNT_POINT%, C:\hpc
	// with containerd 1.7+), which differs between containerd 1.6 and 1.7.
	WindowsEntrypoint = "csi-node-proxy.exe"
	// WindowsUser is what upstream's csiproxy service and the DaemonSet run as:
	// disk, volume and SMB calls need an administrator.
	WindowsUser = `NT AUTHORITY\SYSTEM`
	// Source is the repository the labels point at.
	Source = "https://github.com/csi-node-proxy/csi-node-proxy"
)

// windowsRawSD is a self-relative security descriptor, owner and group
// BUILTIN\Users (SDDL O:BUG:BU), in the PAX record Windows' layer import reads
// (MSWINDOWS.rawsd). Without one, hcsshim gives files a descriptor under which
// the binary does not execute; this value is the one ko and go-containerregistry
// write for the same reason.
const windowsRawSD = "AQAAgBQAAAAkAAAAAAAAAAAAAAABAgAAAAAABSAAAAAhAgAAAQIAAAAAAAUgAAAAIQIAAA=="

// windowsHives are the registry hive files Windows' ProcessBaseLayer looks for
// when it unpacks a layer that has no parent. Microsoft's HostProcess base
// image v1.0.0 ships them empty, which Windows Server 2019 and 2022 accept;
// Windows Server 2025 wants real (minimal) hives, so put the image on that base
// image there (-windows-base, docs/images.md).
var windowsHives = []string{"DEFAULT", "SAM", "SECURITY", "SOFTWARE", "SYSTEM"}

// Platform is one os/arch an image is built for.
type Platform struct {
	OS, Arch, Variant string
}

// String is the os/arch[/variant] spelling of -platforms and RELEASE_TARGETS.
func (p Platform) String() string {
	if p.Variant != "" {
		return p.OS + "/" + p.Arch + "/" + p.Variant
	}
	return p.OS + "/" + p.Arch
}

// ParsePlatform reads os/arch; arm64 gets variant v8, as Docker and
// containerd record it, so both normalise to the same platform.
func ParsePlatform(s string) (Platform, error) {
	os, arch, ok := strings.Cut(strings.TrimSpace(s), "/")
	switch {
	case !ok || strings.Contains(arch, "/"):
		return Platform{}, fmt.Errorf("platform %q: want os/arch", s)
	case os == "linux" && (arch == "amd64" || arch == "arm64"), os == "windows" && arch == "amd64":
	default:
		return Platform{}, fmt.Errorf("platform %q: images are built for linux/amd64, linux/arm64 and windows/amd64 only", s)
	}
	p := Platform{OS: os, Arch: arch}
	if arch == "arm64" {
		p.Variant = "v8"
	}
	return p, nil
}

// Options say what to build from and where to write it.
type Options struct {
	// Dist is make release's output: <os>-<arch>/csi-node-proxy[.exe] and
	// csi-node-proxyctl[.exe] for every platform.
	Dist string
	// Out receives one OCI image layout per artifact (see Build).
	Out string
	// License is put in every image (Apache-2.0 asks that copies carry it).
	License string
	// Platforms to build; at least one.
	Platforms []Platform
	// Version and Revision go into the org.opencontainers.image labels.
	Version, Revision string
	// Created is every timestamp in the images: config, history and tar
	// entries. Two builds with the same inputs and Created are identical.
	Created time.Time
	// LinuxBase and WindowsBase, when set, are OCI image layouts whose image
	// for each platform the binaries are put on; otherwise the binaries are
	// the only layer.
	LinuxBase, WindowsBase string
	// LinuxRootFS, when set, is a directory (hack/image/debian/rootfs.sh's
	// OUT/rootfs: the pinned Debian amd64 packages of e2fsprogs, xfsprogs,
	// util-linux and open-iscsi, unpacked) whose tree becomes the
	// linux/amd64 image's first layer, under the binaries. Other
	// platforms are built without it.
	LinuxRootFS string
}

// Result holds the digest each written layout's single entry has.
type Result struct {
	// Windows is the windows/amd64 image (zero if not built).
	Windows v1.Hash
	// Linux is the index of the Linux images (zero if none was built).
	Linux v1.Hash
	// All is the index of every image built, for one tag serving both OSes.
	All v1.Hash
	// Images are the per-platform image digests, by Platform.String().
	Images map[string]v1.Hash
}

// Layout directory names under Options.Out.
const (
	WindowsLayout = "windows"
	LinuxLayout   = "linux"
	AllLayout     = "all"
)

// Build writes, under o.Out, the OCI image layouts windows/ (the Windows
// HostProcess image), linux/ (an index of the Linux images) and all/ (an index
// of every image), each with exactly one entry in its index.json, so `crane
// push DIR REF` and `skopeo copy oci:DIR docker://REF` push it as it is.
// Layouts of platforms not built are not written; existing ones are replaced.
func Build(o Options) (Result, error) {
	if len(o.Platforms) == 0 {
		return Result{}, errors.New("no platforms to build")
	}
	if o.Created.IsZero() {
		return Result{}, errors.New("no creation time: reproducible images need a fixed one (SOURCE_DATE_EPOCH)")
	}
	license, err := os.ReadFile(o.License)
	if err != nil {
		return Result{}, fmt.Errorf("license: %w", err)
	}
	res := Result{Images: map[string]v1.Hash{}}
	all := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	linux := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var windows v1.Image
	var nLinux int
	for _, p := range o.Platforms {
		img, err := buildImage(o, p, license)
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", p, err)
		}
		d, err := img.Digest()
		if err != nil {
			return Result{}, fmt.Errorf("%s: %w", p, err)
		}
		res.Images[p.String()] = d
		add := mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: p.OS, Architecture: p.Arch, Variant: p.Variant}}}
		all = mutate.AppendManifests(all, add)
		if p.OS == "windows" {
			windows = img
		} else {
			linux = mutate.AppendManifests(linux, add)
			nLinux++
		}
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return Result{}, err
	}
	if windows != nil {
		res.Windows, err = writeLayout(filepath.Join(o.Out, WindowsLayout), windows)
		if err != nil {
			return Result{}, err
		}
	}
	if nLinux > 0 {
		if res.Linux, err = writeLayout(filepath.Join(o.Out, LinuxLayout), linux); err != nil {
			return Result{}, err
		}
	}
	if res.All, err = writeLayout(filepath.Join(o.Out, AllLayout), all); err != nil {
		return Result{}, err
	}
	return res, nil
}

// writeLayout replaces dir with an OCI layout holding just what (an image or
// an index) and returns its digest.
func writeLayout(dir string, what interface{ Digest() (v1.Hash, error) }) (v1.Hash, error) {
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("layout %s: %w", dir, err)
	}
	switch w := what.(type) {
	case v1.Image:
		cf, err := w.ConfigFile()
		if err != nil {
			return v1.Hash{}, err
		}
		err = p.AppendImage(w, layout.WithPlatform(v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant}))
		if err != nil {
			return v1.Hash{}, fmt.Errorf("layout %s: %w", dir, err)
		}
	case v1.ImageIndex:
		if err := p.AppendIndex(w); err != nil {
			return v1.Hash{}, fmt.Errorf("layout %s: %w", dir, err)
		}
	}
	return what.Digest()
}

// buildImage puts the platform's binaries (and the license) in one layer, on
// the platform's base image if one is given, else alone.
func buildImage(o Options, p Platform, license []byte) (v1.Image, error) {
	dir := filepath.Join(o.Dist, p.OS+"-"+p.Arch)
	exe := ""
	if p.OS == "windows" {
		exe = ".exe"
	}
	daemon, err := os.ReadFile(filepath.Join(dir, "csi-node-proxy"+exe))
	if err != nil {
		return nil, err
	}
	ctl, err := os.ReadFile(filepath.Join(dir, "csi-node-proxyctl"+exe))
	if err != nil {
		return nil, err
	}

	baseDir := o.LinuxBase
	if p.OS == "windows" {
		baseDir = o.WindowsBase
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	cf := &v1.ConfigFile{RootFS: v1.RootFS{Type: "layers"}}
	if baseDir != "" {
		if base, err = baseImage(baseDir, p); err != nil {
			return nil, fmt.Errorf("base %s: %w", baseDir, err)
		}
		if cf, err = base.ConfigFile(); err != nil {
			return nil, fmt.Errorf("base %s: %w", baseDir, err)
		}
		cf = cf.DeepCopy()
	}

	var files []entry
	var cfg v1.Config
	if p.OS == "windows" {
		files = windowsFiles(daemon, ctl, license, baseDir == "")
		cfg = v1.Config{Entrypoint: []string{WindowsEntrypoint}, User: WindowsUser}
	} else {
		files = linuxFiles(daemon, ctl, license)
		cfg = v1.Config{Entrypoint: []string{LinuxEntrypoint}, User: LinuxUser, Env: []string{LinuxPath}}
	}
	layer, err := tarLayer(files, o.Created)
	if err != nil {
		return nil, err
	}
	if o.LinuxRootFS != "" && p.OS == "linux" && p.Arch == "amd64" {
		tools, err := dirEntries(o.LinuxRootFS)
		if err != nil {
			return nil, fmt.Errorf("linux rootfs: %w", err)
		}
		toolLayer, err := tarLayer(tools, o.Created)
		if err != nil {
			return nil, err
		}
		if base, err = mutate.Append(base, mutate.Addendum{Layer: toolLayer, History: v1.History{
			Created:   v1.Time{Time: o.Created},
			CreatedBy: "hack/image: Debian packages of hack/image/debian/bookworm-amd64.lock",
		}}); err != nil {
			return nil, err
		}
		if cf, err = base.ConfigFile(); err != nil {
			return nil, err
		}
		cf = cf.DeepCopy()
	}

	// The base's settings stay (its PATH, its WorkingDir) except what says how
	// to run the daemon; its Cmd would become the daemon's arguments, so it goes.
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Arch, p.Variant
	// No os.version: a HostProcess container runs on the host's kernel whatever
	// its version, and containerd on Windows refuses an image whose os.version
	// names another build than the host's.
	cf.OSVersion = ""
	cf.Created = v1.Time{Time: o.Created}
	cf.Config.Entrypoint = cfg.Entrypoint
	cf.Config.Cmd = nil
	cf.Config.User = cfg.User
	if !slices.ContainsFunc(cf.Config.Env, func(e string) bool { return strings.HasPrefix(e, "PATH=") }) {
		cf.Config.Env = append(cf.Config.Env, cfg.Env...)
	}
	if cf.Config.Labels == nil {
		cf.Config.Labels = map[string]string{}
	}
	for k, v := range labels(o) {
		cf.Config.Labels[k] = v
	}
	img, err := mutate.ConfigFile(base, cf)
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   v1.Time{Time: o.Created},
			CreatedBy: "hack/image: csi-node-proxy " + o.Version + " binaries",
			Comment:   "built without a container engine (docs/images.md)",
		},
	})
}

// labels are the OCI annotation keys, as image labels, that registries and
// scanners show.
func labels(o Options) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":    "csi-node-proxy",
		"org.opencontainers.image.version":  o.Version,
		"org.opencontainers.image.revision": o.Revision,
		"org.opencontainers.image.created":  o.Created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.source":   Source,
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
}

// baseImage picks p's image from the OCI layout in dir, descending into
// nested indexes (crane pull --format=oci writes an index of an index).
func baseImage(dir string, p Platform) (v1.Image, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	img, err := findImage(idx, p)
	if err != nil {
		return nil, err
	}
	if img == nil {
		return nil, fmt.Errorf("no image for %s", p)
	}
	return img, nil
}

func findImage(idx v1.ImageIndex, p Platform) (v1.Image, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range m.Manifests {
		switch {
		case d.MediaType.IsIndex():
			child, err := idx.ImageIndex(d.Digest)
			if err != nil {
				return nil, err
			}
			if img, err := findImage(child, p); img != nil || err != nil {
				return img, err
			}
		case d.MediaType.IsImage():
			img, err := idx.Image(d.Digest)
			if err != nil {
				return nil, err
			}
			cf, err := img.ConfigFile()
			if err != nil {
				return nil, err
			}
			// A missing arm64 variant means v8, as containerd normalises it.
			variant := cf.Variant
			if cf.Architecture == "arm64" && variant == "" {
				variant = "v8"
			}
			if cf.OS == p.OS && cf.Architecture == p.Arch && variant == p.Variant {
				return img, nil
			}
		}
	}
	return nil, nil
}

// entry is one file, directory or symbolic link of a layer.
type entry struct {
	name string
	mode int64
	dir  bool
	data []byte
	pax  map[string]string
	// link, when set, makes the entry a symbolic link to it.
	link string
}

// dirEntries reads the tree under root as layer entries: directories,
// regular files (hard links become copies) and symbolic links, with
// their permission bits; owners, times and other file types are not kept,
// so the layer depends on the tree's content alone.
func dirEntries(root string) ([]entry, error) {
	var out []entry
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		perm := int64(info.Mode().Perm())
		for bit, unixBit := range map[os.FileMode]int64{os.ModeSetuid: 0o4000, os.ModeSetgid: 0o2000, os.ModeSticky: 0o1000} {
			if info.Mode()&bit != 0 {
				perm |= unixBit
			}
		}
		switch {
		case d.IsDir():
			out = append(out, entry{name: name + "/", mode: int64(info.Mode().Perm()), dir: true})
		case info.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out = append(out, entry{name: name, mode: 0o777, link: target})
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out = append(out, entry{name: name, mode: perm, data: data})
		default:
			return fmt.Errorf("%s: a %s, not a file, directory or link", name, info.Mode().Type())
		}
		return nil
	})
	return out, err
}

func linuxFiles(daemon, ctl, license []byte) []entry {
	return []entry{
		{name: "usr/", mode: 0o755, dir: true},
		{name: "usr/local/", mode: 0o755, dir: true},
		{name: "usr/local/bin/", mode: 0o755, dir: true},
		{name: "usr/local/bin/csi-node-proxy", mode: 0o755, data: daemon},
		{name: "usr/local/bin/csi-node-proxyctl", mode: 0o755, data: ctl},
		{name: "usr/share/", mode: 0o755, dir: true},
		{name: "usr/share/doc/", mode: 0o755, dir: true},
		{name: "usr/share/doc/csi-node-proxy/", mode: 0o755, dir: true},
		{name: "usr/share/doc/csi-node-proxy/LICENSE", mode: 0o644, data: license},
	}
}

// windowsFiles lays the files out as Windows layers are: the file system
// under Files/, registry changes under Hives/ (none here). A layer with no
// parent (no base image) also carries the hive files Windows checks for.
func windowsFiles(daemon, ctl, license []byte, baseLayer bool) []entry {
	sd := map[string]string{"MSWINDOWS.rawsd": windowsRawSD}
	es := []entry{
		{name: "Files/", mode: 0o755, dir: true, pax: sd},
		{name: "Files/LICENSE", mode: 0o644, data: license, pax: sd},
		{name: "Files/csi-node-proxy.exe", mode: 0o755, data: daemon, pax: sd},
		{name: "Files/csi-node-proxyctl.exe", mode: 0o755, data: ctl, pax: sd},
		{name: "Hives/", mode: 0o755, dir: true, pax: sd},
	}
	if baseLayer {
		for _, d := range []string{"Files/Windows/", "Files/Windows/System32/", "Files/Windows/System32/config/"} {
			es = append(es, entry{name: d, mode: 0o755, dir: true, pax: sd})
		}
		for _, h := range windowsHives {
			es = append(es, entry{name: "Files/Windows/System32/config/" + h, mode: 0o644, data: []byte{}, pax: sd})
		}
	}
	return es
}

// tarLayer writes entries sorted by name, owned by 0:0 with no user or group
// names, every time mtime, so the layer's bytes depend on the files alone.
func tarLayer(entries []entry, mtime time.Time) (v1.Layer, error) {
	entries = slices.Clone(entries)
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := &tar.Header{
			Name:    e.name,
			Mode:    e.mode,
			ModTime: mtime.UTC().Truncate(time.Second),
			Format:  tar.FormatPAX,
		}
		if len(e.pax) > 0 {
			h.PAXRecords = e.pax
		}
		switch {
		case e.dir:
			h.Typeflag = tar.TypeDir
		case e.link != "":
			h.Typeflag = tar.TypeSymlink
			h.Linkname = e.link
		default:
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("tar %s: %w", e.name, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("tar %s: %w", e.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
}
