// Package hostset assembles a node, the one way csi-node-proxy does: the
// daemon (cmd/csi-node-proxy), library mode (package inprocess) and the
// CLI's --local (through library mode) all describe their node with one
// Config and build it with NewNode, so a node served over sockets and a
// node used in-process are wired identically: the same backends, the same
// working directories and path style, the same allowed services, the
// same policy and audit log behind the same call gate, and the same
// defaults (Config.Resolved).
//
// New builds the backend a Config names (windows, linux or simulated);
// Set.Services puts the group Services, which hold every rule that must
// hold however a call arrives (validation, path policy, idempotency,
// per-object locking), on top of it; NewNode does both and adds the
// policy, the audit log and the callgate.Gate around them. What differs
// between the modes is what they put around the Node: the daemon its
// transport, metrics, caller identification and Windows service; library
// mode its closed state and panic handling.
package hostset

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/files"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/iscsiinit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/services"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/smbmap"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/storage"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// Host backend names, as the daemon's --host spells them.
const (
	// Windows drives a Windows node through Win32 (and WMI where Win32
	// has nothing). Windows only.
	Windows = "windows"
	// Linux drives a Linux node: block devices, mounts, CIFS, open-iscsi
	// and systemd. Linux only.
	Linux = "linux"
	// Simulated is the in-memory Windows node of package host/simulated,
	// on any OS. It is never a default.
	Simulated = "simulated"
)

// Default returns the real backend of the OS this runs on (Windows or
// Linux), or "" for an OS without one.
func Default() string {
	switch runtime.GOOS {
	case "windows":
		return Windows
	case "linux":
		return Linux
	}
	return ""
}

// The defaults of a node, spelled here once: the daemon's flags show and
// use them, and library mode (package inprocess) fills its zero Options
// with them.
const (
	// WindowsKubeletPath is the kubelet's directory on Windows, upstream's
	// -kubelet-path default: the default for the Windows and simulated
	// hosts (the simulated host is a Windows node wherever it runs, and
	// its own default, simulated.DefaultKubeletDir, is this one).
	WindowsKubeletPath = simulated.DefaultKubeletDir
	// LinuxKubeletPath is the kubelet's directory on Linux, the default
	// for the Linux host.
	LinuxKubeletPath = "/var/lib/kubelet"
	// DefaultLinuxFilesystem is what FormatVolume creates on the Linux
	// host unless told otherwise (--linux-filesystem).
	DefaultLinuxFilesystem = "ext4"
	// DefaultLinuxDiskReadTimeout is how long a call waits for one disk's
	// partition table on the Linux host unless told otherwise
	// (--linux-disk-read-timeout): the block backend's own default.
	DefaultLinuxDiskReadTimeout = 10 * time.Second
	// DefaultSMBMode is the permission bits of the files and directories
	// of the Linux host's SMB mounts unless told otherwise (--smb-file-mode,
	// --smb-dir-mode): the CIFS backend's own default, since a Windows
	// global mapping serves every process of the node, and so does the
	// mount.
	DefaultSMBMode = 0o777
)

// KubeletPath returns the kubelet's directory on the node a backend
// drives: LinuxKubeletPath for Linux, WindowsKubeletPath otherwise.
func KubeletPath(host string) string {
	if host == Linux {
		return LinuxKubeletPath
	}
	return WindowsKubeletPath
}

