package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/cmd/internal/smbflags"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// progName is how the CLI names itself in usage lines and errors.
const progName = "csi-node-proxyctl"

// defaultTimeout bounds one command's calls. Formatting or resizing a
// large volume is the slowest thing a command does; a minute is generous
// for everything else and still ends a hung script.
const defaultTimeout = time.Minute

// command is one leaf of the command tree: "disk list", "version". The
// table of commands is the single source of the dispatcher, --help,
// docs/cli.md and the help-completeness test.
type command struct {
	// group is the API group ("disk", "volume", "fs", "smb", "iscsi",
	// "system"), or "" for a top-level command (version, health).
	group string
	// name is the verb: "list", "online".
	name string
	// api is the API group the command dials when it is not group's
	// (apiGroup): smb ls, gc and reconcile call csi-node-proxy's own
	// smbmappings group.
	api string
	// args are the positional arguments in order; optional ones come
	// last.
	args []argSpec
	// summary is one line: what the command does.
	summary string
	// about is the longer description: which call it makes, what
	// "success" means for it. Wrapped by hand at about 80 columns.
	about string
	// example is one or more command lines, with a comment each.
	example string
	// mutating commands change the node: they ask for confirmation (or
	// need --yes) and their help says so.
	mutating bool
	// exits are the exit codes the command can return besides those every
	// command can (0, 1, 2, 4, 5) and 7 for mutating commands.
	exits []int
	// output is a zero value of what -o json prints; its fields' json and
	// doc tags are the documentation of the JSON output.
	output any
	// required are flags the command cannot do without.
	required []string
	// flags defines the command's own flags on fs and returns the function
	// that runs the command with their parsed values.
	flags func(fs *flag.FlagSet) runFunc
}

// argSpec is one positional argument.
type argSpec struct {
	name     string
	help     string
	optional bool
	// check, when set, refuses a malformed value before the command asks
	// or calls anything (check.go); its error wraps
	// errdefs.ErrInvalidArgument, so it exits 6 as the proxy's would.
	check func(string) error
}

// runFunc runs a parsed command. It returns what to print (nil for
// nothing) and the error that decides the exit code; both may be set
// ("fs exists" of a missing path prints false and exits 3).
type runFunc func(c *call) (*view, error)

// path is the command as typed: "disk list", "version".
func (cmd *command) path() string {
	if cmd.group == "" {
		return cmd.name
	}
	return cmd.group + " " + cmd.name
}

// exitCodes returns every exit code the command can return, sorted.
func (cmd *command) exitCodes() []int {
	codes := []int{exitOK, exitFailure, exitUsage, exitPermission, exitUnavailable}
	codes = append(codes, cmd.exits...)
	if cmd.mutating {
		codes = append(codes, exitDeclined)
	}
	slices.Sort(codes)
	return slices.Compact(codes)
}

// groupInfo describes a group of commands for the top-level help.
type groupInfo struct {
	name    string
	summary string
}

// commandGroups lists the groups in the order help shows them.
var commandGroups = []groupInfo{
	{"disk", "the node's disks: list, IDs, size, online state, partitioning, rescan"},
	{"volume", "volumes on the disks: list, stats, format, mount, resize, which disk or path"},
	{"fs", "paths inside the working directories: exists, mkdir, rmdir, symlinks"},
	{"smb", "node-wide SMB mappings: map, unmap, and list, repair or collect them (ls, reconcile, gc)"},
	{"iscsi", "iSCSI portals, targets, sessions and their disks"},
	{"system", "BIOS serial number and host services"},
}

// commands is the command tree, built once from each group's file.
var commands = slices.Concat(topCommands(), []command{deprecationsCommand(), completionCommand()}, diskCommands(), volumeCommands(), fsCommands(),
	smbCommands(), smbMappingCommands(), iscsiCommands(), systemCommands())

