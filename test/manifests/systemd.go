package manifests

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Unit is a parsed systemd unit file: each section's directives in order.
type Unit struct {
	File     string
	Sections map[string][]Directive
}

// Directive is one Key=Value line of a unit.
type Directive struct {
	Key, Value string
	Line       int
}

// ParseUnit reads a systemd unit file (comments, sections, Key=Value,
// backslash continuations).
func ParseUnit(file string) (*Unit, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	u := &Unit{File: file, Sections: map[string][]Directive{}}
	section := ""
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		n := i + 1
		line := strings.TrimSpace(lines[i])
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(lines[i])
		}
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[' && line[len(line)-1] == ']':
			section = line[1 : len(line)-1]
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				return nil, fmt.Errorf("%s:%d: not a Key=Value line in a section: %q", file, n, line)
			}
			u.Sections[section] = append(u.Sections[section], Directive{strings.TrimSpace(k), strings.TrimSpace(v), n})
		}
	}
	return u, nil
}

// Get returns the directives named key in section.
func (u *Unit) Get(section, key string) []Directive {
	var ds []Directive
	for _, d := range u.Sections[section] {
		if d.Key == key {
			ds = append(ds, d)
		}
	}
	return ds
}

// mountNamespaceOptions give a service its own mount namespace, from which
// no mount propagates back to the host: the proxy's mounts would be
// invisible to the kubelet and to pods. (systemd.exec(5), PrivateMounts=;
// systemd's namespace setup makes every mount a slave before applying
// MountFlags=.) Device restrictions are refused too: the proxy opens
// whatever disk a driver names.
var mountNamespaceOptions = []string{
	"ProtectSystem", "ProtectHome", "PrivateTmp", "PrivateDevices", "PrivateMounts",
	"ProtectKernelTunables", "ProtectKernelModules", "ProtectKernelLogs", "ProtectControlGroups",
	"ProtectProc", "ProcSubset", "ProtectHostname", "ReadOnlyPaths", "ReadWritePaths",
	"InaccessiblePaths", "ExecPaths", "NoExecPaths", "TemporaryFileSystem", "BindPaths",
	"BindReadOnlyPaths", "RootDirectory", "RootImage", "MountAPIVFS", "PrivateNetwork",
	"NetworkNamespacePath", "MountFlags", "DynamicUser", "PrivateUsers",
	"DeviceAllow", "DevicePolicy", "ProtectClock",
}

// capabilities are the Linux capability names (capabilities(7)).
var capabilities = regexp.MustCompile(`^~?CAP_(AUDIT_CONTROL|AUDIT_READ|AUDIT_WRITE|BLOCK_SUSPEND|BPF|CHECKPOINT_RESTORE|CHOWN|DAC_OVERRIDE|DAC_READ_SEARCH|FOWNER|FSETID|IPC_LOCK|IPC_OWNER|KILL|LEASE|LINUX_IMMUTABLE|MAC_ADMIN|MAC_OVERRIDE|MKNOD|NET_ADMIN|NET_BIND_SERVICE|NET_BROADCAST|NET_RAW|PERFMON|SETFCAP|SETGID|SETPCAP|SETUID|SYS_ADMIN|SYS_BOOT|SYS_CHROOT|SYS_MODULE|SYS_NICE|SYS_PACCT|SYS_PTRACE|SYS_RAWIO|SYS_RESOURCE|SYS_TIME|SYS_TTY_CONFIG|SYSLOG|WAKE_ALARM)$`)

