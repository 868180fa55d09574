package simulated_test

import (
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
)

func servicesHost(t *testing.T) *simulated.Host {
	t.Helper()
	return newHost(t, simulated.Config{
		BIOSSerial: "VMware-42 1a 2b",
		Services: []simulated.ServiceSpec{
			{Name: "Base", DisplayName: "Base service", StartType: "automatic", Status: "running"},
			{Name: "Mid", StartType: "automatic", Status: "running", DependsOn: []string{"base"}},
			{Name: "Top", StartType: "manual", Status: "running", DependsOn: []string{"Mid"}},
			{Name: "Side", StartType: "manual", Status: "stopped", DependsOn: []string{"Base"}},
			{Name: "Lazy", StartType: "manual", Status: "stopped"},
			{Name: "NeedsLazy", StartType: "manual", Status: "stopped", DependsOn: []string{"Lazy"}},
			{Name: "Off", StartType: "disabled"},
			{Name: "NeedsOff", StartType: "manual", DependsOn: []string{"Off"}},
		},
	})
}

func status(t *testing.T, h *simulated.Host, name string) system.ServiceStatus {
	t.Helper()
	info, err := h.System().GetService(ctx, name)
	must(t, err)
	return info.Status
}

func TestBIOSAndGetService(t *testing.T) {
	h := servicesHost(t)
	if sn, err := h.System().BIOSSerialNumber(ctx); err != nil || sn != "VMware-42 1a 2b" {
		t.Errorf("BIOSSerialNumber = %q, %v", sn, err)
	}
	info, err := h.System().GetService(ctx, "BASE")
	if err != nil || info != (system.ServiceInfo{DisplayName: "Base service", StartType: system.StartAutomatic, Status: system.StatusRunning}) {
		t.Errorf("GetService(BASE) = %+v, %v", info, err)
	}
	if info, _ := h.System().GetService(ctx, "mid"); info.DisplayName != "Mid" {
		t.Errorf("display name defaults to the name: %+v", info)
	}
	_, err = h.System().GetService(ctx, "ghost")
	wantErr(t, err, errdefs.ErrNotFound, "does not exist")
}

func TestStartService(t *testing.T) {
	h := servicesHost(t)
	s := h.System()
	must(t, s.StartService(ctx, "base")) // running: success
	wantErr(t, s.StartService(ctx, "ghost"), errdefs.ErrNotFound)
	wantErr(t, s.StartService(ctx, "Off"), errdefs.ErrFailedPrecondition, "disabled")
	wantErr(t, s.StartService(ctx, "NeedsOff"), errdefs.ErrFailedPrecondition, `dependency "Off" is disabled`)
	if status(t, h, "NeedsOff") != system.StatusStopped {
		t.Error("a failed start changed the service")
	}
	// Dependencies start first.
	must(t, s.StartService(ctx, "needslazy"))
	if status(t, h, "Lazy") != system.StatusRunning || status(t, h, "NeedsLazy") != system.StatusRunning {
		t.Error("StartService did not start the service and its dependency")
	}
}

func TestStopService(t *testing.T) {
	h := servicesHost(t)
	s := h.System()
	must(t, s.StopService(ctx, "Lazy", false)) // stopped: success
	wantErr(t, s.StopService(ctx, "ghost", true), errdefs.ErrNotFound)
	must(t, s.StartService(ctx, "Side"))
	err := s.StopService(ctx, "Base", false)
	wantErr(t, err, errdefs.ErrFailedPrecondition, "Mid, Side", "1051")
	if status(t, h, "Base") != system.StatusRunning {
		t.Error("a refused stop stopped the service")
	}
	// A leaf stops alone.
	must(t, s.StopService(ctx, "top", false))
	must(t, s.StartService(ctx, "Top"))
	// Force stops the dependents, transitively.
	must(t, s.StopService(ctx, "base", true))
	for _, n := range []string{"Base", "Mid", "Top", "Side"} {
		if st := status(t, h, n); st != system.StatusStopped {
			t.Errorf("%s is %v after a forced stop of Base", n, st)
		}
	}
	// Starting the top of the chain brings it all back.
	must(t, s.StartService(ctx, "Top"))
	for _, n := range []string{"Base", "Mid", "Top"} {
		if st := status(t, h, n); st != system.StatusRunning {
			t.Errorf("%s is %v after starting Top", n, st)
		}
	}
}

func TestDefaultServicesAreConsistent(t *testing.T) {
	h := defaultHost(t)
	s := h.System()
	info, err := s.GetService(ctx, "msiscsi")
	if err != nil || info.StartType != system.StartManual || info.Status != system.StatusStopped {
		t.Errorf("MSiSCSI = %+v, %v", info, err)
	}
	must(t, s.StartService(ctx, "MSiSCSI"))
	must(t, s.StopService(ctx, "MSiSCSI", false))
	wantErr(t, s.StopService(ctx, "SamSS", false), errdefs.ErrFailedPrecondition, "LanmanServer")
	wantErr(t, s.StartService(ctx, "RemoteRegistry"), errdefs.ErrFailedPrecondition, "disabled")
}
