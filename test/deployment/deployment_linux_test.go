package deployment

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
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
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/yaml"

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

// unit is what the test takes from the shipped systemd unit.
type unit struct {
	// args is ExecStart's command line without the program.
	args []string
	// bounding is CapabilityBoundingSet=, in setpriv's spelling
	// (sys_admin, ...).
	bounding []string
}

// unitDirectivesNotReproduced are unit settings that would change how
// callers are seen (user, PID namespace, capabilities) and that this test
// does not reproduce: the test refuses to pass while the unit has them.
var unitDirectivesNotReproduced = []string{"User=", "Group=", "DynamicUser=", "PrivatePIDs=", "AmbientCapabilities=", "SupplementaryGroups="}

func readUnit(t *testing.T) unit {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "deploy", "linux", "csi-node-proxy.service"))
	if err != nil {
		t.Fatal(err)
	}
	var u unit
	for line := range strings.SplitSeq(string(b), "\n") {
		for _, d := range unitDirectivesNotReproduced {
			if strings.HasPrefix(line, d) {
				t.Fatalf("the unit sets %q, which this test does not reproduce: teach it to", line)
			}
		}
		if v, ok := strings.CutPrefix(line, "CapabilityBoundingSet="); ok {
			for _, c := range strings.Fields(v) {
				u.bounding = append(u.bounding, strings.ToLower(strings.TrimPrefix(c, "CAP_")))
			}
		}
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			f := strings.Fields(v)
			if len(f) < 2 || filepath.Base(f[0]) != "csi-node-proxy" {
				t.Fatalf("unexpected ExecStart= %q", v)
			}
			u.args = f[1:]
		}
	}
	if u.args == nil || u.bounding == nil {
		t.Fatal("the unit lacks ExecStart= or CapabilityBoundingSet=")
	}
	return u
}

// daemonSet is what the test takes from the shipped DaemonSet manifest.
type daemonSet struct {
	hostPID    bool
	privileged bool
	args       []string
	// policy is the policy file its ConfigMap mounts.
	policy string
}

