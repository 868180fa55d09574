package system

// The request, response and value types of upstream v2's pkg/system
// (kubernetes-csi/csi-proxy branch library-development at e776c65,
// pkg/system/types.go), as aliases of this repository's group model
// (groups/system), which carries upstream's names: a value built here is the
// group's own, so it goes through library mode unconverted.

import model "github.com/csi-node-proxy/csi-node-proxy/groups/system"

// GetBIOSSerialNumberRequest is upstream v2's system.GetBIOSSerialNumberRequest: model.GetBIOSSerialNumberRequest.
type GetBIOSSerialNumberRequest = model.GetBIOSSerialNumberRequest

// GetBIOSSerialNumberResponse is upstream v2's system.GetBIOSSerialNumberResponse: model.GetBIOSSerialNumberResponse.
type GetBIOSSerialNumberResponse = model.GetBIOSSerialNumberResponse

// StartServiceRequest is upstream v2's system.StartServiceRequest: model.StartServiceRequest.
type StartServiceRequest = model.StartServiceRequest

// StartServiceResponse is upstream v2's system.StartServiceResponse: model.StartServiceResponse.
type StartServiceResponse = model.StartServiceResponse

// StopServiceRequest is upstream v2's system.StopServiceRequest: model.StopServiceRequest.
type StopServiceRequest = model.StopServiceRequest

// StopServiceResponse is upstream v2's system.StopServiceResponse: model.StopServiceResponse.
type StopServiceResponse = model.StopServiceResponse

// ServiceStatus is upstream v2's system.ServiceStatus: model.ServiceStatus.
type ServiceStatus = model.ServiceStatus

// StartType is upstream v2's system.StartType: model.StartType.
type StartType = model.StartType

// GetServiceRequest is upstream v2's system.GetServiceRequest: model.GetServiceRequest.
type GetServiceRequest = model.GetServiceRequest

// GetServiceResponse is upstream v2's system.GetServiceResponse: model.GetServiceResponse.
type GetServiceResponse = model.GetServiceResponse

// Upstream v2's constants, as the group model names them.
const (
	// SERVICE_STATUS_UNKNOWN is upstream v2's system.SERVICE_STATUS_UNKNOWN.
	SERVICE_STATUS_UNKNOWN = model.SERVICE_STATUS_UNKNOWN
	// SERVICE_STATUS_STOPPED is upstream v2's system.SERVICE_STATUS_STOPPED.
	SERVICE_STATUS_STOPPED = model.SERVICE_STATUS_STOPPED
	// SERVICE_STATUS_START_PENDING is upstream v2's system.SERVICE_STATUS_START_PENDING.
	SERVICE_STATUS_START_PENDING = model.SERVICE_STATUS_START_PENDING
	// SERVICE_STATUS_STOP_PENDING is upstream v2's system.SERVICE_STATUS_STOP_PENDING.
	SERVICE_STATUS_STOP_PENDING = model.SERVICE_STATUS_STOP_PENDING
	// SERVICE_STATUS_RUNNING is upstream v2's system.SERVICE_STATUS_RUNNING.
	SERVICE_STATUS_RUNNING = model.SERVICE_STATUS_RUNNING
	// SERVICE_STATUS_CONTINUE_PENDING is upstream v2's system.SERVICE_STATUS_CONTINUE_PENDING.
	SERVICE_STATUS_CONTINUE_PENDING = model.SERVICE_STATUS_CONTINUE_PENDING
	// SERVICE_STATUS_PAUSE_PENDING is upstream v2's system.SERVICE_STATUS_PAUSE_PENDING.
	SERVICE_STATUS_PAUSE_PENDING = model.SERVICE_STATUS_PAUSE_PENDING
	// SERVICE_STATUS_PAUSED is upstream v2's system.SERVICE_STATUS_PAUSED.
	SERVICE_STATUS_PAUSED = model.SERVICE_STATUS_PAUSED
	// START_TYPE_BOOT is upstream v2's system.START_TYPE_BOOT.
	START_TYPE_BOOT = model.START_TYPE_BOOT
	// START_TYPE_SYSTEM is upstream v2's system.START_TYPE_SYSTEM.
	START_TYPE_SYSTEM = model.START_TYPE_SYSTEM
	// START_TYPE_AUTOMATIC is upstream v2's system.START_TYPE_AUTOMATIC.
	START_TYPE_AUTOMATIC = model.START_TYPE_AUTOMATIC
	// START_TYPE_MANUAL is upstream v2's system.START_TYPE_MANUAL.
	START_TYPE_MANUAL = model.START_TYPE_MANUAL
	// START_TYPE_DISABLED is upstream v2's system.START_TYPE_DISABLED.
	START_TYPE_DISABLED = model.START_TYPE_DISABLED
)