// Config is a node's configuration: which backend to build and how, and
// (for NewNode) the services, policy and audit log around it. It is the
// one spelling of a node's options: the daemon's flags fill it, library
// mode maps its Options onto it, and the CLI's --local flags fill those.
// Its fields are the daemon's flags of the same meaning; error messages
// name those flags. A zero field means the node's default (see Resolved),
// except RequirePrivacy, whose zero is false.
type Config struct {
	// Host is the backend: Windows, Linux or Simulated.
	Host string
	// WorkingDirs are the directories callers may touch (the kubelet
	// directory and every --working-dir). The Linux block backend never
	// touches a disk with anything mounted outside them, and the
	// simulated host creates them.
	WorkingDirs []string
	// RequirePrivacy makes new SMB global mappings demand encryption
	// (--require-privacy).
	RequirePrivacy bool
	// LinuxFilesystem is what FormatVolume creates on the Linux host,
	// ext4 or xfs (--linux-filesystem); "" means DefaultLinuxFilesystem.
	LinuxFilesystem string
	// LinuxHostMountTable is the host's mount table (a mountinfo file)
	// the Linux block backend reads besides its own
	// (--linux-host-mount-table): a disk mounted there outside the
	// working directories is the host's and is never partitioned,
	// formatted, mounted, resized or taken offline. "" is the backend's
	// default, /proc/1/mountinfo (the host's with hostPID), ignored when
	// unreadable; an explicit path must be readable (New fails); "none"
	// reads only the proxy's own table.
	LinuxHostMountTable string
	// LinuxDiskReadTimeout bounds how long a call waits for one disk's
	// partition table on the Linux host (--linux-disk-read-timeout); 0
	// is the block backend's default (blockdev.DefaultDiskReadTimeout).
	LinuxDiskReadTimeout time.Duration
	// SMBPermissions are the owner, group, modes and SELinux context of
	// the Linux host's SMB mounts (--smb-uid, --smb-gid, --smb-file-mode,
	// --smb-dir-mode, --smb-selinux-context); nil means the SMB backend's
	// defaults (modes DefaultSMBMode, owner root). The smbPermissions of
	// the policy rule that allows a mapping override them field by field
	// (the call gate puts its decision in the call's context).
	SMBPermissions *policy.SMBPermissions
	// Simulated describes the simulated host; nil means
	// simulated.DefaultConfig(WorkingDirs) unless SimConfigFile is set.
	// Setting both is an error: one world has one description.
	Simulated *simulated.Config
	// SimConfigFile is a JSON file describing the simulated host
	// (--sim-config).
	SimConfigFile string
	// SimDisks are extra disks of the simulated host in --sim-disk
	// syntax, e.g. "size=10GiB,location=1:0:0:2,page83=6002…".
	SimDisks []string

	// The fields below are the node's around the backend: New ignores
	// them, NewNode builds the Services, the policy and the audit log
	// from them.

	// AllowedServices are the only services StartService and StopService
	// may touch (--allowed-service).
	AllowedServices []string
	// MaxConcurrentFormats bounds how many FormatVolume calls run on the
	// node at once (--max-concurrent-formats); 0 leaves them unbounded
	// (volume.Service.SetMaxConcurrentFormats).
	MaxConcurrentFormats int
	// PolicyFile is the YAML authorisation policy (--policy), reloaded
	// every PolicyReloadInterval when it changes and by Node.Reload; ""
	// means none unless PolicyData is given: every call is allowed.
	PolicyFile string
	// PolicyData is a policy already in memory, in the same format; it
	// never reloads. Give PolicyFile or PolicyData, not both.
	PolicyData []byte
	// PolicyReloadInterval is how often PolicyFile is checked for changes
	// (--policy-reload-interval); 0 or less reloads only on Node.Reload.
	PolicyReloadInterval time.Duration
	// AuditLog is the audit log (--audit-log): a file, "-" for stderr,
	// "" for none.
	AuditLog string
	// AuditReads audits calls that only read, too (--audit-reads).
	AuditReads bool
	// AuditSync fsyncs the audit file after every record (--audit-sync).
	AuditSync bool
	// NodeName names the node in every audit record (--node-name); ""
	// means DefaultNodeName().
	NodeName string
}

// Set is one host backend seen through the six group Host interfaces, with
// the path style its paths follow.
type Set struct {
	// Style is the style of the host's paths: Windows for the Windows and
	// simulated hosts, POSIX for Linux.
	Style hostpath.Style
	// Disk, Volume, Filesystem, SMB, ISCSI and System are the backend of
	// each group.
	Disk       disk.Host
	Volume     volume.Host
	Filesystem filesystem.Host
	SMB        smb.Host
	ISCSI      iscsi.Host
	System     system.Host
	// SMBMappings is the backend of csi-node-proxy's own SMB mappings
	// group; its changes go through SMB.
	SMBMappings smbmappings.Host
	// Simulated is the simulated host behind the groups when Host is
	// Simulated, for tests that arrange or inspect the node (AddDisk,
	// ListVolumes); nil otherwise.
	Simulated *simulated.Host
	// Closer releases what the backends hold between calls (nil: they
	// hold nothing); Close calls it. New names it explicitly rather than
	// Close looking for Close methods on the six group backends, so
	// wrapping a group's backend (the daemon's metrics decorators) never
	// hides it and a backend serving several groups is closed once.
	Closer io.Closer
	// WorkingDirs are Config.WorkingDirs, remembered so that Services
	// confines paths to the directories the backends were built for.
	WorkingDirs []string
}

// Close releases what the backends hold between calls: on Linux the
// system group's D-Bus connection to systemd (opened by the first call
// that needs it). The other backends (the Windows ones, which open their
// handles and COM scopes per call, and the simulated host) hold nothing.
// Call it after the last call has returned: a call made later may open
// what Close closed.
func (s Set) Close() error {
	if s.Closer == nil {
		return nil
	}
	return s.Closer.Close()
}

// New builds the backend cfg names. This is the only place that knows the
// backends. Constructors only check configuration: nothing on the host
// changes until a call arrives. Close the Set when done with it.
func New(cfg Config) (Set, error) {
	var (
		s   Set
		err error
	)
	switch cfg.Host {
	case Simulated:
		s, err = newSimulated(cfg)
	case Windows:
		s, err = newWindows(cfg)
	case Linux:
		s, err = newLinux(cfg)
	case "":
		return Set{}, fmt.Errorf("no real host backend exists for %s; use the simulated host", runtime.GOOS)
	default:
		return Set{}, fmt.Errorf("unknown host backend %q: want windows, linux or simulated", cfg.Host)
	}
	if err != nil {
		return Set{}, err
	}
	s.WorkingDirs = append([]string(nil), cfg.WorkingDirs...)
	return s, nil
}

