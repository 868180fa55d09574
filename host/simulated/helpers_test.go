package simulated_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
)

var ctx = context.Background()

// newHost builds a host from cfg or fails the test.
func newHost(t *testing.T, cfg simulated.Config) *simulated.Host {
	t.Helper()
	h, err := simulated.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return h
}

// defaultHost is the DefaultConfig world: disks 0 (C:), 1 (1 GiB RAW) and
// 2 (2 GiB RAW), working dir C:\var\lib\kubelet.
func defaultHost(t *testing.T) *simulated.Host {
	t.Helper()
	return newHost(t, simulated.DefaultConfig(nil))
}

// wantErr fails unless err wraps kind and its message contains every
// fragment.
func wantErr(t *testing.T, err, kind error, fragments ...string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error = %v; want one wrapping %q", err, kind)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not mention %q", err, f)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// volumeOf partitions disk n (when needed) and returns its data volume.
func volumeOf(t *testing.T, h *simulated.Host, n uint32) string {
	t.Helper()
	must(t, h.Disk().PartitionDisk(ctx, n))
	ids, err := h.Volume().ListVolumesOnDisk(ctx, n, 0)
	must(t, err)
	if len(ids) != 1 {
		t.Fatalf("disk %d has volumes %v; want one", n, ids)
	}
	return ids[0]
}

// formatted returns disk n's data volume, formatted.
func formatted(t *testing.T, h *simulated.Host, n uint32) string {
	t.Helper()
	id := volumeOf(t, h, n)
	must(t, h.Volume().FormatVolume(ctx, id))
	return id
}

// volumeInfo returns the snapshot of volume id.
func volumeInfo(t *testing.T, h *simulated.Host, id string) simulated.VolumeInfo {
	t.Helper()
	return findVolume(t, h, func(v simulated.VolumeInfo) bool { return strings.EqualFold(v.ID, id) }, "volume %s not in ListVolumes", id)
}

// systemVolume returns the C: volume.
func systemVolume(t *testing.T, h *simulated.Host) string {
	t.Helper()
	return findVolume(t, h, func(v simulated.VolumeInfo) bool { return v.DriveLetter == "C" }, "no C: volume").ID
}

// findVolume returns the first volume of ListVolumes that match accepts,
// or fails t with the message format and args give: the one search
// behind volumeInfo and systemVolume.
func findVolume(t *testing.T, h *simulated.Host, match func(simulated.VolumeInfo) bool, format string, args ...any) simulated.VolumeInfo {
	t.Helper()
	for _, v := range h.ListVolumes() {
		if match(v) {
			return v
		}
	}
	t.Fatalf(format, args...)
	return simulated.VolumeInfo{}
}

const kubelet = `C:\var\lib\kubelet`
