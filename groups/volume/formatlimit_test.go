package volume_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/simtest"
)

// slowFormats is the simulated host's volume backend whose FormatVolume
// takes a while and counts how many run at once.
type slowFormats struct {
	volume.Host
	running, most atomic.Int32
}

func (s *slowFormats) FormatVolume(ctx context.Context, id string) error {
	n := s.running.Add(1)
	defer s.running.Add(-1)
	for {
		m := s.most.Load()
		if n <= m || s.most.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(50 * time.Millisecond)
	return s.Host.FormatVolume(ctx, id)
}

// rawVolumes returns n RAW volumes, each on a disk of its own: the
// default world's disks and n more, partitioned.
func rawVolumes(t *testing.T, n int) (*simulated.Host, []string) {
	t.Helper()
	cfg := simulated.DefaultConfig(nil)
	for range n {
		cfg.Disks = append(cfg.Disks, simulated.DiskSpec{Size: simulated.Size(1 << 30)})
	}
	h := simtest.Node(t, cfg)
	disks := disk.NewService(h.Disk())
	var ids []string
	for _, d := range h.ListDisks() {
		if d.Number == 0 {
			continue // the system disk
		}
		_, err := disks.SetDiskState(ctx, &disk.SetDiskStateRequest{DiskNumber: d.Number, IsOnline: true})
		simtest.Must(t, err)
		_, err = disks.PartitionDisk(ctx, &disk.PartitionDiskRequest{DiskNumber: d.Number})
		simtest.Must(t, err)
		l, err := h.Volume().ListVolumesOnDisk(ctx, d.Number, 0)
		simtest.Must(t, err)
		ids = append(ids, l...)
	}
	if len(ids) < n {
		t.Fatalf("volumes %v, want at least %d", ids, n)
	}
	return h, ids[:n]
}

// TestMaxConcurrentFormats: with a bound of 2, six formats of six volumes
// started together never run more than two at once on the host, and all
// finish; unbounded, they overlap beyond two (so the bound is what holds
// them back).
func TestMaxConcurrentFormats(t *testing.T) {
	for _, limit := range []int{2, 0} {
		h, ids := rawVolumes(t, 6)
		slow := &slowFormats{Host: h.Volume()}
		vols := volume.NewService(slow, simtest.Paths(t, h))
		vols.SetMaxConcurrentFormats(limit)
		var wg sync.WaitGroup
		errs := make(chan error, len(ids))
		for _, id := range ids {
			wg.Go(func() {
				_, err := vols.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: id})
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			simtest.Must(t, err)
		}
		switch most := slow.most.Load(); {
		case limit > 0 && most > int32(limit):
			t.Errorf("bound %d: %d formats ran at once", limit, most)
		case limit == 0 && most <= 2:
			t.Errorf("unbounded: at most %d formats ran at once; the test cannot tell the bound's effect", most)
		}
	}
}

// TestMaxConcurrentFormatsWaitEndsWithContext: a format waiting for a
// free slot gives up when its context ends, with the context's error,
// and formats nothing.
func TestMaxConcurrentFormatsWaitEndsWithContext(t *testing.T) {
	h, ids := rawVolumes(t, 2)
	block := make(chan struct{})
	vols := volume.NewService(blockingFormats{Host: h.Volume(), release: block}, simtest.Paths(t, h))
	vols.SetMaxConcurrentFormats(1)
	done := make(chan error, 1)
	go func() {
		_, err := vols.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: ids[0]})
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the first take the slot
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err := vols.FormatVolume(short, &volume.FormatVolumeRequest{VolumeID: ids[1]})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting format: %v, want DeadlineExceeded", err)
	}
	if f, _ := h.Volume().IsVolumeFormatted(ctx, ids[1]); f {
		t.Error("the format that gave up formatted its volume")
	}
	close(block)
	simtest.Must(t, <-done)
}

// blockingFormats holds every FormatVolume until release is closed.
type blockingFormats struct {
	volume.Host
	release chan struct{}
}

func (b blockingFormats) FormatVolume(ctx context.Context, id string) error {
	<-b.release
	return b.Host.FormatVolume(ctx, id)
}
