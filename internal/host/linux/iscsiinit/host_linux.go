//go:build linux

package iscsiinit

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
)

// Defaults for Config fields left zero.
const (
	// DefaultIscsiadm is the iscsiadm program, looked up in PATH.
	DefaultIscsiadm = "iscsiadm"
	// DefaultCommandTimeout bounds one iscsiadm run. A login may take
	// open-iscsi's default login_timeout (30 s) times
	// initial_login_retry_max (4), so less would kill logins that would
	// still succeed.
	DefaultCommandTimeout = 150 * time.Second
	// DefaultDiscoveryTimeout bounds a SendTargets discovery session.
	DefaultDiscoveryTimeout = 15 * time.Second
	// DefaultSysfsRoot is where sysfs is mounted.
	DefaultSysfsRoot = "/sys"
	// DefaultIface is open-iscsi's software TCP interface.
	DefaultIface = "default"
)

// NodeDirCandidates are the node databases of open-iscsi builds, searched
// on every ConnectTarget when Config.NodeDir is empty: Debian and Ubuntu
// build open-iscsi with /etc/iscsi/nodes, Fedora, RHEL and SUSE with
// /var/lib/iscsi/nodes.
var NodeDirCandidates = []string{"/etc/iscsi/nodes", "/var/lib/iscsi/nodes"}

// locateMarkerPrefix starts the value ConnectTarget writes into a new node
// record through iscsiadm (as node.session.auth.username, which the CHAP
// settings replace right after) to find the file iscsiadm wrote it to.
const locateMarkerPrefix = "csi-node-proxy-locate-"

// Config configures the backend; the daemon fills it from its flags.
type Config struct {
	// Iscsiadm is the iscsiadm program (DefaultIscsiadm when empty).
	Iscsiadm string
	// CommandTimeout bounds each iscsiadm run (DefaultCommandTimeout when
	// 0).
	CommandTimeout time.Duration
	// DiscoveryTimeout bounds each SendTargets session
	// (DefaultDiscoveryTimeout when 0).
	DiscoveryTimeout time.Duration
	// InitiatorName is the initiator's iSCSI name for discovery sessions.
	// Empty: the InitiatorName= of InitiatorNameFile, else
	// GeneratedInitiatorName(hostname). Logins through iscsiadm always use
	// open-iscsi's own name.
	InitiatorName string
	// InitiatorNameFile is open-iscsi's initiator name file
	// (DefaultInitiatorNameFile when empty).
	InitiatorNameFile string
	// NodeDir is open-iscsi's node database, where CHAP secrets are
	// written. Empty (the default): on every ConnectTarget, the one of
	// NodeDirCandidates that holds the record iscsiadm has just written,
	// so an iscsiadm built for either layout, or one installed after the
	// proxy started, works. Set it only for a database elsewhere.
	NodeDir string
	// SysfsRoot is where sysfs is mounted (DefaultSysfsRoot when empty).
	SysfsRoot string
	// Iface is the open-iscsi interface sessions use (DefaultIface when
	// empty).
	Iface string
	// MutualCHAPUsername is the name a target must present when it
	// authenticates itself in mutual CHAP. open-iscsi refuses a target
	// whose CHAP_N differs from the configured name, while Windows (and so
	// the API) has no such name. Empty: the login's own CHAP user name.
	MutualCHAPUsername string
}

func (c Config) withDefaults() Config {
	if c.Iscsiadm == "" {
		c.Iscsiadm = DefaultIscsiadm
	}
	if c.CommandTimeout == 0 {
		c.CommandTimeout = DefaultCommandTimeout
	}
	if c.DiscoveryTimeout == 0 {
		c.DiscoveryTimeout = DefaultDiscoveryTimeout
	}
	if c.InitiatorNameFile == "" {
		c.InitiatorNameFile = DefaultInitiatorNameFile
	}
	if c.SysfsRoot == "" {
		c.SysfsRoot = DefaultSysfsRoot
	}
	if c.Iface == "" {
		c.Iface = DefaultIface
	}
	return c
}