// CheckUnit checks a csi-node-proxy unit: its ExecStart against the daemon,
// the directives the proxy cannot live with, and the ones it needs.
func CheckUnit(u *Unit, d *Daemon) []error {
	var errs []error
	add := func(line int, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", u.File, line, fmt.Sprintf(format, a...)))
	}
	for _, key := range mountNamespaceOptions {
		for _, dir := range u.Get("Service", key) {
			if !isFalse(dir.Value) {
				add(dir.Line, "%s=%s: gives the service its own mount namespace (its mounts would never reach the host), restricts devices, or hides the host's network or users; the proxy needs all of them (see deploy/linux/csi-node-proxy.service's header)", dir.Key, dir.Value)
			}
		}
	}
	for _, dir := range u.Get("Service", "CapabilityBoundingSet") {
		for _, c := range strings.Fields(dir.Value) {
			if !capabilities.MatchString(c) {
				add(dir.Line, "CapabilityBoundingSet: unknown capability %q (systemd ignores it silently)", c)
			}
		}
		if !strings.Contains(dir.Value, "CAP_SYS_ADMIN") || strings.HasPrefix(dir.Value, "~") {
			add(dir.Line, "CapabilityBoundingSet must keep CAP_SYS_ADMIN: mount(2) and the block device ioctls need it")
		}
	}
	if u := u.Get("Service", "User"); len(u) > 0 && u[len(u)-1].Value != "root" && u[len(u)-1].Value != "0" {
		add(u[0].Line, "User=%s: the proxy must run as root", u[len(u)-1].Value)
	}

	// Memory: a caller must not be able to grow the daemon without bound,
	// and in a node-wide OOM it ranks as the DaemonSet's pod does.
	if mm := u.Get("Service", "MemoryMax"); len(mm) == 0 {
		add(0, "no MemoryMax=: the daemon's memory must be capped as the DaemonSet's is (%d MiB)", maxUnitMemory>>20)
	} else if n, ok := unitBytes(mm[len(mm)-1].Value); !ok || n > maxUnitMemory {
		add(mm[len(mm)-1].Line, "MemoryMax=%s: want at most the DaemonSet's limit, %d MiB", mm[len(mm)-1].Value, maxUnitMemory>>20)
	}
	for _, dir := range u.Get("Service", "OOMScoreAdjust") {
		if n, err := strconv.Atoi(dir.Value); err != nil || n < -997 {
			add(dir.Line, "OOMScoreAdjust=%s: want -997 or more; below, the daemon would outlive the kubelet and the container runtime (-999)", dir.Value)
		}
	}

	// The socket directory should be the RuntimeDirectory, kept across
	// restarts: node plugins bind-mount it, and a re-created directory
	// would leave them with the old one.
	rd := u.Get("Service", "RuntimeDirectory")
	if p := u.Get("Service", "RuntimeDirectoryPreserve"); len(rd) > 0 && (len(p) == 0 || !isTrue(p[len(p)-1].Value)) {
		add(rd[0].Line, "RuntimeDirectory= without RuntimeDirectoryPreserve=yes: systemd would remove and re-create /run/%s at each restart, and node plugins that bind-mount it would keep the old, empty directory", rd[0].Value)
	}

	starts := u.Get("Service", "ExecStart")
	if len(starts) != 1 {
		add(0, "want exactly one ExecStart=, found %d", len(starts))
		return errs
	}
	argv, err := execArgs(starts[0].Value)
	if err != nil {
		add(starts[0].Line, "ExecStart: %v", err)
		return errs
	}
	if !isDaemonBinary(argv[0]) {
		add(starts[0].Line, "ExecStart runs %s, not csi-node-proxy", argv[0])
		return errs
	}
	if d == nil {
		return errs
	}
	values, err := d.Check(argv[1:])
	if err != nil {
		add(starts[0].Line, "ExecStart: %v", err)
		return errs
	}
	checkDaemonValues(func(format string, a ...any) { add(starts[0].Line, "ExecStart: "+format, a...) }, values, "linux")

	dir, ok := values.Last("socket-dir")
	if !ok {
		dir = SocketDir
	}
	if len(rd) == 0 || "/run/"+rd[0].Value != filepath.Clean(dir) {
		add(starts[0].Line, "--socket-dir %s must be the unit's RuntimeDirectory (/run/<RuntimeDirectory>)", dir)
	}
	return errs
}

// execArgs splits an ExecStart= value into arguments: systemd's prefixes
// and simple quoting. Variables and specifiers are refused: this check
// would not see what they expand to.
func execArgs(v string) ([]string, error) {
	v = strings.TrimLeft(v, "-@:+!")
	if strings.ContainsAny(v, "$%") {
		return nil, errors.New("uses $variables or %specifiers; extend the check to expand them")
	}
	var args []string
	var cur strings.Builder
	quote := rune(0)
	inArg := false
	for _, r := range v {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inArg = r, true
		case r == ' ' || r == '\t':
			if inArg {
				args, inArg = append(args, cur.String()), false
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quote != 0 {
		return nil, errors.New("unterminated quote")
	}
	if inArg {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, errors.New("empty")
	}
	return args, nil
}

func isTrue(v string) bool {
	switch strings.ToLower(v) {
	case "1", "yes", "y", "true", "t", "on":
		return true
	}
	return false
}

func isFalse(v string) bool {
	switch strings.ToLower(v) {
	case "0", "no", "n", "false", "f", "off", "":
		return true
	}
	return false
}

// VerifyUnit runs systemd-analyze verify on a copy of the unit whose
// ExecStart program is the built daemon (verify insists that it exists),
// and fails on anything it reports: systemd only warns about unknown
// directives, misplaced keys and values it cannot parse, and ignores them.
// It returns exec.ErrNotFound if systemd-analyze is not installed.
func VerifyUnit(u *Unit, d *Daemon, dir string) error {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		return exec.ErrNotFound
	}
	data, err := os.ReadFile(u.File)
	if err != nil {
		return err
	}
	starts := u.Get("Service", "ExecStart")
	if len(starts) != 1 || d == nil {
		return errors.New("needs exactly one ExecStart and the built daemon")
	}
	argv, err := execArgs(starts[0].Value)
	if err != nil {
		return err
	}
	text := strings.Replace(string(data), "ExecStart="+starts[0].Value, "ExecStart="+strings.Replace(starts[0].Value, argv[0], d.Bin, 1), 1)
	copyPath := filepath.Join(dir, filepath.Base(u.File))
	if err := os.WriteFile(copyPath, []byte(text), 0o644); err != nil {
		return err
	}
	cmd := exec.Command(analyze, "verify", "--man=no", copyPath)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if err != nil || out.Len() > 0 {
		status := "problems reported (systemd ignores such lines)"
		if err != nil {
			status = err.Error()
		}
		return fmt.Errorf("systemd-analyze verify %s: %s:\n%s", u.File, status, strings.ReplaceAll(out.String(), copyPath, u.File))
	}
	return nil
}

// maxUnitMemory is the shipped DaemonSet's memory limit (512Mi), which
// the unit's MemoryMax may not exceed.
const maxUnitMemory = 512 << 20

// unitBytes reads a systemd byte size: a number with an optional K, M, G
// or T suffix (powers of 1024).
func unitBytes(v string) (int64, bool) {
	mult := int64(1)
	if i := strings.IndexAny(v, "KMGT"); i == len(v)-1 && i > 0 {
		mult = int64(1) << (10 * (strings.IndexByte("KMGT", v[i]) + 1))
		v = v[:i]
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n * mult, true
}
