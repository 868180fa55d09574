package identity

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// fakeWorkloads answers from a table, as a container runtime would; the
// CRI protocol itself is tested in package cri.
type fakeWorkloads map[string]Workload

func (f fakeWorkloads) Workload(_ context.Context, id string) (Workload, error) {
	w, ok := f[id]
	if !ok {
		return Workload{}, errdefs.Errorf(errdefs.ErrNotFound, "the container runtime does not know container %s", id)
	}
	return w, nil
}

// A connection's caller gets its workload from the resolver; a runtime
// that contradicts the pod the kernel's cgroup names is believed in
// nothing; an unknown container leaves the caller incomplete.
func TestHandshakeResolvesWorkload(t *testing.T) {
	impostor := strings.Repeat("c", 64)
	noToken := strings.Repeat("e", 64)
	res := fakeWorkloads{
		cid:      {Namespace: "kube-system", PodName: "csi-azuredisk-node-x7k2p", PodUID: pod, ContainerName: "azuredisk", ServiceAccount: "csi-azuredisk-node-sa"},
		impostor: {Namespace: "kube-system", PodName: "impostor", PodUID: "11111111-2222-3333-4444-555555555555", ContainerName: "azuredisk", ServiceAccount: "csi-azuredisk-node-sa"},
		noToken:  {Namespace: "kube-system", PodName: "csi-azuredisk-node-x7k2p", PodUID: pod, ContainerName: "azuredisk", Incomplete: "service account unknown: no ServiceAccount token is mounted"},
	}
	handshake := func(o Options, c Caller) Caller {
		t.Helper()
		creds := NewCredentials(o)
		creds.identify = func(net.Conn, Options, acceptMark) (Caller, *process) { return c, nil }
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		_, ai, err := creds.ServerHandshake(a)
		if err != nil {
			t.Fatal(err)
		}
		return ai.(AuthInfo).Caller
	}

	got := handshake(Options{Workloads: res}, Caller{PID: 5, ContainerID: cid, PodUID: pod})
	if got.PodNamespace != "kube-system" || got.PodName != "csi-azuredisk-node-x7k2p" || got.ContainerName != "azuredisk" || got.ServiceAccount != "csi-azuredisk-node-sa" || got.Incomplete != "" {
		t.Errorf("caller %+v", got)
	}
	if s := got.String(); !strings.Contains(s, "pod kube-system/csi-azuredisk-node-x7k2p") || !strings.Contains(s, "container azuredisk") || !strings.Contains(s, "serviceaccount csi-azuredisk-node-sa") {
		t.Errorf("String() = %q", s)
	}

	// A workload without its ServiceAccount: the rest is taken, and
	// Incomplete says what is missing.
	got = handshake(Options{Workloads: res}, Caller{PID: 5, ContainerID: noToken, PodUID: pod, Incomplete: "earlier"})
	if got.PodName != "csi-azuredisk-node-x7k2p" || got.ServiceAccount != "" || !strings.Contains(got.Incomplete, "earlier; service account unknown") {
		t.Errorf("workload without a ServiceAccount: %+v", got)
	}

	// Windows callers have no pod UID from the kernel: the runtime's is taken.
	got = handshake(Options{Workloads: res}, Caller{PID: 5, ContainerID: cid})
	if got.PodUID != pod || got.PodNamespace != "kube-system" {
		t.Errorf("caller without a cgroup pod: %+v", got)
	}

	got = handshake(Options{Workloads: res}, Caller{PID: 5, ContainerID: impostor, PodUID: pod})
	if got.PodNamespace != "" || got.PodName != "" || got.ContainerName != "" || got.ServiceAccount != "" || got.PodUID != pod || !strings.Contains(got.Incomplete, "disagree") {
		t.Errorf("contradicting runtime: %+v", got)
	}

	got = handshake(Options{Workloads: res}, Caller{PID: 5, ContainerID: strings.Repeat("d", 64), PodUID: pod, Incomplete: "earlier"})
	if got.PodNamespace != "" || !strings.Contains(got.Incomplete, "earlier") || !strings.Contains(got.Incomplete, "workload") {
		t.Errorf("unknown container: %+v", got)
	}

	// Without a resolver nothing is looked up.
	got = handshake(Options{}, Caller{PID: 5, ContainerID: cid, PodUID: pod})
	if got.PodNamespace != "" || got.Incomplete != "" {
		t.Errorf("without a resolver: %+v", got)
	}
}