// Host implements iscsi.Host on Linux: portals are open-iscsi SendTargets
// discovery records, sessions are open-iscsi logins, both through
// iscsiadm; discovery itself is the pure-Go SendTargets in this package;
// disks are found in sysfs. It is safe for concurrent use.
type Host struct {
	cfg        Config
	run        runner
	diskNumber DiskNumberFunc
	discover   func(ctx context.Context, address, initiatorName string) ([]Target, error)
	// nodeDirs are the node databases ConnectTarget looks in: NodeDir,
	// or NodeDirCandidates.
	nodeDirs []string

	mu           sync.Mutex
	mutualSecret string
}

var _ iscsi.Host = (*Host)(nil)

// New returns the backend configured by cfg (zero fields take their
// defaults). diskNumber maps a block device name to the disk number
// GetTargetDisks reports; nil means DiskSeqNumber(cfg.SysfsRoot).
func New(cfg Config, diskNumber DiskNumberFunc) (*Host, error) {
	return newHost(cfg, execRunner{}, diskNumber)
}

func newHost(cfg Config, run runner, diskNumber DiskNumberFunc) (*Host, error) {
	cfg = cfg.withDefaults()
	if cfg.NodeDir != "" && !filepath.IsAbs(cfg.NodeDir) || !filepath.IsAbs(cfg.SysfsRoot) {
		return nil, fmt.Errorf("iscsi: node directory %q and sysfs root %q must be absolute", cfg.NodeDir, cfg.SysfsRoot)
	}
	if err := checkPathName("iface", cfg.Iface); err != nil {
		return nil, err
	}
	if cfg.MutualCHAPUsername != "" {
		if err := checkRecordValue("mutual CHAP user name", cfg.MutualCHAPUsername); err != nil {
			return nil, err
		}
	}
	if diskNumber == nil {
		diskNumber = DiskSeqNumber(cfg.SysfsRoot)
	}
	nodeDirs := NodeDirCandidates
	if cfg.NodeDir != "" {
		nodeDirs = []string{cfg.NodeDir}
	}
	return &Host{cfg: cfg, run: run, diskNumber: diskNumber, discover: SendTargets, nodeDirs: nodeDirs}, nil
}

// portalArg is a portal as iscsiadm's -p takes it: address:port, with
// brackets around IPv6 addresses.
func portalArg(p iscsi.Portal) string {
	return net.JoinHostPort(p.Address, strconv.Itoa(int(p.Port)))
}

// iscsiadm runs iscsiadm with args under the command timeout.
func (h *Host) iscsiadm(ctx context.Context, args ...string) (output, error) {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.CommandTimeout)
	defer cancel()
	out, err := h.run.Run(ctx, h.cfg.Iscsiadm, args...)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return out, errdefs.Errorf(errdefs.ErrUnavailable, "iscsiadm %s did not finish within %v", strings.Join(args, " "), h.cfg.CommandTimeout)
		}
		// A node without the initiator tools is not a fault of the
		// daemon: the call can work once they are installed.
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			return out, errdefs.Errorf(errdefs.ErrFailedPrecondition, "%s not found: open-iscsi is not installed on this node (%v)", h.cfg.Iscsiadm, err)
		}
		return out, err
	}
	return out, nil
}

// initiatorName resolves the discovery initiator name (see Config).
func (h *Host) initiatorName() string {
	if h.cfg.InitiatorName != "" {
		return h.cfg.InitiatorName
	}
	if n, err := ReadInitiatorName(h.cfg.InitiatorNameFile); err == nil {
		return n
	}
	host, _ := os.Hostname()
	return GeneratedInitiatorName(host)
}

// sendTargets runs discovery against p under the discovery timeout.
func (h *Host) sendTargets(ctx context.Context, p iscsi.Portal) ([]Target, error) {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.DiscoveryTimeout)
	defer cancel()
	return h.discover(ctx, portalArg(p), h.initiatorName())
}

// AddTargetPortal implements iscsi.Host. Like New-IscsiTargetPortal, it
// first talks to the portal (a SendTargets discovery session in pure Go),
// so an unreachable portal is errdefs.ErrUnavailable and is not
// registered. It then registers the portal as an open-iscsi SendTargets
// discovery record (iscsiadm -m discoverydb -o new), which
// ListTargetPortals reads back. A registered portal is success.
func (h *Host) AddTargetPortal(ctx context.Context, p iscsi.Portal) error {
	if _, err := h.sendTargets(ctx, p); err != nil {
		return err
	}
	have, err := h.ListTargetPortals(ctx)
	if err != nil {
		return err
	}
	for _, q := range have {
		if q.Port == p.Port && sameAddress(q.Address, p.Address) {
			return nil
		}
	}
	out, err := h.iscsiadm(ctx, "-m", "discoverydb", "-t", "sendtargets", "-p", portalArg(p), "-o", "new")
	if err != nil {
		return err
	}
	if out.ExitCode != 0 {
		return newIscsiadmError("register portal "+portalArg(p), out)
	}
	return nil
}

