// Package system is the system API group: the BIOS serial number and the
// host's services.
//
// Only services on the configured allow-list may be started or stopped;
// with an empty list (the default) none may. See package groups for how the
// pieces fit together.
package system

import "context"

// Interface is the system group as drivers call it, in-process or through
// the daemon. Errors wrap errdefs sentinels.
type Interface interface {
	// GetBIOSSerialNumber returns the serial number the BIOS reports.
	//convgen:read
	GetBIOSSerialNumber(context.Context, *GetBIOSSerialNumberRequest) (*GetBIOSSerialNumberResponse, error)
	// StartService starts an allowed service; a running one is success.
	//convgen:mutates
	StartService(context.Context, *StartServiceRequest) (*StartServiceResponse, error)
	// StopService stops an allowed service (and with Force its
	// dependents); a stopped one is success.
	//convgen:mutates
	StopService(context.Context, *StopServiceRequest) (*StopServiceResponse, error)
	// GetService returns a service's display name, start type and state.
	//convgen:read
	GetService(context.Context, *GetServiceRequest) (*GetServiceResponse, error)
}

// ServiceStatus is a service's state; the values are those of the wire
// enum.
type ServiceStatus int32

// The service states.
const (
	StatusUnknown         ServiceStatus = 0
	StatusStopped         ServiceStatus = 1
	StatusStartPending    ServiceStatus = 2
	StatusStopPending     ServiceStatus = 3
	StatusRunning         ServiceStatus = 4
	StatusContinuePending ServiceStatus = 5
	StatusPausePending    ServiceStatus = 6
	StatusPaused          ServiceStatus = 7
)

// StartType is when a service starts; the values are those of the wire
// enum.
type StartType int32

// The start types.
const (
	StartBoot      StartType = 0
	StartSystem    StartType = 1
	StartAutomatic StartType = 2
	StartManual    StartType = 3
	StartDisabled  StartType = 4
)

// GetBIOSSerialNumberRequest is empty.
type GetBIOSSerialNumberRequest struct{}

// GetBIOSSerialNumberResponse carries the serial number.
type GetBIOSSerialNumberResponse struct {
	SerialNumber string
}

// StartServiceRequest names a service.
type StartServiceRequest struct {
	Name string `guard:"-"`
}

// StartServiceResponse is empty.
type StartServiceResponse struct{}

// StopServiceRequest names a service.
type StopServiceRequest struct {
	Name  string `guard:"-"`
	Force bool   `guard:"-"`
}

// StopServiceResponse is empty.
type StopServiceResponse struct{}

// GetServiceRequest names a service.
type GetServiceRequest struct {
	Name string `guard:"-"`
}

// GetServiceResponse describes a service.
type GetServiceResponse struct {
	DisplayName string
	StartType   StartType
	Status      ServiceStatus
}
