package client_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/csi-node-proxy/csi-node-proxy/client"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
)

// dialLog is a socket dialer that records when it was called: every
// connection attempt gRPC makes.
type dialLog struct {
	mu    sync.Mutex
	times []time.Time
}

func (l *dialLog) dial(ctx context.Context, addr string) (net.Conn, error) {
	l.mu.Lock()
	l.times = append(l.times, time.Now())
	l.mu.Unlock()
	var d net.Dialer
	return d.DialContext(ctx, "unix", addr)
}

// since returns the attempts after t0.
func (l *dialLog) since(t0 time.Time) []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []time.Time
	for _, t := range l.times {
		if !t.Before(t0) {
			out = append(out, t)
		}
	}
	return out
}

// TestReconnectAfterRestart: the daemon stops and comes back on the same
// sockets. The client, dialed once, keeps trying to reconnect at most about
// a second apart (a local endpoint is cheap to dial; gRPC's default backoff
// grows to 120 s, so a driver's first good call came 25 s after the daemon
// returned from a 90 s outage), and its calls succeed again within a couple
// of seconds of the restart. When the daemon comes back serving other
// versions, the calls fail with ErrUnavailable until the driver dials again.
func TestReconnectAfterRestart(t *testing.T) {
	dir := socketDir(t)
	d := startDaemonNoCleanup(t, dir, "all")
	running := d
	t.Cleanup(func() {
		if running != nil {
			running.stop(t)
		}
	})
	log := &dialLog{}
	ctx := context.Background()
	c, err := client.Dial(ctx, client.Options{SocketDir: dir, Groups: []string{"disk"},
		GRPCOptions: []grpc.DialOption{grpc.WithContextDialer(log.dial)}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	call := func() error {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := c.Disk().GetDiskStats(cctx, &disk.GetDiskStatsRequest{DiskNumber: dataDisk})
		return err
	}
	if err := call(); err != nil {
		t.Fatal(err)
	}

	// An outage of 3 s, with the driver calling as it would.
	d.stop(t)
	running = nil
	down := time.Now()
	for time.Since(down) < 3*time.Second {
		if err := call(); !errors.Is(err, errdefs.ErrUnavailable) {
			t.Fatalf("a call while the daemon is down: %v, want ErrUnavailable", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	running = startDaemonNoCleanup(t, dir, "all")
	up := time.Now()
	var recovered time.Duration
	for {
		err := call()
		if err == nil {
			recovered = time.Since(up)
			break
		}
		if time.Since(up) > 15*time.Second {
			t.Fatalf("no call succeeded within 15 s of the restart: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	attempts := log.since(down)
	var maxGap time.Duration
	for i := 1; i < len(attempts); i++ {
		maxGap = max(maxGap, attempts[i].Sub(attempts[i-1]))
	}
	t.Logf("first good call %v after the restart; %d connection attempts since the outage began, at most %v apart", recovered, len(attempts), maxGap)
	// Recovery without a new Dial is the point here; how soon is the
	// backoff's business, held by the gap check below (a bound on the
	// first good call tight enough to tell the backoffs apart would
	// fail on a loaded machine, not on a wrong backoff).
	if recovered > 5*time.Second {
		t.Errorf("the first good call came %v after the restart, want within 5 s", recovered)
	}
	// MaxDelay 1 s plus gRPC's 20 % jitter; the default backoff's third
	// wait is already 2.56 s ± 20 %.
	if maxGap > 1800*time.Millisecond {
		t.Errorf("connection attempts %v apart during the outage, want at most about 1 s", maxGap)
	}

	// The daemon comes back serving disk v1beta3 but not v1, the version
	// negotiated: the v1 endpoint is gone for good, the calls fail with
	// ErrUnavailable, and only a new Dial finds v1beta3.
	running.stop(t)
	running = startDaemonNoCleanup(t, dir, "disk-v1beta3")
	time.Sleep(1500 * time.Millisecond) // more than one reconnection attempt
	if err := call(); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("a call to v1 while the daemon serves only v1beta3: %v, want ErrUnavailable", err)
	} else {
		t.Logf("a call to v1 while the daemon serves only v1beta3: %v", err)
	}
	c2, err := client.Dial(ctx, client.Options{SocketDir: dir, Groups: []string{"disk"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if v := c2.Versions()["disk"]; v != "v1beta3" {
		t.Errorf("a new Dial negotiated disk %s, want v1beta3", v)
	}
}