// DiscoverTargetPortal implements iscsi.Host with the pure-Go SendTargets
// session: it needs no kernel iSCSI support, and unlike iscsiadm discovery
// it leaves no records in open-iscsi's databases. The portal need not be
// registered. The IQNs are sorted, each once, as the other backends
// return them.
func (h *Host) DiscoverTargetPortal(ctx context.Context, p iscsi.Portal) ([]string, error) {
	targets, err := h.sendTargets(ctx, p)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	iqns := []string{}
	for _, t := range targets {
		if !seen[t.Name] {
			seen[t.Name] = true
			iqns = append(iqns, t.Name)
		}
	}
	sort.Strings(iqns)
	return iqns, nil
}

// RemoveTargetPortal implements iscsi.Host: it deletes the portal's
// discovery record. A portal that is not registered is
// errdefs.ErrNotFound.
func (h *Host) RemoveTargetPortal(ctx context.Context, p iscsi.Portal) error {
	have, err := h.ListTargetPortals(ctx)
	if err != nil {
		return err
	}
	var found *iscsi.Portal
	for i, q := range have {
		if q.Port == p.Port && sameAddress(q.Address, p.Address) {
			found = &have[i]
			break
		}
	}
	if found == nil {
		return errdefs.Errorf(errdefs.ErrNotFound, "target portal %s is not registered", portalArg(p))
	}
	out, err := h.iscsiadm(ctx, "-m", "discoverydb", "-t", "sendtargets", "-p", portalArg(*found), "-o", "delete")
	if err != nil {
		return err
	}
	switch {
	case out.ExitCode == 0:
		return nil
	case out.ExitCode == errIDBM && bytes.Contains(out.Stderr, []byte("not found")):
		// Removed by someone else since we listed it.
		return errdefs.Errorf(errdefs.ErrNotFound, "target portal %s is not registered", portalArg(p))
	}
	return newIscsiadmError("remove portal "+portalArg(p), out)
}

// ListTargetPortals implements iscsi.Host: the SendTargets discovery
// records of open-iscsi (iscsiadm -m discoverydb), whoever made them,
// sorted by address and port.
func (h *Host) ListTargetPortals(ctx context.Context) ([]iscsi.Portal, error) {
	out, err := h.iscsiadm(ctx, "-m", "discoverydb")
	if err != nil {
		return nil, err
	}
	switch out.ExitCode {
	case 0:
	case errNoObjsFound:
		return []iscsi.Portal{}, nil
	default:
		return nil, newIscsiadmError("list portals", out)
	}
	ps, err := parseDiscoveryDB(out.Stdout)
	if err != nil {
		return nil, err
	}
	sort.Slice(ps, func(i, j int) bool {
		if ps[i].Address != ps[j].Address {
			return ps[i].Address < ps[j].Address
		}
		return ps[i].Port < ps[j].Port
	})
	return ps, nil
}

// parseDiscoveryDB parses iscsiadm -m discoverydb output, one record per
// line: "address:port via sendtargets" (IPv6 addresses without brackets,
// "::1:3260"). Records of other discovery types are skipped.
func parseDiscoveryDB(stdout []byte) ([]iscsi.Portal, error) {
	out := []iscsi.Portal{}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		portal, typ, ok := strings.Cut(line, " via ")
		if !ok {
			return nil, fmt.Errorf("unexpected iscsiadm -m discoverydb line %q", line)
		}
		if strings.TrimSpace(typ) != "sendtargets" {
			continue
		}
		i := strings.LastIndexByte(portal, ':')
		if i <= 0 {
			return nil, fmt.Errorf("unexpected iscsiadm -m discoverydb line %q", line)
		}
		port, err := strconv.ParseUint(portal[i+1:], 10, 16)
		if err != nil || port == 0 {
			return nil, fmt.Errorf("unexpected port in iscsiadm -m discoverydb line %q", line)
		}
		out = append(out, iscsi.Portal{Address: strings.Trim(portal[:i], "[]"), Port: uint32(port)})
	}
	return out, sc.Err()
}

