package simulated_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
)

// TestConcurrentUse runs whole node-stage/unstage cycles on separate disks
// in parallel with readers and other groups; run it with -race.
func TestConcurrentUse(t *testing.T) {
	cfg := simulated.DefaultConfig(nil)
	cfg.SMBShares = []simulated.SMBShare{{Path: `\\srv\share`, Username: "u", Password: secret, Dirs: []string{"d"}}}
	cfg.ISCSITargets = []simulated.ISCSITarget{{Portal: portal, IQN: openIQN, LUNs: []simulated.DiskSpec{{Size: 64 << 20}}}}
	h := newHost(t, cfg)
	const workers = 8
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	report := func(err error) {
		if err != nil {
			errs <- err
		}
	}
	for i := range workers {
		wg.Go(func() {
			n, err := h.AddDisk(simulated.DiskSpec{Size: 256 << 20})
			if err != nil {
				report(err)
				return
			}
			stage := fmt.Sprintf(`%s\plugins\w%d\stage`, kubelet, i)
			for round := range 5 {
				report(h.Disk().PartitionDisk(ctx, n))
				ids, err := h.Volume().ListVolumesOnDisk(ctx, n, 0)
				if err != nil || len(ids) != 1 {
					report(fmt.Errorf("worker %d: volumes %v: %w", i, ids, err))
					return
				}
				id := ids[0]
				if ok, _ := h.Volume().IsVolumeFormatted(ctx, id); !ok {
					report(h.Volume().FormatVolume(ctx, id))
				}
				report(h.Filesystem().Mkdir(ctx, stage))
				report(h.Volume().MountVolume(ctx, id, stage))
				report(h.WriteFile(fmt.Sprintf(`%s\round%d`, stage, round), make([]byte, 8192)))
				if _, _, err := h.Volume().VolumeStats(ctx, id); err != nil {
					report(err)
				}
				if got, err := h.Volume().VolumeAt(ctx, stage); err != nil || got != id {
					report(fmt.Errorf("worker %d: VolumeAt = %q: %w", i, got, err))
				}
				report(h.Volume().UnmountVolume(ctx, id, stage))
				report(h.Filesystem().Rmdir(ctx, stage, true))
			}
			report(h.RemoveDisk(n))
		})
	}
	// Readers and other groups, at the same time.
	for range 4 {
		wg.Go(func() {
			for range 50 {
				_ = h.ListVolumes()
				_ = h.ListDisks()
				_, _ = h.Disk().ListDiskIDs(ctx)
				_, _ = h.Filesystem().PathExists(ctx, kubelet)
				_, _ = h.Volume().ClosestVolume(ctx, kubelet)
				_ = h.Disk().Rescan(ctx)
			}
		})
	}
	m := mapping(t, `\\srv\share\d`, "", "u", secret)
	wg.Go(func() {
		for range 50 {
			report(h.SMB().NewSmbGlobalMapping(ctx, m))
			report(h.SMB().RemoveSmbGlobalMapping(ctx, m.Share))
		}
	})
	wg.Go(func() {
		for range 50 {
			report(h.System().StartService(ctx, "MSiSCSI"))
			report(h.System().StopService(ctx, "MSiSCSI", false))
		}
	})
	wg.Go(func() {
		report(h.ISCSI().AddTargetPortal(ctx, portal))
		for range 20 {
			report(h.ISCSI().ConnectTarget(ctx, iscsi.Login{Portal: portal, IQN: openIQN}))
			report(h.ISCSI().DisconnectTarget(ctx, portal, openIQN))
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(h.ListDisks()); n != 3 {
		t.Errorf("%d disks at the end; want the 3 default ones", n)
	}
	if h.RescanCount() != 200 {
		t.Errorf("RescanCount = %d; want 200", h.RescanCount())
	}
}

func TestCancelledContext(t *testing.T) {
	h := defaultHost(t)
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := h.Disk().ListDiskIDs(c); !errors.Is(err, context.Canceled) {
		t.Errorf("ListDiskIDs with a cancelled context = %v", err)
	}
	if err := h.Filesystem().Mkdir(c, kubelet+`\x`); !errors.Is(err, context.Canceled) {
		t.Errorf("Mkdir with a cancelled context = %v", err)
	}
	if ok, _ := h.Filesystem().PathExists(ctx, kubelet+`\x`); ok {
		t.Error("a cancelled Mkdir ran")
	}
}
