package cri

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/k8sname"
)

// How a pod's ServiceAccount is learned on the node, without the API
// server.
//
// kubelet does not pass the ServiceAccount to the runtime as a label or
// annotation, but it does mount the pod's ServiceAccount token into each
// container, and the runtime reports every mount of a container in
// ContainerStatus (containerd copies the create request's mounts into
// the status: containerd/containerd internal/cri/server/container_status.go,
// toCRIContainerStatus, "Mounts: meta.Config.GetMounts()", commit
// 04d0bebd182db81da50065200644c743565ad034).
//
// The token is a projected volume. kubelet keeps a pod's volumes in
// <root>/pods/<pod UID>/volumes/<plugin, with "/" escaped as "~">/<volume>
// (kubernetes/kubernetes pkg/kubelet/kubelet_getters.go getPodVolumeDir
// and pkg/kubelet/config/defaults.go "pods", "volumes", commits
// 01afcf67620860eff9dbe0492ec18898bd6a415b and
// 16fa4023689f0ac341874d239a933d305af50573), so the projected plugin's
// directory is kubernetes.io~projected. The ServiceAccount admission
// plugin names the volume kube-api-access-<random>, mounts it at
// /var/run/secrets/kubernetes.io/serviceaccount and projects the token
// as the file "token" (plugin/pkg/admission/serviceaccount/admission.go:
// ServiceAccountVolumeName, DefaultAPITokenMountPath).
//
// The token is a JWT whose private claim "kubernetes.io" holds the
// namespace, the ServiceAccount's name and UID and, for a token bound to
// a pod, the pod's name and UID (kubernetes/kubernetes
// pkg/serviceaccount/claims.go, privateClaims and Claims, commit
// 031075d149ca12dd66c16cc80d88d38086c2bbae); its subject is
// system:serviceaccount:<namespace>:<name>.
//
// Its signature is not checked, and need not be: the daemon has no key
// to check it with (that is the API server's), and what makes the claims
// believable is where the file lies. The file is read only from the
// directory kubelet keeps for this pod's projected volumes on the host,
// which kubelet writes and every container sees read-only; a container
// cannot write it through its mount, and the mount list comes from the
// runtime, not from the container. Whoever can write that host
// directory (a pod with a hostPath of the kubelet directory) can already
// act as any pod of the node. The claims must also name this very pod
// (pod.uid) and its namespace, so a token copied from another pod is
// refused.
//
// What the place does not prove: kubelet writes ConfigMap and Secret
// items into the same projected volume directories, so someone who may
// put such an item named "token" into a pod's projected volume (and
// update it once the pod's UID is known) can claim any ServiceAccount of
// that pod's namespace. That is no more than the right to create pods in
// the namespace already gives (a pod may name any ServiceAccount there),
// so a serviceAccounts selector is worth exactly that; docs/security.md
// says so. Requiring every token mounted into the container to agree
// only stops a forger who also leaves the real token mounted.

const (
	// tokenMountPath is where the ServiceAccount admission plugin mounts
	// the token volume (its DefaultAPITokenMountPath).
	tokenMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"
	// tokenFile is the token's file in that volume.
	tokenFile = "token"
	// projectedDir is the projected volume plugin's directory below a
	// pod's volumes directory: kubernetes.io/projected, escaped.
	projectedDir = "kubernetes.io~projected"
	// maxTokenSize bounds how much of a token file is read. Real tokens
	// are one to two KiB; a few audiences more do not come near this.
	maxTokenSize = 64 << 10
	// maxTokenMounts bounds the candidate mounts read per container.
	maxTokenMounts = 8
)

// readTokenFile reads the opened token file f, whose size the caller's
// stat found, refusing more than maxTokenSize bytes both by that size and
// by what is read (the file may grow between the two): the end of
// readToken on every OS, once the file is known to be a regular file
// inside its volume.
func readTokenFile(f io.Reader, size uint64) ([]byte, error) {
	if size > maxTokenSize {
		return nil, fmt.Errorf("the token file has %d bytes, more than %d", size, maxTokenSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxTokenSize+1))
	if err != nil {
		return nil, fmt.Errorf("read the token file: %w", err)
	}
	if len(data) > maxTokenSize {
		return nil, fmt.Errorf("the token file has more than %d bytes", maxTokenSize)
	}
	return data, nil
}

// tokenClaims is the part of a ServiceAccount token's payload read here.
type tokenClaims struct {
	Subject    string `json:"sub"`
	Kubernetes *struct {
		Namespace      string    `json:"namespace"`
		ServiceAccount *claimRef `json:"serviceaccount"`
		Pod            *claimRef `json:"pod"`
	} `json:"kubernetes.io"`
}

type claimRef struct {
	Name string `json:"name"`
	UID  string `json:"uid"`
}