// ConnectTarget implements iscsi.Host: it creates the open-iscsi node
// record of the target at the portal (iscsiadm -m node -o new), sets
// node.startup to manual (so iscsid does not log in again at boot, as
// upstream's sessions are not persistent; distributions' iscsid.conf
// default differs), finds the record file iscsiadm wrote (see
// locateRecords), writes the authentication settings into it directly
// (see rewriteRecord: CHAP secrets never appear on a command line) and
// logs in. An existing session is success. Rejected CHAP credentials are
// errdefs.ErrPermissionDenied. A failed login deletes the record again,
// so no secret stays on disk for a target that is not connected.
func (h *Host) ConnectTarget(ctx context.Context, l iscsi.Login) error {
	auth, err := h.authFor(l)
	if err != nil {
		return err
	}
	if err := checkPathName("iqn", l.IQN); err != nil {
		return err
	}
	if err := checkPathName("target address", l.Portal.Address); err != nil {
		return err
	}
	node := []string{"-m", "node", "-T", l.IQN, "-p", portalArg(l.Portal), "-I", h.cfg.Iface}
	out, err := h.iscsiadm(ctx, append(node, "-o", "new")...)
	if err != nil {
		return err
	}
	if out.ExitCode != 0 {
		return newIscsiadmError("create node record", out)
	}
	if err := h.prepareRecord(ctx, node, l, auth); err != nil {
		h.deleteNode(ctx, node)
		return err
	}
	out, err = h.iscsiadm(ctx, append(node, "--login")...)
	if err != nil {
		return err
	}
	switch out.ExitCode {
	case 0, errSessExists:
		return nil
	}
	h.deleteNode(ctx, node)
	e := newIscsiadmError("log in", out)
	if out.ExitCode == errLoginAuthFailed && l.AuthType != iscsi.AuthNone {
		e.hint = fmt.Sprintf("the target rejected CHAP user %q, or it failed mutual authentication", l.Username)
	}
	return e
}

// prepareRecord makes the new node record of l manual-start and gives it
// auth.
func (h *Host) prepareRecord(ctx context.Context, node []string, l iscsi.Login, auth nodeAuth) error {
	out, err := h.iscsiadm(ctx, append(node, "-o", "update", "-n", "node.startup", "-v", "manual")...)
	if err != nil {
		return err
	}
	if out.ExitCode != 0 {
		return newIscsiadmError("set node.startup to manual", out)
	}
	dir, files, err := h.locateRecords(ctx, node, l)
	if err != nil {
		return err
	}
	return writeRecords(dir, files, auth)
}

// locateRecords asks iscsiadm where it keeps the node record of l: it
// writes a random marker into the record through iscsiadm (never a
// secret) and returns the node database among h.nodeDirs, and the record
// files in it, that carry the marker. Asking every time, instead of
// guessing the database once at start, keeps ConnectTarget working when
// the iscsiadm the proxy runs was built for the other layout than the
// one that existed at start, or open-iscsi was installed later; a stale
// record in the other database is never given a secret.
func (h *Host) locateRecords(ctx context.Context, node []string, l iscsi.Login) (string, []string, error) {
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", nil, err
	}
	marker := locateMarkerPrefix + hex.EncodeToString(nonce[:])
	out, err := h.iscsiadm(ctx, append(node, "-o", "update", "-n", "node.session.auth.username", "-v", marker)...)
	if err != nil {
		return "", nil, err
	}
	if out.ExitCode != 0 {
		return "", nil, newIscsiadmError("mark the node record", out)
	}
	for _, dir := range h.nodeDirs {
		files, err := markedRecords(dir, l.IQN, l.Portal, h.cfg.Iface, marker)
		if err != nil {
			return "", nil, err
		}
		if len(files) > 0 {
			return dir, files, nil
		}
	}
	return "", nil, errdefs.Errorf(errdefs.ErrFailedPrecondition, "iscsiadm keeps the node record of %s at %s in none of %s; configure the node database of this open-iscsi (iscsiinit Config.NodeDir)", l.IQN, portalArg(l.Portal), strings.Join(h.nodeDirs, ", "))
}

