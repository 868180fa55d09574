package storage

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// hungFormat makes MSFT_Volume.Format block until release is closed, as a
// hung storage provider would; started is closed when the first Format
// begins.
func hungFormat(f *fakeSystem) (started, release chan struct{}) {
	started, release = make(chan struct{}), make(chan struct{})
	first := true
	f.wmiCall = func(_, method string, _ []wmi.Param) (wmi.Props, error) {
		if method == "Format" {
			if first {
				first = false
				close(started)
			}
			<-release
		}
		return wmi.Props{"ReturnValue": int64(0)}, nil
	}
	return started, release
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWMIDeadlineFromContext: a WMI call that outlives the caller's
// deadline answers DeadlineExceeded at the deadline instead of holding the
// volume's lock forever; the abandoned Format may still be running inside
// WMI, so a retry is refused Unavailable "still running" without starting
// a second Format, until the first one ends (issue 11 item 11).
func TestWMIDeadlineFromContext(t *testing.T) {
	f := newFake(t)
	started, release := hungFormat(f)
	v := f.backend().Volume()

	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	begin := time.Now()
	err := v.FormatVolume(cctx, volA)
	if !errors.Is(err, context.DeadlineExceeded) || errgrpc.Code(err).String() != "DeadlineExceeded" {
		t.Fatalf("FormatVolume past its deadline = %v (code %v), want DeadlineExceeded", err, errgrpc.Code(err))
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("FormatVolume returned after %v, long past its 50 ms deadline", d)
	}
	<-started

	err = v.FormatVolume(ctx, volA)
	if !errors.Is(err, errdefs.ErrUnavailable) || !strings.Contains(err.Error(), "still running") {
		t.Errorf("retry while the first Format runs = %v, want Unavailable \"still running\"", err)
	}
	if n := f.count(".Format("); n != 1 {
		t.Errorf("%d Format calls reached WMI, want 1 (no second format of the same volume)", n)
	}
	// Other objects are not held up by the hung one.
	if err := f.backend().Disk().Rescan(ctx); err != nil {
		t.Errorf("a WMI call on another object was refused: %v", err)
	}

	close(release)
	waitFor(t, "the abandoned Format to be forgotten", func() bool {
		return v.FormatVolume(ctx, volA) == nil
	})
	if n := f.count(".Format("); n != 2 {
		t.Errorf("%d Format calls, want 2 (the retry after the first ended)", n)
	}
}

// TestWMIDefaultLimit: without a deadline (drivers call with
// context.Background()), a method is bounded by the backend's own limit
// and answers Unavailable; the limit is generous for Format and shorter
// for other calls.
func TestWMIDefaultLimit(t *testing.T) {
	f := newFake(t)
	_, release := hungFormat(f)
	defer close(release)
	b := f.backend()
	bs := b.sys.(*boundedSystem)
	if bs.limits.format < 10*time.Minute || bs.limits.method < time.Minute || bs.limits.query < time.Minute {
		t.Errorf("default limits %+v are not generous", bs.limits)
	}
	bs.limits.format = 30 * time.Millisecond
	err := b.Volume().FormatVolume(ctx, volA)
	if !errors.Is(err, errdefs.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("FormatVolume past the default limit = %v, want Unavailable", err)
	}
}

// TestWMIDeadlineFreesTheLock: through the volume Service, whose
// per-volume lock used to be held for as long as the hung call, a retry
// gets an answer instead of queueing behind it.
func TestWMIDeadlineFreesTheLock(t *testing.T) {
	f := newFake(t)
	_, release := hungFormat(f)
	defer close(release)
	f.device(volumeDevice(volA))
	f.fsErrs[volA] = errnoUnrecognizedVolume()
	policy, err := hostpath.NewPolicy(hostpath.Windows, []string{kubelet})
	if err != nil {
		t.Fatal(err)
	}
	s := volume.NewService(f.backend().Volume(), policy)
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := s.FormatVolume(cctx, &volume.FormatVolumeRequest{VolumeID: volA}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("FormatVolume = %v, want DeadlineExceeded", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: volA})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, errdefs.ErrUnavailable) {
			t.Errorf("retry = %v, want Unavailable", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the retry is still waiting for the volume's lock")
	}
}
