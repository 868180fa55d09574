package wmi

import (
	"os"
	"strings"
	"sync/atomic"
)

// EnvCOMSecurity is the environment variable that turns off the
// process-wide CoInitializeSecurity the Client makes before its first WMI
// call: "0", "false", "no" or "off" (any case, spaces ignored) turn it
// off; anything else, or nothing, leaves it on. The name and the values
// are upstream csi-proxy's (pkg/wmi/wmi.go, comSecurityEnabled; added in
// 73736a9, merged to master by PR #415 in 558900f), so a driver
// configured for upstream's library needs no other setting.
const EnvCOMSecurity = "WMI_COM_SECURITY"

// skipCOMSecurity is set by SkipCOMSecurity.
var skipCOMSecurity atomic.Bool

// SkipCOMSecurity makes every Client of this process leave COM security
// alone from now on, whatever EnvCOMSecurity says. COM security is
// process-wide and can be set once: a driver process that sets its own
// (a HostProcess driver with its own COM or WMI code, or a host process
// that owns it) must be the one to set it, and library mode then must
// not (inprocess.Options.SkipCOMSecurity). WMI calls then run with
// whatever security the process has.
func SkipCOMSecurity() { skipCOMSecurity.Store(true) }

// COMSecurityWanted tells whether the Client calls CoInitializeSecurity
// before its first WMI call: neither SkipCOMSecurity nor EnvCOMSecurity
// says otherwise.
func COMSecurityWanted() bool {
	return !skipCOMSecurity.Load() && !comSecurityOff(os.Getenv(EnvCOMSecurity))
}

// comSecurityOff tells whether v, EnvCOMSecurity's value, turns COM
// security off.
func comSecurityOff(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "no", "off":
		return true
	}
	return false
}