// authFor builds the node record's auth settings for l.
func (h *Host) authFor(l iscsi.Login) (nodeAuth, error) {
	switch l.AuthType {
	case iscsi.AuthNone:
		return nodeAuth{method: "None"}, nil
	case iscsi.AuthOneWayCHAP, iscsi.AuthMutualCHAP:
	default:
		return nodeAuth{}, errdefs.Errorf(errdefs.ErrInvalidArgument, "unknown authentication type %v", l.AuthType)
	}
	if err := checkRecordValue("chap_username", l.Username); err != nil {
		return nodeAuth{}, err
	}
	if err := checkRecordValue("chap_secret", l.Secret); err != nil {
		return nodeAuth{}, err
	}
	a := nodeAuth{method: "CHAP", username: l.Username, password: l.Secret}
	if l.AuthType == iscsi.AuthMutualCHAP {
		h.mu.Lock()
		a.passwordIn = h.mutualSecret
		h.mu.Unlock()
		if a.passwordIn == "" {
			return nodeAuth{}, errdefs.Errorf(errdefs.ErrFailedPrecondition, "mutual CHAP needs the initiator's secret: call SetMutualChapSecret first")
		}
		a.usernameIn = h.cfg.MutualCHAPUsername
		if a.usernameIn == "" {
			a.usernameIn = l.Username
		}
	}
	return a, nil
}

// deleteNode removes a node record, best effort: it runs after a failure
// whose error matters more.
func (h *Host) deleteNode(ctx context.Context, node []string) {
	_, _ = h.iscsiadm(context.WithoutCancel(ctx), append(node, "-o", "delete")...)
}

// DisconnectTarget implements iscsi.Host: it logs out and deletes the
// node record (and with it any CHAP secret on disk). No session, and no
// record, is success.
func (h *Host) DisconnectTarget(ctx context.Context, p iscsi.Portal, iqn string) error {
	node := []string{"-m", "node", "-T", iqn, "-p", portalArg(p), "-I", h.cfg.Iface}
	out, err := h.iscsiadm(ctx, append(node, "--logout")...)
	if err != nil {
		return err
	}
	if out.ExitCode != 0 && out.ExitCode != errNoObjsFound {
		return newIscsiadmError("log out", out)
	}
	out, err = h.iscsiadm(ctx, append(node, "-o", "delete")...)
	if err != nil {
		return err
	}
	if out.ExitCode != 0 && out.ExitCode != errNoObjsFound {
		return newIscsiadmError("delete node record", out)
	}
	return nil
}

// TargetDisks implements iscsi.Host from sysfs: the SCSI disks of the
// sessions to iqn through p, numbered by the DiskNumberFunc. A target
// with no session gives an empty list, as upstream answers for a target
// that is not connected (kubernetes-csi/csi-proxy pkg/os/iscsi/api.go
// GetTargetDisks, commit eeba4706). Upstream fails for a target its portal
// never reported; this backend cannot tell that case apart without
// discovery traffic (DisconnectTarget deletes the node record), so it
// answers an empty list there too.
func (h *Host) TargetDisks(_ context.Context, p iscsi.Portal, iqn string) ([]uint32, error) {
	names, err := sessionBlockDevices(h.cfg.SysfsRoot, iqn, p)
	if err != nil {
		return nil, err
	}
	out := make([]uint32, 0, len(names))
	for _, n := range names {
		d, err := h.diskNumber(n)
		if err != nil {
			return nil, fmt.Errorf("disk number of %s: %w", n, err)
		}
		out = append(out, d)
	}
	return out, nil
}

// SetMutualChapSecret implements iscsi.Host. Windows stores one initiator
// CHAP secret for the node; here it is kept in memory and written into
// the node record of each later MUTUAL_CHAP login (node.session.auth.
// password_in). It is not persisted: after a restart of the proxy it must
// be set again before the next mutual CHAP login. Sessions already logged
// in are not affected.
func (h *Host) SetMutualChapSecret(_ context.Context, secret string) error {
	if err := checkRecordValue("MutualChapSecret", secret); err != nil {
		return err
	}
	h.mu.Lock()
	h.mutualSecret = secret
	h.mu.Unlock()
	return nil
}
