//go:build linux

package cifs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/beneath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// Defaults for Config fields left zero.
const (
	// DefaultMountRoot is where the share mounts live.
	DefaultMountRoot = "/var/lib/csi-node-proxy/smb"
	// DefaultPort is the SMB port (direct TCP, no NetBIOS).
	DefaultPort = 445
	// DefaultVersion is the cifs "vers" option: "3" means SMB 3.0 or newer,
	// negotiated up to 3.1.1. It is not pinned to "3.0" because 3.1.1 adds
	// pre-authentication integrity and AES-GCM; it is not "default" because
	// that would allow SMB 2.1, which has no encryption for "seal".
	DefaultVersion = "3"
	// DefaultDialTimeout bounds the credential check (TCP connect, SMB
	// negotiate, session setup and tree connect).
	DefaultDialTimeout = 15 * time.Second
	// DefaultStatTimeout bounds the health check of an existing mount.
	DefaultStatTimeout = 5 * time.Second
	// DefaultFileMode and DefaultDirMode are DefaultConfig's file_mode and
	// dir_mode: every process that reaches the mount through a published
	// link may read and write, as every process of a Windows node may use
	// a global mapping with the mapping user's rights. Access control is
	// the SMB server's, by the credentials of the mapping; the mounts
	// themselves live below a 0700 directory, reachable only through the
	// links the proxy makes into the working directories.
	DefaultFileMode = 0o777
	DefaultDirMode  = 0o777
)

// Config configures the backend; the daemon fills it from its flags.
type Config struct {
	// MountRoot is the directory that holds one mount per mapped share
	// (DefaultMountRoot when empty). It is created with mode 0700; only the
	// proxy and root should reach the mounts except through the links the
	// proxy makes.
	MountRoot string
	// Port is the SMB server's TCP port (DefaultPort when 0), used for both
	// the credential check and the mount ("port=" option).
	Port int
	// RequirePrivacy adds the cifs "seal" option (SMB3 encryption), as
	// RequirePrivacy does on Windows. Upstream's -require-privacy defaults
	// to true; DefaultConfig sets it. A zero Config does not require
	// privacy.
	RequirePrivacy bool
	// Version is the cifs "vers" option (DefaultVersion when empty).
	Version string
	// DialTimeout bounds the credential check (DefaultDialTimeout when 0).
	DialTimeout time.Duration
	// StatTimeout bounds the stat(2) that tells a healthy mount from a
	// stale one (DefaultStatTimeout when 0). A stat that does not return in
	// time counts as stale; its goroutine may stay blocked in the kernel
	// until the mount is detached.
	StatTimeout time.Duration
	// WorkingDirs are the proxy's working directories (the kubelet
	// directory and every -working-dir), the only places a local_path link
	// is made: its parent is resolved beneath them, so a link planted
	// there that leads out cannot redirect it. Without them no local_path
	// link is made at all (errdefs.ErrFailedPrecondition); mappings
	// without a local_path work either way.
	WorkingDirs []string
	// Permissions are the owner, group, modes and SELinux context of the
	// mounts' files (see Permissions); the zero value keeps the kernel's
	// defaults, root:root 0755, where only root in a pod can write.
	// DefaultConfig sets DefaultFileMode and DefaultDirMode.
	Permissions Permissions
	// PermissionsFor, when set, chooses the Permissions per caller (the
	// daemon wires it to its policy); where it answers false,
	// Permissions applies. Its answer replaces Permissions whole.
	PermissionsFor PermissionsFunc
}

// DefaultConfig returns the configuration upstream's defaults correspond
// to: every field at its default and RequirePrivacy on.
func DefaultConfig() Config {
	return Config{
		MountRoot:      DefaultMountRoot,
		Port:           DefaultPort,
		RequirePrivacy: true,
		Version:        DefaultVersion,
		DialTimeout:    DefaultDialTimeout,
		StatTimeout:    DefaultStatTimeout,
		Permissions:    Permissions{FileMode: DefaultFileMode, DirMode: DefaultDirMode},
	}
}

