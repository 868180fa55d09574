package winsvc

import (
	"slices"
	"strings"
	"testing"
)

// quoteCases are arguments with their expected quoting (syscall.EscapeArg's
// output; quote_windows_test.go checks that it agrees).
var quoteCases = []struct{ arg, want string }{
	{"", `""`},
	{"-v=5", `-v=5`},
	{`-log_file=C:\etc\kubernetes\logs\csi-proxy.log`, `-log_file=C:\etc\kubernetes\logs\csi-proxy.log`},
	{`-working-dir=C:\Program Files\k`, `"-working-dir=C:\Program Files\k"`},
	{`-working-dir=C:\dir with space\`, `"-working-dir=C:\dir with space\\"`},
	{`a"b`, `a\"b`},
	{`a\"b`, `a\\\"b`},
	{`a\\b`, `a\\b`},
	{`tab	in`, "\"tab\tin\""},
	{`"`, `\"`},
	{`\`, `\`},
	{`\ `, `"\ "`},
	{`-pipe-sddl=D:P(A;;GA;;;BA)(A;;GA;;;SY)`, `-pipe-sddl=D:P(A;;GA;;;BA)(A;;GA;;;SY)`},
	{`%ProgramData%\x.log`, `%ProgramData%\x.log`},
}

func TestEscapeArg(t *testing.T) {
	for _, tc := range quoteCases {
		if got := EscapeArg(tc.arg); got != tc.want {
			t.Errorf("EscapeArg(%q) = %q, want %q", tc.arg, got, tc.want)
		}
	}
}

// TestCommandLineRoundTrip: what CommandLine builds, the Windows rules
// (as Go's os.Args applies them) split back into the same program and
// arguments.
func TestCommandLineRoundTrip(t *testing.T) {
	prog := `C:\Program Files\csi-node-proxy\csi-node-proxy.exe`
	var args []string
	for _, tc := range quoteCases {
		args = append(args, tc.arg)
	}
	cl := CommandLine(prog, args)
	if cl[0] != '"' {
		t.Errorf("program not quoted: %s", cl)
	}
	got := SplitCommandLine(cl)
	if want := append([]string{prog}, args...); !slices.Equal(got, want) {
		t.Errorf("SplitCommandLine(CommandLine(...)) =\n%q\nwant\n%q\n(command line %s)", got, want, cl)
	}
}

func FuzzCommandLineRoundTrip(f *testing.F) {
	for _, tc := range quoteCases {
		f.Add(tc.arg, `C:\k\csi-node-proxy.exe`)
	}
	f.Fuzz(func(t *testing.T, arg, prog string) {
		if !IsAbsWindowsPath(prog) || strings.HasSuffix(prog, `\`) || containsAny(prog, "\"\x00") || containsAny(arg, "\x00") {
			t.Skip()
		}
		got := SplitCommandLine(CommandLine(prog, []string{arg, "x"}))
		if want := []string{prog, arg, "x"}; !slices.Equal(got, want) {
			t.Errorf("round trip of %q: %q", arg, got)
		}
	})
}

func containsAny(s, chars string) bool {
	for _, c := range chars {
		for _, d := range s {
			if c == d {
				return true
			}
		}
	}
	return false
}

func TestSplitCommandLineUpstream(t *testing.T) {
	// Upstream's documented install, as sc.exe stores it.
	cl := `C:\etc\kubernetes\node\bin\csi-proxy.exe -v=5 -windows-service -log_file=C:\etc\kubernetes\logs\csi-proxy.log -logtostderr=false`
	want := []string{`C:\etc\kubernetes\node\bin\csi-proxy.exe`, "-v=5", "-windows-service", `-log_file=C:\etc\kubernetes\logs\csi-proxy.log`, "-logtostderr=false"}
	if got := SplitCommandLine(cl); !slices.Equal(got, want) {
		t.Errorf("got %q", got)
	}
	// "" inside quotes is a quote and ends the quoting (Go's rule).
	if got := SplitCommandLine(`"a""b" c`); !slices.Equal(got, []string{`a"b c`}) {
		t.Errorf(`"a""b" c: %q`, got)
	}
}

func TestProgramName(t *testing.T) {
	for in, want := range map[string]string{
		`C:\etc\kubernetes\node\bin\csi-proxy.exe -v=5 -windows-service`: "csi-proxy.exe",
		`"C:\Program Files\csi\csi-node-proxy.exe" -windows-service`:     "csi-node-proxy.exe",
		`C:\Program Files\csi\CSI-Proxy.EXE -windows-service`:            "csi-proxy.exe",
		`C:\my.exe.dir\csi-proxy.exe -x`:                                 "csi-proxy.exe",
		`C:\Windows\System32\svchost.exe -k netsvcs`:                     "svchost.exe",
		`C:\k\program`:   "program",
		`  "C:\k\x.exe"`: "x.exe",
	} {
		if got := ProgramName(in); got != want {
			t.Errorf("ProgramName(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestIsAbsWindowsPath(t *testing.T) {
	for p, want := range map[string]bool{
		`C:\k\x.exe`: true, `c:/k/x.exe`: true, `\\srv\share\x.exe`: true,
		`C:x.exe`: false, `x.exe`: false, `/usr/bin/x`: false, `\\`: false, `1:\x`: false, ``: false,
	} {
		if got := IsAbsWindowsPath(p); got != want {
			t.Errorf("IsAbsWindowsPath(%q) = %v, want %v", p, got, want)
		}
	}
}
