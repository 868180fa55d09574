// Package server serves a set of API group-versions, each on its own
// endpoint, the way upstream csi-proxy does: one gRPC server per
// group-version, because the wire contract does not name the group (four
// groups share the proto package v1), so a call's group is known only by
// the endpoint it arrives on.
//
// Every endpoint holds to the resource bounds of Limits (limits.go): the
// size of a request message and of its headers, streams per connection,
// handshake and idle timeouts, connections in total, per Unix user and
// per container, and calls in progress per caller, so that no caller can
// exhaust the daemon's memory or keep others out.
//
// Every connection is identified when it is accepted (see package
// identity: the caller's process, user, container and pod), every endpoint
// also serves the standard gRPC health service, and every unary call
// passes through the same interceptors, outermost first:
//
//  0. metrics, when Config.Metrics is set (see package metrics): the
//     call is counted and timed as the client sees it, under upstream
//     csi-proxy's grpc_server_* names;
//  1. panic recovery: a panicking handler answers codes.Internal and the
//     endpoint keeps serving; then the per-caller bound on calls in
//     progress, which refuses a call past it with
//     codes.ResourceExhausted at once;
//  2. the guard: the caller is put in the call's context
//     (identity.FromContext), and how the call arrived (callgate.Wire:
//     endpoint, wire version and method, request ID) for the call gate
//     below the adapter. The adapter converts the request of whichever
//     version was called to its group's model and calls the gate's
//     guarded groups.Set (callgate.Gate.Guard, which library mode calls
//     too), so the gate sees one shape: a call on a connection whose
//     connecting process has exited is refused with
//     codes.Unauthenticated, with or without a policy (the connection was
//     handed to a process nobody identified, see grpccreds.CheckAlive);
//     and, when a policy is configured, a call no rule allows, or whose
//     declared paths, disks or volumes lie outside the rule, is refused
//     with codes.PermissionDenied. Refusals are logged, audited and
//     counted, and the guard answers them with their own codes. Then the
//     allowing rule's name becomes the rule label of
//     csi_node_proxy_calls_total, a call on a deprecated version is
//     counted and its caller noted (Deprecations), and at the payload
//     level the model request is logged with what it declares secret
//     redacted; then calls that change the node (and reads, if asked) are
//     written to the audit log, and while it cannot be written such calls
//     are refused with codes.Unavailable. A request that does not convert
//     never reaches the gate: the adapter answers codes.InvalidArgument,
//     and the guard counts it. Health checks skip the gate: they get the
//     caller and answer with the daemon's build in a header
//     (VersionHeader, observe.go);
//  3. logging: each call is logged once when it completes, with the caller
//     and, at high verbosity, the response;
//  4. error mapping, innermost (logging calls it; it is no interceptor
//     of its own): any error that is not already a gRPC status goes
//     through errgrpc.ToGRPC, so no call ever ends in codes.Unknown; and a
//     request that did not decode (invalid UTF-8 in a string, a malformed
//     field) is answered codes.InvalidArgument here, not by the handler
//     (see requestCodec: grpc-go itself would answer codes.Internal).
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity/grpccreds"
	"github.com/csi-node-proxy/csi-node-proxy/internal/metrics"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// Default log levels; see Config.
const (
	DefaultCallLogLevel    klog.Level = 2
	DefaultPayloadLogLevel klog.Level = 5
	// healthLogLevel is used for health checks instead of the call level:
	// probes arrive every few seconds and would drown the calls that change
	// the node.
	healthLogLevel klog.Level = 4
)

