//go:build linux

package main

import (
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/metrics"
	"github.com/csi-node-proxy/csi-node-proxy/internal/objecthost"
	"github.com/csi-node-proxy/csi-node-proxy/internal/version"
)

// TestObjectsSurviveMetrics: with metrics on (every shipped manifest
// turns them on) the daemon's host is wrapped in timing decorators, which
// carry no VolumeMounts. The policy's object answers must still come from
// the Linux block backend, or every call of a rule with
// onlyMountedBeneathPathRoots naming a volume or disk is refused.
func TestObjectsSurviveMetrics(t *testing.T) {
	resetKlog(t)
	cfg, err := parseFlagsWith([]string{"--host=linux", "-kubelet-path=" + t.TempDir(), "--linux-host-mount-table=none"}, registry)
	if err != nil {
		t.Fatal(err)
	}
	n, err := newNode(cfg, metrics.New(version.Get()), &identityWarnings{}, identity.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	if _, ok := n.Backends.Volume.(objecthost.VolumeMounter); ok {
		t.Fatal("the host was not instrumented: the test does not test what it says")
	}
	objects, ok := n.Gate.Objects.(*objecthost.HostObjects)
	if !ok || objects.Mounts == nil {
		t.Errorf("with metrics on, the object answers (%T) cannot tell where a volume is mounted: confined calls would all be refused", n.Gate.Objects)
	}
}
