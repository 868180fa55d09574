package server

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// Ready tells whether every endpoint accepts a connection and answers a
// gRPC health check of its API's service with SERVING, probing them all
// from outside as a driver would (so a socket file removed under the
// daemon, or an endpoint stuck in its handshake, shows). It returns nil
// when all do, and otherwise an error naming each endpoint that does not.
// ctx bounds the probes; a Kubernetes readiness probe's timeoutSeconds
// should exceed the bound given here.
func (s *Server) Ready(ctx context.Context) error {
	s.mu.Lock()
	started, stopped := s.started, s.stopped
	s.mu.Unlock()
	switch {
	case stopped:
		return errors.New("shutting down")
	case !started:
		return errors.New("not serving yet")
	}
	errs := make([]error, len(s.eps))
	var wg sync.WaitGroup
	for i, ep := range s.eps {
		wg.Go(func() {
			if err := probe(ctx, ep.tep.Address(), ep.api.Service); err != nil {
				errs[i] = fmt.Errorf("%s: %w", ep.tep.Name, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// probe connects to address and checks service's health.
func probe(ctx context.Context, address, service string) error {
	cc, err := grpc.NewClient(transport.Target(address), transport.DialOptions()...)
	if err != nil {
		return err
	}
	defer cc.Close() //nolint:errcheck // a probe's connection; nothing to report
	// Without waiting for readiness, a missing endpoint fails the call at
	// once instead of being retried until ctx ends.
	r, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		return err
	}
	if r.Status != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("health %s", r.Status)
	}
	return nil
}