// Config says how the daemon serves its endpoints.
type Config struct {
	// Transport says where endpoints are created and who may open them.
	// Zero fields take transport's defaults, except the socket owner; see
	// transport.Options.
	Transport transport.Options
	// CallLogLevel is the klog verbosity at which successful calls are
	// logged. Failed calls are always logged. Zero means
	// DefaultCallLogLevel.
	CallLogLevel klog.Level
	// PayloadLogLevel is the klog verbosity at which requests and responses
	// are logged, with secrets redacted. Zero means DefaultPayloadLogLevel.
	PayloadLogLevel klog.Level
	// Identity says how callers are identified.
	Identity identity.Options
	// Policy decides which caller may call what. Nil means no policy:
	// every caller that can open an endpoint may call everything on it, as
	// upstream csi-proxy allows.
	Policy *policy.Store
	// Objects answers where the disks and volumes a request names are
	// mounted, for policy rules that confine them (policy.Objects); see
	// objecthost.NewHostObjects. Nil: such rules refuse every call naming a disk or
	// volume.
	Objects policy.ObjectHost
	// Audit receives a record of every call that changes the node, every
	// denied call and, if it was opened to, every read. Nil audits nothing.
	Audit *audit.Logger
	// Metrics records every call (gRPC server metrics, calls in flight,
	// denials). Nil records nothing and adds no interceptor.
	Metrics *metrics.Metrics
	// EndpointPrefix begins every endpoint name,
	// <prefix>-<group>-<version>; "" is transport.DefaultEndpointPrefix,
	// upstream's csi-proxy. See transport.EndpointName.
	EndpointPrefix string
	// Deprecations notes the callers of deprecated versions. Nil notes
	// nothing (the calls are still counted in Metrics).
	Deprecations *Deprecations
	// Build is the daemon's version, sent in the VersionHeader of every
	// health check's answer; "" sends none.
	Build string
	// LogBatch, when set, groups the lines of successful calls that the
	// call log finds queued together into one write (the daemon passes
	// its stderr writer, logbatch.Writer). Nil writes each line alone.
	LogBatch LogBatch
	// CallLogText, when set, is where klog writes its text format with
	// the default header flags (the daemon's stderr writer): the call log
	// then formats the lines of successful calls itself, as klog would
	// (callText), and writes them there. Nil leaves every line to klog.
	CallLogText io.Writer
	// Limits are the resource bounds: message and header sizes, streams
	// per connection, handshake and idle timeouts, connections in total,
	// per user and per container, calls in progress per caller. Zero
	// fields take the Default constants (limits.go).
	Limits Limits
}

func (c Config) withDefaults() Config {
	if c.CallLogLevel == 0 {
		c.CallLogLevel = DefaultCallLogLevel
	}
	if c.PayloadLogLevel == 0 {
		c.PayloadLogLevel = DefaultPayloadLogLevel
	}
	c.Limits = c.Limits.withDefaults()
	return c
}

// Endpoint is one group-version the server serves and where.
type Endpoint struct {
	// API is the served group-version.
	API adapter.API
	// Address is where clients reach it: a socket path or a pipe path; see
	// transport.Dial.
	Address string
}

// Server serves one gRPC server per group-version. Create it with New,
// run it with Serve (or Start and Wait), end it with Stop.
type Server struct {
	eps []*endpoint

	mu      sync.Mutex
	started bool           // Start succeeded
	stopped bool           // Stop was called
	wg      sync.WaitGroup // one per running grpc.Server.Serve
	errOnce sync.Once
	err     error         // the first serving failure
	done    chan struct{} // closed when every Serve has returned

	conns *connLimits  // shared by every endpoint's listener
	calls *callLimiter // shared by every endpoint's calls
	// callLog writes successful calls' lines for every endpoint; Stop
	// closes it once no call runs.
	callLog *callLog
}

// endpoint is one group-version's server and, once started, its listener.
type endpoint struct {
	api    adapter.API
	tep    transport.Endpoint
	grpc   *grpc.Server
	health *health.Server
	lis    *trackingListener
}