func (c Config) withDefaults() Config {
	if c.MountRoot == "" {
		c.MountRoot = DefaultMountRoot
	}
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.Version == "" {
		c.Version = DefaultVersion
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.StatTimeout == 0 {
		c.StatTimeout = DefaultStatTimeout
	}
	return c
}

// kernel is the seam between the mapping logic and the system calls, so
// the logic is unit-tested against a fake kernel (this CI kernel has no
// CIFS at all).
type kernel interface {
	// Mount is mount(2).
	Mount(source, target, fstype string, flags uintptr, data string) error
	// Unmount is umount2(2).
	Unmount(target string, flags int) error
	// Mounts returns the calling process's mount table.
	Mounts() ([]mountinfo.Mount, error)
	// Stat is stat(2) of path, bounded by timeout.
	Stat(path string, timeout time.Duration) error
}

// checker verifies the share and credentials of m against the server at
// port and returns the server's IP address as dialled.
type checker func(ctx context.Context, m smb.Mapping, port int, timeout time.Duration) (ip string, err error)

// Host implements smb.Host with CIFS mounts. It is safe for concurrent use
// on different shares; the smb.Service serialises calls per share.
type Host struct {
	cfg   Config
	k     kernel
	check checker
	// roots confines local_path links to Config.WorkingDirs; nil when
	// none are configured.
	roots *beneath.Roots
}

var _ smb.Host = (*Host)(nil)

// New returns the CIFS backend configured by cfg (zero fields take their
// defaults). It checks the configuration, and that the kernel has
// openat2(2) when working directories are given (errdefs.ErrUnimplemented
// otherwise: local_path links could not be confined); the mount root is
// created on first use.
func New(cfg Config) (*Host, error) {
	if len(cfg.WorkingDirs) > 0 {
		if err := beneath.Probe(); err != nil {
			return nil, fmt.Errorf("cifs: %w", err)
		}
	}
	return newHost(cfg, realKernel{}, checkShare)
}

func newHost(cfg Config, k kernel, check checker) (*Host, error) {
	cfg = cfg.withDefaults()
	if !filepath.IsAbs(cfg.MountRoot) {
		return nil, fmt.Errorf("cifs: mount root %q is not an absolute path", cfg.MountRoot)
	}
	cfg.MountRoot = filepath.Clean(cfg.MountRoot)
	if cfg.Port < 1 || cfg.Port > 65535 {
		return nil, fmt.Errorf("cifs: port %d is not a TCP port", cfg.Port)
	}
	if strings.ContainsAny(cfg.Version, ",= ") {
		return nil, fmt.Errorf("cifs: version %q is not a cifs vers= value", cfg.Version)
	}
	if err := cfg.Permissions.Validate(); err != nil {
		return nil, fmt.Errorf("cifs: %w", err)
	}
	h := &Host{cfg: cfg, k: k, check: check}
	if len(cfg.WorkingDirs) > 0 {
		roots, err := beneath.New(cfg.WorkingDirs)
		if err != nil {
			return nil, fmt.Errorf("cifs: %w", err)
		}
		h.roots = roots
	}
	return h, nil
}

// MountDir returns the directory where share (\\server\share, lower-cased
// by the smb.Service) is mounted with permissions p. The name is
// <server>+<share> with every byte outside [a-z0-9._-] percent-escaped, so
// it is one path element that is never "." or "..", and distinct shares
// never collide; permissions other than the zero value add "+" and their
// tag (see Permissions), so each set of permissions is a mount of its own.
// Names longer than a path element allows fall back to a hash.
func (h *Host) MountDir(share string, p Permissions) (string, error) {
	server, name, err := splitShare(share)
	if err != nil {
		return "", err
	}
	return filepath.Join(h.cfg.MountRoot, dirName(server, name, p.tag())), nil
}

// permissionsFor returns the permissions of the caller of ctx: the
// policy's answer, else the daemon's defaults.
func (h *Host) permissionsFor(ctx context.Context) (Permissions, error) {
	if h.cfg.PermissionsFor != nil {
		if p, ok := h.cfg.PermissionsFor(ctx); ok {
			if err := p.Validate(); err != nil {
				return Permissions{}, fmt.Errorf("the policy's SMB permissions for this caller: %w", err)
			}
			return p, nil
		}
	}
	return h.cfg.Permissions, nil
}

// splitShare splits \\server\share.
func splitShare(share string) (server, name string, err error) {
	rest, ok := strings.CutPrefix(share, `\\`)
	if ok {
		server, name, ok = strings.Cut(rest, `\`)
	}
	if !ok || server == "" || name == "" || strings.Contains(name, `\`) {
		return "", "", errdefs.Errorf(errdefs.ErrInvalidArgument, `%q is not a share root \\server\share`, share)
	}
	return server, name, nil
}

// NewSmbGlobalMapping implements smb.Host; see the package documentation
// for how a Windows global mapping becomes a CIFS mount.
func (h *Host) NewSmbGlobalMapping(ctx context.Context, m smb.Mapping) error {
	server, name, err := splitShare(m.Share)
	if err != nil {
		return err
	}
	if err := checkCredentials(m); err != nil {
		return err
	}
	perms, err := h.permissionsFor(ctx)
	if err != nil {
		return err
	}
	dir := filepath.Join(h.cfg.MountRoot, dirName(server, name, perms.tag()))
	target, err := linkTarget(dir, m)
	if err != nil {
		return err
	}
	// Check the link first, so that a failure there maps nothing.
	if m.LocalPath != "" {
		if err := h.checkLink(m.LocalPath, target); err != nil {
			return err
		}
	}
	ip, err := h.check(ctx, m, h.cfg.Port, h.cfg.DialTimeout)
	if err != nil {
		return err
	}
	if err := h.ensureMounted(m, perms, server, name, dir, ip); err != nil {
		return err
	}
	if m.LocalPath != "" {
		return h.makeLink(m.LocalPath, target)
	}
	return nil
}

// linkTarget is where m.LocalPath links to: the mount directory plus the
// sub-path of m.RemotePath below the share, in its original case (SMB
// servers compare names without case; the mount shows them as stored).
func linkTarget(dir string, m smb.Mapping) (string, error) {
	elems := strings.Split(m.RemotePath, `\`)
	if len(elems) < 4 || elems[0] != "" || elems[1] != "" || !strings.EqualFold(`\\`+elems[2]+`\`+elems[3], m.Share) {
		return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "remote path %s is not on share %s", m.RemotePath, m.Share)
	}
	sub := elems[4:]
	for _, e := range sub {
		if e == "" || e == "." || e == ".." || strings.ContainsRune(e, '/') {
			return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "remote path %s has an element %q that cannot be a Linux path element", m.RemotePath, e)
		}
	}
	return filepath.Join(append([]string{dir}, sub...)...), nil
}

// ensureMounted reuses a healthy mount of the share, re-creates a stale one
// and mounts the share when it is not mounted. A healthy mount is reused
// whatever user made it, as upstream csi-proxy reuses any OK mapping
// (kubernetes-csi/csi-proxy pkg/server/smb/server.go NewSmbGlobalMapping,
// commit eeba4706); the caller has proven its own credentials to the
// server already (NewSmbGlobalMapping checks them first).
func (h *Host) ensureMounted(m smb.Mapping, perms Permissions, server, name, dir, ip string) error {
	cur, err := h.mountAt(dir)
	if err != nil {
		return err
	}
	if cur != nil {
		if cur.FSType != "cifs" && cur.FSType != "smb3" {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%s is mounted at %s, which the proxy owns for %s; expected a cifs mount", cur.FSType, dir, m.Share)
		}
		if stale, err := h.stale(dir); err != nil {
			return err
		} else if stale {
			// A stale mapping is re-created, as upstream removes and
			// re-maps a mapping whose path is no longer valid. MNT_DETACH
			// because a dead server makes a plain unmount hang or fail.
			if err := h.k.Unmount(dir, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("unmount stale mapping of %s at %s: %w", m.Share, dir, err)
			}
			cur = nil
		}
	}
	if cur != nil {
		return nil // healthy: reuse
	}
	if err := os.MkdirAll(h.cfg.MountRoot, 0o700); err != nil {
		return fmt.Errorf("create mount root: %w", err)
	}
	created := false
	if err := os.Mkdir(dir, 0o700); err == nil {
		created = true
	} else if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("create mount directory for %s: %w", m.Share, err)
	}
	data, err := h.mountData(m, perms, ip)
	if err != nil {
		return err
	}
	source := "//" + server + "/" + name
	err = h.k.Mount(source, dir, "cifs", unix.MS_NOSUID|unix.MS_NODEV, data)
	if err == nil {
		return nil
	}
	if created {
		_ = os.Remove(dir)
	}
	return mountError(source, dir, m.Username, err)
}

// mountError maps a mount(2) failure. It never quotes the mount data.
func mountError(source, dir, user string, err error) error {
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return fmt.Errorf("mount %s at %s: %w", source, dir, err)
	}
	switch errno {
	case unix.ENODEV:
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "mount %s at %s: the kernel has no CIFS support (mount: no such device)", source, dir)
	case unix.EACCES, unix.EPERM, unix.EKEYREJECTED:
		return errdefs.Errorf(errdefs.ErrPermissionDenied, "mount %s at %s as user %q: %v (wrong credentials, or the server cannot encrypt and -require-privacy is set)", source, dir, user, errno)
	case unix.ENOENT, unix.ENXIO:
		return errdefs.Errorf(errdefs.ErrNotFound, "mount %s at %s: %v", source, dir, errno)
	case unix.EHOSTDOWN, unix.EHOSTUNREACH, unix.ENETUNREACH, unix.ECONNREFUSED, unix.ECONNRESET, unix.ETIMEDOUT, unix.EAGAIN:
		return errdefs.Errorf(errdefs.ErrUnavailable, "mount %s at %s: %v", source, dir, errno)
	case unix.EOPNOTSUPP:
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "mount %s at %s: %v (the server does not support the required SMB version or encryption)", source, dir, errno)
	}
	return fmt.Errorf("mount %s at %s: %w", source, dir, errno)
}

// mountData builds the cifs mount options. The password goes last and has
// its commas doubled, which the kernel's option parser reads as one literal
// comma; it is the only place the password is ever formatted.
func (h *Host) mountData(m smb.Mapping, perms Permissions, ip string) (string, error) {
	user, domain := splitUser(m.Username)
	opts := []string{
		"vers=" + h.cfg.Version,
		"ip=" + ip,
		"port=" + strconv.Itoa(h.cfg.Port),
	}
	if h.cfg.RequirePrivacy {
		opts = append(opts, "seal")
	}
	opts = append(opts, perms.options()...)
	opts = append(opts, "username="+user)
	if domain != "" {
		opts = append(opts, "domain="+domain)
	}
	opts = append(opts, "password="+strings.ReplaceAll(m.Password, ",", ",,"))
	data := strings.Join(opts, ",")
	if len(data) >= 4096 {
		// The kernel copies at most one page of mount data.
		return "", errdefs.Errorf(errdefs.ErrInvalidArgument, "the credentials are too long for a cifs mount")
	}
	ours := ""
	if perms.SELinuxContext != "" {
		ours = perms.options()[len(perms.options())-1]
	}
	if err := checkLSMOptions(data, ours); err != nil {
		return "", err
	}
	return data, nil
}

// checkCredentials refuses what cannot be passed safely in the mount data.
// The smb.Service already refuses most of it; this backend must not rely
// on that, because a comma or a NUL would change the meaning of the data
// string.
func checkCredentials(m smb.Mapping) error {
	if m.Username == "" {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "username is empty: anonymous and guest mappings are not supported")
	}
	if strings.ContainsAny(m.Username, ",=\x00") {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "username %q contains a comma, an equals sign or a NUL", m.Username)
	}
	if strings.IndexByte(m.Password, 0) >= 0 {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "password contains a NUL byte, which a cifs mount cannot carry")
	}
	return nil
}

// splitUser splits DOMAIN\user. user@domain stays whole: NTLM and the
// kernel accept the UPN form as a user name.
func splitUser(u string) (user, domain string) {
	if d, n, ok := strings.Cut(u, `\`); ok {
		return n, d
	}
	return u, ""
}

// mountAt returns the topmost mount at dir, or nil.
func (h *Host) mountAt(dir string) (*mountinfo.Mount, error) {
	ms, err := h.k.Mounts()
	if err != nil {
		return nil, fmt.Errorf("read mount table: %w", err)
	}
	at := mountinfo.At(ms, dir)
	if len(at) == 0 {
		return nil, nil
	}
	return &at[len(at)-1], nil
}

// staleErrnos are the stat errors of a CIFS mount whose server or session
// is gone.
var staleErrnos = []unix.Errno{unix.EIO, unix.ENOTCONN, unix.EHOSTDOWN, unix.EHOSTUNREACH, unix.ESTALE, unix.ETIMEDOUT, unix.ECONNABORTED, unix.ECONNRESET, unix.ECONNREFUSED, unix.ENETUNREACH, unix.ENXIO}

// stale reports whether the mount at dir no longer works.
func (h *Host) stale(dir string) (bool, error) {
	err := h.k.Stat(dir, h.cfg.StatTimeout)
	if err == nil {
		return false, nil
	}
	if errors.Is(err, errStatTimeout) {
		return true, nil
	}
	for _, e := range staleErrnos {
		if errors.Is(err, e) {
			return true, nil
		}
	}
	return false, fmt.Errorf("check mapping at %s: %w", dir, err)
}

// openLinkParent opens the directory that holds (or will hold) the link
// local, resolved beneath its working directory: links in its parents are
// followed only while they stay inside the working directories, and one
// that leads out is errdefs.ErrPermissionDenied, and so is a local path
// whose last element is a working directory itself. The link is then made,
// read or checked with *at calls on the returned descriptor, so the name
// is never resolved again through a path string.
func (h *Host) openLinkParent(local string) (int, string, error) {
	if h.roots == nil {
		return -1, "", errdefs.Errorf(errdefs.ErrFailedPrecondition, "local path %q: the SMB backend was configured without working directories (cifs Config.WorkingDirs), so it cannot confine the link and makes none", local)
	}
	// A working directory itself never becomes the link, however local
	// is spelt (a link to the directory holding an inner one).
	dirfd, name, err := h.roots.ParentBelow(local)
	switch {
	case err == nil:
		return dirfd, name, nil
	case errors.Is(err, errdefs.ErrPermissionDenied):
		return -1, "", fmt.Errorf("refusing to link local path %q: %w", local, err)
	case errors.Is(err, errdefs.ErrNotFound):
		return -1, "", errdefs.Errorf(errdefs.ErrNotFound, "parent of local path %q does not exist (%v)", local, err)
	}
	return -1, "", fmt.Errorf("parent of local path %q: %w", local, err)
}

// checkLink checks that local can become a link to target: its parent
// exists beneath its working directory and local is absent or already that
// link.
func (h *Host) checkLink(local, target string) error {
	dirfd, name, err := h.openLinkParent(local)
	if err != nil {
		return err
	}
	defer beneath.Close(dirfd)
	return linkAt(dirfd, name, local, target)
}

// linkAt tells whether name in dirfd (local, for messages) may become a
// link to target: nil when it is absent or already that link.
func linkAt(dirfd int, name, local, target string) error {
	var st unix.Stat_t
	err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case err != nil:
		return fmt.Errorf("local path %q: %w", local, beneath.PathError("lstat", local, err))
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		if cur, err := beneath.Readlinkat(dirfd, name); err == nil && cur == target {
			return nil
		}
	}
	return errdefs.Errorf(errdefs.ErrAlreadyExists, "local path %q already exists", local)
}

// makeLink links local to target with symlinkat(2) in local's parent,
// resolved beneath its working directory; an existing identical link is
// success.
func (h *Host) makeLink(local, target string) error {
	dirfd, name, err := h.openLinkParent(local)
	if err != nil {
		return err
	}
	defer beneath.Close(dirfd)
	err = unix.Symlinkat(target, dirfd, name)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EEXIST):
		return linkAt(dirfd, name, local, target) // a concurrent identical link is fine
	}
	return fmt.Errorf("link %q to %q: %w", local, target, beneath.PathError("symlink", local, err))
}

// RemoveSmbGlobalMapping implements smb.Host: it unmounts every mount of
// the share, whatever its permissions (lazily when busy, as Windows
// removes with Force: a Windows node has one mapping per share, and
// removing it removes it for every caller), and removes the mount
// directories. A share that is not mounted is errdefs.ErrNotFound.
func (h *Host) RemoveSmbGlobalMapping(_ context.Context, share string) error {
	server, name, err := splitShare(share)
	if err != nil {
		return err
	}
	ms, err := h.k.Mounts()
	if err != nil {
		return fmt.Errorf("read mount table: %w", err)
	}
	// The share's directories in the mount table: one per set of
	// permissions, each perhaps mounted more than once (stacked).
	var dirs []string
	for _, m := range ms {
		if filepath.Dir(m.MountPoint) == h.cfg.MountRoot && isShareDir(filepath.Base(m.MountPoint), server, name) && !slices.Contains(dirs, m.MountPoint) {
			dirs = append(dirs, m.MountPoint)
		}
	}
	if len(dirs) == 0 {
		_ = os.Remove(filepath.Join(h.cfg.MountRoot, dirName(server, name, ""))) // a left-over empty directory; keep anything else
		return errdefs.Errorf(errdefs.ErrNotFound, "no SMB global mapping for %s", share)
	}
	var errs []error
	for _, dir := range dirs {
		errs = append(errs, h.unmountDir(share, dir))
	}
	return errors.Join(errs...)
}

// unmountDir unmounts the share's mount at dir and removes dir.
func (h *Host) unmountDir(share, dir string) error {
	cur, err := h.mountAt(dir)
	if err != nil {
		return err
	}
	if cur == nil {
		return nil // unmounted meanwhile
	}
	if cur.FSType != "cifs" && cur.FSType != "smb3" {
		return errdefs.Errorf(errdefs.ErrFailedPrecondition, "%s is mounted at %s, which the proxy owns for %s; expected a cifs mount", cur.FSType, dir, share)
	}
	err = h.k.Unmount(dir, 0)
	if errors.Is(err, unix.EBUSY) {
		err = h.k.Unmount(dir, unix.MNT_DETACH)
	}
	if err != nil && !errors.Is(err, unix.EINVAL) { // EINVAL: already gone
		return fmt.Errorf("unmount %s at %s: %w", share, dir, err)
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove mount directory %s: %w", dir, err)
	}
	return nil
}

// dirName is the mount directory name of \\server\share with the
// permissions tag tag ("" for none); see MountDir.
func dirName(server, share, tag string) string {
	base := shareBase(server, share)
	if tag == "" {
		return base
	}
	if len(base)+1+len(tag) > 255 {
		base = hashBase(server, share)
	}
	return base + "+" + tag
}

// shareBase is the untagged directory name of \\server\share.
func shareBase(server, share string) string {
	n := escape(strings.ToLower(server)) + "+" + escape(strings.ToLower(share))
	if len(n) > 255 {
		// Not reachable with valid host names and share names (at most 80
		// characters), but a path element must fit NAME_MAX.
		return hashBase(server, share)
	}
	return n
}

// hashBase is the directory name of a share whose escaped name is too
// long.
func hashBase(server, share string) string {
	return "h-" + hashName(strings.ToLower(server)+`\`+strings.ToLower(share))
}

// isShareDir reports whether the directory name base belongs to
// \\server\share: its untagged name, or either base form followed by "+"
// and a tag. escape never leaves a "+" in a name, so the second "+" ends
// the share's part unambiguously.
func isShareDir(base, server, share string) bool {
	for _, b := range []string{shareBase(server, share), hashBase(server, share)} {
		if base == b || strings.HasPrefix(base, b+"+") {
			return true
		}
	}
	return false
}

func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

func hashName(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}
