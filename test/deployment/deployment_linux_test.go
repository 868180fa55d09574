package deployment

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/fakecri"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// callerEnv makes this test binary a caller: it waits for a line on
// stdin (the test places it in its cgroups meanwhile), then calls
// filesystem v1 PathExists(CALL_PATH) on the socket SOCK and prints the
// status code's name.
const callerEnv = "CSI_NODE_PROXY_DEPLOYMENT_CALLER"

// TestMain runs the caller role, or the tests and then removes the
// daemon they built.
func TestMain(m *testing.M) {
	if os.Getenv(callerEnv) != "" {
		os.Exit(caller())
	}
	os.Exit(daemonbin.Main(m))
}

func caller() int {
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		fmt.Fprintln(os.Stderr, "caller: stdin:", err)
		return 2
	}
	conn, err := grpc.NewClient("unix://"+os.Getenv("SOCK"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintln(os.Stderr, "caller:", err)
		return 2
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err = filesystemv1.NewFilesystemClient(conn).PathExists(ctx, &filesystemv1.PathExistsRequest{Path: os.Getenv("CALL_PATH")})
	fmt.Println(status.Code(err).String())
	if err != nil {
		fmt.Fprintln(os.Stderr, "caller:", err)
	}
	return 0
}

// repo is the repository root, seen from this package's directory.
const repo = "../.."

// daemonBinary builds cmd/csi-node-proxy once per test binary (daemonbin).
func daemonBinary(t *testing.T) string {
	t.Helper()
	return daemonbin.Binary(t)
}

// The containers' ServiceAccount tokens, as a node holds them.
//
// kubelet keeps a pod's files in <kubelet>/pods/<pod UID>: the projected
// volumes in volumes/kubernetes.io~projected/<volume>, the /etc/hosts it
// generates in etc-hosts (pkg/kubelet/kubelet_pods.go, getEtcHostsPath).
// The ServiceAccount admission plugin gives every pod the projected
// volume kube-api-access-<suffix> with the files token, ca.crt and
// namespace, mounted read-only into each container at
// /var/run/secrets/kubernetes.io/serviceaccount
// (plugin/pkg/admission/serviceaccount/admission.go,
// DefaultAPITokenMountPath). kubelet asks the runtime for these mounts
// with their host paths, and the runtime reports them in ContainerStatus.

// supplementaryGroup is every caller's supplementary group, as kubelet
// gives a pod's containers from securityContext.supplementalGroups.
const supplementaryGroup = 2000

// shippedKubelet is the kubelet directory of the shipped command lines
// and policies, which this test's node keeps elsewhere.
const shippedKubelet = "/var/lib/kubelet"

// callPath is what the callers ask about: a path under the kubelet's pod
// directory, inside the driver rule's pathRoots and the daemon's
// --kubelet-path, so that only the caller decides the outcome.
func callPath(kubelet string) string {
	return filepath.Join(kubelet, "pods", "00000000-0000-0000-0000-000000000000", "volumes")
}

// call runs one caller as p's container: uid 0, gid 0, the supplementary
// group, in a PID namespace of its own and p's cgroups, calls PathExists
// of path, and returns the status code of its call and its PID as the
// daemon sees it.
func call(t *testing.T, hs []string, p pod, sock, path string) (string, int) {
	t.Helper()
	makeCgroup(t, hs, p.cgroupPath())
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), callerEnv+"=1", "SOCK="+sock, "CALL_PATH="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: 0, Gid: 0, Groups: []uint32{supplementaryGroup}},
		Cloneflags: syscall.CLONE_NEWPID,
		Pdeathsig:  syscall.SIGKILL,
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	t.Cleanup(func() {
		if !done {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	// The runtime moves a container's first process into its cgroup
	// before the process runs its program; here the caller waits on
	// stdin until it is in them all.
	pid := cmd.Process.Pid
	for _, h := range hs {
		if err := os.WriteFile(filepath.Join(h, p.cgroupPath(), "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			t.Fatalf("place pid %d in %s: %v", pid, filepath.Join(h, p.cgroupPath()), err)
		}
	}
	if _, err := stdin.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	werr := cmd.Wait()
	done = true
	if werr != nil {
		t.Fatalf("caller %s/%s: %v\n%s", p.namespace, p.name, werr, errOut.String())
	}
	return strings.TrimSpace(out.String()), pid
}

// capabilities maps the capability names a unit may bound to their
// numbers; a name missing here fails the test, to be added.
var capabilities = map[string]int{
	"chown": unix.CAP_CHOWN, "dac_override": unix.CAP_DAC_OVERRIDE, "dac_read_search": unix.CAP_DAC_READ_SEARCH,
	"fowner": unix.CAP_FOWNER, "fsetid": unix.CAP_FSETID, "kill": unix.CAP_KILL, "setgid": unix.CAP_SETGID,
	"setuid": unix.CAP_SETUID, "setpcap": unix.CAP_SETPCAP, "net_admin": unix.CAP_NET_ADMIN,
	"net_bind_service": unix.CAP_NET_BIND_SERVICE, "net_raw": unix.CAP_NET_RAW, "sys_module": unix.CAP_SYS_MODULE,
	"sys_rawio": unix.CAP_SYS_RAWIO, "sys_chroot": unix.CAP_SYS_CHROOT, "sys_ptrace": unix.CAP_SYS_PTRACE,
	"sys_admin": unix.CAP_SYS_ADMIN, "sys_boot": unix.CAP_SYS_BOOT, "sys_nice": unix.CAP_SYS_NICE,
	"sys_resource": unix.CAP_SYS_RESOURCE, "sys_time": unix.CAP_SYS_TIME, "mknod": unix.CAP_MKNOD,
	"ipc_lock": unix.CAP_IPC_LOCK, "audit_write": unix.CAP_AUDIT_WRITE, "setfcap": unix.CAP_SETFCAP,
	"syslog": unix.CAP_SYSLOG, "bpf": unix.CAP_BPF, "perfmon": unix.CAP_PERFMON,
}

// statusMask reads a capability mask (CapEff, CapBnd) from a
// /proc/<pid>/status.
func statusMask(t *testing.T, pid int, key string) uint64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	t.Fatalf("no %s in /proc/%d/status", key, pid)
	return 0
}

// deployment is one way of running the daemon.
type deployment struct {
	// args is the shipped command line without the program.
	args []string
	// policy is the shipped policy file.
	policy string
	// wrap returns the command that runs bin with args as the
	// deployment does.
	wrap func(bin string, args []string) *exec.Cmd
	// check looks at the running daemon's process.
	check func(t *testing.T, pid int)
	// executableKnown: the daemon may read a root caller's
	// /proc/<pid>/exe. That takes ptrace read access, which a daemon
	// bounded below the caller's capabilities (the unit) lacks.
	executableKnown bool
}

// daemonArgs is args with the paths the test owns put in place of the
// node's: sockets, policy, audit log, the kubelet directory, the
// runtime's socket, and the metrics listener on a free port.
// --audit-reads is added: the callers make a read, which the shipped flags
// audit only when it is denied, and the admitted call's record is what
// shows the driver identified. The
// unit names no --cri-endpoint and relies on its default, containerd's
// socket; the test's runtime is elsewhere.
func daemonArgs(t *testing.T, args []string, dir, kubelet string) []string {
	t.Helper()
	// The shipped line must name the kubelet directory this test's node
	// moves (the check below), so it is replaced like the others.
	if !slices.Contains(args, "--kubelet-path="+shippedKubelet) {
		t.Fatalf("the shipped command line %q is not on the kubelet directory %s this test calls into", args, shippedKubelet)
	}
	repl := map[string]string{
		"kubelet-path":         kubelet,
		"socket-dir":           filepath.Join(dir, "sockets"),
		"policy":               filepath.Join(dir, "etc", "policy.yaml"),
		"audit-log":            filepath.Join(dir, "log", "audit.log"),
		"cri-endpoint":         "unix://" + filepath.Join(dir, "cri.sock"),
		"metrics-bind-address": "127.0.0.1:0",
	}
	var out []string
	seen := map[string]bool{}
	for _, a := range args {
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		seen[name] = true
		if v, ok := repl[name]; ok && hasValue {
			a = "--" + name + "=" + v
		}
		out = append(out, a)
	}
	for _, need := range []string{"host", "policy", "audit-log", "kubelet-path"} {
		if !seen[need] {
			t.Fatalf("the shipped command line %q has no --%s", args, need)
		}
	}
	if !slices.Contains(out, "--host=linux") {
		t.Fatalf("the shipped command line %q is not the Linux backend this test calls into", args)
	}
	if !seen["cri-endpoint"] {
		out = append(out, "--cri-endpoint="+repl["cri-endpoint"])
	}
	return append(out, "--audit-reads")
}

// TestShippedDeploymentIdentifiesPods runs the daemon as the shipped unit
// and as the shipped DaemonSet, with the shipped policy and the azuredisk
// preset added to its presets as its header says (the Helm chart's
// policy.presets renders the same file: test/manifests
// TestHelmPresetsRenderShippedPolicy), and five callers in kubelet's cgroups, all root with
// the same supplementary group, each with its pod's ServiceAccount token
// mounted as kubelet mounts it: the driver's container, a sidecar of its
// pod, a pod of the same name, container and ServiceAccount name in another
// namespace, a pod of kube-system the rule's name patterns match but run as
// another ServiceAccount, and another pod of kube-system with the driver's
// ServiceAccount. Only the driver is admitted, and the audit log names
// each caller's pod, container, ServiceAccount and groups, all known.
func TestShippedDeploymentIdentifiesPods(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "util-linux", "setpriv")
	hs := hierarchies(t)
	u := readUnit(t)
	ds := readDaemonSet(t)
	linuxPolicy := shippedFile(t, "policy.yaml")
	hostPIDNS, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		t.Fatal(err)
	}

	unitDeployment := deployment{
		args:   u.args,
		policy: string(linuxPolicy),
		// systemd starts the service as root in the host's PID
		// namespace with its bounding set and no_new_privs; setpriv
		// does the same here.
		wrap: func(bin string, args []string) *exec.Cmd {
			bounding := "-all"
			for _, c := range u.bounding {
				bounding += ",+" + c
			}
			return exec.Command("setpriv", append([]string{"--bounding-set", bounding, "--inh-caps", "-all", "--no-new-privs", "--", bin}, args...)...)
		},
		check: func(t *testing.T, pid int) {
			var want uint64
			for _, c := range u.bounding {
				n, ok := capabilities[c]
				if !ok {
					t.Fatalf("capability %q of the unit is unknown to this test", c)
				}
				want |= 1 << n
			}
			// What the machine itself lacks (this one: CAP_SYS_RESOURCE)
			// no process here can have.
			want &= statusMask(t, os.Getpid(), "CapBnd")
			if got := statusMask(t, pid, "CapEff"); got != want {
				t.Errorf("the daemon's effective capabilities are %#x, want the unit's bounding set %#x", got, want)
			}
		},
	}
	if !ds.privileged {
		t.Fatal("the DaemonSet's container is not privileged; this test reproduces only a privileged one")
	}
	daemonSetDeployment := deployment{
		args:   ds.args,
		policy: ds.policy,
		// A privileged container keeps every capability; hostPID puts
		// it in the host's PID namespace, which the test reproduces as
		// the manifest says.
		wrap: func(bin string, args []string) *exec.Cmd {
			cmd := exec.Command(bin, args...)
			if !ds.hostPID {
				cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
			}
			return cmd
		},
		check: func(t *testing.T, pid int) {
			if ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", pid)); err != nil || ns != hostPIDNS {
				t.Errorf("the daemon runs in PID namespace %s (%v), not the host's %s", ns, err, hostPIDNS)
			}
		},
		executableKnown: true,
	}

	t.Run("systemd unit", func(t *testing.T) { runDeployment(t, unitDeployment, hs) })
	t.Run("DaemonSet", func(t *testing.T) { runDeployment(t, daemonSetDeployment, hs) })
}

