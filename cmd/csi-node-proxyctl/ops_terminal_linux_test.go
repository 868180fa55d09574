package main

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/syncbuf"
)

// TestTerminalValidationAndProgress runs the CLI binary on a
// pseudo-terminal, as an operator at a shell would: a malformed path is
// refused before any prompt appears (exit 6, nothing asked), and a format
// shows its progress line with the elapsed time on the terminal (stderr),
// erased at the end, while stdout (a pipe) gets only the result.
func TestTerminalValidationAndProgress(t *testing.T) {
	d := startDaemon(t)
	master, slave := openPTY(t)
	var screen syncbuf.Buffer
	go func() { _, _ = io.Copy(&screen, master) }() // ends when the master closes

	run := func(args ...string) (string, int) {
		t.Helper()
		var stdout bytes.Buffer
		cmd := exec.Command(cliBin, append(d.flags(), args...)...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &stdout, slave
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return stdout.String(), code
	}

	// No --yes: on a terminal the CLI would ask, but the path is refused
	// first.
	out, code := run("fs", "mkdir", `relative\dir`)
	time.Sleep(100 * time.Millisecond) // let the terminal output arrive
	if code != exitInvalid || out != "" || strings.Contains(screen.String(), "Proceed?") || !strings.Contains(screen.String(), "not an absolute") {
		t.Fatalf("malformed path on a terminal: exit %d, stdout %q, screen %q; want exit 6 before any prompt", code, out, screen.String())
	}

	raw, _ := d.volumeOf(t, "3")
	out, code = run("volume", "format", raw, "--yes")
	time.Sleep(100 * time.Millisecond)
	shown := screen.String()
	if code != exitOK || out != "volume "+raw+" is formatted\n" {
		t.Fatalf("format: exit %d, stdout %q, screen %q", code, out, shown)
	}
	if !strings.Contains(shown, "Formatting volume "+raw+"... 0s") || !strings.Contains(shown[strings.Index(shown, "Formatting"):], "\x1b[K") {
		t.Errorf("the terminal shows no progress line with the elapsed time, erased after: %q", shown)
	}
}