// lookup finds a command by group and name ("" group for top-level).
func lookup(group, name string) *command {
	for i := range commands {
		if commands[i].group == group && commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// isGroup tells whether word names a command group.
func isGroup(word string) bool {
	return slices.ContainsFunc(commandGroups, func(g groupInfo) bool { return g.name == word })
}

// globals are the flags every command takes, before or after its name.
type globals struct {
	socketDir       string
	local           bool
	host            string
	kubeletPath     string
	workingDirs     stringList
	simConfig       string
	simDisks        stringList
	allowedServices stringList
	// clearReadOnlyOnOnline is the daemon's --clear-read-only-on-online.
	clearReadOnlyOnOnline bool
	linuxFilesystem       string
	// linuxHostMountTable and linuxDiskReadTimeout are the Linux block
	// backend's, as the daemon's flags of the same names.
	linuxHostMountTable  string
	linuxDiskReadTimeout time.Duration
	// smb holds the --smb-* flags.
	smb            smbflags.Values
	auditLog       string
	auditReads     bool
	auditSync      bool
	nodeName       string
	policy         string
	policyPresets  []string
	requirePrivacy bool
	output         string
	timeout        time.Duration
	yes            bool
	endpointPrefix string
	noHeaders      bool
	showVersion    bool
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// commaList is a repeatable flag that also takes a comma-separated list,
// as kubectl's list flags do: "--group disk,volume" is "--group disk
// --group volume". Only for values that cannot hold a comma (group names),
// never paths.
type commaList []string

func (l *commaList) String() string { return strings.Join(*l, ",") }

func (l *commaList) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

// Output formats for -o.
const (
	formatTable = "table"
	formatWide  = "wide"
	formatJSON  = "json"
	formatYAML  = "yaml"
)

// outputFormats are the values -o takes, for messages and completion;
// jsonpath=TEMPLATE (jsonpath.go) is the one that carries a value.
var outputFormats = []string{formatTable, formatWide, formatJSON, formatYAML, "jsonpath="}

// flagAliases are short names that mean the same flag; help shows them
// together ("-o, --output").
var flagAliases = map[string]string{"o": "output"}

// defaultHost is the real backend of this OS, as the daemon's --host
// defaults; "" on an OS without one.
func defaultHost() string {
	switch runtime.GOOS {
	case "windows", "linux":
		return runtime.GOOS
	}
	return ""
}

// newGlobalFlags defines the global flags on a new set writing into g.
// Leaf commands register the same flag.Values, so a global flag may stand
// before or after the command's name.
func newGlobalFlags(g *globals) *flag.FlagSet {
	fs := flag.NewFlagSet(progName, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned and printed as one line
	fs.StringVar(&g.socketDir, "socket-dir", transport.DefaultSocketDir, "The `directory` of the daemon's Unix sockets, as the daemon's --socket-dir (ignored on Windows, where the endpoints are named pipes)")
	fs.BoolVar(&g.local, "local", false, "Run the calls in this process through library mode instead of the daemon: needs the daemon's privileges and the same --host, --kubelet-path and --working-dir the daemon would be given")
	fs.StringVar(&g.host, "host", "", "With --local: the host backend, windows, linux or simulated; empty means this OS's real backend, as the daemon's default")
	fs.StringVar(&g.kubeletPath, "kubelet-path", "", `With --local: the kubelet's directory, appended to the working directories (default: the daemon's, C:\var\lib\kubelet, or /var/lib/kubelet with --host=linux)`)
	fs.Var(&g.workingDirs, "working-dir", "With --local: a `directory` calls may touch besides --kubelet-path (repeatable)")
	fs.StringVar(&g.simConfig, "sim-config", "", "With --local --host=simulated: JSON `file` describing the simulated node, as the daemon's --sim-config")
	fs.Var(&g.simDisks, "sim-disk", "With --local --host=simulated: an extra simulated disk, a `spec` such as size=10GiB,location=1:0:0:2 (repeatable)")
	fs.Var(&g.allowedServices, "allowed-service", "With --local: the `name` of a service that system start-service and stop-service may touch (repeatable; default none)")
	fs.BoolVar(&g.clearReadOnlyOnOnline, "clear-read-only-on-online", false, "With --local: disk online also clears its read-only attribute, as the daemon's --clear-read-only-on-online")
	fs.StringVar(&g.linuxFilesystem, "linux-filesystem", "", "With --local --host=linux: the filesystem volume format creates, ext4 or xfs; empty means ext4, as the daemon's default")
	fs.StringVar(&g.linuxHostMountTable, "linux-host-mount-table", "", "With --local --host=linux: the host's mount table (a mountinfo `file`), read besides this process's own, so that a disk mounted only on the host, outside the working directories, is never changed, as the daemon's --linux-host-mount-table; empty means the daemon's default, /proc/1/mountinfo, ignored when unreadable; none reads only this process's own table")
	fs.DurationVar(&g.linuxDiskReadTimeout, "linux-disk-read-timeout", 0, "With --local --host=linux: how long a call waits for one disk's partition table, as the daemon's --linux-disk-read-timeout; 0 means the daemon's default, 10s")
	smbflags.Add(fs, &g.smb, "With --local --host=linux")
	fs.StringVar(&g.auditLog, "audit-log", "", "With --local: the `file` to append an audit record of every change to, in the daemon's format (- for stderr); empty means none")
	fs.BoolVar(&g.auditReads, "audit-reads", false, "With --local --audit-log: also audit calls that only read, as the daemon's --audit-reads")
	fs.BoolVar(&g.auditSync, "audit-sync", false, "With --local --audit-log: fsync the audit file after every record, as the daemon's --audit-sync")
	fs.StringVar(&g.nodeName, "node-name", "", "With --local --audit-log: the node's `name` in every audit record, as the daemon's --node-name; empty means $NODE_NAME, else the host name")
	fs.Func("policy-preset", "With --local: built-in policy rules to add, as the daemon's --policy-preset (repeatable, or comma-separated)", func(v string) error {
		for n := range strings.SplitSeq(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				g.policyPresets = append(g.policyPresets, n)
			}
		}
		return nil
	})
	fs.StringVar(&g.policy, "policy", "", "With --local: the YAML authorisation policy `file`, as the daemon's --policy; this process is the caller, and calls no rule allows are refused (exit 4); empty means none")
	fs.BoolVar(&g.requirePrivacy, "require-privacy", true, "With --local: new SMB global mappings demand encryption, as the daemon's --require-privacy")
	fs.StringVar(&g.endpointPrefix, "endpoint-prefix", transport.DefaultEndpointPrefix, "The daemon's endpoint name prefix, as its --endpoint-prefix: the CLI reaches <prefix>-<group>-<version> (a second proxy beside upstream's during a migration has its own)")
	fs.StringVar(&g.output, "output", formatTable, "Output format: table (for people), wide (the table with more columns, where a command has them), json (one document, for scripts and jq), yaml (the same document as YAML) or jsonpath=TEMPLATE (fields of the JSON document, e.g. '{.volumes[*].volume_id}'; a subset of kubectl's: paths, [N], [*], {range}...{end}, quoted strings)")
	fs.BoolVar(&g.noHeaders, "no-headers", false, "Print tables without their header line, for cut and awk")
	fs.BoolVar(&g.showVersion, "version", false, "Print the CLI's version and the daemon's build, then exit (the version command says more)")
	fs.StringVar(&g.output, "o", formatTable, "Short for --output")
	fs.DurationVar(&g.timeout, "timeout", defaultTimeout, "How long the command's calls may take, connecting included")
	fs.BoolVar(&g.yes, "yes", false, "Do not ask before changing the node; needed for changes when stdin is not a terminal")
	return fs
}

// call is one parsed command being run.
type call struct {
	app *app
	cmd *command
	g   *globals
	// args are the positional arguments, as many as cmd.args names.
	args []string
	// ctx bounds the command's calls by --timeout. It is set by connect,
	// so time spent answering a confirmation prompt does not count.
	ctx    context.Context
	cancel context.CancelFunc
	node   groups.Node
}

// connect opens the node once and starts the --timeout clock.
func (c *call) connect() (groups.Node, error) {
	if c.node != nil {
		return c.node, nil
	}
	c.ctx, c.cancel = context.WithTimeout(context.Background(), c.g.timeout)
	open := c.app.open
	if open == nil {
		open = openNode
	}
	dial := c.cmd.group
	if c.cmd.api != "" {
		dial = c.cmd.api
	}
	n, err := open(c.ctx, c.g, dial)
	var usage *usageError
	switch {
	case errors.As(err, &usage):
		return nil, err
	case err != nil:
		return nil, &unavailableError{err: err, hint: unreachableHint(c.g)}
	}
	c.node = n
	return n, nil
}

// close releases the node and the timeout.
func (c *call) close() {
	if c.node != nil {
		_ = c.node.Close() // the command is over; a failure to close changes nothing it did
	}
	if c.cancel != nil {
		c.cancel()
	}
}

// run runs the CLI with args (without the program name) and returns the
// exit code.
func (a *app) run(args []string) int {
	g := &globals{}
	root := newGlobalFlags(g)
	if err := root.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			writeRootHelp(a.stdout, root)
			return exitOK
		}
		return a.fail("", &usageError{msg: flagDashes(err.Error()) + flagSuggestion(err, root) + " (see " + progName + " --help)"})
	}
	if g.showVersion {
		return a.printVersion(g)
	}
	rest := root.Args()
	if len(rest) == 0 {
		writeRootHelp(a.stderr, root)
		return exitUsage
	}
	word, rest := rest[0], rest[1:]
	if word == "help" {
		return a.help(root, rest)
	}
	var cmd *command
	switch {
	case isGroup(word):
		if len(rest) == 0 || rest[0] == "-h" || rest[0] == "--help" || rest[0] == "-help" || rest[0] == "help" {
			w, code := a.stdout, exitOK
			if len(rest) == 0 {
				w, code = a.stderr, exitUsage
			}
			writeGroupHelp(w, word)
			return code
		}
		if cmd = lookup(word, rest[0]); cmd == nil {
			return a.fail(word, usagef("unknown command %q%s (see %s %s --help)", rest[0], didYouMean(rest[0], verbsOf(word)), progName, word))
		}
		rest = rest[1:]
	default:
		if cmd = lookup("", word); cmd == nil {
			return a.fail("", usagef("unknown command %q%s (see %s --help)", word, didYouMean(word, firstWords()), progName))
		}
	}
	return a.runCommand(cmd, root, g, rest)
}

// leafFlags builds a command's flag set: the global flags (sharing their
// values with root) and the command's own.
func leafFlags(cmd *command, root *flag.FlagSet) (*flag.FlagSet, runFunc) {
	fs := flag.NewFlagSet(progName+" "+cmd.path(), flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	root.VisitAll(func(f *flag.Flag) { fs.Var(f.Value, f.Name, f.Usage) })
	run := cmd.flags(fs)
	return fs, run
}

// runCommand parses a command's flags and arguments and runs it.
func (a *app) runCommand(cmd *command, root *flag.FlagSet, g *globals, args []string) int {
	fs, run := leafFlags(cmd, root)
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		writeCommandHelp(a.stdout, cmd, root)
		return exitOK
	}
	if err == nil {
		err = checkCommandLine(cmd, fs, g, pos)
	}
	if err != nil {
		return a.fail(cmd.path(), &usageError{msg: flagDashes(err.Error()) + flagSuggestion(err, fs) + " (see " + progName + " " + cmd.path() + " --help)"})
	}
	if err := checkArgs(cmd, pos); err != nil {
		return a.fail(cmd.path(), err)
	}
	c := &call{app: a, cmd: cmd, g: g, args: pos}
	defer c.close()
	v, err := run(c)
	if v != nil {
		if werr := v.write(a.stdout, g.output, g.noHeaders); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return a.fail(cmd.path(), err)
	}
	return exitOK
}

// checkCommandLine checks what the flag package cannot: the number of
// arguments, required flags and the output format.
func checkCommandLine(cmd *command, fs *flag.FlagSet, g *globals, pos []string) error {
	if len(pos) < len(cmd.args) && !cmd.args[len(pos)].optional {
		return fmt.Errorf("missing argument %s", cmd.args[len(pos)].name)
	}
	if len(pos) > len(cmd.args) {
		return fmt.Errorf("unexpected argument %q", pos[len(cmd.args)])
	}
	for _, name := range cmd.required {
		if !flagGiven(fs, name) {
			return fmt.Errorf("flag --%s is required", name)
		}
	}
	if tmpl, ok := strings.CutPrefix(g.output, jsonpathPrefix); ok {
		if _, err := parseJSONPath(strings.Trim(tmpl, "'")); err != nil {
			return fmt.Errorf("-o %w", err)
		}
	} else if !slices.Contains(outputFormats, g.output) {
		return fmt.Errorf("-o %q: want table, wide, json, yaml or jsonpath=TEMPLATE%s", g.output, didYouMean(g.output, outputFormats))
	}
	if err := transport.CheckEndpointPrefix(g.endpointPrefix); err != nil {
		return fmt.Errorf("--endpoint-prefix: %w", err)
	}
	if g.timeout <= 0 {
		return errors.New("--timeout must be positive")
	}
	return nil
}

// flagGiven tells whether the command line set the named flag.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// parseInterspersed parses flags anywhere among the positional arguments,
// so "volume mount ID PATH --yes" works as people type it; everything
// after "--" is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if i := len(args) - len(rest) - 1; i >= 0 && args[i] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// verbsOf lists a group's command names.
func verbsOf(group string) []string {
	var out []string
	for _, cmd := range commands {
		if cmd.group == group {
			out = append(out, cmd.name)
		}
	}
	return out
}

// firstWords are the words that may begin a command: the groups, the
// top-level commands and help.
func firstWords() []string {
	out := append(verbsOf(""), "help")
	for _, gi := range commandGroups {
		out = append(out, gi.name)
	}
	return out
}

// fail prints err as the one line scripts and people read on stderr and
// returns its exit code.
func (a *app) fail(where string, err error) int {
	prefix := progName + ": "
	if where != "" {
		prefix += where + ": "
	}
	say(a.stderr, "%s\n", prefix+oneLine(err.Error()))
	return exitCode(err)
}

// oneLine keeps an error message on one line: a joined error's parts are
// separated by "; ".
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// help answers "help [group [command]]".
func (a *app) help(root *flag.FlagSet, words []string) int {
	switch len(words) {
	case 0:
		writeRootHelp(a.stdout, root)
		return exitOK
	case 1:
		if isGroup(words[0]) {
			writeGroupHelp(a.stdout, words[0])
			return exitOK
		}
		if cmd := lookup("", words[0]); cmd != nil {
			writeCommandHelp(a.stdout, cmd, root)
			return exitOK
		}
	case 2:
		if cmd := lookup(words[0], words[1]); cmd != nil {
			writeCommandHelp(a.stdout, cmd, root)
			return exitOK
		}
	}
	return a.fail("help", usagef("no command %q (see %s --help)", strings.Join(words, " "), progName))
}
