package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/groups"
)

// testApp builds an app with stdin text, a fake terminal answer and
// buffers for stdout and stderr.
func testApp(stdin string, terminal bool, open opener) (*app, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	return &app{
		stdin:    bufio.NewReader(strings.NewReader(stdin)),
		stdout:   &stdout,
		stderr:   &stderr,
		terminal: func() bool { return terminal },
		echoOff:  func() (func(), error) { return func() {}, nil },
		open:     open,
	}, &stdout, &stderr
}

// runApp runs the CLI in-process with args, stdin text and whether stdin
// counts as a terminal; it returns stdout, stderr and the exit code.
func runApp(t *testing.T, open opener, stdin string, terminal bool, args ...string) (string, string, int) {
	t.Helper()
	a, stdout, stderr := testApp(stdin, terminal, open)
	code := a.run(args)
	return stdout.String(), stderr.String(), code
}

// TestHelpComplete walks the whole command tree and holds every command's
// --help to the sections an operator needs: usage line, description,
// arguments, every flag with its default, the JSON output with every field
// documented, an example of this very command, and the exit codes it can
// return with their meaning.
func TestHelpComplete(t *testing.T) {
	if len(commands) < 39 {
		t.Fatalf("only %d commands; the tree lost some", len(commands))
	}
	seen := map[string]bool{}
	for i := range commands {
		cmd := &commands[i]
		t.Run(strings.ReplaceAll(cmd.path(), " ", "_"), func(t *testing.T) {
			if seen[cmd.path()] {
				t.Fatalf("%s is defined twice", cmd.path())
			}
			seen[cmd.path()] = true
			if cmd.group != "" && !isGroup(cmd.group) {
				t.Fatalf("group %q is not in commandGroups", cmd.group)
			}
			out, errOut, code := runApp(t, nil, "", false, append(strings.Fields(cmd.path()), "--help")...)
			if code != exitOK || errOut != "" {
				t.Fatalf("--help: exit %d, stderr %q", code, errOut)
			}
			// help <path> prints the same.
			if again, _, _ := runApp(t, nil, "", false, append([]string{"help"}, strings.Fields(cmd.path())...)...); again != out {
				t.Errorf("help %s differs from %s --help", cmd.path(), cmd.path())
			}
			mustContain := func(what, s string) {
				t.Helper()
				if !strings.Contains(out, s) {
					t.Errorf("help lacks %s %q:\n%s", what, s, out)
				}
			}
			mustContain("usage line", "Usage: "+progName+" "+cmd.path()+argsUsage(cmd)+" [flags]\n")
			if cmd.summary == "" || strings.TrimSpace(cmd.about) == "" {
				t.Errorf("summary or description is empty")
			}
			mustContain("summary", cmd.summary+".\n")
			mustContain("description", strings.TrimSpace(cmd.about))
			for _, section := range []string{"\nArguments:\n", "\nFlags:\n", "\nGlobal flags:\n", "\nOutput (-o json):\n", "\nExample:\n", "\nExit codes:\n"} {
				mustContain("section", section)
			}
			for _, a := range cmd.args {
				if a.help == "" {
					t.Errorf("argument %s has no description", a.name)
				}
				mustContain("argument", "  "+a.name+"  ")
			}
			// Every flag the command parses, its own and the global ones
			// it uses, is documented with its default; the --local
			// backend's flags are only counted (the top-level help lists
			// them), so a command's help is not 18 global flags long.
			root := newGlobalFlags(&globals{})
			fs, _ := leafFlags(cmd, root)
			root.VisitAll(func(f *flag.Flag) {
				if localOnly(f) && strings.Contains(out, f.Usage) {
					t.Errorf("--local backend flag --%s is described in the command's help", f.Name)
				}
			})
			fs.VisitAll(func(f *flag.Flag) {
				if f.Usage == "" {
					t.Errorf("flag --%s has no description", f.Name)
				}
				if root.Lookup(f.Name) != nil && !commandUsesGlobal(cmd, f) {
					return
				}
				if long, alias := flagAliases[f.Name]; alias {
					mustContain("flag alias", "-"+f.Name+", --"+long)
					return
				}
				mustContain("flag", "--"+f.Name)
				_, usage := flag.UnquoteUsage(f)
				if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" && !slices.Contains(cmd.required, f.Name) {
					mustContain("default of --"+f.Name, usage+" (default "+f.DefValue+")")
				}
			})
			for _, name := range cmd.required {
				if fs.Lookup(name) == nil {
					t.Errorf("required flag --%s is not defined", name)
				}
				mustContain("required flag", "(required)")
			}
			if cmd.output == nil {
				t.Fatalf("no JSON output type")
			}
			fields := jsonFields(reflect.TypeOf(cmd.output), "")
			if len(fields) == 0 {
				t.Errorf("the JSON output has no documented fields")
			}
			for _, f := range fields {
				if f.doc == "" {
					t.Errorf("JSON field %s has no doc tag", f.path)
				}
				if f.path != strings.ToLower(f.path) || strings.Contains(f.path, "-") {
					t.Errorf("JSON field %s is not snake_case", f.path)
				}
				mustContain("JSON field", "  "+f.path+"  ")
			}
			if !strings.Contains(cmd.example, progName+" "+cmd.path()) {
				t.Errorf("the example does not show %s %s:\n%s", progName, cmd.path(), cmd.example)
			}
			if cmd.mutating {
				mustContain("confirmation note", "pass --yes")
				if !strings.Contains(cmd.example, "--yes") {
					t.Errorf("the example of a mutating command should show --yes")
				}
			}
			for _, c := range cmd.exitCodes() {
				mustContain("exit code", "  "+strconv.Itoa(c)+"  "+exitMeaning[c])
			}
		})
	}
}

