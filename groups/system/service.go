package system

import (
	"context"
	"fmt"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/keylock"
	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/printable"
)

// Service is the system group on top of a Host: the one implementation of
// Interface that every transport uses.
type Service struct {
	host    Host
	allowed map[string]bool
	locks   keylock.Locks
}

var _ Interface = (*Service)(nil)

// NewService returns the system group served by host. Only the services in
// allowed (compared without case, as Windows does) may be started or
// stopped; GetService may read any service.
func NewService(host Host, allowed []string) *Service {
	s := &Service{host: host, allowed: map[string]bool{}}
	for _, a := range allowed {
		s.allowed[strings.ToLower(a)] = true
	}
	return s
}

// CheckServiceName validates a service name: Windows allows up to 256
// characters and no / or \; text that is not printable (package
// printable: invalid UTF-8, control characters, line separators,
// bidirectional controls) is never valid.
func CheckServiceName(name string) error {
	if name == "" {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "name is empty")
	}
	if len(name) > 256 {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "name is %d bytes long, the limit is 256", len(name))
	}
	if err := printable.Check("name", name); err != nil {
		return err
	}
	for _, r := range name {
		if r == '/' || r == '\\' {
			return errdefs.Errorf(errdefs.ErrInvalidArgument, "service name %q contains %q", name, r)
		}
	}
	return nil
}

func (s *Service) checkAllowed(name string) error {
	if err := CheckServiceName(name); err != nil {
		return err
	}
	if !s.allowed[strings.ToLower(name)] {
		return errdefs.Errorf(errdefs.ErrPermissionDenied, "service %q is not on the proxy's allow-list of services that may be started or stopped", name)
	}
	return nil
}

// GetBIOSSerialNumber implements Interface.
func (s *Service) GetBIOSSerialNumber(ctx context.Context, _ *GetBIOSSerialNumberRequest) (*GetBIOSSerialNumberResponse, error) {
	sn, err := s.host.BIOSSerialNumber(ctx)
	if err != nil {
		return nil, fmt.Errorf("read BIOS serial number: %w", err)
	}
	return &GetBIOSSerialNumberResponse{SerialNumber: sn}, nil
}

// StartService implements Interface.
func (s *Service) StartService(ctx context.Context, req *StartServiceRequest) (*StartServiceResponse, error) {
	if err := s.changeService(ctx, req.Name, "start", func() error { return s.host.StartService(ctx, req.Name) }); err != nil {
		return nil, err
	}
	return &StartServiceResponse{}, nil
}

// StopService implements Interface.
func (s *Service) StopService(ctx context.Context, req *StopServiceRequest) (*StopServiceResponse, error) {
	if err := s.changeService(ctx, req.Name, "stop", func() error { return s.host.StopService(ctx, req.Name, req.Force) }); err != nil {
		return nil, err
	}
	return &StopServiceResponse{}, nil
}

// changeService is StartService and StopService: it refuses a service
// that is not on the allow-list, then runs call under the service's lock
// (Windows compares service names without case, so the key is lower
// case), so a retry waits for the first call rather than racing it in the
// service control manager. A lock error (the context's) is returned as it
// is; the host's is wrapped with verb and the name.
func (s *Service) changeService(ctx context.Context, name, verb string, call func() error) error {
	if err := s.checkAllowed(name); err != nil {
		return err
	}
	unlock, err := s.locks.Lock(ctx, strings.ToLower(name))
	if err != nil {
		return err
	}
	defer unlock()
	if err := call(); err != nil {
		return fmt.Errorf("%s service %q: %w", verb, name, err)
	}
	return nil
}

// GetService implements Interface.
func (s *Service) GetService(ctx context.Context, req *GetServiceRequest) (*GetServiceResponse, error) {
	if err := CheckServiceName(req.Name); err != nil {
		return nil, err
	}
	info, err := s.host.GetService(ctx, req.Name)
	if err != nil {
		return nil, fmt.Errorf("service %q: %w", req.Name, err)
	}
	return &GetServiceResponse{DisplayName: info.DisplayName, StartType: info.StartType, Status: info.Status}, nil
}
