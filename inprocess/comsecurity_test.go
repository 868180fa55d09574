package inprocess_test

import (
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// TestSkipCOMSecurity: Options.SkipCOMSecurity turns off the WMI client's
// CoInitializeSecurity for the process (whether the WMI client then calls
// it is wmi's TestWMICOMSecurityOffSkipsCoInitializeSecurity, on Windows).
// It is permanent for the process: the package's other tests then run
// WMI (on Windows) without it, which changes nothing they check.
func TestSkipCOMSecurity(t *testing.T) {
	t.Setenv(wmi.EnvCOMSecurity, "")
	if !wmi.COMSecurityWanted() {
		t.Skip("COM security was already turned off in this process")
	}
	n, err := inprocess.New(t.Context(), inprocess.Options{Host: inprocess.HostSimulated})
	if err != nil {
		t.Fatal(err)
	}
	_ = n.Close()
	if !wmi.COMSecurityWanted() {
		t.Fatal("a Node without SkipCOMSecurity turned COM security off")
	}
	n, err = inprocess.New(t.Context(), inprocess.Options{Host: inprocess.HostSimulated, SkipCOMSecurity: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = n.Close()
	if wmi.COMSecurityWanted() {
		t.Fatal("SkipCOMSecurity left COM security on")
	}
}
