package cri

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// The workload the ServiceAccount tests identify.
const (
	saNamespace = "kube-system"
	saPodName   = "csi-azuredisk-node-x7k2p"
	saName      = "csi-azuredisk-node-sa"
	otherPod    = "11111111-2222-3333-4444-555555555555"
)

// tokenFor builds a ServiceAccount token as the API server issues one for
// a pod: the registered claims and the private "kubernetes.io" claim laid
// out as kubernetes/kubernetes pkg/serviceaccount/claims.go (Claims,
// privateClaims, commit 031075d149ca12dd66c16cc80d88d38086c2bbae) writes
// them, plus the node reference newer API servers add. The signature is
// random bytes: the daemon never checks it.
func tokenFor(namespace, sa, podName, podUID string) string {
	return makeToken(map[string]any{
		"aud": []string{"https://kubernetes.default.svc.cluster.local"},
		"exp": 1795000000,
		"iat": 1763464000,
		"iss": "https://kubernetes.default.svc.cluster.local",
		"jti": "3c1f0c2e-8d53-4a8e-9b4b-1d2f3e4a5b6c",
		"kubernetes.io": map[string]any{
			"namespace":      namespace,
			"node":           map[string]string{"name": "aks-nodepool1-12345678-vmss000000", "uid": "0d7c3a1e-1111-4222-8333-944455556666"},
			"pod":            map[string]string{"name": podName, "uid": podUID},
			"serviceaccount": map[string]string{"name": sa, "uid": "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"},
			"warnafter":      1763467607,
		},
		"nbf": 1763464000,
		"sub": "system:serviceaccount:" + namespace + ":" + sa,
	})
}

func makeToken(claims map[string]any) string {
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": "hK0c6i3lq0m7pKx2JvQeYt0Yd3W4xZcV"})
	payload, err := json.Marshal(claims)
	if err != nil {
		panic(err)
	}
	return enc.EncodeToString(header) + "." + enc.EncodeToString(payload) + "." + enc.EncodeToString([]byte("not-a-real-signature-but-256-bytes-long-in-real-life"))
}

