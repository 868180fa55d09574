package simulated

import (
	"context"
	"sort"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
)

// service is a host service. While a service runs, so do its
// dependencies: StartService starts them first and StopService stops the
// dependents first.
type service struct {
	name    string
	display string
	start   system.StartType
	status  system.ServiceStatus
	deps    []string // lower-case names
}

func (w *world) addService(s ServiceSpec) {
	st, _ := parseStartType(s.StartType) // Validate checked them
	status, _ := parseStatus(s.Status)
	svc := &service{name: s.Name, display: s.DisplayName, start: st, status: status}
	if svc.display == "" {
		svc.display = s.Name
	}
	for _, d := range s.DependsOn {
		svc.deps = append(svc.deps, strings.ToLower(d))
	}
	w.services[strings.ToLower(s.Name)] = svc
}

func (w *world) service(name string) (*service, error) {
	s := w.services[strings.ToLower(name)]
	if s == nil {
		return nil, errdefs.Errorf(errdefs.ErrNotFound, "service %q does not exist as an installed service", name)
	}
	return s, nil
}

// runningDependents returns the running services that depend directly on
// s, sorted by name.
func (w *world) runningDependents(s *service) []*service {
	var out []*service
	key := strings.ToLower(s.name)
	for _, o := range w.services {
		if o.status != system.StatusRunning {
			continue
		}
		for _, d := range o.deps {
			if d == key {
				out = append(out, o)
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// systemView is the system group backend.
type systemView struct{ h *Host }

// BIOSSerialNumber implements system.Host.
func (v systemView) BIOSSerialNumber(ctx context.Context) (string, error) {
	return read(ctx, v.h, func(w *world) (string, error) { return w.bios, nil })
}

// StartService implements system.Host. Stopped dependencies start first,
// as the service control manager starts them. A disabled service, or one
// with a disabled dependency, is errdefs.ErrFailedPrecondition and
// nothing starts.
func (v systemView) StartService(ctx context.Context, name string) error {
	return v.h.do(ctx, func(w *world) error {
		s, err := w.service(name)
		if err != nil {
			return err
		}
		// Collect everything that must start, dependencies first, and
		// check it all before changing anything.
		var order []*service
		seen := map[*service]bool{}
		var visit func(s *service, dependent *service) error
		visit = func(s *service, dependent *service) error {
			if seen[s] || s.status == system.StatusRunning {
				return nil
			}
			seen[s] = true
			if s.start == system.StartDisabled {
				if dependent != nil {
					return errdefs.Errorf(errdefs.ErrFailedPrecondition, "service %q cannot start: its dependency %q is disabled (Windows error 1068)", name, s.name)
				}
				return errdefs.Errorf(errdefs.ErrFailedPrecondition, "service %q is disabled (Windows error 1058)", s.name)
			}
			for _, d := range s.deps {
				if err := visit(w.services[d], s); err != nil {
					return err
				}
			}
			order = append(order, s)
			return nil
		}
		if err := visit(s, nil); err != nil {
			return err
		}
		for _, s := range order {
			s.status = system.StatusRunning
		}
		return nil
	})
}

// StopService implements system.Host. Running dependents are
// errdefs.ErrFailedPrecondition naming them (Windows error 1051), unless
// force, which stops them (and theirs) first.
func (v systemView) StopService(ctx context.Context, name string, force bool) error {
	return v.h.do(ctx, func(w *world) error {
		s, err := w.service(name)
		if err != nil {
			return err
		}
		if s.status == system.StatusStopped {
			return nil
		}
		if deps := w.runningDependents(s); len(deps) > 0 && !force {
			names := make([]string, len(deps))
			for i, d := range deps {
				names[i] = d.name
			}
			return errdefs.Errorf(errdefs.ErrFailedPrecondition,
				"service %q has running dependent services (%s); stop them first or use force (Windows error 1051)", s.name, strings.Join(names, ", "))
		}
		var stop func(s *service)
		stop = func(s *service) {
			for _, d := range w.runningDependents(s) {
				stop(d)
			}
			s.status = system.StatusStopped
		}
		stop(s)
		return nil
	})
}

// GetService implements system.Host.
func (v systemView) GetService(ctx context.Context, name string) (system.ServiceInfo, error) {
	return read(ctx, v.h, func(w *world) (system.ServiceInfo, error) {
		s, err := w.service(name)
		if err != nil {
			return system.ServiceInfo{}, err
		}
		return system.ServiceInfo{DisplayName: s.display, StartType: s.start, Status: s.status}, nil
	})
}