// newSimulated builds the simulated host from the description cfg gives.
func newSimulated(cfg Config) (Set, error) {
	sc := simulated.DefaultConfig(cfg.WorkingDirs)
	switch {
	case cfg.Simulated != nil && cfg.SimConfigFile != "":
		return Set{}, errors.New("the simulated host is described twice: give a Config or a -sim-config file, not both")
	case cfg.Simulated != nil:
		sc = *cfg.Simulated
		// Copy what is appended to, so the caller's Config is not changed.
		sc.WorkingDirs = appendMissing(append([]string(nil), sc.WorkingDirs...), cfg.WorkingDirs)
		sc.Disks = append([]simulated.DiskSpec(nil), sc.Disks...)
	case cfg.SimConfigFile != "":
		var err error
		if sc, err = simulated.LoadConfig(cfg.SimConfigFile); err != nil {
			return Set{}, err
		}
		// The working dirs must exist on the simulated host whatever
		// the file says, or every path call fails.
		sc.WorkingDirs = appendMissing(sc.WorkingDirs, cfg.WorkingDirs)
	}
	for _, spec := range cfg.SimDisks {
		d, err := simulated.ParseDiskFlag(spec)
		if err != nil {
			return Set{}, fmt.Errorf("-sim-disk: %w", err)
		}
		sc.Disks = append(sc.Disks, d)
	}
	h, err := simulated.New(sc)
	if err != nil {
		return Set{}, fmt.Errorf("simulated host: %w", err)
	}
	return Set{
		Style:       hostpath.Windows,
		Disk:        h.Disk(),
		Volume:      h.Volume(),
		Filesystem:  h.Filesystem(),
		SMB:         h.SMB(),
		ISCSI:       h.ISCSI(),
		System:      h.System(),
		SMBMappings: h.SMBMappingsGroup(),
		Simulated:   h,
	}, nil
}

// newWindows wires the Windows backends. They build on every OS (so this
// file needs no build tags) but only work on Windows, so say so before
// anything is created.
func newWindows(cfg Config) (Set, error) {
	if runtime.GOOS != "windows" {
		return Set{}, fmt.Errorf("--host=windows runs only on Windows; use --host=simulated to try Windows semantics on %s", runtime.GOOS)
	}
	st, err := storage.New(storage.Config{})
	if err != nil {
		return Set{}, fmt.Errorf("windows storage backend: %w", err)
	}
	fs, err := files.New()
	if err != nil {
		return Set{}, fmt.Errorf("windows filesystem backend: %w", err)
	}
	smbConfig := smbmap.DefaultConfig()
	smbConfig.RequirePrivacy = cfg.RequirePrivacy
	sm, err := smbmap.New(smbConfig)
	if err != nil {
		return Set{}, fmt.Errorf("windows SMB backend: %w", err)
	}
	initiator, err := iscsiinit.New()
	if err != nil {
		return Set{}, fmt.Errorf("windows iSCSI backend: %w", err)
	}
	svc, err := services.New()
	if err != nil {
		return Set{}, fmt.Errorf("windows system backend: %w", err)
	}
	return Set{
		Style:       hostpath.Windows,
		Disk:        st.Disk(),
		Volume:      st.Volume(),
		Filesystem:  fs,
		SMB:         sm,
		ISCSI:       initiator,
		System:      svc,
		SMBMappings: sm,
	}, nil
}

// appendMissing appends the dirs of add that list lacks, comparing as
// Windows does, without case.
func appendMissing(list, add []string) []string {
next:
	for _, a := range add {
		for _, l := range list {
			if strings.EqualFold(a, l) {
				continue next
			}
		}
		list = append(list, a)
	}
	return list
}

// Services builds the six group Services on s, confining every path to
// the working directories s was built for (in s's path style) and
// StartService and StopService to allowedServices. The result is what
// both the daemon's gRPC adapters serve and library mode guards.
func (s Set) Services(allowedServices []string) (groups.Set, error) {
	paths, err := hostpath.NewPolicy(s.Style, s.WorkingDirs)
	if err != nil {
		return groups.Set{}, err
	}
	vol := volume.NewService(s.Volume, paths)
	// A formatted volume is erased only where the allowing policy rule's
	// allowReformat says so (the decision the call gate put in ctx).
	vol.SetReformatCheck(policy.CheckReformat)
	shares := smb.NewService(s.SMB, paths)
	return groups.Set{
		Disk:       disk.NewService(s.Disk),
		Volume:     vol,
		Filesystem: filesystem.NewService(s.Filesystem, paths),
		SMB:        shares,
		ISCSI:      iscsi.NewService(s.ISCSI),
		System:     system.NewService(s.System, allowedServices),
		// The mappings group changes mappings through the SMB group's
		// Service, under its per-share locks.
		SMBMappings: smbmappings.NewService(s.SMBMappings, shares, paths),
	}, nil
}