// The claims must name this pod and namespace, and be well formed.
func TestServiceAccountOf(t *testing.T) {
	good := tokenFor("kube-system", "csi-azuredisk-node-sa", "csi-azuredisk-node-x7k2p", pod)
	if sa, err := serviceAccountOf([]byte(good+"\n"), "kube-system", pod); err != nil || sa != "csi-azuredisk-node-sa" {
		t.Fatalf("a real token: %q, %v", sa, err)
	}
	claims := func(edit func(k map[string]any, c map[string]any)) string {
		c := map[string]any{"sub": "system:serviceaccount:kube-system:csi-azuredisk-node-sa"}
		k := map[string]any{
			"namespace":      "kube-system",
			"pod":            map[string]string{"name": "p", "uid": pod},
			"serviceaccount": map[string]string{"name": "csi-azuredisk-node-sa", "uid": "u"},
		}
		c["kubernetes.io"] = k
		edit(k, c)
		return makeToken(c)
	}
	if sa, err := serviceAccountOf([]byte(claims(func(map[string]any, map[string]any) {})), "kube-system", pod); err != nil || sa != "csi-azuredisk-node-sa" {
		t.Fatalf("the minimal claims: %q, %v", sa, err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	parts := strings.Split(good, ".")
	bad := map[string]string{
		"another pod":            tokenFor("kube-system", "csi-azuredisk-node-sa", "other", "11111111-2222-3333-4444-555555555555"),
		"another namespace":      tokenFor("default", "csi-azuredisk-node-sa", "csi-azuredisk-node-x7k2p", pod),
		"no pod binding":         claims(func(k, _ map[string]any) { delete(k, "pod") }),
		"a secret-based token":   claims(func(k, _ map[string]any) { delete(k, "pod"); k["secret"] = map[string]string{"name": "s", "uid": "u"} }),
		"no serviceaccount":      claims(func(k, _ map[string]any) { delete(k, "serviceaccount") }),
		"no kubernetes.io claim": claims(func(_, c map[string]any) { delete(c, "kubernetes.io") }),
		"subject of another SA":  claims(func(_, c map[string]any) { c["sub"] = "system:serviceaccount:kube-system:admin" }),
		"no subject":             claims(func(_, c map[string]any) { delete(c, "sub") }),
		"invalid SA name": claims(func(k, c map[string]any) {
			k["serviceaccount"] = map[string]string{"name": "A/B"}
			c["sub"] = "system:serviceaccount:kube-system:A/B"
		}),
		"pod uid of another type":   claims(func(k, _ map[string]any) { k["pod"] = map[string]any{"uid": 7} }),
		"two parts":                 enc([]byte(`{"alg":"none"}`)) + "." + enc([]byte(`{"sub":"x"}`)),
		"four parts":                good + ".x",
		"padded payload":            parts[0] + "." + parts[1] + "==." + parts[2],
		"payload not base64url":     "eyJhbGciOiJSUzI1NiJ9.!!!!.c2ln",
		"payload not JSON":          enc([]byte(`{}`)) + "." + enc([]byte("kubernetes.io")) + ".c2ln",
		"payload a JSON array":      enc([]byte(`{}`)) + "." + enc([]byte(`[1,2]`)) + ".c2ln",
		"empty payload":             enc([]byte(`{}`)) + "..c2ln",
		"empty file":                "",
		"standard base64 (+ and /)": parts[0] + "." + parts[1][:len(parts[1])-4] + "+/+/." + parts[2],
	}
	for name, tok := range bad {
		if sa, err := serviceAccountOf([]byte(tok), "kube-system", pod); err == nil || sa != "" {
			t.Errorf("%s: %q, %v; want refused", name, sa, err)
		} else if strings.Contains(err.Error(), tok) && tok != "" {
			t.Errorf("%s: the error quotes the token: %v", name, err)
		}
	}
}

// Only a mount from this pod's projected volume directory is a
// candidate; the one at the standard path comes first.
func TestTokenMounts(t *testing.T) {
	const kubelet = "/var/lib/kubelet"
	dir := kubelet + "/pods/" + pod + "/volumes/kubernetes.io~projected/"
	mounts := []*runtimeapi.Mount{
		{ContainerPath: "/etc/config", HostPath: dir + "config-and-token"},
		{ContainerPath: "/VAR/run/secrets/kubernetes.io/serviceaccount", HostPath: dir + "case-variant"},
		{ContainerPath: tokenMountPath, HostPath: dir + "kube-api-access-7xq2z"},
		{ContainerPath: "/a", HostPath: kubelet + "/pods/11111111-2222-3333-4444-555555555555/volumes/kubernetes.io~projected/kube-api-access-abcde"},
		{ContainerPath: "/b", HostPath: dir + "kube-api-access-7xq2z/sub"},
		{ContainerPath: "/c", HostPath: dir + "../kubernetes.io~secret/tok"},
		{ContainerPath: "/d", HostPath: kubelet + "/pods/" + pod + "/volumes/kubernetes.io~secret/kube-api-access-7xq2z"},
		{ContainerPath: "/e", HostPath: "/var/lib/kubelet-x/pods/" + pod + "/volumes/kubernetes.io~projected/v"},
		{ContainerPath: "/f", HostPath: dir + "UPPER"},
		{ContainerPath: "/g", HostPath: "relative/" + dir},
		{ContainerPath: "/h", HostPath: ""},
		nil,
	}
	got := tokenMounts(hostpath.POSIX, kubelet, pod, mounts)
	want := []tokenMount{{volume: "kube-api-access-7xq2z", standard: true}, {volume: "config-and-token"}, {volume: "case-variant"}}
	if !slices.Equal(got, want) {
		t.Errorf("candidates %+v, want %+v", got, want)
	}
	// The standard mount is found behind many others, and no more than
	// maxTokenMounts are read.
	var many []*runtimeapi.Mount
	for i := range 2 * maxTokenMounts {
		many = append(many, &runtimeapi.Mount{ContainerPath: fmt.Sprintf("/v%d", i), HostPath: fmt.Sprintf("%sv%d", dir, i)})
	}
	many = append(many, mounts[2])
	if got := tokenMounts(hostpath.POSIX, kubelet, pod, many); len(got) != maxTokenMounts || got[0] != want[0] {
		t.Errorf("behind %d other mounts: %+v", 2*maxTokenMounts, got)
	}
	if got := tokenMounts(hostpath.POSIX, kubelet, "../"+pod, mounts); len(got) != 0 {
		t.Errorf("a pod UID that is no UID: %+v", got)
	}

	// Windows: kubelet's paths, in any case and either slash, and a
	// container path with a drive.
	win := []*runtimeapi.Mount{
		{ContainerPath: `c:\var\run\secrets\kubernetes.io\serviceaccount`, HostPath: `c:\var\lib\kubelet\pods\` + pod + `\volumes\kubernetes.io~projected\kube-api-access-7xq2z`},
		{ContainerPath: `c:\x`, HostPath: `C:/VAR/lib/kubelet/pods/` + pod + `/volumes/kubernetes.io~projected/other`},
		{ContainerPath: `c:\y`, HostPath: `D:\var\lib\kubelet\pods\` + pod + `\volumes\kubernetes.io~projected\v`},
	}
	got = tokenMounts(hostpath.Windows, `C:\var\lib\kubelet`, pod, win)
	want = []tokenMount{{volume: "kube-api-access-7xq2z", standard: true}, {volume: "other"}}
	if !slices.Equal(got, want) {
		t.Errorf("Windows candidates %+v, want %+v", got, want)
	}
}