func runDeployment(t *testing.T, d deployment, hs []string) {
	bin := daemonBinary(t)
	dir := sockdir.New(t, "deploy") // short: the daemon's sockets live below it
	for _, sub := range []string{"etc", "log"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The node's kubelet directory is a scratch one, named by the
	// daemon's --kubelet-path and by the rule's pathRoots, as on a node
	// whose kubelet keeps another root directory: the daemon reads the
	// pods' tokens below it.
	kubelet := filepath.Join(dir, "kubelet")
	// The preset's path roots follow --kubelet-path, which daemonArgs
	// moves to this scratch kubelet directory.
	policy := addPreset(t, d.policy, "azuredisk")
	if err := os.WriteFile(filepath.Join(dir, "etc", "policy.yaml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}

	// The driver as azuredisk-csi-driver's manifests and chart deploy
	// it: the DaemonSet csi-azuredisk-node in kube-system, the container
	// azuredisk, the ServiceAccount csi-azuredisk-node-sa
	// (deploy/csi-azuredisk-node.yaml; docs/security.md cites them).
	driver := newPod(t, "kube-system", "csi-azuredisk-node-x7k2p", "azuredisk", "csi-azuredisk-node-sa", true, "burstable")
	// A sidecar of the driver's pod: same pod, same ServiceAccount.
	sidecar := driver.sidecar(t, "liveness-probe")
	// The driver's pod name, container and ServiceAccount name, in
	// another namespace.
	otherNamespace := newPod(t, "tenant-a", "csi-azuredisk-node-x7k2p", "azuredisk", "csi-azuredisk-node-sa", true, "besteffort")
	// A pod whose name, namespace and container the rule's patterns
	// match, run as another ServiceAccount of kube-system: a pod's name
	// is whatever its creator writes, while the ServiceAccount is the
	// identity the driver's RBAC bindings name.
	impostor := newPod(t, "kube-system", "csi-azuredisk-node-q4n8w", "azuredisk", "default", true, "burstable")
	// Another pod of kube-system, with the driver's ServiceAccount and
	// container name, under kubelet's cgroupfs driver.
	otherPod := newPod(t, "kube-system", "log-shipper-5d9qk", "azuredisk", "csi-azuredisk-node-sa", false, "besteffort")
	callers := []struct {
		p    pod
		want codes.Code
		rule string
	}{
		{driver, codes.OK, "azuredisk"},
		{sidecar, codes.PermissionDenied, ""},
		{otherNamespace, codes.PermissionDenied, ""},
		{impostor, codes.PermissionDenied, ""},
		{otherPod, codes.PermissionDenied, ""},
	}
	rt := &fakecri.Runtime{}
	for _, c := range callers {
		writePod(t, kubelet, c.p)
		rt.Add(c.p.containerID, fakecri.KubeletLabels(c.p.namespace, c.p.name, c.p.uid, c.p.container), c.p.mounts(kubelet))
	}
	rt.Serve(t, filepath.Join(dir, "cri.sock"))

	sock := filepath.Join(dir, "sockets", "csi-proxy-filesystem-v1.sock")
	p := daemonbin.Start(t, bin, daemonbin.Options{
		Args: daemonArgs(t, d.args, dir, kubelet), Command: d.wrap,
		Ready:        daemonbin.SocketsAccept(sock),
		ReadyTimeout: 20 * time.Second, PollInterval: 50 * time.Millisecond,
		AtEnd: daemonbin.Kill,
	})
	cmd := p.Cmd
	d.check(t, cmd.Process.Pid)

	pids := map[string]int{}
	for _, c := range callers {
		got, pid := call(t, hs, c.p, sock, callPath(kubelet))
		pids[c.p.containerID] = pid
		if got != c.want.String() {
			t.Errorf("%s/%s (container %s, ServiceAccount %s): %s, want %s", c.p.namespace, c.p.name, c.p.container, c.p.serviceAccount, got, c.want)
		}
	}

	p.Stop(t, 30*time.Second)

	records := auditlog.Done(auditlog.Read(t, filepath.Join(dir, "log", "audit.log")))
	for _, c := range callers {
		p := c.p
		var r *auditlog.Record
		for i := range records {
			if records[i].Method == "PathExists" && records[i].Caller.PID == pids[p.containerID] {
				r = &records[i]
			}
		}
		if r == nil {
			t.Errorf("no audit record of %s/%s's call (pid %d)", p.namespace, p.name, pids[p.containerID])
			continue
		}
		decision := "deny"
		if c.want == codes.OK {
			decision = "allow"
		}
		if r.Decision != decision || r.Rule != c.rule {
			t.Errorf("%s/%s container %s: decision %q by rule %q, want %q by %q", p.namespace, p.name, p.container, r.Decision, r.Rule, decision, c.rule)
		}
		rc := r.Caller
		if rc.PodNamespace != p.namespace || rc.PodName != p.name || rc.ContainerName != p.container ||
			rc.PodUID != p.uid || rc.ContainerID != p.containerID || rc.Runtime != p.runtime() {
			t.Errorf("%s/%s: the record names pod %s/%s uid %s, container %s ID %s runtime %q; want pod uid %s, container %s ID %s runtime %q",
				p.namespace, p.name, rc.PodNamespace, rc.PodName, rc.PodUID, rc.ContainerName, rc.ContainerID, rc.Runtime,
				p.uid, p.container, p.containerID, p.runtime())
		}
		if rc.UID == nil || *rc.UID != 0 || rc.GID == nil || *rc.GID != 0 || !slices.Contains(rc.Groups, supplementaryGroup) {
			t.Errorf("%s/%s: uid %v gid %v groups %v, want root with supplementary group %d", p.namespace, p.name, rc.UID, rc.GID, rc.Groups, supplementaryGroup)
		}
		if rc.ServiceAccount != p.serviceAccount {
			t.Errorf("%s/%s: the record names ServiceAccount %q, want %q, the one its token names", p.namespace, p.name, rc.ServiceAccount, p.serviceAccount)
		}
		if rc.Incomplete != "" {
			t.Errorf("%s/%s: incomplete identity: %s", p.namespace, p.name, rc.Incomplete)
		}
		if rc.StartTime == "" {
			t.Errorf("%s/%s: no start time", p.namespace, p.name)
		}
		j, _ := json.Marshal(rc) // plain fields: cannot fail
		t.Logf("%s by rule %q: caller %s", r.Decision, r.Rule, j)
		self, _ := os.Executable()
		if d.executableKnown && rc.Executable != self {
			t.Errorf("%s/%s: executable %q, want %q", p.namespace, p.name, rc.Executable, self)
		}
	}
}
