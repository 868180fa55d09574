package flows

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
)

// Env is the node a flow runs on, as the kubelet and the driver see it.
type Env struct {
	// Name names the environment in test names ("C-drive", "no-drive").
	Name string
	// KubeletDir is the kubelet's root directory exactly as the kubelet
	// passes it to drivers: `C:\var\lib\kubelet`, or drive-less
	// `\var\lib\kubelet` as EKS Windows kubelets do (aws-ebs#2100), or
	// "/var/lib/kubelet" on a Linux host.
	KubeletDir string
	// Windows selects Windows path style (and the drivers' Windows path
	// normalisation); false is POSIX.
	Windows bool
	// Drive is the current drive Win32 resolves drive-less rooted paths
	// against for the kubelet's own calls ("C:"); Windows only.
	Drive string
	// Kubelet does the kubelet's own directory work on the node; nil
	// makes it over the proxy's Mkdir (which has MkdirAll semantics, as
	// upstream's), a stand-in for the kubelet's local os.MkdirAll.
	Kubelet Kubelet
	// Local is the node as a driver reads it directly (os.Lstat,
	// os.Readlink), outside csi-proxy; nil uses proxyLocal, a model over
	// the proxy (see there). A runner on a real Windows node or on the
	// Windows backend's fake seam may give the real thing.
	Local Local
}

// Kubelet is what the kubelet does on the node before calling a driver.
type Kubelet interface {
	// MkdirAll creates path and its parents; path is fully resolved
	// (drive letter included on Windows).
	MkdirAll(ctx context.Context, path string) error
}

// Local is the node as a driver's own process sees it, without csi-proxy.
type Local interface {
	// Lstat tells whether path exists and whether it is a link or mount
	// point (what os.Lstat's ModeSymlink told drivers built with Go
	// before 1.23).
	Lstat(ctx context.Context, path string) (exists, link bool, err error)
	// Readlink returns the target of the link at path (os.Readlink).
	Readlink(ctx context.Context, path string) (string, error)
}

// sep is the path separator of the environment.
func (e Env) sep() string {
	if e.Windows {
		return `\`
	}
	return "/"
}

// join joins path elements in the environment's style.
func (e Env) join(elem ...string) string {
	return strings.Join(elem, e.sep())
}

// parent returns the directory holding path.
func (e Env) parent(path string) string {
	i := strings.LastIndex(path, e.sep())
	if i <= 0 {
		return path
	}
	return path[:i]
}

// resolve returns path as Win32 resolves it for the kubelet's own calls:
// a drive-less rooted path gets the current drive. Tests probe the host
// with resolved paths so that a probe never depends on divergence 4.
func (e Env) resolve(path string) string {
	if e.Windows && strings.HasPrefix(path, `\`) && !strings.HasPrefix(path, `\\`) {
		return e.Drive + path
	}
	return path
}

// normalize is the drivers' own normalizeWindowsPath (aws-ebs pkg/util
// NormalizeWindowsPath, azuredisk/csi-driver-smb/vsphere
// normalizeWindowsPath, mount-utils NormalizeWindowsPath for gcp-pd): '/'
// becomes '\' and a leading '\' gets a lower-case "c:". Each driver's file
// says where it normalises and where it passes the kubelet's path raw.
// Drivers' Windows code never runs on Linux, so POSIX paths stay as given.
func (e Env) normalize(path string) string {
	if !e.Windows {
		return path
	}
	p := strings.ReplaceAll(path, "/", `\`)
	if strings.HasPrefix(p, `\`) {
		p = "c:" + p
	}
	return p
}

// kubeletMkdirAll runs the kubelet's MkdirAll on the node.
func (e Env) kubeletMkdirAll(ctx context.Context, tr *tracer, path string) error {
	path = e.resolve(path)
	if e.Kubelet != nil {
		return e.Kubelet.MkdirAll(ctx, path)
	}
	_, err := tr.p.Filesystem.Mkdir(ctx, &filesystem.MkdirRequest{Path: path})
	return err
}

// local returns the environment's Local.
func (e Env) local(tr *tracer) Local {
	if e.Local != nil {
		return e.Local
	}
	return proxyLocal{e: e, tr: tr}
}

// proxyLocal models the driver's direct look at the node over the proxy,
// for runners that cannot reach the host's file system themselves (the
// daemon's simulated host lives in another process). Its calls bypass the
// trace: they are not csi-proxy calls the driver makes.
//
// Readlink answers with the remote path NewSmbGlobalMapping was asked to
// link there, once IsSymlink confirms a link exists at the path: on a
// Windows node os.Readlink of such a link gives the UNC path
// (\\server\share\dir; Go turns the \??\UNC\ form into \\). Only the
// link's existence is checked on the host; its target is the model's.
type proxyLocal struct {
	e  Env
	tr *tracer
}

// Lstat answers os.Lstat as the driver would on the node, through the proxy.
func (l proxyLocal) Lstat(ctx context.Context, path string) (bool, bool, error) {
	path = l.e.resolve(path)
	ex, err := l.tr.p.Filesystem.PathExists(ctx, &filesystem.PathExistsRequest{Path: path})
	if err != nil {
		return false, false, err
	}
	if !ex.Exists {
		return false, false, nil
	}
	ln, err := l.tr.p.Filesystem.IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: path})
	if err != nil {
		return true, false, err
	}
	return true, ln.IsSymlink, nil
}

// Readlink answers os.Readlink as the driver would on the node, through the proxy.
func (l proxyLocal) Readlink(ctx context.Context, path string) (string, error) {
	exists, link, err := l.Lstat(ctx, path)
	if err != nil {
		return "", err
	}
	if !exists || !link {
		return "", fmt.Errorf("readlink %s: not a link", path)
	}
	target, ok := l.tr.linkTarget(l.e.resolve(path))
	if !ok {
		return "", errors.New("readlink " + path + ": a link the conformance suite did not see being made")
	}
	return target, nil
}
