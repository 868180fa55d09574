package cri

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/beneath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/fakecri"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// projectVolume writes a projected volume as kubelet's atomic writer
// lays it out (pkg/volume/util/atomic_writer.go): the files in a
// timestamped directory, ..data a relative link to it, and each file a
// relative link through ..data. It returns the volume directory.
func projectVolume(t *testing.T, kubelet, podUID, volume string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(kubelet, "pods", podUID, "volumes", projectedDir, volume)
	ts := "..2026_11_26_10_00_00.123456789"
	if err := os.MkdirAll(filepath.Join(dir, ts), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ts, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, ts, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// saMount is the mount kubelet asks the runtime for: the pod's
// kube-api-access volume at the standard path.
func saMount(hostPath string) *runtimeapi.Mount {
	return &runtimeapi.Mount{ContainerPath: tokenMountPath, HostPath: hostPath, Readonly: true}
}

// The pod's ServiceAccount is learned over the real CRI protocol from the
// token kubelet mounted, and a rule naming it matches; every forged or
// missing token leaves it unknown, and the rule then does not match.
func TestServiceAccountOverCRI(t *testing.T) {
	if err := beneath.Probe(); err != nil {
		t.Skip(err)
	}
	tmp := sockdir.New(t, "cri")
	kubelet := filepath.Join(tmp, "kubelet")
	good := tokenFor(saNamespace, saName, saPodName, pod)
	projected := func(podUID string) string { return filepath.Join(kubelet, "pods", podUID, "volumes", projectedDir) }

	// A token with the right claims, planted where kubelet would never
	// put this pod's token.
	elsewhere := filepath.Join(tmp, "elsewhere")
	if err := os.MkdirAll(filepath.Join(elsewhere, "kube-api-access-evil"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(elsewhere, "kube-api-access-evil", "token"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}

	type setup func(t *testing.T) []*runtimeapi.Mount
	cases := []struct {
		name   string
		mounts setup
		want   string // the ServiceAccount, "" = unknown
		why    string // in Incomplete when unknown
	}{
		{"the token kubelet mounted", func(t *testing.T) []*runtimeapi.Mount {
			return []*runtimeapi.Mount{
				{ContainerPath: "/csi", HostPath: filepath.Join(kubelet, "plugins", "disk.csi.azure.com")},
				saMount(projectVolume(t, kubelet, pod, "kube-api-access-7xq2z", map[string]string{"token": good, "ca.crt": "x", "namespace": saNamespace})),
			}
		}, saName, ""},
		{"a token mounted elsewhere in the container", func(t *testing.T) []*runtimeapi.Mount {
			return []*runtimeapi.Mount{{ContainerPath: "/var/run/secrets/tokens", HostPath: projectVolume(t, kubelet, pod, "vault-token", map[string]string{"token": good})}}
		}, saName, ""},
		{"no token mounted", func(t *testing.T) []*runtimeapi.Mount {
			return []*runtimeapi.Mount{{ContainerPath: "/csi", HostPath: filepath.Join(kubelet, "plugins", "disk.csi.azure.com")}}
		}, "", "no ServiceAccount token is mounted"},
		{"a host path outside the pod's projected volumes", func(*testing.T) []*runtimeapi.Mount {
			return []*runtimeapi.Mount{saMount(filepath.Join(elsewhere, "kube-api-access-evil"))}
		}, "", "no ServiceAccount token is mounted"},
		{"a host path that climbs out with ..", func(*testing.T) []*runtimeapi.Mount {
			return []*runtimeapi.Mount{saMount(projected(pod) + "/../../../../../elsewhere/kube-api-access-evil")}
		}, "", "no ServiceAccount token is mounted"},
		{"another pod's volume, though its token names this pod", func(t *testing.T) []*runtimeapi.Mount {
			return []*runtimeapi.Mount{saMount(projectVolume(t, kubelet, otherPod, "kube-api-access-abcde", map[string]string{"token": good}))}
		}, "", "no ServiceAccount token is mounted"},
		{"a token that links out of its volume (absolute)", func(t *testing.T) []*runtimeapi.Mount {
			dir := projectVolume(t, kubelet, pod, "kube-api-access-abs", nil)
			if err := os.Symlink(filepath.Join(elsewhere, "kube-api-access-evil", "token"), filepath.Join(dir, "token")); err != nil {
				t.Fatal(err)
			}
			return []*runtimeapi.Mount{saMount(dir)}
		}, "", "leads out of its volume"},
		{"a token that links out of its volume (relative)", func(t *testing.T) []*runtimeapi.Mount {
			dir := projectVolume(t, kubelet, pod, "kube-api-access-rel", nil)
			if err := os.Symlink("../../../../../../elsewhere/kube-api-access-evil/token", filepath.Join(dir, "token")); err != nil {
				t.Fatal(err)
			}
			return []*runtimeapi.Mount{saMount(dir)}
		}, "", "leads out of its volume"},
		{"a volume directory that is a link", func(t *testing.T) []*runtimeapi.Mount {
			if err := os.MkdirAll(projected(pod), 0o755); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(projected(pod), "kube-api-access-link")
			if err := os.Symlink(filepath.Join(elsewhere, "kube-api-access-evil"), link); err != nil {
				t.Fatal(err)
			}
			return []*runtimeapi.Mount{saMount(link)}
		}, "", "volume directory"},
		{"a volume directory that links to another pod's volume", func(t *testing.T) []*runtimeapi.Mount {
			// Relative, so it stays below the kubelet directory: only
			// refusing every link below it keeps it out.
			projectVolume(t, kubelet, otherPod, "kube-api-access-fgh", map[string]string{"token": good})
			link := filepath.Join(projected(pod), "kube-api-access-hop")
			if err := os.Symlink("../../../"+otherPod+"/volumes/"+projectedDir+"/kube-api-access-fgh", link); err != nil {
				t.Fatal(err)
			}
			return []*runtimeapi.Mount{saMount(link)}
		}, "", "volume directory"},
		{"a token bound to another pod", func(t *testing.T) []*runtimeapi.Mount {
			return []*runtimeapi.Mount{saMount(projectVolume(t, kubelet, pod, "kube-api-access-uid", map[string]string{"token": tokenFor(saNamespace, saName, saPodName, otherPod)}))}
		}, "", "another pod"},
		{"a token of another namespace", func(t *testing.T) []*runtimeapi.Mount {
			return []*runtimeapi.Mount{saMount(projectVolume(t, kubelet, pod, "kube-api-access-ns", map[string]string{"token": tokenFor("default", saName, saPodName, pod)}))}
		}, "", "another namespace"},
		{"a malformed token", func(t *testing.T) []*runtimeapi.Mount {
			return []*runtimeapi.Mount{saMount(projectVolume(t, kubelet, pod, "kube-api-access-bad", map[string]string{"token": "eyJhbGciOiJSUzI1NiJ9.not-json.c2ln"}))}
		}, "", "payload"},
		{"an oversized token file", func(t *testing.T) []*runtimeapi.Mount {
			// A valid token padded with whitespace: only the size
			// refuses it.
			huge := good + strings.Repeat("\n", maxTokenSize)
			return []*runtimeapi.Mount{saMount(projectVolume(t, kubelet, pod, "kube-api-access-big", map[string]string{"token": huge}))}
		}, "", "more than"},
		{"a FIFO for a token", func(t *testing.T) []*runtimeapi.Mount {
			dir := projectVolume(t, kubelet, pod, "kube-api-access-fifo", nil)
			if err := unix.Mkfifo(filepath.Join(dir, "token"), 0o644); err != nil {
				t.Fatal(err)
			}
			return []*runtimeapi.Mount{saMount(dir)}
		}, "", "not a regular file"},
		{"a forged token at the standard path beside a good one", func(t *testing.T) []*runtimeapi.Mount {
			return []*runtimeapi.Mount{
				{ContainerPath: "/x", HostPath: projectVolume(t, kubelet, pod, "kube-api-access-ok", map[string]string{"token": good})},
				saMount(projectVolume(t, kubelet, pod, "kube-api-access-forged", map[string]string{"token": tokenFor(saNamespace, saName, saPodName, otherPod)})),
			}
		}, "", "another pod"},
		{"two tokens naming different ServiceAccounts", func(t *testing.T) []*runtimeapi.Mount {
			return []*runtimeapi.Mount{
				{ContainerPath: "/x", HostPath: projectVolume(t, kubelet, pod, "tokens-a", map[string]string{"token": good})},
				{ContainerPath: "/y", HostPath: projectVolume(t, kubelet, pod, "tokens-b", map[string]string{"token": tokenFor(saNamespace, "admin", saPodName, pod)})},
			}
		}, "", "different ServiceAccounts"},
	}

	f := &fakecri.Runtime{}
	ids := make([]string, len(cases))
	for i, tc := range cases {
		ids[i] = fmt.Sprintf("%064x", i+1)
		f.Add(ids[i], fakecri.KubeletLabels(saNamespace, saPodName, pod, "azuredisk"), tc.mounts(t))
	}
	res := newTestCRI(t, Config{Endpoint: f.Start(t), KubeletPath: kubelet})
	pol, err := policy.Parse([]byte(serviceAccountRule), policy.Options{Style: hostpath.POSIX})
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range cases {
		w, err := res.Workload(t.Context(), ids[i])
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if w.ServiceAccount != tc.want {
			t.Errorf("%s: ServiceAccount %q, want %q (%s)", tc.name, w.ServiceAccount, tc.want, w.Incomplete)
		}
		if tc.want == "" && !strings.Contains(w.Incomplete, tc.why) {
			t.Errorf("%s: Incomplete %q, want it to say %q", tc.name, w.Incomplete, tc.why)
		}
		if tc.want != "" && w.Incomplete != "" {
			t.Errorf("%s: Incomplete %q", tc.name, w.Incomplete)
		}
		if strings.Contains(w.Incomplete, good[:20]) {
			t.Errorf("%s: Incomplete quotes the token: %q", tc.name, w.Incomplete)
		}
		caller := identity.Caller{PID: 42, ContainerID: ids[i], PodUID: w.PodUID, PodNamespace: w.Namespace, PodName: w.PodName, ContainerName: w.ContainerName, ServiceAccount: w.ServiceAccount}
		d := pol.Decide(policy.Call{Caller: caller, Group: "disk", Version: "v1", Method: "PartitionDisk"})
		if d.Allowed != (tc.want != "") {
			t.Errorf("%s: the rule naming %s/%s decided %+v", tc.name, saNamespace, saName, d)
		}
	}

	// Without a kubelet directory nothing is read.
	bare := newTestCRI(t, Config{Endpoint: f.Start(t)})
	if w, err := bare.Workload(t.Context(), ids[0]); err != nil || w.ServiceAccount != "" || !strings.Contains(w.Incomplete, "no kubelet directory") {
		t.Errorf("without a kubelet directory: %+v, %v", w, err)
	}
}

const serviceAccountRule = `
rules:
- name: azuredisk
  callers: [{serviceAccounts: [kube-system/csi-azuredisk-node-sa]}]
  allow: [{methods: ["*"]}]
`

// A kubelet directory that is not an absolute path is a configuration
// error, not a silent "no ServiceAccounts".
func TestConfigKubeletPath(t *testing.T) {
	for _, bad := range []string{"var/lib/kubelet", `C:\var\lib\kubelet`} {
		if _, err := New(Config{Endpoint: "unix:///run/cri.sock", KubeletPath: bad}); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("KubeletPath %q: %v, want ErrInvalidArgument", bad, err)
		}
	}
}
