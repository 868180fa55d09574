package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"path"
	"runtime"
	"strconv"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/cmd/internal/smbflags"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/server"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// Host backend names for --host: hostset's, which builds them.
const (
	hostWindows   = hostset.Windows
	hostLinux     = hostset.Linux
	hostSimulated = hostset.Simulated
)

// Logging formats for --logging-format, the Kubernetes components' flag.
const (
	loggingText = "text"
	loggingJSON = "json"
)

// defaultHostMountTable is --linux-host-mount-table's default: the mount
// table of PID 1, the Linux block backend's own default
// (blockdev.DefaultHostMountTable; TestHostMountTableDefault keeps them
// equal).
const defaultHostMountTable = "/proc/1/mountinfo"

// defaultDiskReadTimeout is --linux-disk-read-timeout's default, the
// node's (hostset.DefaultLinuxDiskReadTimeout, which is the Linux block
// backend's own).
const defaultDiskReadTimeout = hostset.DefaultLinuxDiskReadTimeout

// defaultShutdownTimeout bounds how long in-flight calls may run after
// SIGTERM. Kubernetes gives a pod 30 s by default before SIGKILL.
const defaultShutdownTimeout = 25 * time.Second

// Config is everything the daemon takes from its command line.
type Config struct {
	// Config is the node: host backend, working directories, backend
	// options, allowed services, policy and audit log, filled by the
	// flags of the same meaning (--host, -kubelet-path and -working-dir,
	// --linux-*, --smb-*, --sim-*, --allowed-service, --policy,
	// --policy-reload-interval, --audit-*, --node-name). hostset.NewNode
	// assembles it, as it does library mode's and the CLI's --local.
	// WorkingDirs are every -working-dir followed by KubeletPath, as
	// upstream orders them. LinuxHostMountTable is "" when the flag is
	// not given, the backend's default (/proc/1/mountinfo, ignored when
	// unreadable), while a path given must be readable. NodeName is
	// $NODE_NAME, else the host name, when --node-name is not given.
	hostset.Config

	// KubeletPath is -kubelet-path, the kubelet's root directory.
	KubeletPath string
	// WindowsService is -windows-service: run under the Service Control
	// Manager.
	WindowsService bool
	// MetricsBindAddress is -metrics-bind-address; "" means off.
	MetricsBindAddress string

	// Transport is where endpoints are created and who may open them
	// (--socket-dir, --socket-mode, --socket-owner, --socket-group,
	// --pipe-sddl).
	Transport transport.Options
	// APIs are the group-versions to serve (--apis).
	APIs []adapter.API
	// ShutdownTimeout bounds the graceful shutdown (--shutdown-timeout).
	ShutdownTimeout time.Duration
	// PipeGroup is --pipe-group: a local group (SID, or name on Windows)
	// granted read/write on the pipes next to Administrators and SYSTEM.
	PipeGroup string
	// CRIEndpoint is --cri-endpoint: the node's container runtime, asked
	// for the pod namespace, pod name and container name of each caller
	// in a container (cri.Resolver); "" asks nothing.
	CRIEndpoint string
	// KubeletCgroupRoot is --kubelet-cgroup-root: the kubelet's
	// --cgroup-root, below which alone a caller's cgroup names its pod
	// (identity.Options.CgroupRoot).
	KubeletCgroupRoot string
	// EndpointPrefix is --endpoint-prefix: the endpoints are named
	// <prefix>-<group>-<version>.
	EndpointPrefix string
	// LoggingFormat is --logging-format: text (klog's) or json.
	LoggingFormat string
	// legacyPathFlags are the v0.2 flags -kubelet-csi-plugins-path and
	// -kubelet-pod-path as given, for the warning at start.
	legacyPathFlags []string

	// logsToStderr records klog's -logtostderr, so a fatal error is not
	// printed twice on stderr.
	logsToStderr bool
	// showVersion is -version.
	showVersion bool
}

// errVersion is parseFlags' answer to -version: print the version and exit
// 0, whatever else the command line says (as -help).
var errVersion = errors.New("version requested")

