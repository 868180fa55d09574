package main

// The Windows service: the install-service and uninstall-service
// subcommands, and the -windows-service run mode. All of it is
// platform-neutral (package winsvc hides the SCM behind an interface), so
// it builds and is tested on every OS; only winsvc.Connect, winsvc.Run and
// winsvc.OpenEventLog need Windows.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/version"
	"github.com/csi-node-proxy/csi-node-proxy/internal/winsvc"
)

// Subcommand names. The daemon itself takes flags only, so a first
// argument that is one of these words selects the subcommand.
const (
	cmdInstallService   = "install-service"
	cmdUninstallService = "uninstall-service"
)

// serviceEnv is what the service subcommands take from the machine;
// tests substitute a fake SCM and paths.
type serviceEnv struct {
	// connect connects to the SCM (winsvc.Connect).
	connect func() (winsvc.Manager, error)
	// executable is the path of the program to register (os.Executable).
	executable func() (string, error)
	// getenv reads the environment (os.Getenv).
	getenv func(string) string
	// stdout and stderr receive progress and errors.
	stdout, stderr io.Writer
	// clock waits between polls of the SCM; nil is the wall clock.
	clock winsvc.Clock
}

// realServiceEnv is the machine's.
func realServiceEnv() serviceEnv {
	return serviceEnv{connect: winsvc.Connect, executable: os.Executable, getenv: os.Getenv, stdout: os.Stdout, stderr: os.Stderr}
}

// subcommand returns the subcommand args[0] names, if any.
func subcommand(args []string) (func([]string, serviceEnv) int, bool) {
	if len(args) == 0 {
		return nil, false
	}
	switch args[0] {
	case cmdInstallService:
		return installService, true
	case cmdUninstallService:
		return uninstallService, true
	}
	return nil, false
}

// installOptions are install-service's own options.
type installOptions struct {
	name, displayName, description string
	start                          string
	now, force, dryRun             bool
	timeout                        time.Duration
}

// newInstallFlags defines install-service's options on a new set.
func newInstallFlags(o *installOptions) *flag.FlagSet {
	set := flag.NewFlagSet(cmdInstallService, flag.ContinueOnError)
	set.SetOutput(io.Discard)
	set.StringVar(&o.name, "service-name", winsvc.DefaultServiceName, "Name of the Windows service; the default is upstream csi-proxy's, so an existing csi-proxy service is replaced in place")
	set.StringVar(&o.displayName, "display-name", winsvc.DefaultDisplayName, "Display name of the service (services.msc)")
	set.StringVar(&o.description, "description", winsvc.DefaultDescription, "Description of the service")
	set.StringVar(&o.start, "start", "auto", "When the service starts: auto, delayed-auto, demand (or manual) or disabled, as sc.exe's start= option")
	set.BoolVar(&o.now, "now", false, "Start the service once installed (a service that was running before the install is started again anyway)")
	set.BoolVar(&o.force, "force", false, "Replace an existing service of that name even if it runs neither csi-proxy nor csi-node-proxy")
	set.BoolVar(&o.dryRun, "dry-run", false, "Check the flags and print the service's command line and settings; change nothing")
	set.DurationVar(&o.timeout, "timeout", winsvc.DefaultTimeout, "How long to wait for the old service to stop and the new one to start")
	return set
}

// uninstallOptions are uninstall-service's options.
type uninstallOptions struct {
	name    string
	timeout time.Duration
}

// newUninstallFlags defines uninstall-service's options on a new set.
func newUninstallFlags(o *uninstallOptions) *flag.FlagSet {
	set := flag.NewFlagSet(cmdUninstallService, flag.ContinueOnError)
	set.SetOutput(io.Discard)
	set.StringVar(&o.name, "service-name", winsvc.DefaultServiceName, "Name of the Windows service to remove")
	set.DurationVar(&o.timeout, "timeout", winsvc.DefaultTimeout, "How long to wait for the service to stop, and then to disappear")
	return set
}

