package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/groups"
)

// confirmConnect is how a command that changes the node starts: the
// operator confirms what first (confirm), and only then is the proxy
// dialled, so a declined change never connects.
func (c *call) confirmConnect(what string) (groups.Node, error) {
	if err := c.confirm(what); err != nil {
		return nil, err
	}
	return c.connect()
}

// confirm asks before a change. With --yes it proceeds; on a terminal it
// says what will change and proceeds only on "y" or "yes"; without a
// terminal it refuses, because a script that forgot --yes should stop, not
// change a node nobody confirmed. The prompt goes to stderr, so stdout
// holds only the command's output.
func (c *call) confirm(what string) error {
	if c.g.yes {
		return nil
	}
	if !c.app.terminal() {
		return fmt.Errorf("would %s, but stdin is not a terminal to confirm on; pass --yes: %w", what, errDeclined)
	}
	say(c.app.stderr, "This will %s.\nProceed? [y/N] ", what)
	line, err := c.app.stdin.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read the answer: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return errDeclined
}

// readSecret reads a secret (SMB password, CHAP secret) without it ever
// being a command-line argument, which every user of the node could read
// in the process list. source is the value of the command's --*-file
// flag:
//
//   - a file name: the file's content, without one trailing newline;
//   - "-": the first line of stdin (typed without echo on a terminal);
//   - "": typed at a prompt without echo; an error without a terminal.
//
// flagName names the flag in messages, what says what the secret is for.
// The secret itself is never printed.
func (c *call) readSecret(source, flagName, what string) (string, error) {
	switch source {
	case "":
		if !c.app.terminal() {
			return "", usagef("%s is needed: give --%s FILE, or --%s - to read it from stdin", what, flagName, flagName)
		}
		return c.readHidden(what)
	case "-":
		if c.app.terminal() {
			return c.readHidden(what)
		}
		line, err := c.app.stdin.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", usagef("--%s -: read stdin: %v", flagName, err)
		}
		return trimNewline(line), nil
	}
	b, err := os.ReadFile(source)
	if err != nil {
		return "", usagef("--%s: %v", flagName, err)
	}
	return trimNewline(string(b)), nil
}

// readHidden prompts on stderr and reads one line from the terminal with
// echo off. An interrupt while echo is off turns it back on before the
// process ends, so the operator's shell is not left blind.
func (c *call) readHidden(what string) (string, error) {
	say(c.app.stderr, "%s: ", capitalize(what))
	restore, err := c.app.echoOff()
	if err != nil {
		return "", usagef("cannot turn off echo to read the %s: %v", what, err)
	}
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt)
	done := make(chan struct{})
	go func() {
		select {
		case <-interrupted:
			restore()
			say(c.app.stderr, "\n")
			os.Exit(130) // the shell's code for "ended by SIGINT"
		case <-done:
		}
	}()
	line, err := c.app.stdin.ReadString('\n')
	close(done)
	signal.Stop(interrupted)
	restore()
	say(c.app.stderr, "\n") // the newline the operator typed was not echoed
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the %s: %w", what, err)
	}
	return trimNewline(line), nil
}

// trimNewline removes one trailing line end ("\n" or "\r\n"), which
// editors and echo add to a secret file but which is not part of the
// secret.
func trimNewline(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}

// capitalize upper-cases the first letter of a prompt.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
