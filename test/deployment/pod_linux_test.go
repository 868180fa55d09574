package deployment

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

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