// parseStart turns --start into a start type.
func parseStart(s string) (winsvc.StartType, bool, error) {
	switch strings.ToLower(s) {
	case "auto":
		return winsvc.StartAutomatic, false, nil
	case "delayed-auto":
		return winsvc.StartAutomatic, true, nil
	case "demand", "manual":
		return winsvc.StartManual, false, nil
	case "disabled":
		return winsvc.StartDisabled, false, nil
	}
	return 0, false, fmt.Errorf("--start=%q: want auto, delayed-auto, demand (or manual) or disabled", s)
}

// serviceFlagPattern matches -windows-service in any of the flag
// package's spellings.
var serviceFlagPattern = regexp.MustCompile(`^--?windows-service(=.*)?$`)

// hostFlagPattern matches a --host flag.
var hostFlagPattern = regexp.MustCompile(`^--?host(=.*)?$`)

// defaultServiceLogFile is where a service logs when its command line
// names no log destination: %ProgramData%\csi-node-proxy\<service>.log,
// its parts joined by join (filepath.Join on the machine itself,
// windowsJoin for a command line written elsewhere).
func defaultServiceLogFile(name string, getenv func(string) string, join func(...string) string) string {
	dir := getenv("ProgramData")
	if dir == "" {
		dir = `C:\ProgramData`
	}
	return join(dir, "csi-node-proxy", name+".log")
}

