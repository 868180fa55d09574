//go:build linux

package hostileload

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
)

// kubelet is the simulated host's kubelet directory.
const kubelet = `C:\var\lib\kubelet`

// driverDisk is the simulated host's first data disk (its default world).
const driverDisk = 1

// driver is a well-behaved CSI node plugin: one connection per group, as
// drivers hold them, and the stage/publish/unpublish/unstage flow of
// examples/stage-flow, over and over.
type driver struct {
	disk diskv1.DiskClient
	vol  volumev1.VolumeClient
	fs   filesystemv1.FilesystemClient
	// changed counts the mutating calls that returned OK, by method:
	// each must have its audit records.
	changed map[string]int
	lat     []time.Duration
	failed  []string
	slow    []string
	rounds  int
}

// newDriver dials the daemon's sockets in dir.
func newDriver(t *testing.T, dir string) *driver {
	t.Helper()
	dial := func(group string) *grpc.ClientConn {
		c, err := grpc.NewClient("unix://"+filepath.Join(dir, "csi-proxy-"+group+"-v1.sock"), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	return &driver{disk: diskv1.NewDiskClient(dial("disk")), vol: volumev1.NewVolumeClient(dial("volume")),
		fs: filesystemv1.NewFilesystemClient(dial("filesystem")), changed: map[string]int{}}
}

// call times one call and records its outcome; a mutating call that
// returned OK is counted for the audit check.
func (d *driver) call(method string, mutating bool, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	err := f(ctx)
	took := time.Since(start)
	d.lat = append(d.lat, took)
	if took > 50*time.Millisecond {
		d.slow = append(d.slow, fmt.Sprintf("%s %s %v", start.Format("15:04:05.000"), method, took))
	}
	if err != nil {
		d.failed = append(d.failed, fmt.Sprintf("%s: %v", method, err))
		return err
	}
	if mutating {
		d.changed[method]++
	}
	return nil
}

// run does the flow until dur has passed, and returns the latencies of
// this run's calls.
func (d *driver) run(dur time.Duration) []time.Duration {
	from := len(d.lat)
	for end := time.Now().Add(dur); time.Now().Before(end); {
		_ = d.round()
		d.rounds++
	}
	return d.lat[from:]
}

// runSlices does the flow for n slices of length slice each, calling
// set(true) before the even ones and set(false) before the odd ones, and
// returns the latencies of the calls of each kind. A call is counted in
// the slice it started in.
func (d *driver) runSlices(n int, slice time.Duration, set func(on bool)) (on, off []time.Duration) {
	for i := range n {
		set(i%2 == 0)
		from := len(d.lat)
		for end := time.Now().Add(slice); time.Now().Before(end); {
			_ = d.round()
			d.rounds++
		}
		if i%2 == 0 {
			on = append(on, d.lat[from:]...)
		} else {
			off = append(off, d.lat[from:]...)
		}
	}
	return on, off
}

// round is one stage, publish, unpublish and unstage of driverDisk,
// under paths of its own; it stops at the first failure.
func (d *driver) round() error {
	n := uint32(driverDisk)
	staging := fmt.Sprintf(`%s\plugins\kubernetes.io\csi\hostile.csi.io\pv-%d\globalmount`, kubelet, d.rounds)
	podVolume := fmt.Sprintf(`%s\pods\pod-%d\volumes\kubernetes.io~csi\pv-%d`, kubelet, d.rounds, d.rounds)
	publish := podVolume + `\mount`
	var volumeID string
	steps := []struct {
		method   string
		mutating bool
		f        func(context.Context) error
	}{
		{"ListDiskIDs", false, func(c context.Context) error {
			_, err := d.disk.ListDiskIDs(c, &diskv1.ListDiskIDsRequest{})
			return err
		}},
		{"SetDiskState", true, func(c context.Context) error {
			_, err := d.disk.SetDiskState(c, &diskv1.SetDiskStateRequest{DiskNumber: n, IsOnline: true})
			return err
		}},
		{"ListVolumesOnDisk", false, func(c context.Context) error {
			r, err := d.vol.ListVolumesOnDisk(c, &volumev1.ListVolumesOnDiskRequest{DiskNumber: n})
			if err == nil && len(r.VolumeIds) > 0 {
				volumeID = r.VolumeIds[0]
			}
			return err
		}},
	}
	for _, s := range steps {
		if err := d.call(s.method, s.mutating, s.f); err != nil {
			return err
		}
	}
	if volumeID == "" { // the first round: partition and format
		if err := d.call("PartitionDisk", true, func(c context.Context) error {
			_, err := d.disk.PartitionDisk(c, &diskv1.PartitionDiskRequest{DiskNumber: n})
			return err
		}); err != nil {
			return err
		}
		if err := d.call("ListVolumesOnDisk", false, func(c context.Context) error {
			r, err := d.vol.ListVolumesOnDisk(c, &volumev1.ListVolumesOnDiskRequest{DiskNumber: n})
			if err == nil && len(r.VolumeIds) > 0 {
				volumeID = r.VolumeIds[0]
			}
			return err
		}); err != nil || volumeID == "" {
			return fmt.Errorf("no volume on disk %d: %v", n, err)
		}
		if err := d.call("FormatVolume", true, func(c context.Context) error {
			_, err := d.vol.FormatVolume(c, &volumev1.FormatVolumeRequest{VolumeId: volumeID})
			return err
		}); err != nil {
			return err
		}
	}
	steps = []struct {
		method   string
		mutating bool
		f        func(context.Context) error
	}{
		{"IsVolumeFormatted", false, func(c context.Context) error {
			_, err := d.vol.IsVolumeFormatted(c, &volumev1.IsVolumeFormattedRequest{VolumeId: volumeID})
			return err
		}},
		{"Mkdir", true, func(c context.Context) error {
			_, err := d.fs.Mkdir(c, &filesystemv1.MkdirRequest{Path: staging})
			return err
		}},
		{"MountVolume", true, func(c context.Context) error {
			_, err := d.vol.MountVolume(c, &volumev1.MountVolumeRequest{VolumeId: volumeID, TargetPath: staging})
			return err
		}},
		{"GetVolumeStats", false, func(c context.Context) error {
			_, err := d.vol.GetVolumeStats(c, &volumev1.GetVolumeStatsRequest{VolumeId: volumeID})
			return err
		}},
		{"Mkdir", true, func(c context.Context) error {
			_, err := d.fs.Mkdir(c, &filesystemv1.MkdirRequest{Path: podVolume})
			return err
		}},
		{"CreateSymlink", true, func(c context.Context) error {
			_, err := d.fs.CreateSymlink(c, &filesystemv1.CreateSymlinkRequest{SourcePath: staging, TargetPath: publish})
			return err
		}},
		{"IsSymlink", false, func(c context.Context) error {
			_, err := d.fs.IsSymlink(c, &filesystemv1.IsSymlinkRequest{Path: publish})
			return err
		}},
		{"Rmdir", true, func(c context.Context) error {
			_, err := d.fs.Rmdir(c, &filesystemv1.RmdirRequest{Path: publish, Force: true})
			return err
		}},
		{"UnmountVolume", true, func(c context.Context) error {
			_, err := d.vol.UnmountVolume(c, &volumev1.UnmountVolumeRequest{VolumeId: volumeID, TargetPath: staging})
			return err
		}},
		{"Rmdir", true, func(c context.Context) error {
			_, err := d.fs.Rmdir(c, &filesystemv1.RmdirRequest{Path: staging})
			return err
		}},
		{"SetDiskState", true, func(c context.Context) error {
			_, err := d.disk.SetDiskState(c, &diskv1.SetDiskStateRequest{DiskNumber: n, IsOnline: false})
			return err
		}},
	}
	for _, s := range steps {
		if err := d.call(s.method, s.mutating, s.f); err != nil {
			return err
		}
	}
	return nil
}

// percentile is the p-th percentile (0 < p <= 1) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

// newcomerEvery is how often newcomers opens a connection.
const newcomerEvery = 50 * time.Millisecond

// newcomers opens a new connection to the disk socket every newcomerEvery
// and makes one call on it (a driver container starting, a probe), timing
// the connection and the call together, filed by whether the flooder ran
// when it started (flooding). A storm's refused connections are accepted
// and refused from the same socket queue as these, on a thread that runs
// at the lowest priority while the storm lasts (internal/server's storm
// acceptor): this is what that costs a caller's new connections.
type newcomers struct {
	flooding atomic.Bool
	stop     chan struct{}
	done     chan struct{}
	on, off  []time.Duration
	failed   []string
}

// startNewcomers starts opening connections to the sockets in dir.
func startNewcomers(dir string) *newcomers {
	n := &newcomers{stop: make(chan struct{}), done: make(chan struct{})}
	target := "unix://" + filepath.Join(dir, "csi-proxy-disk-v1.sock")
	go func() {
		defer close(n.done)
		tick := time.NewTicker(newcomerEvery)
		defer tick.Stop()
		for {
			select {
			case <-n.stop:
				return
			case <-tick.C:
			}
			flooding := n.flooding.Load()
			start := time.Now()
			err := func() error {
				c, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
				if err != nil {
					return err
				}
				defer func() { _ = c.Close() }()
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				_, err = diskv1.NewDiskClient(c).ListDiskIDs(ctx, &diskv1.ListDiskIDsRequest{})
				return err
			}()
			took := time.Since(start)
			switch {
			case err != nil:
				n.failed = append(n.failed, fmt.Sprintf("%s (flooding %v, after %v): %v", start.Format("15:04:05.000"), flooding, took, err))
			case flooding:
				n.on = append(n.on, took)
			default:
				n.off = append(n.off, took)
			}
		}
	}()
	return n
}

// end stops opening connections and waits for the last one.
func (n *newcomers) end() {
	close(n.stop)
	<-n.done
}
