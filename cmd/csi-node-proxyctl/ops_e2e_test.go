package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	diskv1beta3 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1beta3"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// TestDeprecationsAndSideBySide: two daemons serve side by side in one
// socket directory, one under upstream's names and one under another
// prefix; the CLI reaches each with the matching --endpoint-prefix and
// --version names the daemon's build. A driver's v1beta3 call on the
// first daemon shows up in "deprecations", with its caller, in both
// formats; the second daemon, which saw none, lists none.
func TestDeprecationsAndSideBySide(t *testing.T) {
	up := startDaemon(t)
	side := startDaemon(t, "--socket-dir="+up.socketDir, "--endpoint-prefix=csi-node-proxy")
	for _, name := range []string{"csi-proxy-disk-v1.sock", "csi-node-proxy-disk-v1.sock"} {
		if _, err := os.Stat(filepath.Join(up.socketDir, name)); err != nil {
			t.Fatalf("side by side: %v", err)
		}
	}
	for _, d := range []*daemon{up, side} {
		out, errOut, code := d.cli(t, "", "disk", "stats", "1", "-o", "json")
		if code != exitOK || !strings.Contains(out, `"disk_number": 1`) {
			t.Errorf("prefix %s: disk stats: exit %d, %s %s", d.endpointPrefix(), code, out, errOut)
		}
		out, errOut, code = d.cli(t, "", "--version")
		if code != exitOK || !strings.Contains(out, progName+" "+e2eVersion) || !strings.Contains(out, "daemon: csi-node-proxy ") {
			t.Errorf("prefix %s: --version: exit %d, %q %q", d.endpointPrefix(), code, out, errOut)
		}
	}
	// A prefix nobody serves: the hint names where the CLI looked.
	_, errOut, code := runCLI(t, "", "--socket-dir", up.socketDir, "--endpoint-prefix", "nobody", "disk", "list")
	if code != exitUnavailable || !strings.Contains(errOut, "looked for sockets in "+up.socketDir+" named nobody-*") || !strings.Contains(errOut, "--socket-dir") {
		t.Errorf("unserved prefix: exit %d, stderr %q", code, errOut)
	}

	// A driver still on disk v1beta3.
	cc, err := grpc.NewClient(transport.Target(filepath.Join(up.socketDir, "csi-proxy-disk-v1beta3.sock")), transport.DialOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for range 3 {
		if _, err := diskv1beta3.NewDiskClient(cc).ListDiskLocations(ctx, &diskv1beta3.ListDiskLocationsRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := up.cli(t, "", "deprecations", "--metrics-address", up.metricsAddr, "-o", "json")
	var doc deprecationsOutput
	if code != exitOK || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Uses) != 1 {
		t.Fatalf("deprecations -o json: exit %d, %s %s", code, out, errOut)
	}
	if u := doc.Uses[0]; u.Group != "disk" || u.Version != "v1beta3" || u.Rule != "none" || u.Calls != 3 ||
		u.LastMethod != "ListDiskLocations" || u.LastPID != os.Getpid() || !strings.Contains(u.Caller, "uid") {
		t.Errorf("deprecated use %+v", u)
	}
	out, _, code = up.cli(t, "", "deprecations", "--metrics-address", up.metricsAddr, "--no-headers")
	if f := strings.Fields(out); code != exitOK || len(f) < 6 || f[0] != "disk" || f[1] != "v1beta3" || f[2] != "none" || !strings.Contains(out, " 3 ") {
		t.Errorf("deprecations table: exit %d, %q", code, out)
	}
	if out, _, code := side.cli(t, "", "deprecations", "--metrics-address", side.metricsAddr, "-o", "yaml"); code != exitOK || !strings.Contains(out, "uses: []") {
		t.Errorf("the other daemon's deprecations: exit %d, %q", code, out)
	}
	// No metrics listener there: unavailable, saying what to check.
	if _, errOut, code := up.cli(t, "", "deprecations", "--metrics-address", freeAddress(t)); code != exitUnavailable || !strings.Contains(errOut, "-metrics-bind-address") {
		t.Errorf("deprecations without a listener: exit %d, %q", code, errOut)
	}
}

// TestCompletionScripts: the bash script, sourced in bash, registers the
// completion function, which completes every group's commands, each
// command's own flags, -o's values and top-level words, skipping flag
// values; the zsh, fish and PowerShell scripts name every command and
// flag of the table.
func TestCompletionScripts(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is needed to test its completion script: %v", err)
	}
	script, errOut, code := runCLI(t, "", "completion", "bash")
	if code != exitOK {
		t.Fatalf("completion bash: exit %d, %s", code, errOut)
	}
	file := filepath.Join(t.TempDir(), "c.bash")
	if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	// Each case: the words typed (the last being completed) and a word
	// the completions must include.
	type tc struct {
		words []string
		want  string
	}
	cases := []tc{
		{[]string{"di"}, "disk"},
		{[]string{"ver"}, "version"},
		{[]string{"-o", ""}, "yaml"},
		{[]string{"--socket-dir", "/x", "vol"}, "volume"},
		{[]string{"completion", "p"}, "powershell"},
		{[]string{"volume", "list", "--d"}, "--disk"},
		{[]string{"deprecations", "--m"}, "--metrics-address"},
		{[]string{"--no"}, "--no-headers"},
	}
	for _, cmd := range commands {
		if cmd.group != "" {
			cases = append(cases, tc{[]string{cmd.group, cmd.name[:1]}, cmd.name})
		}
	}
	var prog strings.Builder
	prog.WriteString("source " + file + "\ncomplete -p " + progName + "\n")
	for _, c := range cases {
		prog.WriteString("COMP_WORDS=(" + progName)
		for _, w := range c.words {
			prog.WriteString(" '" + w + "'")
		}
		prog.WriteString("); COMP_CWORD=${#COMP_WORDS[@]}; COMP_CWORD=$((COMP_CWORD-1)); COMPREPLY=(); " + funcName + "; echo \"${COMPREPLY[*]}\"\n")
	}
	out, err := exec.Command(bash, "--norc", "--noprofile", "-c", prog.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(cases)+1 || lines[0] != "complete -F "+funcName+" "+progName {
		t.Fatalf("bash output:\n%s", out)
	}
	for i, c := range cases {
		if got := strings.Fields(lines[i+1]); !containsWord(got, c.want) {
			t.Errorf("completing %q: %q, want %s among them", c.words, got, c.want)
		}
	}
	for _, shell := range []string{"zsh", "fish", "powershell"} {
		s, errOut, code := runCLI(t, "", "completion", shell)
		if code != exitOK {
			t.Fatalf("completion %s: exit %d, %s", shell, code, errOut)
		}
		for _, cmd := range commands {
			if !strings.Contains(s, cmd.name) {
				t.Errorf("the %s script lacks %s", shell, cmd.path())
			}
		}
		for _, w := range []string{"socket-dir", "endpoint-prefix", "metrics-address", "yaml"} {
			if !strings.Contains(s, w) {
				t.Errorf("the %s script lacks %s", shell, w)
			}
		}
	}
}

// containsWord tells whether ws holds w.
func containsWord(ws []string, w string) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}