// windowsJoin joins path parts with backslashes, on any OS.
func windowsJoin(parts ...string) string {
	for i := range parts[:len(parts)-1] {
		parts[i] = strings.TrimRight(parts[i], `\/`)
	}
	return strings.Join(parts, `\`)
}

// klogSettings returns klog's flags, bound to its global settings (a
// parse of the daemon's flags wrote them).
func klogSettings() *flag.FlagSet {
	set := flag.NewFlagSet("klog", flag.ContinueOnError)
	set.SetOutput(io.Discard)
	klog.InitFlags(set)
	return set
}

// serviceArgs checks the daemon flags given to install-service with the
// daemon's own parser, before anything touches the SCM, and returns the
// service's arguments: the flags given, with -windows-service first if
// missing and, when the flags would send logs only to stderr (which a
// service does not have), a log file. notes say what was added.
func serviceArgs(daemonArgs []string, name string, getenv func(string) string) (args, notes []string, err error) {
	// Parsing writes klog's global settings; start from its defaults so
	// what is read back below is this command line's.
	kl := klogSettings()
	for _, kv := range [][2]string{{"log_file", ""}, {"log_dir", ""}, {"logtostderr", "true"}} {
		if err := kl.Set(kv[0], kv[1]); err != nil {
			return nil, nil, err
		}
	}
	check := func(args []string) (Config, error) {
		cfg, err := parseFlags(args)
		switch {
		case errors.Is(err, flag.ErrHelp), errors.Is(err, errVersion):
			return cfg, errors.New("-help and -version do not belong in a service's command line")
		case err != nil:
			return cfg, err
		// Without --host the default is this OS's backend: windows where
		// the service runs (elsewhere, in a dry run, it does not matter).
		case cfg.Host == hostLinux && slices.ContainsFunc(args, hostFlagPattern.MatchString):
			return cfg, errors.New("--host=linux cannot run as a Windows service")
		}
		return cfg, nil
	}
	cfg, err := check(daemonArgs)
	if err != nil {
		return nil, nil, err
	}
	args = append([]string(nil), daemonArgs...)
	if !cfg.WindowsService {
		for _, a := range daemonArgs {
			if serviceFlagPattern.MatchString(a) {
				return nil, nil, fmt.Errorf("%s contradicts %s: the service runs with -windows-service", a, cmdInstallService)
			}
		}
		args = append([]string{"-windows-service"}, args...)
		notes = append(notes, "added -windows-service: the daemon runs under the service control manager")
	}
	if cfg.PolicyFile == "" && len(cfg.PolicyPresets) == 0 {
		// The default of every other install path (the DaemonSets, the
		// Helm chart, the systemd unit): a policy in force, which lets
		// the node's administrators read and no driver in until named.
		args = append(args, "--policy-preset="+policy.NodeAdminPreset)
		notes = append(notes, "added --policy-preset="+policy.NodeAdminPreset+": as every install path, the service starts with a policy that lets Administrators read and admits no driver until you name it (--policy-preset=<driver>, or --policy=<file>; docs/operations.md)")
	}
	if cfg.logsToStderr {
		if kl.Lookup("log_file").Value.String() == "" && kl.Lookup("log_dir").Value.String() == "" {
			file := defaultServiceLogFile(name, getenv, windowsJoin)
			args = append(args, "-log_file="+file)
			notes = append(notes, fmt.Sprintf("added -log_file=%s: the flags name no log file, and a service has no stderr (give -log_file=<path> to choose)", file))
		}
		args = append(args, "-logtostderr=false")
		notes = append(notes, "added -logtostderr=false: with -logtostderr=true (klog's default) logs go only to stderr, which a service does not have")
	}
	if _, err := check(args); err != nil {
		return nil, nil, fmt.Errorf("the service's command line %q: %w", args, err)
	}
	return args, notes, nil
}

// installUsage is install-service's help.
const installUsage = `Usage: csi-node-proxy install-service [options] [--] [daemon flags]

Registers this program with the Windows service control manager as a
service that starts with the daemon flags (checked first, as the daemon
would), -windows-service and a log file added when missing. The options
below are recognised anywhere; every other argument is a daemon flag, as is
everything after "--". An existing
service of that name (upstream csi-proxy's csiproxy by default) is stopped,
re-configured in place and started again if it was running. The service
restarts on failure after 5 s, 10 s and 30 s. Run as administrator.

Options:
`

// splitInstallArgs separates install-service's own options, recognised
// by name wherever they are, from the daemon's flags (every other
// argument, in order); "--" ends the options, and everything after it is
// the daemon's. So "--" is optional, which matters in shells that eat it
// (PowerShell may, before a native program). The daemon has no flag of
// the same name as an option (a test keeps it so).
func splitInstallArgs(argv []string, set *flag.FlagSet) (own, daemon []string) {
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			return own, append(daemon, argv[i+1:]...)
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		var f *flag.Flag
		if strings.HasPrefix(a, "-") {
			f = set.Lookup(name)
		}
		switch {
		case strings.HasPrefix(a, "-") && (name == "h" || name == "help"):
			own = append(own, a)
		case f == nil:
			daemon = append(daemon, a)
		default:
			own = append(own, a)
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); (!ok || !b.IsBoolFlag()) && !hasValue && i+1 < len(argv) {
				i++
				own = append(own, argv[i]) // "-timeout 30s"
			}
		}
	}
	return own, daemon
}

// installService is the install-service subcommand.
func installService(argv []string, env serviceEnv) int {
	var o installOptions
	set := newInstallFlags(&o)
	own, daemon := splitInstallArgs(argv, set)
	if err := set.Parse(own); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(env.stdout, installUsage, set)
			return 0
		}
		say(env.stderr, "csi-node-proxy %s: %v\n", cmdInstallService, err)
		return exitUsage
	}
	start, delayed, err := parseStart(o.start)
	if err != nil {
		say(env.stderr, "csi-node-proxy %s: %v\n", cmdInstallService, err)
		return exitUsage
	}
	args, notes, err := serviceArgs(daemon, o.name, env.getenv)
	if err != nil {
		say(env.stderr, "csi-node-proxy %s: daemon flags: %v\n", cmdInstallService, err)
		return exitUsage
	}
	for _, n := range notes {
		say(env.stdout, "Note: %s\n", n)
	}
	program, err := env.executable()
	if err != nil {
		say(env.stderr, "csi-node-proxy %s: cannot tell this program's path: %v\n", cmdInstallService, err)
		return exitFailure
	}
	if !winsvc.IsAbsWindowsPath(program) {
		if abs, err := filepath.Abs(program); err == nil {
			program = abs
		}
	}
	opts := winsvc.InstallOptions{
		Name:             o.name,
		DisplayName:      o.displayName,
		Description:      o.description,
		Program:          program,
		Args:             args,
		StartType:        start,
		DelayedAutoStart: delayed,
		Start:            o.now,
		Force:            o.force,
		Timeout:          o.timeout,
		Clock:            env.clock,
		Progress:         func(s string) { say(env.stdout, "%s\n", s) },
	}
	if o.dryRun {
		say(env.stdout, "Service:      %s (display name %q, start %s, account %s)\nCommand line: %s\nRecovery:     restart after %s; failure count reset after %s\nDry run: nothing changed.\n",
			o.name, o.displayName, o.start, winsvc.LocalSystem, winsvc.CommandLine(program, args), winsvc.FormatRecovery(winsvc.DefaultRecovery), winsvc.DefaultRecoveryReset)
		return 0
	}
	m, err := env.connect()
	if err != nil {
		say(env.stderr, "csi-node-proxy %s: %v\n", cmdInstallService, err)
		return exitFailure
	}
	defer m.Disconnect() //nolint:errcheck // closing the SCM connection at exit; nothing to undo
	res, err := winsvc.Install(m, opts)
	if err != nil {
		say(env.stderr, "csi-node-proxy %s: %v\n", cmdInstallService, err)
		return exitFailure
	}
	if res.Previous != nil {
		say(env.stdout, "%s\n", rollbackHint(o.name, res.Previous.BinaryPathName))
	}
	if !res.Started {
		say(env.stdout, "Installed; not started (start it with: sc.exe start %s, or install with --now).\n", o.name)
	}
	return 0
}

// rollbackHint tells how to put a replaced service's command line back.
// sc.exe takes a command line without quotes as one quoted argument; one
// with quotes needs them escaped, so it is only shown then.
func rollbackHint(name, previous string) string {
	if strings.Contains(previous, `"`) {
		return fmt.Sprintf("Previous command line of service %s (to roll back, install that version again; see docs/operations.md): %s", name, previous)
	}
	return fmt.Sprintf("To roll back: sc.exe stop %s; sc.exe config %s binPath= \"%s\"; sc.exe start %s", name, name, previous, name)
}

// uninstallUsage is uninstall-service's help.
const uninstallUsage = `Usage: csi-node-proxy uninstall-service [options]

Stops the Windows service (waiting for calls in flight to finish), deletes
it and waits until it is gone. A service that does not exist is not an
error. Run as administrator.

Options:
`

// uninstallService is the uninstall-service subcommand.
func uninstallService(argv []string, env serviceEnv) int {
	var o uninstallOptions
	set := newUninstallFlags(&o)
	if err := set.Parse(argv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(env.stdout, uninstallUsage, set)
			return 0
		}
		say(env.stderr, "csi-node-proxy %s: %v\n", cmdUninstallService, err)
		return exitUsage
	}
	if set.NArg() > 0 {
		say(env.stderr, "csi-node-proxy %s: unexpected arguments %q\n", cmdUninstallService, set.Args())
		return exitUsage
	}
	m, err := env.connect()
	if err != nil {
		say(env.stderr, "csi-node-proxy %s: %v\n", cmdUninstallService, err)
		return exitFailure
	}
	defer m.Disconnect() //nolint:errcheck // closing the SCM connection at exit; nothing to undo
	if _, err := winsvc.Uninstall(m, winsvc.UninstallOptions{
		Name:     o.name,
		Timeout:  o.timeout,
		Clock:    env.clock,
		Progress: func(s string) { say(env.stdout, "%s\n", s) },
	}); err != nil {
		say(env.stderr, "csi-node-proxy %s: %v\n", cmdUninstallService, err)
		return exitFailure
	}
	return 0
}