// New builds a server for apis, each backed by its group's field of set.
// It only prepares: nothing listens until Start or Serve. An empty apis, two APIs with the
// same endpoint name, or an API without a Register function is an error.
func New(cfg Config, set groups.Set, apis []adapter.API) (*Server, error) {
	cfg = cfg.withDefaults()
	if len(apis) == 0 {
		return nil, errors.New("no APIs to serve")
	}
	if cfg.EndpointPrefix != "" {
		if err := transport.CheckEndpointPrefix(cfg.EndpointPrefix); err != nil {
			return nil, err
		}
	}
	lim := cfg.Limits
	s := &Server{done: make(chan struct{}), conns: &connLimits{total: lim.MaxConns, perUID: lim.MaxConnsPerUID}, callLog: newCallLog(cfg.LogBatch, cfg.CallLogText)}
	// The per-caller bounds hold over every endpoint together: a caller
	// that spreads its connections or calls over 23 endpoints gets no
	// more than on one.
	calls := &callLimiter{max: lim.MaxCallsPerCaller}
	if cfg.Policy != nil {
		// Refusals are paced where callers have rights to lack: without
		// a policy every caller that reaches an endpoint may do
		// everything, formatting disks included, and pacing its mistakes
		// would protect no one (see DefaultRefusalsPerCallerPerSecond).
		calls.refusals = newPacer(lim.RefusalsPerCallerPerSecond, lim.RefusalBurstPerCaller)
	}
	cfg.Metrics.TrackDelayedRefusals(calls.Delayed)
	s.calls = calls
	failureLines := audit.NewDenialLimiter(audit.DefaultDenialBurst, audit.DefaultDenialInterval)
	containerConns := &counter{}
	pace := newPacer(lim.NewConnsPerUIDPerSecond, lim.NewConnsBurstPerUID) // one for every endpoint, like the bounds
	s.conns.pace = pace
	seen := map[string]bool{}
	for _, api := range apis {
		name := api.Name()
		switch {
		case api.Group == "" || api.Version == "" || api.Service == "":
			return nil, fmt.Errorf("API %q: group, version and service must be set", name)
		case api.Register == nil:
			return nil, fmt.Errorf("API %s: no Register function", name)
		case seen[name]:
			return nil, fmt.Errorf("API %s listed twice", name)
		}
		seen[name] = true
		// The endpoint's own name (the group-version's under the
		// configured prefix) is what logs and audit records call it.
		name = transport.EndpointName(cfg.EndpointPrefix, api.Group, api.Version)

		// Authorisation always runs: whether a policy exists or not, a
		// connection whose connecting process has exited no longer says
		// who calls, so it may call nothing (without a policy it decides
		// nothing else). Audit and metering are the gate's too.
		o := newObserver(name, api, cfg)
		g := newGuard(name, api, cfg, o)
		chain := &unaryChain{endpoint: name, calls: calls, guard: g,
			log: newCallLogger(name, cfg.CallLogLevel, cfg.PayloadLogLevel, s.callLog, failureLines)}
		unary := []grpc.UnaryServerInterceptor{chain.intercept}
		stream := []grpc.StreamServerInterceptor{checkStreamDecode, g.authorizeStream}
		if cfg.Metrics != nil {
			ep := metrics.Endpoint{Group: api.Group, Version: api.Version, Service: api.Service}
			unary = append([]grpc.UnaryServerInterceptor{cfg.Metrics.UnaryServerInterceptor(ep)}, unary...)
			stream = append([]grpc.StreamServerInterceptor{cfg.Metrics.StreamServerInterceptor()}, stream...)
		}
		opts := append(lim.serverOptions(),
			grpc.ForceServerCodecV2(newRequestCodec()),
			grpc.Creds(&limitedCreds{TransportCredentials: grpccreds.NewCredentials(cfg.Identity), max: lim.MaxConnsPerContainer, perAccount: lim.MaxConnsPerUID, conns: containerConns, pace: pace, handshakeTimeout: max(lim.ConnectionTimeout, 0)}),
			grpc.ChainUnaryInterceptor(unary...),
			grpc.ChainStreamInterceptor(stream...),
			// Long-lived workers instead of a new goroutine per call:
			// a call's handler chain (gate, audit, adapter, Service,
			// host) grows a fresh goroutine's stack two or three
			// times, and copying it cost about a fifth of the daemon's
			// CPU under 16 clients (docs/benchmarks.md). A worker's
			// stack stays grown. gRPC still starts a goroutine when
			// every worker is busy.
			grpc.NumStreamWorkers(streamWorkers(lim.MaxConcurrentStreams)),
		)
		gs := grpc.NewServer(opts...)
		hs := health.NewServer()
		hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
		hs.SetServingStatus(api.Service, healthpb.HealthCheckResponse_SERVING)
		healthpb.RegisterHealthServer(gs, hs)
		api.Register(gs, g.gate.Guard(set))

		s.eps = append(s.eps, &endpoint{
			api:    api,
			tep:    transport.Endpoint{Name: name, Options: cfg.Transport},
			grpc:   gs,
			health: hs,
		})
	}
	return s, nil
}

// Endpoints lists the served group-versions and their addresses, in the
// order given to New.
func (s *Server) Endpoints() []Endpoint {
	out := make([]Endpoint, len(s.eps))
	for i, ep := range s.eps {
		out[i] = Endpoint{API: ep.api, Address: ep.tep.Address()}
	}
	return out
}