// defaultHost is the real backend of the OS the daemon runs on, or "" for
// an OS without one.
func defaultHost() string { return hostset.Default() }

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// newFlagSet defines every flag on a new set, writing into cfg and apis.
// Upstream's flags keep their names, meanings and defaults; Go's flag
// package accepts them with one dash or two.
func newFlagSet(cfg *Config, apis *string) *flag.FlagSet {
	set := flag.NewFlagSet("csi-node-proxy", flag.ContinueOnError)
	set.SetOutput(io.Discard) // errors are returned, usage printed on demand
	*cfg = Config{
		Transport:       transport.DefaultOptions(),
		ShutdownTimeout: defaultShutdownTimeout,
	}

	// Upstream csi-proxy's flags.
	set.StringVar(&cfg.KubeletPath, "kubelet-path", hostset.KubeletPath(defaultHost()), "The kubelet's root directory, appended to the working directories (every path a call names must lie inside one); the default is upstream's "+hostset.WindowsKubeletPath+", or "+hostset.LinuxKubeletPath+" with --host=linux")
	set.Var((*stringList)(&cfg.WorkingDirs), "working-dir", "Directory callers may create, remove and link paths in (repeatable)")
	set.BoolVar(&cfg.WindowsService, "windows-service", false, "Run under the Windows service control manager, as the service install-service registers (Windows only)")
	set.BoolVar(&cfg.RequirePrivacy, "require-privacy", true, "Require SMB encryption (RequirePrivacy) for new SMB global mappings")
	set.StringVar(&cfg.MetricsBindAddress, "metrics-bind-address", "", "TCP host:port of the HTTP endpoint serving Prometheus /metrics, the /healthz and /readyz probes and the read-only /version and /deprecated documents, e.g. localhost:8888 (keep it on localhost: kubelet probes and a node-local scraper reach it there); port 0 picks a free port (the log names it); empty is off")
	// Upstream's flags before v1.0.0, refused until now: each names a
	// directory calls may touch, as -working-dir does.
	for _, name := range []string{"kubelet-csi-plugins-path", "kubelet-pod-path"} {
		set.Func(name, "Deprecated (upstream before v1.0.0): a `directory` calls may touch, as -working-dir; without -kubelet-path these replace its default, as they did then", func(s string) error {
			cfg.legacyPathFlags = append(cfg.legacyPathFlags, "-"+name+"="+s)
			cfg.WorkingDirs = append(cfg.WorkingDirs, s)
			return nil
		})
	}
	klog.InitFlags(set)

	// csi-node-proxy's own flags.
	set.StringVar(&cfg.Host, "host", defaultHost(), "Host backend: windows, linux or simulated; the default is the real backend of this OS")
	set.StringVar(&cfg.Transport.SocketDir, "socket-dir", transport.DefaultSocketDir, "Directory of the Unix sockets, one per API (not on Windows)")
	set.Func("socket-mode", "Permission bits of the Unix sockets, in octal (default 0660)", func(s string) error {
		m, err := strconv.ParseUint(s, 8, 32)
		if err != nil || m > 0o777 {
			return fmt.Errorf("want octal permission bits such as 0660")
		}
		if m == 0 {
			// Zero means "default" to the transport; refuse it rather
			// than silently serving 0660.
			return fmt.Errorf("0 grants nobody access; use 0600 for the owner only")
		}
		cfg.Transport.SocketMode = fs.FileMode(m)
		return nil
	})
	set.Func("socket-owner", "Numeric user ID to own the Unix sockets (default: the daemon's)", func(s string) error {
		return parseID(s, &cfg.Transport.SocketUID)
	})
	set.Func("socket-group", "Numeric group ID to own the Unix sockets (default: the daemon's)", func(s string) error {
		return parseID(s, &cfg.Transport.SocketGID)
	})
	set.StringVar(&cfg.Transport.PipeSDDL, "pipe-sddl", transport.DefaultPipeSDDL, "Security descriptor (SDDL) of the named pipes (Windows only)")
	set.StringVar(apis, "apis", "", "Comma-separated APIs to serve: group-versions such as disk-v1 or whole groups such as volume (default: all)")
	set.Var((*stringList)(&cfg.AllowedServices), "allowed-service", "Service that StartService and StopService may touch (repeatable; default none)")
	set.IntVar(&cfg.MaxConcurrentFormats, "max-concurrent-formats", 0, "How many FormatVolume calls may run on the node at once; more wait for one to end (or for their deadline). 0: no bound. Several formats at once slow each other down until drivers' retries race them; azuredisk's own node code bounds them the same way")
	set.BoolVar(&cfg.ClearReadOnlyOnOnline, "clear-read-only-on-online", false, "SetDiskState bringing a disk online also clears its read-only attribute, within the same policy-checked, audited call: for drivers on the pipes, which cannot call the library-only SetDiskReadOnly, when a re-attached disk comes back online read-only (kubernetes-csi/csi-proxy#437). Off by default: it also clears a read-only attribute set on purpose")
	set.StringVar(&cfg.LinuxFilesystem, "linux-filesystem", hostset.DefaultLinuxFilesystem, "Filesystem FormatVolume creates with --host=linux: ext4 or xfs")
	set.StringVar(&cfg.LinuxHostMountTable, "linux-host-mount-table", defaultHostMountTable, "With --host=linux: the host's mount table (a mountinfo file), read besides the proxy's own, so that a disk mounted only on the host, outside the working directories, is never partitioned, formatted, mounted, resized or taken offline. The default, the table of PID 1, is the host's when the daemon shares the host's PID namespace (a systemd service, a pod with hostPID) and the container's own otherwise, and is ignored when unreadable; a pod without hostPID can mount the host's /proc (at /host/proc, say) and give /host/proc/1/mountinfo. A path given must be readable or the daemon does not start; none reads only the proxy's own table")
	set.DurationVar(&cfg.LinuxDiskReadTimeout, "linux-disk-read-timeout", defaultDiskReadTimeout, "With --host=linux: how long a call waits for one disk's partition table; a disk that does not answer in time (a passive multipath path, a failed transport) is reported unreadable and the call goes on with the other disks")
	addSMBFlags(set, cfg)
	set.StringVar(&cfg.SimConfigFile, "sim-config", "", "JSON file describing the simulated host (--host=simulated)")
	set.Var((*stringList)(&cfg.SimDisks), "sim-disk", "Extra disk of the simulated host, e.g. size=10GiB,location=1:0:0:2 (repeatable)")
	set.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", defaultShutdownTimeout, "How long calls in flight may run after SIGTERM (or the Windows service's Stop) before they are cut off")
	set.BoolVar(&cfg.showVersion, "version", false, "Print the version, commit, build date and Go version, then exit")
	set.StringVar(&cfg.EndpointPrefix, "endpoint-prefix", transport.DefaultEndpointPrefix, "Name prefix of the pipes and sockets, <prefix>-<group>-<version>; the default is upstream's names, which drivers dial. A second proxy on the node (beside upstream's during a migration) takes another, e.g. csi-node-proxy; see docs/migration.md")
	set.StringVar(&cfg.LoggingFormat, "logging-format", loggingText, "Log format: text (klog's) or json (one JSON object a line, for log collectors); json goes to -log_file if set, else stderr")
	addSecurityFlags(set, cfg)
	return set
}

// addSMBFlags defines the flags of the Linux host's SMB mount
// permissions (smbflags, shared with csi-node-proxyctl --local); the
// Config always holds their values, the node's defaults unless given.
func addSMBFlags(set *flag.FlagSet, cfg *Config) {
	v := new(smbflags.Values)
	smbflags.Add(set, v, "With --host=linux")
	cfg.SMBPermissions = &v.Permissions
}

// parseID parses a numeric user or group ID.
func parseID(s string, dst *int) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("want a numeric ID (0 or more)")
	}
	*dst = n
	return nil
}