// say prints a line for the operator; there is nothing to do if that
// fails.
func say(w io.Writer, format string, args ...any) { _, _ = fmt.Fprintf(w, format, args...) }

// printUsage writes a subcommand's help and options.
func printUsage(w io.Writer, text string, set *flag.FlagSet) {
	_, _ = io.WriteString(w, text)
	set.SetOutput(w)
	set.PrintDefaults()
}

// runService runs the daemon under the SCM (-windows-service) and returns
// when the service has stopped: the handler turns Stop and Shutdown into
// the same graceful shutdown SIGTERM starts.
func runService(cfg Config) error {
	h := &winsvc.Handler{Run: serviceRunner(cfg, winsvc.OpenEventLog, os.Getenv)}
	if err := winsvc.Run(winsvc.DefaultServiceName, h); err != nil {
		if errors.Is(err, winsvc.ErrNotAService) {
			return fmt.Errorf("-windows-service: %w; run without -windows-service to serve in the foreground, or install the service with: csi-node-proxy %s <flags>", err, cmdInstallService)
		}
		return fmt.Errorf("-windows-service: %w", err)
	}
	return nil
}

// nopEventLog is the event log when it cannot be opened.
type nopEventLog struct{}

func (nopEventLog) Info(string) error    { return nil }
func (nopEventLog) Warning(string) error { return nil }
func (nopEventLog) Error(string) error   { return nil }
func (nopEventLog) Close() error         { return nil }

