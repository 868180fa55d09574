package e2e

import (
	"testing"

	"google.golang.org/grpc/codes"

	systemv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/system/v1alpha1"
)

// TestSystemV1alpha1 calls every method of system v1alpha1.
func TestSystemV1alpha1(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	c := e.sys
	start := func(name string) error {
		_, err := c.StartService(ctx, &systemv1alpha1.StartServiceRequest{Name: name})
		return err
	}
	stop := func(name string, force bool) error {
		_, err := c.StopService(ctx, &systemv1alpha1.StopServiceRequest{Name: name, Force: force})
		return err
	}
	status := func(name string) systemv1alpha1.ServiceStatus {
		t.Helper()
		r, err := c.GetService(ctx, &systemv1alpha1.GetServiceRequest{Name: name})
		ok(t, "GetService", err)
		return r.GetStatus()
	}
	wantStatus := func(what string, want map[string]systemv1alpha1.ServiceStatus) {
		t.Helper()
		for name, w := range want {
			if got := status(name); got != w {
				t.Errorf("%s: %s is %v, want %v", what, name, got, w)
			}
		}
	}
	const (
		running = systemv1alpha1.ServiceStatus_RUNNING
		stopped = systemv1alpha1.ServiceStatus_STOPPED
	)

	// GetBIOSSerialNumber
	sn, err := c.GetBIOSSerialNumber(ctx, &systemv1alpha1.GetBIOSSerialNumberRequest{})
	ok(t, "GetBIOSSerialNumber", err)
	if sn.GetSerialNumber() != biosSerial {
		t.Errorf("GetBIOSSerialNumber = %q, want %q", sn.GetSerialNumber(), biosSerial)
	}

	// GetService: any installed service, allowed or not, in any case.
	for name, want := range map[string]*systemv1alpha1.GetServiceResponse{
		"W32Time":         {DisplayName: "Windows Time", StartType: systemv1alpha1.StartType_MANUAL, Status: running},
		"csitimeconsumer": {DisplayName: "CSI time consumer", StartType: systemv1alpha1.StartType_AUTOMATIC, Status: running},
		"MSiSCSI":         {DisplayName: "Microsoft iSCSI Initiator Service", StartType: systemv1alpha1.StartType_MANUAL, Status: stopped},
		"LanmanServer":    {DisplayName: "Server", StartType: systemv1alpha1.StartType_AUTOMATIC, Status: running},
		"RemoteRegistry":  {DisplayName: "Remote Registry", StartType: systemv1alpha1.StartType_DISABLED, Status: stopped},
	} {
		r, err := c.GetService(ctx, &systemv1alpha1.GetServiceRequest{Name: name})
		ok(t, "GetService("+name+")", err)
		if r.GetDisplayName() != want.DisplayName || r.GetStartType() != want.StartType || r.GetStatus() != want.Status {
			t.Errorf("GetService(%s) = %q %v %v, want %q %v %v", name,
				r.GetDisplayName(), r.GetStartType(), r.GetStatus(), want.DisplayName, want.StartType, want.Status)
		}
	}
	_, err = c.GetService(ctx, &systemv1alpha1.GetServiceRequest{Name: "NoSuchService"})
	wantErr(t, "GetService(unknown)", err, codes.NotFound, `service "NoSuchService" does not exist as an installed service`)
	for name, substr := range map[string]string{"": "name is empty", `a\b`: "contains", "a/b": "contains", "bad\x01name": "contains"} {
		_, err := c.GetService(ctx, &systemv1alpha1.GetServiceRequest{Name: name})
		wantErr(t, "GetService(bad name)", err, codes.InvalidArgument, substr)
	}

	// StartService and StopService of an allowed default service, twice.
	twice(t, "StartService(MSiSCSI)", func() error { return start("MSiSCSI") })
	wantStatus("after StartService", map[string]systemv1alpha1.ServiceStatus{"MSiSCSI": running})
	twice(t, "StopService(MSiSCSI)", func() error { return stop("msiscsi", false) }) // the allow-list compares without case
	wantStatus("after StopService", map[string]systemv1alpha1.ServiceStatus{"MSiSCSI": stopped})

	// A service with a running dependent stops only with force, which
	// stops the dependent first.
	wantErr(t, "StopService(running dependent)", stop("W32Time", false), codes.FailedPrecondition,
		`service "W32Time" has running dependent services (CsiTimeConsumer)`)
	wantStatus("after a refused StopService", map[string]systemv1alpha1.ServiceStatus{"W32Time": running, "CsiTimeConsumer": running})
	twice(t, "StopService(force)", func() error { return stop("W32Time", true) })
	wantStatus("after StopService(force)", map[string]systemv1alpha1.ServiceStatus{"W32Time": stopped, "CsiTimeConsumer": stopped})
	// Starting the dependent starts its dependency first.
	twice(t, "StartService(dependent)", func() error { return start("CsiTimeConsumer") })
	wantStatus("after starting the dependent", map[string]systemv1alpha1.ServiceStatus{"W32Time": running, "CsiTimeConsumer": running})

	// Failures.
	for _, name := range []string{"LanmanServer", "NSI", "Netlogon"} {
		wantErr(t, "StartService(not allowed)", start(name), codes.PermissionDenied, "is not on the proxy's allow-list")
		wantErr(t, "StopService(not allowed)", stop(name, true), codes.PermissionDenied, "is not on the proxy's allow-list")
	}
	wantErr(t, "StopService(not allowed, not installed)", stop("NoSuchService", false), codes.PermissionDenied, "is not on the proxy's allow-list")
	wantStatus("after refused calls", map[string]systemv1alpha1.ServiceStatus{"LanmanServer": running, "NSI": running, "Netlogon": stopped})
	wantErr(t, "StartService(disabled)", start("RemoteRegistry"), codes.FailedPrecondition, `service "RemoteRegistry" is disabled`)
	wantErr(t, "StartService(allowed, not installed)", start("Ghost"), codes.NotFound, "does not exist as an installed service")
	wantErr(t, "StopService(allowed, not installed)", stop("Ghost", false), codes.NotFound, "does not exist as an installed service")
	for name, substr := range map[string]string{"": "name is empty", `MSiSCSI\x`: "contains", "MSiSCSI/x": "contains"} {
		wantErr(t, "StartService(bad name)", start(name), codes.InvalidArgument, substr)
		wantErr(t, "StopService(bad name)", stop(name, false), codes.InvalidArgument, substr)
	}
}
