// Package driver is an example CSI driver (CSI spec v1.13) built on
// csi-node-proxy's shared mounter: a single-node local-disk driver whose
// controller allocates a disk per volume on this node (an Allocator:
// sparse files on loop devices on Linux, AddDisk on the simulated host)
// and whose node side stages, publishes, expands, measures, unpublishes
// and unstages through the proxy alone (client/mounter over groups.Node),
// whether the proxy is the daemon (client.Dial) or library mode
// (inprocess.New).
//
// It serves the Identity, Controller and Node services on one endpoint.
// What it does not do is said by its capabilities, as the CSI spec asks:
// no ControllerPublish (the disk is already on the node), no
// ListVolumes, GetCapacity, snapshots, clones or volume conditions, and
// only single-node access modes with filesystem (mount) access.
package driver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/csi-node-proxy/csi-node-proxy/client/mounter"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
)

// DefaultName is the driver's name (CSIDriver object, StorageClass
// provisioner).
const DefaultName = "localdisk.example.csi-node-proxy.io"

// TopologyKey is the topology segment naming this node: a volume is a
// disk of one node and is reachable only there.
const TopologyKey = "topology." + DefaultName + "/node"

// DefaultVolumeSize is the size of a volume whose request names none.
const DefaultVolumeSize = 1 << 30

// Config configures a Driver.
type Config struct {
	// Name is the driver's name; "" is DefaultName.
	Name string
	// Version is what GetPluginInfo reports.
	Version string
	// NodeID is this node's ID (the Kubernetes node name).
	NodeID string
	// Node is the proxy: client.Dial's or inprocess.New's groups.Node.
	// The driver does not close it.
	Node groups.Node
	// Allocator makes the volumes' disks.
	Allocator Allocator
	// Logger receives what the driver does; the zero Logger discards.
	Logger logr.Logger
}

// Driver is the CSI driver: its Identity, Controller and Node services.
type Driver struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedControllerServer
	csi.UnimplementedNodeServer

	cfg   Config
	m     *mounter.Mounter
	log   logr.Logger
	locks sync.Map // volume ID -> *sync.Mutex: one operation per volume at a time
}

// New returns the driver of cfg.
func New(cfg Config) (*Driver, error) {
	switch {
	case cfg.Node == nil:
		return nil, errors.New("driver: Config.Node (the proxy) is required")
	case cfg.Allocator == nil:
		return nil, errors.New("driver: Config.Allocator is required")
	case cfg.NodeID == "":
		return nil, errors.New("driver: Config.NodeID is required")
	}
	if cfg.Name == "" {
		cfg.Name = DefaultName
	}
	log := cfg.Logger
	if log.GetSink() == nil {
		log = logr.Discard()
	}
	return &Driver{cfg: cfg, log: log, m: mounter.New(cfg.Node, mounter.Options{Logger: log})}, nil
}

// Register registers the three services on s.
func (d *Driver) Register(s *grpc.Server) {
	csi.RegisterIdentityServer(s, d)
	csi.RegisterControllerServer(s, d)
	csi.RegisterNodeServer(s, d)
}

// Serve serves the driver on the unix socket endpoint ("unix:///csi/csi.sock"
// or a path) until ctx ends; a stale socket file is replaced.
func (d *Driver) Serve(ctx context.Context, endpoint string) error {
	path := strings.TrimPrefix(strings.TrimPrefix(endpoint, "unix://"), "unix:")
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the stale socket %s: %w", path, err)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	s := grpc.NewServer(grpc.UnaryInterceptor(d.logCalls))
	d.Register(s)
	go func() {
		<-ctx.Done()
		s.GracefulStop()
	}()
	return s.Serve(l)
}

// logCalls logs every call at V(4) and every failure at V(2), with its
// code.
func (d *Driver) logCalls(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	resp, err := h(ctx, req)
	if err != nil {
		d.log.V(2).Info("call failed", "method", info.FullMethod, "code", status.Code(err), "err", err)
	} else {
		d.log.V(4).Info("call", "method", info.FullMethod)
	}
	return resp, err
}

// lock serialises operations on one volume: kubelet and the
// external-provisioner retry calls that are still running.
func (d *Driver) lock(id string) func() {
	mu, _ := d.locks.LoadOrStore(id, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}

// volumeID is the ID of the volume named name: a hash, so CreateVolume is
// idempotent without a database, any name up to CSI's 128 bytes fits in
// a file name, and an ID that does not have this form names no volume.
func volumeID(name string) string {
	h := sha256.Sum256([]byte(name))
	return "ld-" + hex.EncodeToString(h[:16])
}

// toStatus turns a proxy or allocator error into a gRPC status by its
// errdefs kind, so CSI's callers see NotFound, FailedPrecondition...
func toStatus(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Errorf(errgrpc.Code(err), "%s: %v", fmt.Sprintf(format, args...), err)
}

// GetPluginInfo implements csi.IdentityServer.
func (d *Driver) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	v := d.cfg.Version
	if v == "" {
		v = "devel"
	}
	return &csi.GetPluginInfoResponse{Name: d.cfg.Name, VendorVersion: v}, nil
}

// GetPluginCapabilities implements csi.IdentityServer: a controller
// service, volumes reachable from one node only, and online expansion.
func (d *Driver) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	svc := func(t csi.PluginCapability_Service_Type) *csi.PluginCapability {
		return &csi.PluginCapability{Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{Type: t}}}
	}
	return &csi.GetPluginCapabilitiesResponse{Capabilities: []*csi.PluginCapability{
		svc(csi.PluginCapability_Service_CONTROLLER_SERVICE),
		svc(csi.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS),
		{Type: &csi.PluginCapability_VolumeExpansion_{VolumeExpansion: &csi.PluginCapability_VolumeExpansion{Type: csi.PluginCapability_VolumeExpansion_ONLINE}}},
	}}, nil
}

// Probe implements csi.IdentityServer: ready once the proxy answers.
func (d *Driver) Probe(ctx context.Context, _ *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	if _, err := d.m.GetMountRefs("/"); err != nil && !errors.Is(err, errdefs.ErrInvalidArgument) && !errors.Is(err, errdefs.ErrPermissionDenied) {
		return nil, status.Errorf(codes.FailedPrecondition, "the proxy does not answer: %v", err)
	}
	return &csi.ProbeResponse{}, nil
}