// manifest is the part of the manifest's documents the test reads.
type manifest struct {
	Kind string            `json:"kind"`
	Data map[string]string `json:"data"`
	Spec struct {
		Template struct {
			Spec struct {
				HostPID    bool `json:"hostPID"`
				Containers []struct {
					Name            string   `json:"name"`
					Command         []string `json:"command"`
					Args            []string `json:"args"`
					SecurityContext struct {
						Privileged bool `json:"privileged"`
					} `json:"securityContext"`
				} `json:"containers"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

func readDaemonSet(t *testing.T) daemonSet {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "deploy", "linux", "csi-node-proxy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ds daemonSet
	found := false
	for doc := range strings.SplitSeq(string(b), "\n---\n") {
		var m manifest
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		switch m.Kind {
		case "ConfigMap":
			if p, ok := m.Data["policy.yaml"]; ok {
				ds.policy = p
			}
		case "DaemonSet":
			cs := m.Spec.Template.Spec.Containers
			if len(cs) != 1 || len(cs[0].Command) != 1 || filepath.Base(cs[0].Command[0]) != "csi-node-proxy" {
				t.Fatalf("the DaemonSet's containers are not the one csi-node-proxy this test reproduces: %+v", cs)
			}
			found = true
			ds.hostPID = m.Spec.Template.Spec.HostPID
			ds.privileged = cs[0].SecurityContext.Privileged
			ds.args = cs[0].Args
		}
	}
	if !found || ds.policy == "" {
		t.Fatal("the manifest lacks the DaemonSet or its policy ConfigMap")
	}
	return ds
}

// enableRule uncomments the commented-out rule name of a shipped policy,
// as its header tells an operator to ("Uncomment the rule of each driver
// your nodes run"): the "# - name: <name>" line and the "#   " lines
// that follow it lose their "# ".
func enableRule(t *testing.T, policy, name string) string {
	t.Helper()
	var out []string
	in := false
	for line := range strings.SplitSeq(policy, "\n") {
		switch {
		case line == "# - name: "+name:
			in = true
		case in && !strings.HasPrefix(line, "#   "):
			in = false
		}
		if in {
			line = strings.TrimPrefix(line, "# ")
		}
		out = append(out, line)
	}
	enabled := strings.Join(out, "\n")
	if !strings.Contains(enabled, "\n- name: "+name+"\n") {
		t.Fatalf("the shipped policy has no commented-out rule %q to uncomment", name)
	}
	return enabled
}

// pod is one caller: a container of a pod, in kubelet's cgroup layout.
type pod struct {
	namespace, name, container string
	// serviceAccount is the name of the pod's ServiceAccount, in its
	// namespace: what its token's claims say.
	serviceAccount string
	// volume is the pod's kube-api-access-<5 characters> volume, which
	// holds the token.
	volume      string
	uid         string // with dashes
	containerID string // 64 hex digits
	// systemd is kubelet's cgroup driver: true for systemd, false for
	// cgroupfs.
	systemd bool
	qos     string // burstable or besteffort
}

// cgroupPath is the container's cgroup as kubelet and containerd make
// it: kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid with
// underscores>.slice/cri-containerd-<id>.scope under the systemd driver,
// kubepods/<qos>/pod<uid>/<id> under cgroupfs.
func (p pod) cgroupPath() string {
	if p.systemd {
		u := strings.ReplaceAll(p.uid, "-", "_")
		return filepath.Join("kubepods.slice", "kubepods-"+p.qos+".slice", "kubepods-"+p.qos+"-pod"+u+".slice", "cri-containerd-"+p.containerID+".scope")
	}
	return filepath.Join("kubepods", p.qos, "pod"+p.uid, p.containerID)
}

// runtime is what the cgroup path says of the container runtime:
// containerd's systemd scope names it, a cgroupfs container's bare ID
// does not.
func (p pod) runtime() string {
	if p.systemd {
		return "containerd"
	}
	return ""
}

func newPod(t *testing.T, namespace, name, container, serviceAccount string, systemd bool, qos string) pod {
	t.Helper()
	b := randomBytes(t, 16)
	u := hex.EncodeToString(b)
	// The ServiceAccount admission plugin names the volume
	// kube-api-access-<5 characters> (its ServiceAccountVolumeName and
	// a generated suffix), from the alphabet of apimachinery's
	// rand.String, which leaves out vowels and look-alike characters.
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	suffix := make([]byte, 5)
	for i, c := range randomBytes(t, 5) {
		suffix[i] = alphabet[int(c)%len(alphabet)]
	}
	return pod{
		namespace: namespace, name: name, container: container, serviceAccount: serviceAccount,
		volume:      "kube-api-access-" + string(suffix),
		uid:         u[:8] + "-" + u[8:12] + "-" + u[12:16] + "-" + u[16:20] + "-" + u[20:],
		containerID: hex.EncodeToString(randomBytes(t, 32)),
		systemd:     systemd, qos: qos,
	}
}

// sidecar is another container of p's pod: the same pod UID, volumes
// and ServiceAccount, its own name and container ID.
func (p pod) sidecar(t *testing.T, container string) pod {
	t.Helper()
	p.container = container
	p.containerID = hex.EncodeToString(randomBytes(t, 32))
	return p
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
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

// tokenMountPath is where every container sees its pod's token volume.
const tokenMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"

// podDir is kubelet's directory of p's pod.
func (p pod) podDir(kubelet string) string {
	return filepath.Join(kubelet, "pods", p.uid)
}

// tokenVolume is the host directory of p's kube-api-access volume.
func (p pod) tokenVolume(kubelet string) string {
	return filepath.Join(p.podDir(kubelet), "volumes", "kubernetes.io~projected", p.volume)
}

// mounts is what the runtime reports of p's container's mounts: the
// kubelet directory, as a CSI node plugin's DaemonSet mounts it (a
// hostPath at the same path, bidirectional), which the daemon must not
// search for tokens; the generated /etc/hosts; and the pod's token volume.
func (p pod) mounts(kubelet string) []*runtimeapi.Mount {
	return []*runtimeapi.Mount{
		{ContainerPath: "/var/lib/kubelet", HostPath: kubelet, Propagation: runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL},
		{ContainerPath: "/etc/hosts", HostPath: filepath.Join(p.podDir(kubelet), "etc-hosts")},
		{ContainerPath: tokenMountPath, HostPath: p.tokenVolume(kubelet), Readonly: true},
	}
}

// writePod writes what kubelet keeps of p's pod that the daemon may
// read: etc-hosts, and the token volume as kubelet's atomic writer
// projects it (kubernetes/kubernetes pkg/volume/util/atomic_writer.go,
// Write and createUserVisibleFiles, commit
// 00e11024cf8ce5ae5b75ec122545f69b7e42c3f6): the files in a hidden
// directory named ..<UTC time>.<random>, "..data" a relative link to that
// directory, and each file a relative link "<name> -> ..data/<name>".
// The daemon must follow those two links and no other. A second container
// of the same pod finds it written.
func writePod(t *testing.T, kubelet string, p pod) {
	t.Helper()
	dir := p.tokenVolume(kubelet)
	if _, err := os.Lstat(dir); err == nil {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// As the writer makes it: a temporary directory in the volume, with
	// the time as its prefix, opened to 0755.
	tsDir, err := os.MkdirTemp(dir, time.Now().UTC().Format("..2006_01_02_15_04_05."))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ts := filepath.Base(tsDir)
	if err := os.WriteFile(filepath.Join(p.podDir(kubelet), "etc-hosts"), []byte("127.0.0.1\tlocalhost\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"token":     token(t, p),
		"namespace": p.namespace,
		"ca.crt":    "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n",
	}
	for name, content := range files {
		// 0644: the kube-api-access volume's defaultMode.
		if err := os.WriteFile(filepath.Join(dir, ts, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(ts, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for name := range files {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// Claims of a bound ServiceAccount token as the API server issues it for
// kubelet's kube-api-access volume (kubernetes/kubernetes
// pkg/serviceaccount/claims.go, Claims, commit
// 031075d149ca12dd66c16cc80d88d38086c2bbae): the subject
// system:serviceaccount:<namespace>:<name>, the audiences, issued-at,
// not-before and expiry, and the private claim "kubernetes.io" with the
// namespace, the ServiceAccount and the pod (name and UID each), and
// warnafter. The kube-api-access volume asks for 3607 s
// (WarnOnlyBoundTokenExpirationSeconds); an API server that extends such
// tokens (its default) makes them valid for a year
// (ExpirationExtensionSeconds) and sets warnafter to the 3607 s. The
// issuer is the API server's --service-account-issuer.
const (
	tokenIssuer        = "https://kubernetes.default.svc.cluster.local"
	tokenWarnAfter     = 60*60 + 7
	tokenExtendedValid = 24 * 365 * 60 * 60
)

// token is p's pod's ServiceAccount token: a JWS of those claims. The
// signature is random bytes of an RS256 signature's length; the daemon
// has no key to check it with and does not try.
func token(t *testing.T, p pod) string {
	t.Helper()
	now := time.Now().Unix()
	ref := func(name string) map[string]string {
		b := hex.EncodeToString(randomBytes(t, 16))
		return map[string]string{"name": name, "uid": b[:8] + "-" + b[8:12] + "-" + b[12:16] + "-" + b[16:20] + "-" + b[20:]}
	}
	pod := ref(p.name)
	pod["uid"] = p.uid
	claims := map[string]any{
		"aud": []string{tokenIssuer},
		"exp": now + tokenExtendedValid,
		"iat": now,
		"iss": tokenIssuer,
		"nbf": now,
		"sub": "system:serviceaccount:" + p.namespace + ":" + p.serviceAccount,
		"kubernetes.io": map[string]any{
			"namespace":      p.namespace,
			"pod":            pod,
			"serviceaccount": ref(p.serviceAccount),
			"warnafter":      now + tokenWarnAfter,
		},
	}
	header := map[string]string{"alg": "RS256", "kid": base64.RawURLEncoding.EncodeToString(randomBytes(t, 32))}
	var parts []string
	for _, v := range []any{header, claims} {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, base64.RawURLEncoding.EncodeToString(j))
	}
	return strings.Join(append(parts, base64.RawURLEncoding.EncodeToString(randomBytes(t, 256))), ".")
}

// hierarchies returns the mount points of the cgroup hierarchies a
// container's processes are placed in here: the cgroup v2 one (/sys/fs/cgroup
// on a unified host, /sys/fs/cgroup/unified on a hybrid one) and, on a
// hybrid host, systemd's named v1 hierarchy. The v1 resource controllers
// (memory, cpu, ...) are left alone: the test's own processes may be
// accounted in them by whatever runs the test, and the cgroup parser reads
// the same path from every line anyway.
func hierarchies(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var v2, named string
	for line := range strings.SplitSeq(string(b), "\n") {
		// ... mount-point ... - fstype source super-options
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		switch {
		case g[0] == "cgroup2" && v2 == "":
			v2 = f[4]
		case g[0] == "cgroup" && slices.Contains(strings.Split(g[2], ","), "name=systemd") && named == "":
			named = f[4]
		}
	}
	if v2 == "" {
		t.Skip("no cgroup v2 hierarchy is mounted")
	}
	hs := []string{v2}
	if named != "" {
		hs = append(hs, named)
	}
	for _, h := range hs {
		if unix.Access(h, unix.W_OK) != nil {
			t.Skipf("the cgroup hierarchy %s is not writable", h)
		}
	}
	return hs
}

// makeCgroup creates rel in every hierarchy and removes, when the test
// ends, the directories it created, deepest first. Parents that existed
// before, or that something else has put cgroups in since, stay.
func makeCgroup(t *testing.T, hs []string, rel string) {
	t.Helper()
	for _, h := range hs {
		var created []string
		dir := h
		for seg := range strings.SplitSeq(rel, "/") {
			dir = filepath.Join(dir, seg)
			err := os.Mkdir(dir, 0o755)
			switch {
			case err == nil:
				created = append(created, dir)
			case !errors.Is(err, os.ErrExist):
				t.Fatalf("create cgroup %s: %v", dir, err)
			}
		}
		t.Cleanup(func() {
			for _, d := range slices.Backward(created) {
				// A cgroup whose last process was just reaped can be
				// busy for a moment.
				for i := 0; ; i++ {
					err := unix.Rmdir(d)
					if err == nil || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTEMPTY) {
						break
					}
					if i == 50 {
						t.Errorf("remove cgroup %s: %v", d, err)
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
}

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
// and as the shipped DaemonSet, with the shipped policy and its azuredisk
// rule uncommented, and five callers in kubelet's cgroups, all root with
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
	linuxPolicy, err := os.ReadFile(filepath.Join(repo, "deploy", "linux", "policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
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
	policy := enableRule(t, d.policy, "azuredisk")
	if !strings.Contains(policy, "pathRoots: ["+shippedKubelet+"/") {
		t.Fatalf("the shipped azuredisk rule has no pathRoots in %s for this test to move", shippedKubelet)
	}
	policy = strings.ReplaceAll(policy, shippedKubelet+"/", kubelet+"/")
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
