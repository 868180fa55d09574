package main

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/genfile"
)

// updateCLIDoc makes TestCLIDoc rewrite docs/cli.md.
var updateCLIDoc = flag.Bool("update-docs", false, "rewrite docs/cli.md from the command table")

// cliDoc is the generated reference, from this package.
var cliDoc = genfile.File{
	Path:    filepath.Join("..", "..", "docs", "cli.md"),
	Missing: "run go test -C cmd ./csi-node-proxyctl -run TestCLIDoc -args -update-docs",
	Stale:   "docs/cli.md is stale (a command, flag or help text changed): run go test -C cmd ./csi-node-proxyctl -run TestCLIDoc -args -update-docs and commit it.",
}

// renderCLIDoc renders docs/cli.md: the top-level help, then every
// command's help, from the same table and functions --help uses, so the
// reference cannot say something the binary does not.
func renderCLIDoc() string {
	root := newGlobalFlags(&globals{})
	var b strings.Builder
	b.WriteString(`<!-- Generated from the command table in cmd/csi-node-proxyctl by
     "go test -C cmd ./csi-node-proxyctl -run TestCLIDoc -args -update-docs"; do not edit.
     TestCLIDoc fails when this file is stale. -->

# csi-node-proxyctl reference

` + "`csi-node-proxyctl`" + ` is the operator's command line for csi-node-proxy: every read of every
API group and the changes operators need, against the daemon's endpoints or, with
` + "`--local`" + `, in-process. This page is its ` + "`--help`" + `, every command's included. How to use
it when something is wrong: [operations.md](operations.md#troubleshooting-with-csi-node-proxyctl).
Binaries: ` + "`make build`" + ` (` + "`bin/csi-node-proxyctl`" + `) and ` + "`make release`" + `
(` + "`dist/<os>-<arch>/csi-node-proxyctl[.exe]`" + `).

Conventions every command follows:

- Output is a table (stable column order, rows sorted, sizes as ` + "`1.5 GiB`" + ` next to the exact
  bytes), or with ` + "`-o json`" + ` one JSON document with the snake_case fields each command lists
  under "Output". A change prints one sentence, or its JSON document. A failure prints nothing on
  stdout (except ` + "`fs exists`" + `, ` + "`health`" + ` and ` + "`version`" + `, which print their answer and
  then exit non-zero) and one line on stderr: ` + "`csi-node-proxyctl: <group> <command>: <message>`" + `.
- The exit code says what kind of failure it was (listed under "Exit codes" in the overview), the same in both formats.
- A command that changes the node says what it will do and asks ` + "`[y/N]`" + ` on a terminal (on
  stderr); when stdin is not a terminal it refuses with exit 7 unless ` + "`--yes`" + ` is given, so a
  script that forgot ` + "`--yes`" + ` changes nothing.
- Secrets (SMB password, CHAP secrets) are never command-line arguments: a file, ` + "`-`" + ` for
  stdin, or typed at a prompt without echo. They are never printed.
- Flags may stand before or after the arguments; everything after ` + "`--`" + ` is an argument.

## Overview

` + "```text\n")
	writeRootHelp(&b, root)
	b.WriteString("```\n")
	for _, cmd := range commands {
		b.WriteString("\n## " + progName + " " + cmd.path() + "\n\n```text\n")
		writeCommandHelpWith(&b, &cmd, root, false)
		b.WriteString("```\n")
	}
	return b.String()
}

// TestCLIDoc fails when docs/cli.md differs from what the command table
// renders; -update-docs rewrites it.
func TestCLIDoc(t *testing.T) {
	cliDoc.Check(t, renderCLIDoc(), *updateCLIDoc)
}
