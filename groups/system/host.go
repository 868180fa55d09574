package system

import "context"

// ServiceInfo describes a host service.
type ServiceInfo struct {
	DisplayName string
	StartType   StartType
	Status      ServiceStatus
}

// Host is what a host backend provides for the system group. The Service
// checks the allow-list before StartService and StopService.
type Host interface {
	// BIOSSerialNumber returns the serial number the firmware reports.
	BIOSSerialNumber(ctx context.Context) (string, error)
	// StartService starts the service and waits until it runs; a running
	// service is success. An unknown service is errdefs.ErrNotFound.
	StartService(ctx context.Context, name string) error
	// StopService stops the service (with force, its dependents first) and
	// waits until it stops; a stopped service is success.
	StopService(ctx context.Context, name string, force bool) error
	// GetService describes the service.
	GetService(ctx context.Context, name string) (ServiceInfo, error)
}
