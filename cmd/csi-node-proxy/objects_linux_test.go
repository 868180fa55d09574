//go:build linux

package main

import (
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/metrics"
	"github.com/csi-node-proxy/csi-node-proxy/internal/version"
)

// TestObjectsSurviveMetrics: with metrics on (every shipped manifest
// turns them on) the daemon's host is wrapped in timing decorators, which
// carry no VolumeMounts. The policy's object answers must still come from
// the Linux block backend, or every call of a rule with
// onlyMountedBeneathPathRoots naming a volume or disk is refused.
func TestObjectsSurviveMetrics(t *testing.T) {
	set, err := hostset.New(hostset.Config{Host: hostset.Linux, WorkingDirs: []string{t.TempDir()}, LinuxHostMountTable: "none"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	h, objects := instrumentHostWithObjects(set, metrics.New(version.Get()), string(hostset.Linux))
	if h.Volume == set.Volume {
		t.Fatal("the host was not instrumented: the test does not test what it says")
	}
	if objects.Mounts == nil {
		t.Error("with metrics on, the object answers cannot tell where a volume is mounted: confined calls would all be refused")
	}
}