// Start creates every endpoint and begins serving them in the background.
// It is all or nothing: if one endpoint cannot be created (for example
// because another daemon serves it; the error then wraps
// transport.ErrInUse), the endpoints already created are removed again and
// the error names the failing endpoint.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.stopped:
		return errors.New("server stopped")
	case s.started:
		return errors.New("server already started")
	}
	for i, ep := range s.eps {
		l, err := transport.Listen(ep.tep)
		if err != nil {
			for _, prev := range s.eps[:i] {
				_ = prev.lis.Close() // undoing a failed start; the Listen error is the one to report
				prev.lis = nil
			}
			return fmt.Errorf("%s: %w", ep.api.Name(), err)
		}
		ep.lis = newTrackingListener(l, s.conns)
	}
	s.started = true
	for _, ep := range s.eps {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			// Serve returns nil after Stop or GracefulStop; anything
			// else means the endpoint broke. Upstream then stops every
			// endpoint, and so do we: a daemon serving half its APIs
			// looks healthy while drivers fail.
			// ErrServerStopped: Stop reached this endpoint before Serve
			// began; it is a stop like any other.
			if err := ep.grpc.Serve(ep.lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
				s.errOnce.Do(func() { s.err = fmt.Errorf("serve %s: %w", ep.tep.Address(), err) })
				s.forceStop()
			}
		}()
	}
	s.callLog.start()
	go func() {
		s.wg.Wait()
		// Serve has returned everywhere: no new call starts. A call
		// still running writes its own line once the log is closed.
		s.callLog.close()
		close(s.done)
	}()
	return nil
}

// Wait blocks until every endpoint has stopped serving, after Stop or
// after one endpoint failed, and returns the failure, or nil after Stop.
// Called before Start, it waits for Start and then for the end, or returns
// at once after a Stop that prevented the start.
func (s *Server) Wait() error {
	<-s.done
	return s.err
}

// Serve is Start followed by Wait.
func (s *Server) Serve() error {
	if err := s.Start(); err != nil {
		return err
	}
	return s.Wait()
}

// Stop ends serving. Health checks turn NOT_SERVING and every endpoint is
// removed at once, so new connections are refused, while calls in flight
// run to completion. If ctx ends first, the remaining connections are cut
// and Stop returns an error saying so; handlers still running then finish
// in the background with nobody to answer.
//
// Stop may be called before Start (the server then never starts), more
// than once, and concurrently with Wait.
func (s *Server) Stop(ctx context.Context) error {
	s.mu.Lock()
	started := s.started
	if !s.stopped && !started {
		close(s.done) // nothing will ever serve; release Wait
	}
	s.stopped = true
	s.mu.Unlock()
	if !started {
		return nil
	}

	for _, ep := range s.eps {
		ep.health.Shutdown()
	}
	graceful := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, ep := range s.eps {
			wg.Go(ep.grpc.GracefulStop)
		}
		wg.Wait()
		close(graceful)
	}()
	select {
	case <-graceful:
		<-s.done
		return nil
	case <-ctx.Done():
		s.forceStop()
		<-s.done
		return fmt.Errorf("calls still running when the shutdown deadline passed were cut off: %w", ctx.Err())
	}
}

// forceStop closes every connection now. grpc.Server.Stop does not wait
// for handlers, but it does wait for connections still in their HTTP/2
// handshake, so those are closed first.
func (s *Server) forceStop() {
	for _, ep := range s.eps {
		ep.health.Shutdown()
		if ep.lis != nil {
			ep.lis.closeAll()
		}
		ep.grpc.Stop()
	}
}

// String lists the endpoints, for logs.
func (s *Server) String() string {
	var b strings.Builder
	for i, ep := range s.Endpoints() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(ep.Address)
	}
	return b.String()
}

// streamWorkers is how many gRPC stream workers each endpoint keeps: as
// many as one connection may have calls in progress (maxStreams,
// Limits.MaxConcurrentStreams), at most 64. One busy driver (kubelet
// staging many volumes through one node plugin) fills its connection's
// streams; with fewer workers than that (it was one per CPU) gRPC started
// a goroutine for each call past them, whose stack the handler chain grew
// again: 12% of the daemon's CPU with 16 calls on one connection, and a
// throughput of 0.67 against a bare server (docs/benchmarks.md). An idle
// worker costs its stack, a few KiB.
func streamWorkers(maxStreams int) uint32 {
	if maxStreams <= 0 {
		maxStreams = DefaultMaxConcurrentStreams
	}
	return uint32(min(maxStreams, 64))
}
