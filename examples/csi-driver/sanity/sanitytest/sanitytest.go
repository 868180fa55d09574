// Package sanitytest runs the kubernetes-csi sanity suite (csi-test/v5
// pkg/sanity) against the example driver from a Go test, counts what
// passed and what was skipped, and fails the test for a skip the CSI spec
// does not allow: a spec may skip only because the driver does not
// advertise the capability it tests (AllowedSkips).
//
// Ginkgo runs one suite per process, so each mode of the suite (the
// daemon on the Linux backend, library mode, the simulated host) is a
// test package of its own that calls Run once.
package sanitytest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/kubernetes-csi/csi-test/v5/pkg/sanity"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/csi-node-proxy/csi-node-proxy/examples/csi-driver/driver"
)

// AllowedSkips are the skip messages of csi-sanity v5.6.0 that say the
// driver does not advertise what the spec tests, with the capability the
// example driver leaves out. Any other skip (a test configuration that
// turns a test off, a path check missing) fails Run.
var AllowedSkips = map[string]string{
	"Controller Publish, UnpublishVolume not supported":         "no PUBLISH_UNPUBLISH_VOLUME: the disk is made on its node",
	"ControllerPublishVolume not supported":                     "no PUBLISH_UNPUBLISH_VOLUME",
	"ControllerUnpublishVolume not supported":                   "no PUBLISH_UNPUBLISH_VOLUME",
	"ControllerPublishVolume.readonly field not supported":      "no PUBLISH_READONLY",
	"No MaxVolumesPerNode":                                      "max_volumes_per_node is optional; 0 is no limit",
	"ControllerGetVolumeHealth not supported":                   "no GET_VOLUME / VOLUME_CONDITION",
	"ControllerListVolumeHealth not supported":                  "no LIST_VOLUMES / VOLUME_CONDITION",
	"ControllerModifyVolume not supported":                      "no MODIFY_VOLUME",
	"Modify Volume not supported":                               "no MODIFY_VOLUME",
	"Modify volume not supported":                               "no MODIFY_VOLUME",
	"CreateSnapshot not supported":                              "no CREATE_DELETE_SNAPSHOT",
	"DeleteSnapshot not supported":                              "no CREATE_DELETE_SNAPSHOT",
	"GetSnapshot not supported":                                 "no GET_SNAPSHOT",
	"ListSnapshots not supported":                               "no LIST_SNAPSHOTS",
	"Snapshot not supported":                                    "no CREATE_DELETE_SNAPSHOT",
	"SNAPSHOT_ACCESSIBILITY_CONSTRAINTS not supported":          "no SNAPSHOT_ACCESSIBILITY_CONSTRAINTS",
	"VolumeGroupSnapshots not supported":                        "no group controller service",
	"GroupControllerService not supported":                      "no group controller service",
	"Volume Cloning not supported":                              "no CLONE_VOLUME",
	"GetCapacity not supported":                                 "no GET_CAPACITY",
	"ListVolumes not supported":                                 "no LIST_VOLUMES",
	"NodeGetVolumeHealth not supported":                         "no node VOLUME_CONDITION",
	"NodeGetStorageHealth not supported":                        "no node storage health (GET_STORAGE_HEALTH)",
	"Service does not have single node multi writer capability": "no SINGLE_NODE_MULTI_WRITER",
}

// Counts is what a run of the suite did with its specs.
type Counts struct {
	// Passed, Failed and Skipped are specs that ran; NotSelected are
	// those a focus left out, Pending those csi-sanity itself disables.
	Passed, Failed, Skipped, NotSelected, Pending int
	// SkipReasons counts the skipped specs by message.
	SkipReasons map[string]int
}

// String is the one-line summary the tests log.
func (c Counts) String() string {
	var reasons []string
	for m, n := range c.SkipReasons {
		reasons = append(reasons, fmt.Sprintf("%d× %q", n, m))
	}
	sort.Strings(reasons)
	return fmt.Sprintf("%d passed, %d failed, %d skipped, %d pending in csi-sanity, %d not selected; skips: %s",
		c.Passed, c.Failed, c.Skipped, c.Pending, c.NotSelected, strings.Join(reasons, ", "))
}

// last is the report of the suite that ran in this process.
var last *types.Report

var _ = ginkgo.ReportAfterSuite("csi-sanity counts", func(r ginkgo.Report) { last = &r })

// Run runs csi-sanity with cfg, only the specs whose text contains focus
// when focus is not "", and returns the counts. It fails t if no spec
// passed or a spec was skipped for a reason not in AllowedSkips.
func Run(t *testing.T, name string, cfg sanity.TestConfig, focus string) Counts {
	t.Helper()
	sc := sanity.GinkgoTest(&cfg)
	gomega.RegisterFailHandler(ginkgo.Fail)
	suite, reporter := ginkgo.GinkgoConfiguration()
	if focus != "" {
		suite.FocusStrings = append(suite.FocusStrings, focus)
	}
	ginkgo.RunSpecs(t, "csi-sanity: "+name, suite, reporter)
	sc.Finalize()
	if last == nil {
		t.Fatal("the suite produced no report")
	}
	c := Counts{SkipReasons: map[string]int{}}
	for _, s := range last.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		switch {
		case s.State == types.SpecStatePassed:
			c.Passed++
		case s.State == types.SpecStateSkipped && s.Failure.Message == "":
			c.NotSelected++
		case s.State == types.SpecStateSkipped:
			c.Skipped++
			c.SkipReasons[s.Failure.Message]++
			if _, ok := AllowedSkips[s.Failure.Message]; !ok {
				t.Errorf("csi-sanity skipped %q: %s, a reason the CSI spec does not allow (only capabilities not advertised)", s.FullText(), s.Failure.Message)
			}
		case s.State == types.SpecStatePending:
			c.Pending++
		default:
			c.Failed++
		}
	}
	if c.Passed == 0 {
		t.Error("no csi-sanity spec passed")
	}
	t.Logf("csi-sanity %s: %s", name, c)
	return c
}

// Serve serves the driver's CSI endpoint on the unix socket sock until the
// test ends, and fails the test when serving ended with an error: every
// mode serves the driver the same way before csi-sanity dials it.
func Serve(t *testing.T, d *driver.Driver, sock string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- d.Serve(ctx, sock) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("driver: %v", err)
		}
	})
}