// parseFlags turns the daemon's arguments (without the program name) into
// a Config, selecting APIs from the registry. It checks syntax and values
// only; whether this OS can do what the Config asks is decided at start.
// -help returns flag.ErrHelp, -version errVersion.
func parseFlags(args []string) (Config, error) {
	return parseFlagsWith(args, adapter.All())
}

// parseFlagsWith is parseFlags with the APIs to choose from given.
func parseFlagsWith(args []string, available []adapter.API) (Config, error) {
	var cfg Config
	var apis string
	set := newFlagSet(&cfg, &apis)
	if err := set.Parse(args); err != nil {
		return Config{}, err
	}
	if cfg.showVersion {
		return Config{}, errVersion
	}
	if set.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected arguments %q: csi-node-proxy takes flags only", set.Args())
	}
	switch cfg.Host {
	case hostWindows, hostLinux, hostSimulated:
	case "":
		return Config{}, fmt.Errorf("no real host backend exists for %s; run with --host=simulated", runtime.GOOS)
	default:
		return Config{}, fmt.Errorf("-host %q: want windows, linux or simulated", cfg.Host)
	}
	switch {
	case flagSet(set, "kubelet-path"):
	case len(cfg.legacyPathFlags) > 0:
		// A v0.2 command line: its two directories were all it allowed.
		cfg.KubeletPath = ""
	default:
		cfg.KubeletPath = hostset.KubeletPath(cfg.Host)
	}
	if cfg.KubeletPath != "" {
		cfg.WorkingDirs = append(cfg.WorkingDirs, cfg.KubeletPath)
	}
	switch cfg.LinuxFilesystem {
	case "ext4", "xfs":
	default:
		return Config{}, fmt.Errorf("-linux-filesystem %q: want ext4 or xfs", cfg.LinuxFilesystem)
	}
	switch {
	case !flagSet(set, "linux-host-mount-table"):
		// The backend's default, which tolerates an unreadable table
		// (no hostPID, no /proc/1 in view); naming it explicitly makes
		// it mandatory.
		cfg.LinuxHostMountTable = ""
	case cfg.LinuxHostMountTable == "none":
	case !path.IsAbs(cfg.LinuxHostMountTable):
		return Config{}, fmt.Errorf("-linux-host-mount-table %q: want an absolute path, or none", cfg.LinuxHostMountTable)
	}
	if cfg.LinuxDiskReadTimeout <= 0 {
		return Config{}, errors.New("-linux-disk-read-timeout must be positive")
	}
	if err := cfg.SMBPermissions.Validate(); err != nil {
		return Config{}, fmt.Errorf("-smb-*: %w", err)
	}
	if cfg.ShutdownTimeout <= 0 {
		return Config{}, errors.New("-shutdown-timeout must be positive")
	}
	if err := transport.CheckEndpointPrefix(cfg.EndpointPrefix); err != nil {
		return Config{}, fmt.Errorf("-endpoint-prefix: %w", err)
	}
	switch cfg.LoggingFormat {
	case loggingText, loggingJSON:
	default:
		return Config{}, fmt.Errorf("-logging-format %q: want text or json", cfg.LoggingFormat)
	}
	if !flagSet(set, "node-name") {
		cfg.NodeName = hostset.DefaultNodeName()
	}
	if err := checkSecurityFlags(&cfg, set); err != nil {
		return Config{}, err
	}
	selected, err := server.SelectAPIs(available, apis)
	if err != nil {
		return Config{}, fmt.Errorf("-apis: %w", err)
	}
	cfg.APIs = selected
	cfg.logsToStderr = set.Lookup("logtostderr").Value.String() == "true"
	return cfg, nil
}

// flagSet tells whether the command line set the named flag.
func flagSet(set *flag.FlagSet, name string) bool {
	found := false
	set.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// usage writes the flag summary to w.
func usage(w io.Writer) {
	var cfg Config
	var apis string
	set := newFlagSet(&cfg, &apis)
	set.SetOutput(w)
	_, _ = fmt.Fprintf(w, "Usage: csi-node-proxy [flags]\n       csi-node-proxy install-service [options] [--] [flags]   (Windows service; -help for its options)\n       csi-node-proxy uninstall-service [options]\n\nServes the csi-proxy API groups to CSI node plugins, one endpoint per group-version.\n\nFlags:\n")
	set.PrintDefaults()
}