// TestRootAndGroupHelp: the top-level help lists every command and every
// exit code; a group's help lists its commands; a group without a command
// is a usage error that shows the group's help.
func TestRootAndGroupHelp(t *testing.T) {
	out, _, code := runApp(t, nil, "", false, "--help")
	if code != exitOK {
		t.Fatalf("--help: exit %d", code)
	}
	for _, cmd := range commands {
		if !strings.Contains(out, "  "+cmd.name) {
			t.Errorf("--help does not list %s", cmd.path())
		}
	}
	for c, meaning := range exitMeaning {
		if !strings.Contains(out, "  "+strconv.Itoa(c)+"  "+meaning) {
			t.Errorf("--help does not list exit code %d", c)
		}
	}
	for _, g := range commandGroups {
		out, _, code := runApp(t, nil, "", false, g.name, "--help")
		if code != exitOK {
			t.Errorf("%s --help: exit %d", g.name, code)
		}
		for _, cmd := range commands {
			if cmd.group == g.name && !strings.Contains(out, "  "+cmd.name) {
				t.Errorf("%s --help does not list %s", g.name, cmd.name)
			}
		}
		_, errOut, code := runApp(t, nil, "", false, g.name)
		if code != exitUsage || !strings.Contains(errOut, "Commands:") {
			t.Errorf("%s alone: exit %d, stderr %q; want 2 and the group's help", g.name, code, errOut)
		}
	}
	if _, _, code := runApp(t, nil, "", false); code != exitUsage {
		t.Errorf("no arguments: exit %d, want 2", code)
	}
}

// TestUsageErrors: a bad command line exits 2 with one line on stderr that
// names the command, and runs nothing (the opener would fail the test).
func TestUsageErrors(t *testing.T) {
	open := func(_ context.Context, _ *globals, group string) (groups.Node, error) {
		t.Errorf("a usage error reached the node (group %q)", group)
		return nil, errors.New("not to be called")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nosuch"}, progName + `: unknown command "nosuch"`},
		{[]string{"disk", "nosuch"}, progName + `: disk: unknown command "nosuch"`},
		{[]string{"disk", "stats"}, progName + ": disk stats: missing argument N"},
		{[]string{"disk", "stats", "1", "2"}, progName + `: disk stats: unexpected argument "2"`},
		{[]string{"disk", "stats", "x"}, progName + `: disk stats: disk number "x"`},
		{[]string{"disk", "stats", "-1"}, progName + ": disk stats: unknown flag -1"},
		{[]string{"disk", "list", "--nosuch"}, progName + ": disk list: unknown flag --nosuch"},
		{[]string{"volume", "list"}, progName + ": volume list: missing argument N"},
		{[]string{"volume", "list", "1", "--disk", "2"}, "disk 1 and --disk 2 disagree"},
		{[]string{"-q", "disk", "list"}, progName + ": unknown flag -q (see " + progName + " --help)"},
		{[]string{"disk", "list", "-outptu", "json"}, "unknown flag --outptu; did you mean --output?"},
		{[]string{"disk", "list", "--timeout=x"}, `invalid value "x" for flag --timeout`},
		{[]string{"-o", "yml", "disk", "list"}, progName + `: disk list: -o "yml": want table, wide, json, yaml or jsonpath=TEMPLATE; did you mean yaml?`},
		{[]string{"-o", "jsonpath={..a}", "disk", "list"}, "filters, functions and recursive descent are not supported"},
		{[]string{"-o", "jsonpath={range .a[*]}x", "disk", "list"}, "without {end}"},
		{[]string{"dsik", "list"}, `unknown command "dsik"; did you mean disk?`},
		{[]string{"volume", "fromat"}, `volume: unknown command "fromat"; did you mean format?`},
		{[]string{"disk", "list", "--no-header"}, "did you mean --no-headers?"},
		{[]string{"--endpoint-prefix=a/b", "disk", "list"}, `--endpoint-prefix: endpoint prefix "a/b"`},
		{[]string{"completion", "tcsh"}, `SHELL "tcsh": want bash, zsh, fish, powershell`},
		{[]string{"--local", "deprecations"}, "with --local no daemon is involved"},
		{[]string{"disk", "list", "--timeout=0s"}, progName + ": disk list: --timeout must be positive"},
		{[]string{"iscsi", "targets", "--portal", "10.0.0.1:99999"}, progName + `: iscsi targets: portal "10.0.0.1:99999": port "99999" is not a TCP port`},
		{[]string{"iscsi", "connect", "iqn.2003-01.org.example:t", "--portal", "h", "--auth", "kerberos"}, progName + `: iscsi connect: --auth "kerberos"`},
		{[]string{"iscsi", "connect", "iqn.2003-01.org.example:t", "--portal", "h", "--chap-user", "u"}, "--chap-user and --chap-secret-file need --auth"},
		{[]string{"smb", "map", `\\s\x`, "--password-file", "/dev/null"}, "--password-file needs --user"},
		{[]string{"smb", "map", `\\s\x`, "--user", "u", "--yes"}, "password for u is needed: give --password-file FILE"},
		{[]string{"smb", "map", `\\s\x`, "--user", "u", "--password-file", "/nonexistent/pw", "--yes"}, "--password-file: open /nonexistent/pw"},
		{[]string{"volume", "resize", "v", "--size", "10GB", "--yes"}, "decimal units are ambiguous"},
		{[]string{"health", "--group", "nosuch"}, `--group "nosuch"`},
		{[]string{"help", "disk", "nosuch"}, `no command "disk nosuch"`},
	} {
		out, errOut, code := runApp(t, open, "", false, tc.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2, one line containing %q", tc.args, code, out, errOut, tc.want)
		}
	}
}
