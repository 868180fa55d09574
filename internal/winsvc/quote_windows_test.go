//go:build windows

package winsvc

import (
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"

	"golang.org/x/sys/windows"
)

// TestEscapeArgMatchesSyscall: EscapeArg is syscall.EscapeArg.
func TestEscapeArgMatchesSyscall(t *testing.T) {
	args := []string{}
	for _, tc := range quoteCases {
		args = append(args, tc.arg)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = `ab \"	\\x`
	for range 2000 {
		b := make([]byte, rng.IntN(8))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		args = append(args, string(b))
	}
	for _, a := range args {
		if got, want := EscapeArg(a), syscall.EscapeArg(a); got != want {
			t.Errorf("EscapeArg(%q) = %q, syscall.EscapeArg = %q", a, got, want)
		}
	}
}

// TestCommandLineWindowsSplits: Windows' own CommandLineToArgvW (through
// windows.DecomposeCommandLine) splits what CommandLine builds into the
// program and arguments given, as SplitCommandLine does.
func TestCommandLineWindowsSplits(t *testing.T) {
	prog := `C:\Program Files\csi-node-proxy\csi-node-proxy.exe`
	var args []string
	for _, tc := range quoteCases {
		if tc.arg != "" { // CommandLineToArgvW and Go differ on nothing else here
			args = append(args, tc.arg)
		}
	}
	cl := CommandLine(prog, args)
	got, err := windows.DecomposeCommandLine(cl)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{prog}, args...)
	if !slices.Equal(got, want) {
		t.Errorf("CommandLineToArgvW(%s) =\n%q\nwant\n%q", cl, got, want)
	}
	if split := SplitCommandLine(cl); !slices.Equal(split, got) {
		t.Errorf("SplitCommandLine = %q, CommandLineToArgvW = %q", split, got)
	}
}
