package cri

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The token reader of this OS, on plain files (no links, which Wine
// cannot make, so that this runs under Wine too): a kubelet-written
// token is read and believed, and an oversized file, a directory or a
// missing file is refused. serviceaccount_linux_test.go covers links and
// the CRI protocol.
func TestServiceAccountFromFiles(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "windows" {
		t.Skip("tokens are read on Linux and Windows only")
	}
	kubelet, err := filepath.Abs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := &Resolver{cfg: Config{KubeletPath: kubelet}}
	good := tokenFor(saNamespace, saName, saPodName, pod)
	volume := func(name string) string {
		dir := filepath.Join(kubelet, "pods", pod, "volumes", projectedDir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	write := func(dir, content string) string {
		if err := os.WriteFile(filepath.Join(dir, tokenFile), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	containerPath := tokenMountPath
	if runtime.GOOS == "windows" {
		containerPath = `c:\var\run\secrets\kubernetes.io\serviceaccount`
	}
	for _, tc := range []struct {
		name string
		dir  string
		want string // "" = unknown
		why  string
	}{
		{"a token kubelet wrote", write(volume("kube-api-access-a"), good), saName, ""},
		{"an oversized token", write(volume("kube-api-access-b"), good+strings.Repeat(" ", maxTokenSize)), "", "more than"},
		{"a directory for a token", func() string { d := volume("kube-api-access-c"); volume("kube-api-access-c/token"); return d }(), "", "token"},
		{"no token file", volume("kube-api-access-d"), "", "token"},
		{"a token bound to another pod", write(volume("kube-api-access-e"), tokenFor(saNamespace, saName, saPodName, otherPod)), "", "another pod"},
	} {
		sa, why := r.serviceAccount(podRef{namespace: saNamespace, podUID: pod}, []*runtimeapi.Mount{{ContainerPath: containerPath, HostPath: tc.dir}})
		if sa != tc.want || (tc.want == "" && !strings.Contains(why, tc.why)) {
			t.Errorf("%s: %q (%s), want %q (%s)", tc.name, sa, why, tc.want, tc.why)
		}
	}
}
