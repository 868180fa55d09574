package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction after line continuations are joined.
type instruction struct {
	line int
	cmd  string // upper case
	args string
}

// knownInstructions are the Dockerfile reference's instructions.
var knownInstructions = []string{"ADD", "ARG", "CMD", "COPY", "ENTRYPOINT", "ENV", "EXPOSE", "FROM",
	"HEALTHCHECK", "LABEL", "MAINTAINER", "ONBUILD", "RUN", "SHELL", "STOPSIGNAL", "USER", "VOLUME", "WORKDIR"}

// parseDockerfile is the small part of the Dockerfile grammar this repository's
// Dockerfile uses: comment lines, backslash continuations (comment lines
// and empty lines inside a continuation are dropped, as BuildKit does), one instruction per
// logical line. It refuses what it does not know instead of guessing.
func parseDockerfile(text string) ([]instruction, error) {
	var out []instruction
	var cur strings.Builder
	start := 0
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		cont := strings.HasSuffix(line, `\`)
		cur.WriteString(strings.TrimSuffix(line, `\`))
		if cont {
			cur.WriteString(" ")
			continue
		}
		cmd, args, _ := strings.Cut(strings.TrimSpace(cur.String()), " ")
		cur.Reset()
		if !slices.Contains(knownInstructions, strings.ToUpper(cmd)) {
			return nil, fmt.Errorf("line %d: unknown instruction %q", start, cmd)
		}
		if strings.TrimSpace(args) == "" {
			return nil, fmt.Errorf("line %d: %s without arguments", start, cmd)
		}
		out = append(out, instruction{start, strings.ToUpper(cmd), strings.Join(strings.Fields(args), " ")})
	}
	if cur.Len() > 0 {
		return nil, fmt.Errorf("line %d: continuation at the end of the file", start)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no instructions")
	}
	for _, in := range out {
		if in.cmd == "FROM" {
			break
		}
		if in.cmd != "ARG" {
			return nil, fmt.Errorf("line %d: %s before FROM", in.line, in.cmd)
		}
	}
	return out, nil
}

// execForm reads a JSON-array (exec form) argument; the shell form would run
// the daemon under /bin/sh, which does not pass SIGTERM on.
func execForm(in instruction) ([]string, error) {
	var v []string
	if err := json.Unmarshal([]byte(in.args), &v); err != nil {
		return nil, fmt.Errorf("line %d: %s is not in exec (JSON) form: %v", in.line, in.cmd, err)
	}
	return v, nil
}

// TestLinuxDockerfile parses images/linux/Dockerfile and holds it to what
// hack/image writes and the Linux backend runs: the same entrypoint, user and
// file paths, a pinned base, and the packages that carry every tool.
func TestLinuxDockerfile(t *testing.T) {
	b, err := os.ReadFile("../../images/linux/Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	ins, err := parseDockerfile(string(b))
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]string{"TARGETOS": "linux", "TARGETARCH": "arm64"}
	var from, user string
	var entrypoint []string
	copied := map[string]string{} // destination file -> source
	var installed []string
	for _, in := range ins {
		switch in.cmd {
		case "ARG":
			for _, a := range strings.Fields(in.args) {
				k, v, ok := strings.Cut(a, "=")
				if ok {
					args[k] = v
				} else if _, set := args[k]; !set {
					t.Errorf("line %d: ARG %s has no default and buildx does not set it", in.line, k)
				}
			}
		case "FROM":
			from = os.Expand(in.args, func(k string) string { return args[k] })
		case "RUN":
			if i := strings.Index(in.args, "apt-get install"); i >= 0 {
				for _, w := range strings.Fields(strings.SplitN(in.args[i:], "&&", 2)[0])[2:] {
					if !strings.HasPrefix(w, "-") {
						installed = append(installed, w)
					}
				}
			}
		case "COPY":
			f := strings.Fields(os.Expand(in.args, func(k string) string { return args[k] }))
			dst := f[len(f)-1]
			for _, src := range f[:len(f)-1] {
				if strings.HasSuffix(dst, "/") {
					copied[dst+path.Base(src)] = src
				} else {
					copied[dst] = src
				}
			}
		case "USER":
			user = in.args
		case "ENTRYPOINT":
			if entrypoint, err = execForm(in); err != nil {
				t.Error(err)
			}
		case "CMD":
			t.Errorf("line %d: CMD would become the daemon's arguments", in.line)
		}
	}
	name, tag, _ := strings.Cut(from, ":")
	if name != "debian" || tag == "" || tag == "latest" {
		t.Errorf("FROM %q: want the documented base, Debian, at a fixed release", from)
	}
	if !slices.Equal(entrypoint, []string{LinuxEntrypoint}) || user != LinuxUser {
		t.Errorf("ENTRYPOINT %q USER %q, want %q and %q as hack/image writes", entrypoint, user, LinuxEntrypoint, LinuxUser)
	}
	for _, pkg := range []string{"e2fsprogs", "xfsprogs", "open-iscsi"} {
		if !slices.Contains(installed, pkg) {
			t.Errorf("apt-get install %q lacks %s", installed, pkg)
		}
	}
	// The same files at the same paths as the layer hack/image writes.
	for _, f := range linuxFiles(nil, nil, nil) {
		if f.dir {
			continue
		}
		if _, ok := copied["/"+f.name]; !ok {
			t.Errorf("nothing copied to /%s (copied: %v)", f.name, copied)
		}
	}
	want := map[string]string{
		"/usr/local/bin/csi-node-proxy":         "dist/linux-arm64/csi-node-proxy",
		"/usr/local/bin/csi-node-proxyctl":      "dist/linux-arm64/csi-node-proxyctl",
		"/usr/share/doc/csi-node-proxy/LICENSE": "LICENSE",
	}
	for dst, src := range want {
		if copied[dst] != src {
			t.Errorf("COPY to %s from %q, want %q (make release's layout)", dst, copied[dst], src)
		}
	}
}

// TestParseDockerfileRefuses: the parser is strict enough to catch a broken file.
func TestParseDockerfileRefuses(t *testing.T) {
	for _, bad := range []string{
		"",
		"# only a comment\n",
		"FROM debian:12-slim\nRUNN true\n",
		"FROM debian:12-slim\nRUN apt-get update \\\n",
		"RUN true\nFROM debian:12-slim\n",
		"FROM debian:12-slim\nUSER\n",
	} {
		if _, err := parseDockerfile(bad); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
	ins, err := parseDockerfile("ARG B=x\nFROM ${B}\nRUN a \\\n  # dropped\n  b\nENTRYPOINT /bin/x\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) != 4 || ins[2].args != "a b" || ins[2].line != 3 {
		t.Errorf("parsed %+v", ins)
	}
	if _, err := execForm(ins[3]); err == nil {
		t.Error("shell-form ENTRYPOINT taken as exec form")
	}
}
