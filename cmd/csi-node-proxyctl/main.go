// Command csi-node-proxyctl is the operator's command line for
// csi-node-proxy: it reads and changes a node's disks, volumes, paths, SMB
// mappings, iSCSI sessions and services through the daemon's endpoints (or,
// with --local, in-process through library mode), and tells which API
// group-versions the daemon serves and whether they are healthy.
//
// Every subcommand maps to one call (or a few reads) of a group Interface
// (package groups). Output is a table by default and one JSON document with
// -o json; exit codes say what kind of failure happened, so scripts can
// branch on them (see exitCodes). Subcommands that change the node ask for
// confirmation on a terminal and refuse without --yes elsewhere.
//
// The command tree is a table of commands (commands.go) dispatched by hand
// over the standard flag package: two levels (group, verb) do not need a
// framework, and the table is also what --help, docs/cli.md, the shell
// completion scripts (completion.go) and the tests that hold every help
// text complete are generated from. cobra was considered and not taken:
// the table already gives help, docs and completion, and cobra's parsing
// (pflag) would change how upstream-style single-dash flags, exit codes
// and usage errors behave, which scripts rely on.
package main

import (
	"bufio"
	"io"
	"os"
)

func main() {
	a := &app{
		stdin:          bufio.NewReader(os.Stdin),
		stdout:         os.Stdout,
		stderr:         os.Stderr,
		terminal:       func() bool { return isTerminal(os.Stdin) },
		stderrTerminal: func() bool { return isTerminal(os.Stderr) },
		echoOff:        func() (func(), error) { return echoOff(os.Stdin) },
	}
	os.Exit(a.run(os.Args[1:]))
}

// app is one run of the CLI with its standard streams. Tests build one with
// buffers and a fake terminal to run commands in-process.
type app struct {
	// stdin is shared by secret reading and the confirmation prompt, so
	// neither loses what the other buffered.
	stdin  *bufio.Reader
	stdout io.Writer
	stderr io.Writer
	// terminal tells whether stdin is an interactive terminal: only then
	// may a mutating command ask for confirmation.
	terminal func() bool
	// stderrTerminal tells whether stderr is a terminal: only then is a
	// progress line shown (progress.go). Nil means not.
	stderrTerminal func() bool
	// echoOff stops the terminal from echoing what is typed, for a secret
	// typed by hand, and returns the function that turns echo back on.
	echoOff func() (restore func(), err error)
	// open connects to the node (the daemon, or in-process with --local);
	// nil means the real connection (connect.go). Tests replace it.
	open opener
}