// serviceAccountOf parses a token and returns the name of the
// ServiceAccount it names, provided that it is bound to the pod podUID in
// namespace. Errors never quote the token.
func serviceAccountOf(token []byte, namespace, podUID string) (string, error) {
	token = bytes.TrimSpace(token)
	parts := bytes.Split(token, []byte("."))
	if len(parts) != 3 || len(parts[1]) == 0 {
		return "", errors.New("the token is not a JWT (three base64url parts)")
	}
	payload := make([]byte, base64.RawURLEncoding.DecodedLen(len(parts[1])))
	n, err := base64.RawURLEncoding.Strict().Decode(payload, parts[1])
	if err != nil {
		return "", errors.New("the token's payload is not base64url")
	}
	var c tokenClaims
	if err := json.Unmarshal(payload[:n], &c); err != nil {
		return "", errors.New("the token's payload is not a JSON object of claims")
	}
	k := c.Kubernetes
	switch {
	case k == nil || k.ServiceAccount == nil:
		return "", errors.New("the token has no kubernetes.io ServiceAccount claim")
	case k.Pod == nil:
		return "", errors.New("the token is bound to no pod")
	case k.Pod.UID != podUID:
		return "", fmt.Errorf("the token is bound to another pod than %s", podUID)
	case k.Namespace != namespace:
		return "", fmt.Errorf("the token is of another namespace than %s", namespace)
	case !k8sname.IsDNSSubdomain(k.ServiceAccount.Name):
		return "", errors.New("the token's ServiceAccount name is not a valid name")
	case c.Subject != "system:serviceaccount:"+namespace+":"+k.ServiceAccount.Name:
		// The API server always sets the subject from the same
		// ServiceAccount (claims.go, MakeUsername).
		return "", errors.New("the token's subject does not match its ServiceAccount claim")
	}
	return k.ServiceAccount.Name, nil
}

// tokenMount is a mount that may hold the pod's token: the volume's
// name, from the mount's host path.
type tokenMount struct {
	volume   string
	standard bool // mounted at tokenMountPath
}

// tokenMounts returns the mounts whose host path is one of pod podUID's
// projected volumes below kubelet, the one at the standard container
// path first. Any other mount (another pod's volume, a hostPath, a path
// that leaves the volume directory) is ignored, whatever its container
// path.
func tokenMounts(style hostpath.Style, kubelet, podUID string, mounts []*runtimeapi.Mount) []tokenMount {
	if !k8sname.IsPodUID(podUID) {
		return nil
	}
	pol, err := hostpath.NewPolicy(style, []string{kubelet})
	if err != nil {
		return nil
	}
	root := pol.Roots()[0]
	dir := style.Join(style.Join(style.Join(style.Join(root, "pods"), podUID), "volumes"), projectedDir)
	var out []tokenMount
	for _, m := range mounts {
		hp, err := pol.Check("host_path", m.GetHostPath())
		if err != nil || !style.Equal(style.Dir(hp), dir) {
			continue
		}
		vol := style.Base(hp)
		if !k8sname.IsDNSLabel(vol) {
			continue
		}
		out = append(out, tokenMount{volume: vol, standard: isTokenMountPath(style, m.GetContainerPath())})
	}
	// The standard mount first, wherever the runtime listed it; then
	// at most maxTokenMounts in all, so a container with many volumes
	// costs a bounded number of reads.
	slices.SortStableFunc(out, func(a, b tokenMount) int {
		switch {
		case a.standard == b.standard:
			return 0
		case a.standard:
			return -1
		}
		return 1
	})
	return out[:min(len(out), maxTokenMounts)]
}

// isTokenMountPath tells whether a container path is tokenMountPath. On
// Windows kubelet gives it a drive (c:\var\run\secrets\...), so the
// comparison ignores a drive, the separator and case there; a Linux path
// must match exactly, after cleaning.
func isTokenMountPath(style hostpath.Style, p string) bool {
	if style != hostpath.Windows {
		return path.Clean(p) == tokenMountPath
	}
	w := strings.ReplaceAll(p, `\`, "/")
	if len(w) >= 2 && w[1] == ':' {
		w = w[2:]
	}
	return strings.EqualFold(strings.TrimSuffix(w, "/"), tokenMountPath)
}

// serviceAccount learns the ServiceAccount of w's pod from the tokens in
// mounts. It returns the name, or "" and why not. Every candidate token
// that can be read and names this pod must name the same ServiceAccount,
// and the one at the standard path, when there is one, must be valid: a
// pod has one ServiceAccount, so disagreeing tokens mean one was forged.
func (c *Resolver) serviceAccount(w podRef, mounts []*runtimeapi.Mount) (string, string) {
	if c.cfg.KubeletPath == "" {
		return "", "no kubelet directory is configured"
	}
	cands := tokenMounts(nativeStyle, c.cfg.KubeletPath, w.podUID, mounts)
	if len(cands) == 0 {
		return "", "no ServiceAccount token is mounted into the container from its pod's projected volumes"
	}
	var name string
	var problems []string
	for _, m := range cands {
		data, err := readToken(c.cfg.KubeletPath, w.podUID, m.volume)
		var sa string
		if err == nil {
			sa, err = serviceAccountOf(data, w.namespace, w.podUID)
		}
		if err != nil {
			if m.standard {
				return "", fmt.Sprintf("the token in volume %s: %v", m.volume, err)
			}
			problems = append(problems, fmt.Sprintf("volume %s: %v", m.volume, err))
			continue
		}
		if name != "" && sa != name {
			return "", "the tokens mounted into the container name different ServiceAccounts"
		}
		name = sa
	}
	if name == "" {
		return "", "no mounted token names the pod's ServiceAccount (" + strings.Join(problems, "; ") + ")"
	}
	return name, ""
}

// podRef is the pod whose ServiceAccount is sought, as the runtime's
// labels name it.
type podRef struct{ namespace, podUID string }

// strictlyBeneath tells whether the Windows final path final (as
// GetFinalPathNameByHandle spells it) lies below the directory dir's, not
// at it: where the token file a link led to must lie.
func strictlyBeneath(final, dir string) bool {
	return hostpath.Windows.Within(final, dir) && !hostpath.Windows.Equal(final, dir)
}
