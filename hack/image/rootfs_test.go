package main

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// debianCache keeps the pinned .debs between runs: rootfs.sh fetches
// only what is missing or does not match the lock.
func debianCache(t *testing.T) string {
	t.Helper()
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "csi-node-proxy-image-debian")
}

// TestLinuxImageFormatsWithItsOwnTools builds the linux/amd64 image with
// the tool layer of the pinned Debian packages (debian/rootfs.sh, fetched
// with apt-get), unpacks the image's root file system, and inside it
// (chroot, the image's PATH) runs what the Linux backend runs by name:
// mkfs.ext4 and mkfs.xfs on a file, then the rest of its tools' version
// checks. The backend finds its tools by PATH lookup (blockdev.Exec:
// exec.Command with the bare name), which chroot's execvp does here with
// the image's PATH. It needs root (chroot), apt-get and dpkg-deb; it does
// not start the daemon itself, and no kernel iSCSI is involved
// (iscsiadm only says its version).
func TestLinuxImageFormatsWithItsOwnTools(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for chroot")
	}
	for _, tool := range []string{"apt-get", "dpkg-deb", "blkid"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s", tool)
		}
	}
	cache := debianCache(t)
	start := time.Now()
	if out, err := exec.Command("debian/rootfs.sh", cache).CombinedOutput(); err != nil {
		t.Fatalf("rootfs.sh: %v\n%s", err, out)
	}
	t.Logf("debian/rootfs.sh: %s", time.Since(start).Round(time.Second))

	o := options(realDist(t), t.TempDir())
	o.Platforms = []Platform{{"linux", "amd64", ""}}
	o.LinuxRootFS = filepath.Join(cache, "rootfs")
	start = time.Now()
	res, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("build with the tool layer: %s", time.Since(start).Round(time.Millisecond))
	lidx, err := layout.ImageIndexFromPath(filepath.Join(o.Out, LinuxLayout))
	if err != nil {
		t.Fatal(err)
	}
	linux, err := lidx.ImageIndex(res.Linux)
	if err != nil {
		t.Fatal(err)
	}
	img, err := linux.Image(res.Images["linux/amd64"])
	if err != nil {
		t.Fatal(err)
	}
	layers, compressed := compressedLayers(t, img)
	t.Logf("linux/amd64 image with tools: %d layers, %.1f MB compressed", len(layers), float64(compressed)/1e6)
	if len(layers) != 2 {
		t.Errorf("%d layers, want the tool layer and the binaries", len(layers))
	}

	// The image's root file system, as a runtime would unpack it.
	root := t.TempDir()
	untar(t, mutate.Extract(img), root)
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	env := []string{LinuxPath}
	if len(cf.Config.Env) > 0 {
		env = cf.Config.Env
	}
	inImage := func(argv ...string) (string, error) {
		cmd := exec.Command("chroot", append([]string{root}, argv...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if err := os.MkdirAll(filepath.Join(root, "tmp"), 0o1777); err != nil {
		t.Fatal(err)
	}
	for _, fs := range []struct {
		mkfs string
		size int64
		args []string
	}{
		{"ext4", 64 << 20, []string{"mkfs.ext4", "-F", "-q"}},
		{"xfs", 320 << 20, []string{"mkfs.xfs", "-f", "-q"}},
	} {
		file := filepath.Join(root, "tmp", fs.mkfs+".img")
		f, err := os.Create(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(fs.size); err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
		if out, err := inImage(append(fs.args, "/tmp/"+fs.mkfs+".img")...); err != nil {
			t.Fatalf("%s in the image: %v\n%s", fs.args[0], err, out)
		}
		got, err := exec.Command("blkid", "-p", "-o", "value", "-s", "TYPE", file).Output()
		if err != nil || strings.TrimSpace(string(got)) != fs.mkfs {
			t.Errorf("%s made %q (%v), want %s", fs.args[0], got, err, fs.mkfs)
		}
	}
	// The other tools the backend runs (blockdev's toolPackages, the iSCSI
	// initiator), found by name and able to start.
	for _, argv := range [][]string{{"e2fsck", "-V"}, {"resize2fs", "-h"}, {"xfs_growfs", "-V"}, {"iscsiadm", "--version"}, {"blkid", "-V"}} {
		out, err := inImage(argv...)
		// Some print their version with a non-zero exit; 126 and 127
		// are "cannot run" and "not found".
		var ee *exec.ExitError
		ran := err == nil || errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 126 && out != ""
		if !ran {
			t.Errorf("%s in the image: %v\n%s", argv[0], err, out)
		}
	}
}

// untar writes a flattened image's tar stream under dir.
func untar(t *testing.T, rc io.ReadCloser, dir string) {
	t.Helper()
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			t.Fatalf("tar entry %q leaves the root", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, os.FileMode(h.Mode)&os.ModePerm); err != nil {
				t.Fatal(err)
			}
		case tar.TypeSymlink:
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.Symlink(h.Linkname, p); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&os.ModePerm)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
}