// serviceRunner returns the daemon as the service handler runs it: it makes
// sure the log goes to a file, notes start, stop and failure in the
// Application event log (source: the service's name), and serves.
func serviceRunner(cfg Config, openEvents func(string) (winsvc.EventLog, error), getenv func(string) string) winsvc.Runner {
	return func(ctx context.Context, args []string, n winsvc.Notifier) error {
		name := winsvc.DefaultServiceName
		if len(args) > 0 && args[0] != "" {
			name = args[0]
		}
		events, err := openEvents(name)
		if err != nil {
			events = nopEventLog{}
		}
		defer events.Close() //nolint:errcheck // the event log is best effort
		dest, err := serviceLogging(name, getenv)
		if err != nil {
			_ = events.Error(fmt.Sprintf("csi-node-proxy (service %s) cannot start: %v", name, err))
			return err
		}
		if len(args) > 1 {
			klog.InfoS("Ignoring the service's start parameters: the daemon's flags are in its command line", "parameters", args[1:])
		}
		klog.InfoS("Running as a Windows service", "service", name, "version", version.String())
		_ = events.Info(fmt.Sprintf("%s starting as service %s; log: %s", version.String(), name, dest))
		err = serve(ctx, cfg, n)
		klog.Flush()
		switch {
		case err == nil:
			_ = events.Info(fmt.Sprintf("csi-node-proxy (service %s) stopped", name))
		case ctx.Err() != nil:
			klog.ErrorS(err, "Stopped at the service control manager's request, but not cleanly")
			_ = events.Warning(fmt.Sprintf("csi-node-proxy (service %s) stopped: %v", name, err))
		default:
			klog.ErrorS(err, "csi-node-proxy failed")
			_ = events.Error(fmt.Sprintf("csi-node-proxy (service %s) failed: %v; log: %s", name, err, dest))
		}
		klog.Flush()
		return err
	}
}

// serviceLogging makes sure a service's klog output lands in a file (a
// service has no stderr) and returns where it goes. The command line's
// -log_file or -log_dir wins (with -logtostderr=true klog would ignore
// them, so it is turned off); without either, the log goes to
// %ProgramData%\csi-node-proxy\<service>.log. The log file's directory is
// created, and the file opened once, so a path that cannot be written
// stops the start with that reason (klog itself would exit without one).
func serviceLogging(name string, getenv func(string) string) (string, error) {
	kl := klogSettings()
	get := func(f string) string { return kl.Lookup(f).Value.String() }
	file, dir := get("log_file"), get("log_dir")
	if get("logtostderr") == "true" {
		if file == "" && dir == "" {
			file = defaultServiceLogFile(name, getenv, filepath.Join)
			if err := kl.Set("log_file", file); err != nil {
				return "", err
			}
		}
		if err := kl.Set("logtostderr", "false"); err != nil {
			return "", err
		}
	}
	switch {
	case file != "":
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return "", fmt.Errorf("log file %s: %w", file, err)
		}
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return "", fmt.Errorf("log file: %w", err)
		}
		return file, f.Close()
	case dir != "":
		return dir + " (klog's file names)", nil
	}
	return os.TempDir() + " (klog's file names)", nil
}
