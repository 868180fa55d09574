package manifests

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
)

// Daemon is what the manifests are checked against: the csi-node-proxy
// binary built from this repository, its flags and the APIs it serves.
type Daemon struct {
	// Bin is the built daemon.
	Bin string
	// Flags maps each flag name (without dashes) to whether it is a
	// boolean flag, as the daemon's -h lists them.
	Flags map[string]bool
	// APIs are the group-version endpoint names the daemon serves, such as
	// "disk-v1".
	APIs map[string]bool
}

// BuildDaemon builds the daemon (the cmd module's ./csi-node-proxy, once
// per test binary: daemonbin; TestMain removes it) and asks the binary for
// its flags and APIs.
func BuildDaemon() (*Daemon, error) {
	bin, err := daemonbin.Build(false)
	if err != nil {
		return nil, err
	}
	d := &Daemon{Bin: bin}

	// -h prints the usage on stderr and exits 0.
	_, usage, err := d.run("-h")
	if err != nil {
		return nil, fmt.Errorf("csi-node-proxy -h: %w\n%s", err, usage)
	}
	if d.Flags, err = parseUsage(usage); err != nil {
		return nil, err
	}

	// An unknown API is refused while parsing the command line (exit 2,
	// nothing started), with the list of valid names.
	_, out, err := d.run("--host=simulated", "--apis=?")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		return nil, fmt.Errorf("csi-node-proxy --apis=?: %w, want exit status 2\n%s", err, out)
	}
	if d.APIs, err = parseAPIs(out); err != nil {
		return nil, err
	}
	return d, nil
}

// run runs the daemon with args for at most 10 s.
func (d *Daemon) run(args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, d.Bin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	// No stdin, and a scratch working directory: nothing the daemon could
	// touch by accident.
	cmd.Stdin = nil
	cmd.Dir = os.TempDir()
	err = cmd.Run()
	return o.String(), e.String(), err
}

// usageFlag is a flag line of Go's flag.PrintDefaults: two spaces, the
// flag, and a type name unless it is a boolean flag.
var usageFlag = regexp.MustCompile(`^  -([A-Za-z0-9][A-Za-z0-9_.-]*)(?:\s+([a-z]\w*))?(?:\t|$)`)

// parseUsage reads the flags from -h output.
func parseUsage(usage string) (map[string]bool, error) {
	flags := map[string]bool{}
	for _, line := range strings.Split(usage, "\n") {
		if m := usageFlag.FindStringSubmatch(line); m != nil {
			flags[m[1]] = m[2] == ""
		}
	}
	// A sanity check that the format was understood.
	for _, want := range []string{"kubelet-path", "working-dir", "host", "socket-dir", "v", "version"} {
		if _, ok := flags[want]; !ok {
			return nil, fmt.Errorf("csi-node-proxy -h does not list -%s; is the usage format still Go's flag.PrintDefaults?\n%s", want, usage)
		}
	}
	if !flags["windows-service"] || flags["kubelet-path"] {
		return nil, fmt.Errorf("csi-node-proxy -h: cannot tell boolean flags from the others\n%s", usage)
	}
	return flags, nil
}

// parseAPIs reads the endpoint names from the daemon's "valid names:" list.
func parseAPIs(out string) (map[string]bool, error) {
	_, list, ok := strings.Cut(out, "valid names: ")
	if !ok {
		return nil, fmt.Errorf("csi-node-proxy --apis=? did not list the valid names:\n%s", out)
	}
	list, _, _ = strings.Cut(list, "\n")
	apis := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); strings.Contains(n, "-") { // group-version, not a whole group
			apis[n] = true
		}
	}
	if !apis["disk-v1"] {
		return nil, fmt.Errorf("csi-node-proxy --apis=? lists no disk-v1: %q", list)
	}
	return apis, nil
}

// Values are the flag values of a command line that parsed, by flag name;
// a repeated flag keeps every value.
type Values map[string][]string

// Check parses args (a daemon command line without the program name) as
// the daemon would and returns its flag values. First a mirror of the
// daemon's flag set (names and booleans from -h, Go's flag parsing) finds
// unknown flags, missing values and stray arguments with clear messages;
// then the real binary parses the same arguments with -version in front,
// which makes it print its version and exit 0 once every flag parsed, or
// exit 2 naming a value it refused. -version comes first, and the mirror
// refuses -version in args, so the daemon can never start serving.
func (d *Daemon) Check(args []string) (Values, error) {
	values := Values{}
	mirror := flag.NewFlagSet("csi-node-proxy", flag.ContinueOnError)
	mirror.SetOutput(io.Discard)
	for name, isBool := range d.Flags {
		if name == "version" {
			continue // a manifest must not ask for the version
		}
		if isBool {
			mirror.Var(boolValue{name: name, values: values}, name, "")
		} else {
			mirror.Func(name, "", func(s string) error {
				values[name] = append(values[name], s)
				return nil
			})
		}
	}
	if err := mirror.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			err = errors.New("-help does not belong in a deployment")
		}
		return nil, fmt.Errorf("%w (the daemon's flags: %s)", err, d.flagList())
	}
	if mirror.NArg() > 0 {
		return nil, fmt.Errorf("arguments %q are not flags: the daemon takes flags only (a flag that needs a value must have one)", mirror.Args())
	}

	stdout, stderr, err := d.run(append([]string{"-version"}, args...)...)
	if err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n")
		return nil, fmt.Errorf("the daemon refuses the command line %q: %w: %s", args, err, msg)
	}
	if !strings.HasPrefix(stdout, "csi-node-proxy ") {
		return nil, fmt.Errorf("the daemon, given -version and %q, printed %q, not its version", args, stdout)
	}
	return values, nil
}

// flagList is the daemon's flag names, for error messages.
func (d *Daemon) flagList() string {
	var names []string
	for n := range d.Flags {
		names = append(names, "-"+n)
	}
	slices.Sort(names)
	return strings.Join(names, " ")
}

// boolValue is a boolean flag of the mirror flag set; it records values as
// "true" or "false".
type boolValue struct {
	name   string
	values Values
}

// String is the default value, for flag's usage.
func (b boolValue) String() string { return "false" }

// IsBoolFlag makes the flag package accept it without a value.
func (b boolValue) IsBoolFlag() bool { return true }

// Set records a value, accepting what strconv.ParseBool accepts.
func (b boolValue) Set(s string) error {
	switch strings.ToLower(s) {
	case "1", "t", "true":
		s = "true"
	case "0", "f", "false":
		s = "false"
	default:
		return fmt.Errorf("not a boolean: %q", s)
	}
	b.values[b.name] = append(b.values[b.name], s)
	return nil
}

// Last returns the last value of a flag, and whether it was given.
func (v Values) Last(name string) (string, bool) {
	vs := v[name]
	if len(vs) == 0 {
		return "", false
	}
	return vs[len(vs)-1], true
}
