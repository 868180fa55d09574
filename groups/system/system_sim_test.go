package system_test

import (
	"context"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/simtest"
)

var ctx = context.Background()

func simService(t *testing.T, allowed ...string) *system.Service {
	t.Helper()
	h := simtest.Node(t, simulated.DefaultConfig(nil))
	return system.NewService(h.System(), allowed)
}

func TestSimAllowList(t *testing.T) {
	s := simService(t, "MSiSCSI", "SamSS", "RemoteRegistry")
	for _, name := range []string{"W32Time", "LanmanServer", "ghost"} {
		_, err := s.StartService(ctx, &system.StartServiceRequest{Name: name})
		simtest.WantKind(t, err, errdefs.ErrPermissionDenied)
		_, err = s.StopService(ctx, &system.StopServiceRequest{Name: name, Force: true})
		simtest.WantKind(t, err, errdefs.ErrPermissionDenied)
	}
	// GetService reads any service.
	info, err := s.GetService(ctx, &system.GetServiceRequest{Name: "w32time"})
	if err != nil || info.Status != system.StatusRunning || info.DisplayName != "Windows Time" {
		t.Errorf("GetService(w32time) = %+v, %v", info, err)
	}
	_, err = s.GetService(ctx, &system.GetServiceRequest{Name: "ghost"})
	simtest.WantKind(t, err, errdefs.ErrNotFound)
	_, err = s.GetService(ctx, &system.GetServiceRequest{Name: `bad\name`})
	simtest.WantKind(t, err, errdefs.ErrInvalidArgument)
	// With no allow-list, nothing may start.
	_, err = simService(t).StartService(ctx, &system.StartServiceRequest{Name: "MSiSCSI"})
	simtest.WantKind(t, err, errdefs.ErrPermissionDenied)
}

func TestSimStartStop(t *testing.T) {
	s := simService(t, "msiscsi", "SamSS", "RemoteRegistry")
	for range 2 { // running is success
		_, err := s.StartService(ctx, &system.StartServiceRequest{Name: "MSiSCSI"})
		simtest.Must(t, err)
	}
	info, err := s.GetService(ctx, &system.GetServiceRequest{Name: "MSiSCSI"})
	if err != nil || info.Status != system.StatusRunning {
		t.Errorf("after start: %+v, %v", info, err)
	}
	_, err = s.StartService(ctx, &system.StartServiceRequest{Name: "RemoteRegistry"})
	simtest.WantKind(t, err, errdefs.ErrFailedPrecondition) // disabled
	_, err = s.StopService(ctx, &system.StopServiceRequest{Name: "SamSS"})
	simtest.WantKind(t, err, errdefs.ErrFailedPrecondition) // LanmanServer depends on it
	_, err = s.StopService(ctx, &system.StopServiceRequest{Name: "SamSS", Force: true})
	simtest.Must(t, err)
	info, _ = s.GetService(ctx, &system.GetServiceRequest{Name: "LanmanServer"})
	if info.Status != system.StatusStopped {
		t.Errorf("a forced stop of SamSS left LanmanServer %v", info.Status)
	}
	sn, err := s.GetBIOSSerialNumber(ctx, &system.GetBIOSSerialNumberRequest{})
	if err != nil || sn.SerialNumber != simulated.DefaultBIOSSerial {
		t.Errorf("GetBIOSSerialNumber = %+v, %v", sn, err)
	}
}
