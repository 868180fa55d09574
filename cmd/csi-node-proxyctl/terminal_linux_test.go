package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/syncbuf"
)

// openPTY opens a pseudo-terminal pair: the master (what a terminal
// emulator holds) and the slave (what a shell's stdin is).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}

// TestTerminalDetection: a pseudo-terminal is a terminal, a pipe and a
// file are not; echoOff clears ECHO and its restore sets it again.
func TestTerminalDetection(t *testing.T) {
	_, slave := openPTY(t)
	if !isTerminal(slave) {
		t.Error("a pseudo-terminal is not detected as a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(r) || isTerminal(f) {
		t.Error("a pipe or /dev/null is detected as a terminal")
	}
	echo := func() bool {
		tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		return tio.Lflag&unix.ECHO != 0
	}
	if !echo() {
		t.Fatal("a new pseudo-terminal does not echo")
	}
	restore, err := echoOff(slave)
	if err != nil {
		t.Fatal(err)
	}
	if echo() {
		t.Error("echoOff left ECHO on")
	}
	restore()
	if !echo() {
		t.Error("restore left ECHO off")
	}
	if _, err := echoOff(r); err == nil {
		t.Error("echoOff on a pipe succeeded")
	}
}

// waitFor polls buf until it contains s.
func waitFor(t *testing.T, buf *syncbuf.Buffer, s string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(buf.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("%q did not appear; got %q", s, buf.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestInteractiveOnATerminal runs the CLI binary with a pseudo-terminal
// as stdin, as an operator at a shell would: smb map asks for the
// password with echo off, then asks for confirmation, and maps the share
// on "y". The terminal never echoes the password (what it echoes is what
// the operator's screen shows), and neither the CLI nor the daemon prints
// it. disk offline declined with "n" changes nothing.
func TestInteractiveOnATerminal(t *testing.T) {
	d := startDaemon(t)
	master, slave := openPTY(t)
	var screen syncbuf.Buffer
	go func() { _, _ = io.Copy(&screen, master) }() // ends when the master closes

	run := func(args []string, answers ...[2]string) (string, string, int) {
		t.Helper()
		var stdout bytes.Buffer
		var stderr syncbuf.Buffer
		cmd := exec.Command(cliBin, append([]string{"--socket-dir", d.socketDir}, args...)...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for _, a := range answers {
			waitFor(t, &stderr, a[0]) // type only once asked: echo is off only then
			if _, err := master.Write([]byte(a[1] + "\n")); err != nil {
				t.Fatal(err)
			}
		}
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return stdout.String(), stderr.String(), code
	}

	out, errOut, code := run([]string{"smb", "map", `\\fileserver\share`, `C:\csi\smb`, "--user", `CONTOSO\csi`},
		[2]string{`Password for CONTOSO\csi: `, smbPassword},
		[2]string{"This will map \\\\fileserver\\share for the whole node as CONTOSO\\csi and link C:\\csi\\smb to it.\nProceed? [y/N] ", "y"})
	if code != exitOK || out != `\\fileserver\share is mapped; C:\csi\smb links to it`+"\n" {
		t.Fatalf("smb map on a terminal: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	smbErr := errOut
	if _, _, code := d.cli(t, "", "fs", "is-symlink", `C:\csi\smb`); code != exitOK {
		t.Errorf("the link was not made: fs is-symlink exit %d", code)
	}

	out, errOut, code = run([]string{"disk", "offline", "1"}, [2]string{"This will take disk 1 offline.\nProceed? [y/N] ", "n"})
	if code != exitDeclined || out != "" || !strings.Contains(errOut, "not confirmed") {
		t.Errorf("declined disk offline: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if out, _, _ := d.cli(t, "", "disk", "stats", "1", "-o", "json"); !strings.Contains(out, `"online": true`) {
		t.Errorf("disk 1 changed although the change was declined: %s", out)
	}

	time.Sleep(100 * time.Millisecond) // let the last echo reach the screen
	shown := screen.String()
	if !strings.Contains(shown, "y") || !strings.Contains(shown, "n") {
		t.Fatalf("the terminal echoed neither answer, so the check below proves nothing: %q", shown)
	}
	log, err := os.ReadFile(filepath.Clean(d.logPath))
	if err != nil {
		t.Fatal(err)
	}
	for where, s := range map[string]string{"the terminal": shown, "stderr": smbErr, "the daemon log": string(log)} {
		if strings.Contains(s, smbPassword) {
			t.Errorf("%s shows the password", where)
		}
	}
}
