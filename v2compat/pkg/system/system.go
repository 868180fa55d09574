// Package system forwards to github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/system: it is
// upstream v2's pkg/system when this module stands in for
// github.com/kubernetes-csi/csi-proxy/v2 by a replace line. It imports no
// package of this module, only the root module's, so the same file
// compiles under either module path (see the module's doc.go).
package system

import (
	impl "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/system"
	implapi "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/system/hostapi"
)

// Interface is impl.Interface.
type Interface = impl.Interface

// System is impl.System.
type System = impl.System

// GetBIOSSerialNumberRequest is impl.GetBIOSSerialNumberRequest.
type GetBIOSSerialNumberRequest = impl.GetBIOSSerialNumberRequest

// GetBIOSSerialNumberResponse is impl.GetBIOSSerialNumberResponse.
type GetBIOSSerialNumberResponse = impl.GetBIOSSerialNumberResponse

// StartServiceRequest is impl.StartServiceRequest.
type StartServiceRequest = impl.StartServiceRequest

// StartServiceResponse is impl.StartServiceResponse.
type StartServiceResponse = impl.StartServiceResponse

// StopServiceRequest is impl.StopServiceRequest.
type StopServiceRequest = impl.StopServiceRequest

// StopServiceResponse is impl.StopServiceResponse.
type StopServiceResponse = impl.StopServiceResponse

// ServiceStatus is impl.ServiceStatus.
type ServiceStatus = impl.ServiceStatus

// StartType is impl.StartType.
type StartType = impl.StartType

// GetServiceRequest is impl.GetServiceRequest.
type GetServiceRequest = impl.GetServiceRequest

// GetServiceResponse is impl.GetServiceResponse.
type GetServiceResponse = impl.GetServiceResponse

// The constants of impl.
const (
	// SERVICE_STATUS_UNKNOWN is impl.SERVICE_STATUS_UNKNOWN.
	SERVICE_STATUS_UNKNOWN = impl.SERVICE_STATUS_UNKNOWN
	// SERVICE_STATUS_STOPPED is impl.SERVICE_STATUS_STOPPED.
	SERVICE_STATUS_STOPPED = impl.SERVICE_STATUS_STOPPED
	// SERVICE_STATUS_START_PENDING is impl.SERVICE_STATUS_START_PENDING.
	SERVICE_STATUS_START_PENDING = impl.SERVICE_STATUS_START_PENDING
	// SERVICE_STATUS_STOP_PENDING is impl.SERVICE_STATUS_STOP_PENDING.
	SERVICE_STATUS_STOP_PENDING = impl.SERVICE_STATUS_STOP_PENDING
	// SERVICE_STATUS_RUNNING is impl.SERVICE_STATUS_RUNNING.
	SERVICE_STATUS_RUNNING = impl.SERVICE_STATUS_RUNNING
	// SERVICE_STATUS_CONTINUE_PENDING is impl.SERVICE_STATUS_CONTINUE_PENDING.
	SERVICE_STATUS_CONTINUE_PENDING = impl.SERVICE_STATUS_CONTINUE_PENDING
	// SERVICE_STATUS_PAUSE_PENDING is impl.SERVICE_STATUS_PAUSE_PENDING.
	SERVICE_STATUS_PAUSE_PENDING = impl.SERVICE_STATUS_PAUSE_PENDING
	// SERVICE_STATUS_PAUSED is impl.SERVICE_STATUS_PAUSED.
	SERVICE_STATUS_PAUSED = impl.SERVICE_STATUS_PAUSED
	// START_TYPE_BOOT is impl.START_TYPE_BOOT.
	START_TYPE_BOOT = impl.START_TYPE_BOOT
	// START_TYPE_SYSTEM is impl.START_TYPE_SYSTEM.
	START_TYPE_SYSTEM = impl.START_TYPE_SYSTEM
	// START_TYPE_AUTOMATIC is impl.START_TYPE_AUTOMATIC.
	START_TYPE_AUTOMATIC = impl.START_TYPE_AUTOMATIC
	// START_TYPE_MANUAL is impl.START_TYPE_MANUAL.
	START_TYPE_MANUAL = impl.START_TYPE_MANUAL
	// START_TYPE_DISABLED is impl.START_TYPE_DISABLED.
	START_TYPE_DISABLED = impl.START_TYPE_DISABLED
)

// New is impl.New.
func New(hostAPI implapi.HostAPI) (*System, error) { return impl.New(hostAPI) }
