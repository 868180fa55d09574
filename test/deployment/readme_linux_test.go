package deployment

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// readmeSteps returns the shell lines of the first ```sh block of
// deploy/linux/README.md (section A, the systemd unit).
func readmeSteps(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "deploy", "linux", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n```sh\n")
	block, _, ok2 := strings.Cut(rest, "\n```\n")
	if !ok || !ok2 {
		t.Fatal("deploy/linux/README.md has no ```sh block")
	}
	var out []string
	for line := range strings.SplitSeq(block, "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		if cmd = strings.TrimSpace(cmd); cmd != "" {
			out = append(out, cmd)
		}
	}
	return out
}

// TestReadmeSystemdStepsReplay replays deploy/linux/README.md's systemd
// steps into a scratch root: every install line runs for real with its
// absolute paths moved below the root (the binary is the one this test
// built in place of make release's); the systemctl lines are what the
// test then does itself: it reads the installed unit's ExecStart, moves
// its absolute paths below the root too, and starts that command line
// under the unit's bounding set. The daemon must start (the policy the
// unit names was installed), warn that the policy admits no driver,
// admit root's read (the node-admin preset) and refuse root's change.
// Skipped without root and setpriv. No step may be one the test cannot
// replay: a new kind of line fails it.
func TestReadmeSystemdStepsReplay(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "util-linux", "setpriv")
	bin := daemonBinary(t)
	scratch := sockdir.New(t, "rd")
	under := func(p string) string { return filepath.Join(scratch, p) }
	installed := 0
	for _, line := range readmeSteps(t) {
		f := strings.Fields(line)
		switch {
		case f[0] == "make" || f[0] == "systemctl" || f[0] == "journalctl" || f[0] == "ls" || strings.HasPrefix(f[0], "/usr/local/bin/"):
			continue // built by the test / replaced by starting ExecStart below / inspection
		case f[0] == "install":
			args := f[1:]
			for i, a := range args {
				switch {
				case a == "dist/linux-amd64/csi-node-proxy":
					args[i] = bin
				case strings.HasPrefix(a, "deploy/"):
					args[i] = filepath.Join(repo, a)
				case strings.HasPrefix(a, "/"):
					args[i] = under(a)
					if strings.HasSuffix(a, "/") { // a directory to install into
						args[i] += "/"
					}
				}
			}
			if !strings.Contains(line, " -d ") {
				// install(1) copies into a directory that exists.
				dst := args[len(args)-1]
				if strings.HasSuffix(dst, "/") {
					dst += "x"
				}
				if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if out, err := exec.Command("install", args...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", line, err, out)
			}
			installed++
		default:
			t.Fatalf("deploy/linux/README.md step %q is one this test cannot replay: teach it", line)
		}
	}
	if installed < 3 {
		t.Fatalf("the README installs %d files, want the binary, the policy and the unit", installed)
	}

	unitText, err := os.ReadFile(under("/etc/systemd/system/csi-node-proxy.service"))
	if err != nil {
		t.Fatalf("the README did not install the unit: %v", err)
	}
	var execStart, bounding []string
	for line := range strings.SplitSeq(string(unitText), "\n") {
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			execStart = strings.Fields(v)
		}
		if v, ok := strings.CutPrefix(line, "CapabilityBoundingSet="); ok {
			for _, c := range strings.Fields(v) {
				bounding = append(bounding, strings.ToLower(strings.TrimPrefix(c, "CAP_")))
			}
		}
	}
	if len(execStart) < 2 {
		t.Fatalf("installed unit's ExecStart: %q", execStart)
	}
	// What systemd makes before ExecStart (RuntimeDirectory=,
	// LogsDirectory=, StateDirectory=) and the kubelet's directory.
	for _, d := range []string{"/run/csi-node-proxy", "/var/log/csi-node-proxy", "/var/lib/csi-node-proxy", "/var/lib/kubelet/pods"} {
		if err := os.MkdirAll(under(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var args []string
	for _, a := range execStart[1:] {
		if name, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(v, "/") {
			a = name + "=" + under(v)
		}
		args = append(args, a)
	}
	// No runtime on this machine's containerd socket path is wanted:
	// the unit's default stays in force but points below the root.
	args = append(args, "--cri-endpoint=unix://"+under("/run/containerd/containerd.sock"), "--metrics-bind-address=127.0.0.1:0")
	prog := under(execStart[0])
	caps := "-all"
	for _, c := range bounding {
		caps += ",+" + c
	}
	sock := under("/run/csi-node-proxy/csi-proxy-filesystem-v1.sock")
	p := daemonbin.Start(t, prog, daemonbin.Options{
		Args: args,
		Command: func(bin string, args []string) *exec.Cmd {
			return exec.Command("setpriv", append([]string{"--bounding-set", caps, "--inh-caps", "-all", "--no-new-privs", "--", bin}, args...)...)
		},
		Ready:        daemonbin.SocketsAccept(sock),
		ReadyTimeout: 20 * time.Second, PollInterval: 50 * time.Millisecond,
		AtEnd: daemonbin.Kill,
	})

	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	fs := filesystemv1.NewFilesystemClient(conn)
	pods := under("/var/lib/kubelet/pods")
	if _, err := fs.PathExists(ctx, &filesystemv1.PathExistsRequest{Path: pods}); err != nil {
		t.Errorf("root's PathExists (the node-admin preset): %v", err)
	}
	if _, err := fs.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: filepath.Join(pods, "x")}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("root's Mkdir: %v, want PermissionDenied (node-admin only reads)", err)
	}
	p.Stop(t, 30*time.Second)
	if log := p.Output.String(); !strings.Contains(log, "policy-admits-a-driver failed") {
		t.Errorf("the daemon did not warn that the policy admits no driver:\n%s", log)
	}
}
