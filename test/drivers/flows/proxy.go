package flows

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// The interfaces below list only the methods the five drivers call, with
// exactly the signatures of the model group interfaces (disk.Interface and
// the others), so groups.Node's groups satisfy them as they are and a
// runner over another transport (upstream's v1 stubs, the Windows
// backend's fake seam) only has to implement what drivers use.

// Disk is the part of the disk group drivers call.
type Disk interface {
	ListDiskLocations(context.Context, *disk.ListDiskLocationsRequest) (*disk.ListDiskLocationsResponse, error)
	PartitionDisk(context.Context, *disk.PartitionDiskRequest) (*disk.PartitionDiskResponse, error)
	Rescan(context.Context, *disk.RescanRequest) (*disk.RescanResponse, error)
	ListDiskIDs(context.Context, *disk.ListDiskIDsRequest) (*disk.ListDiskIDsResponse, error)
	GetDiskStats(context.Context, *disk.GetDiskStatsRequest) (*disk.GetDiskStatsResponse, error)
	SetDiskState(context.Context, *disk.SetDiskStateRequest) (*disk.SetDiskStateResponse, error)
	GetDiskState(context.Context, *disk.GetDiskStateRequest) (*disk.GetDiskStateResponse, error)
}

// Volume is the part of the volume group drivers call.
type Volume interface {
	ListVolumesOnDisk(context.Context, *volume.ListVolumesOnDiskRequest) (*volume.ListVolumesOnDiskResponse, error)
	MountVolume(context.Context, *volume.MountVolumeRequest) (*volume.MountVolumeResponse, error)
	UnmountVolume(context.Context, *volume.UnmountVolumeRequest) (*volume.UnmountVolumeResponse, error)
	IsVolumeFormatted(context.Context, *volume.IsVolumeFormattedRequest) (*volume.IsVolumeFormattedResponse, error)
	FormatVolume(context.Context, *volume.FormatVolumeRequest) (*volume.FormatVolumeResponse, error)
	ResizeVolume(context.Context, *volume.ResizeVolumeRequest) (*volume.ResizeVolumeResponse, error)
	GetVolumeStats(context.Context, *volume.GetVolumeStatsRequest) (*volume.GetVolumeStatsResponse, error)
	GetDiskNumberFromVolumeID(context.Context, *volume.GetDiskNumberFromVolumeIDRequest) (*volume.GetDiskNumberFromVolumeIDResponse, error)
	GetVolumeIDFromTargetPath(context.Context, *volume.GetVolumeIDFromTargetPathRequest) (*volume.GetVolumeIDFromTargetPathResponse, error)
	WriteVolumeCache(context.Context, *volume.WriteVolumeCacheRequest) (*volume.WriteVolumeCacheResponse, error)
}

// Filesystem is the part of the filesystem group drivers call.
type Filesystem interface {
	PathExists(context.Context, *filesystem.PathExistsRequest) (*filesystem.PathExistsResponse, error)
	Mkdir(context.Context, *filesystem.MkdirRequest) (*filesystem.MkdirResponse, error)
	Rmdir(context.Context, *filesystem.RmdirRequest) (*filesystem.RmdirResponse, error)
	CreateSymlink(context.Context, *filesystem.CreateSymlinkRequest) (*filesystem.CreateSymlinkResponse, error)
	IsSymlink(context.Context, *filesystem.IsSymlinkRequest) (*filesystem.IsSymlinkResponse, error)
}

// SMB is the SMB group as csi-driver-smb calls it.
type SMB interface {
	NewSmbGlobalMapping(context.Context, *smb.NewSmbGlobalMappingRequest) (*smb.NewSmbGlobalMappingResponse, error)
	RemoveSmbGlobalMapping(context.Context, *smb.RemoveSmbGlobalMappingRequest) (*smb.RemoveSmbGlobalMappingResponse, error)
}

// System is the part of the system group drivers call (vsphere's node ID).
type System interface {
	GetBIOSSerialNumber(context.Context, *system.GetBIOSSerialNumberRequest) (*system.GetBIOSSerialNumberResponse, error)
}

// Proxy is csi-proxy as a driver's node plugin reaches it: one client per
// group. A runner fills it from whatever transport it tests.
type Proxy struct {
	Disk       Disk
	Volume     Volume
	Filesystem Filesystem
	SMB        SMB
	System     System
}

// ProxyOf returns the Proxy over a groups.Node (library mode, package
// client's Dial, or any other implementation of the model groups).
func ProxyOf(n groups.Node) Proxy {
	return Proxy{Disk: n.Disk(), Volume: n.Volume(), Filesystem: n.Filesystem(), SMB: n.SMB(), System: n.System()}
}

// ErrAnswerLost is the error a flow sees when a test made it lose the
// answer of a call that the host did carry out (a driver restarting or a
// connection dropping after the call reached the proxy). Its text has the
// gRPC form drivers log, with code Unavailable.
var ErrAnswerLost = fmt.Errorf("rpc error: code = Unavailable desc = connection lost after the call reached the proxy (injected by the conformance suite)")

// tracer wraps a Proxy: it records every call (method name) so flows can
// assert what a driver did (it formatted, it took the disk offline), and
// it can lose the answer of one chosen call after the host carried it out.
type tracer struct {
	p Proxy

	mu    sync.Mutex
	calls []string
	lose  map[string]int    // method -> 1-based call number whose answer is lost
	seen  map[string]int    // method -> calls so far
	links map[string]string // lower-case link path -> SMB remote path
}

func newTracer(p Proxy) *tracer {
	return &tracer{p: p, lose: map[string]int{}, seen: map[string]int{}}
}

// loseAnswer makes the n-th call (counted from now) of method succeed on
// the host and then fail with ErrAnswerLost.
func (t *tracer) loseAnswer(method string, n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lose[method] = t.seen[method] + n
}

// mark returns the index in the call list from which later asserts look.
func (t *tracer) mark() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.calls)
}

// since returns the calls made since mark m.
func (t *tracer) since(m int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.calls[m:]...)
}

// done records a finished call and decides whether its answer is lost.
func (t *tracer) done(method string, err error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seen[method]++
	t.calls = append(t.calls, method)
	if n, ok := t.lose[method]; ok && n == t.seen[method] {
		delete(t.lose, method)
		if err == nil {
			return ErrAnswerLost
		}
	}
	return err
}

// call runs f and passes its outcome through the tracer; the response is
// dropped when the answer is lost, as a client would never see it.
func call[Resp any](t *tracer, method string, f func() (*Resp, error)) (*Resp, error) {
	resp, err := f()
	if err = t.done(method, err); err != nil {
		return nil, err
	}
	return resp, nil
}

// proxy returns the traced Proxy.
func (t *tracer) proxy() Proxy {
	return Proxy{Disk: tDisk{t: t}, Volume: tVolume{t: t}, Filesystem: tFS{t: t}, SMB: tSMB{t: t}, System: tSystem{t: t}}
}

// node returns n with the drivers' calls going through the tracer, for a
// mounter to run over; the tracer must have been made over ProxyOf(n).
func (t *tracer) node(n groups.Node) groups.Node { return tracedNode{t: t, n: n} }

// tracedNode is a groups.Node seen through a tracer.
type tracedNode struct {
	t *tracer
	n groups.Node
}

// Disk is the node's disk group, traced.
func (n tracedNode) Disk() disk.Interface { return tDisk{t: n.t, Interface: n.n.Disk()} }

// Volume is the node's volume group, traced.
func (n tracedNode) Volume() volume.Interface { return tVolume{t: n.t, Interface: n.n.Volume()} }

// Filesystem is the node's filesystem group, traced.
func (n tracedNode) Filesystem() filesystem.Interface {
	return tFS{t: n.t, Interface: n.n.Filesystem()}
}

// SMB is the node's SMB group, traced.
func (n tracedNode) SMB() smb.Interface { return tSMB{t: n.t, Interface: n.n.SMB()} }

// ISCSI is the node's iSCSI group, untraced: no flow uses it.
func (n tracedNode) ISCSI() iscsi.Interface { return n.n.ISCSI() }

// System is the node's system group, traced.
func (n tracedNode) System() system.Interface { return tSystem{t: n.t, Interface: n.n.System()} }

// Close does nothing: the runner owns the node.
func (tracedNode) Close() error { return nil }

// tDisk is the disk group seen through a tracer.
type tDisk struct {
	t *tracer
	// The node's whole group when a mounter runs over the tracer: its
	// methods outside the drivers' set pass through untraced. Nil for
	// the raw flows, which call only the traced methods.
	disk.Interface
}

// ListDiskLocations records the call, then makes it (or loses its answer, when the tracer is told to).
func (d tDisk) ListDiskLocations(ctx context.Context, r *disk.ListDiskLocationsRequest) (*disk.ListDiskLocationsResponse, error) {
	return call(d.t, "ListDiskLocations", func() (*disk.ListDiskLocationsResponse, error) { return d.t.p.Disk.ListDiskLocations(ctx, r) })
}

// PartitionDisk records the call, then makes it (or loses its answer, when the tracer is told to).
func (d tDisk) PartitionDisk(ctx context.Context, r *disk.PartitionDiskRequest) (*disk.PartitionDiskResponse, error) {
	return call(d.t, "PartitionDisk", func() (*disk.PartitionDiskResponse, error) { return d.t.p.Disk.PartitionDisk(ctx, r) })
}

// Rescan records the call, then makes it (or loses its answer, when the tracer is told to).
func (d tDisk) Rescan(ctx context.Context, r *disk.RescanRequest) (*disk.RescanResponse, error) {
	return call(d.t, "Rescan", func() (*disk.RescanResponse, error) { return d.t.p.Disk.Rescan(ctx, r) })
}

// ListDiskIDs records the call, then makes it (or loses its answer, when the tracer is told to).
func (d tDisk) ListDiskIDs(ctx context.Context, r *disk.ListDiskIDsRequest) (*disk.ListDiskIDsResponse, error) {
	return call(d.t, "ListDiskIDs", func() (*disk.ListDiskIDsResponse, error) { return d.t.p.Disk.ListDiskIDs(ctx, r) })
}

// GetDiskStats records the call, then makes it (or loses its answer, when the tracer is told to).
func (d tDisk) GetDiskStats(ctx context.Context, r *disk.GetDiskStatsRequest) (*disk.GetDiskStatsResponse, error) {
	return call(d.t, "GetDiskStats", func() (*disk.GetDiskStatsResponse, error) { return d.t.p.Disk.GetDiskStats(ctx, r) })
}

// SetDiskState records the call, then makes it (or loses its answer, when the tracer is told to).
func (d tDisk) SetDiskState(ctx context.Context, r *disk.SetDiskStateRequest) (*disk.SetDiskStateResponse, error) {
	name := "SetDiskState(offline)"
	if r.IsOnline {
		name = "SetDiskState(online)"
	}
	return call(d.t, name, func() (*disk.SetDiskStateResponse, error) { return d.t.p.Disk.SetDiskState(ctx, r) })
}

// GetDiskState records the call, then makes it (or loses its answer, when the tracer is told to).
func (d tDisk) GetDiskState(ctx context.Context, r *disk.GetDiskStateRequest) (*disk.GetDiskStateResponse, error) {
	return call(d.t, "GetDiskState", func() (*disk.GetDiskStateResponse, error) { return d.t.p.Disk.GetDiskState(ctx, r) })
}

// tVolume is the volume group seen through a tracer.
type tVolume struct {
	t *tracer
	// The node's whole group when a mounter runs over the tracer: its
	// methods outside the drivers' set pass through untraced. Nil for
	// the raw flows, which call only the traced methods.
	volume.Interface
}

// ListVolumesOnDisk records the call, then makes it (or loses its answer, when the tracer is told to).
func (v tVolume) ListVolumesOnDisk(ctx context.Context, r *volume.ListVolumesOnDiskRequest) (*volume.ListVolumesOnDiskResponse, error) {
	return call(v.t, "ListVolumesOnDisk", func() (*volume.ListVolumesOnDiskResponse, error) { return v.t.p.Volume.ListVolumesOnDisk(ctx, r) })
}

// MountVolume records the call, then makes it (or loses its answer, when the tracer is told to).
func (v tVolume) MountVolume(ctx context.Context, r *volume.MountVolumeRequest) (*volume.MountVolumeResponse, error) {
	return call(v.t, "MountVolume", func() (*volume.MountVolumeResponse, error) { return v.t.p.Volume.MountVolume(ctx, r) })
}

// UnmountVolume records the call, then makes it (or loses its answer, when the tracer is told to).
func (v tVolume) UnmountVolume(ctx context.Context, r *volume.UnmountVolumeRequest) (*volume.UnmountVolumeResponse, error) {
	return call(v.t, "UnmountVolume", func() (*volume.UnmountVolumeResponse, error) { return v.t.p.Volume.UnmountVolume(ctx, r) })
}

// IsVolumeFormatted records the call, then makes it (or loses its answer, when the tracer is told to).
func (v tVolume) IsVolumeFormatted(ctx context.Context, r *volume.IsVolumeFormattedRequest) (*volume.IsVolumeFormattedResponse, error) {
	return call(v.t, "IsVolumeFormatted", func() (*volume.IsVolumeFormattedResponse, error) { return v.t.p.Volume.IsVolumeFormatted(ctx, r) })
}

// FormatVolume records the call, then makes it (or loses its answer, when the tracer is told to).
func (v tVolume) FormatVolume(ctx context.Context, r *volume.FormatVolumeRequest) (*volume.FormatVolumeResponse, error) {
	return call(v.t, "FormatVolume", func() (*volume.FormatVolumeResponse, error) { return v.t.p.Volume.FormatVolume(ctx, r) })
}

// ResizeVolume records the call, then makes it (or loses its answer, when the tracer is told to).
func (v tVolume) ResizeVolume(ctx context.Context, r *volume.ResizeVolumeRequest) (*volume.ResizeVolumeResponse, error) {
	return call(v.t, "ResizeVolume", func() (*volume.ResizeVolumeResponse, error) { return v.t.p.Volume.ResizeVolume(ctx, r) })
}

// GetVolumeStats records the call, then makes it (or loses its answer, when the tracer is told to).
func (v tVolume) GetVolumeStats(ctx context.Context, r *volume.GetVolumeStatsRequest) (*volume.GetVolumeStatsResponse, error) {
	return call(v.t, "GetVolumeStats", func() (*volume.GetVolumeStatsResponse, error) { return v.t.p.Volume.GetVolumeStats(ctx, r) })
}

// GetDiskNumberFromVolumeID records the call, then makes it (or loses its answer, when the tracer is told to).
func (v tVolume) GetDiskNumberFromVolumeID(ctx context.Context, r *volume.GetDiskNumberFromVolumeIDRequest) (*volume.GetDiskNumberFromVolumeIDResponse, error) {
	return call(v.t, "GetDiskNumberFromVolumeID", func() (*volume.GetDiskNumberFromVolumeIDResponse, error) {
		return v.t.p.Volume.GetDiskNumberFromVolumeID(ctx, r)
	})
}

// GetVolumeIDFromTargetPath records the call, then makes it (or loses its answer, when the tracer is told to).
func (v tVolume) GetVolumeIDFromTargetPath(ctx context.Context, r *volume.GetVolumeIDFromTargetPathRequest) (*volume.GetVolumeIDFromTargetPathResponse, error) {
	return call(v.t, "GetVolumeIDFromTargetPath", func() (*volume.GetVolumeIDFromTargetPathResponse, error) {
		return v.t.p.Volume.GetVolumeIDFromTargetPath(ctx, r)
	})
}

// WriteVolumeCache records the call, then makes it (or loses its answer, when the tracer is told to).
func (v tVolume) WriteVolumeCache(ctx context.Context, r *volume.WriteVolumeCacheRequest) (*volume.WriteVolumeCacheResponse, error) {
	return call(v.t, "WriteVolumeCache", func() (*volume.WriteVolumeCacheResponse, error) { return v.t.p.Volume.WriteVolumeCache(ctx, r) })
}

// tFS is the filesystem group seen through a tracer.
type tFS struct {
	t *tracer
	// The node's whole group when a mounter runs over the tracer: its
	// methods outside the drivers' set pass through untraced. Nil for
	// the raw flows, which call only the traced methods.
	filesystem.Interface
}

// PathExists records the call, then makes it (or loses its answer, when the tracer is told to).
func (f tFS) PathExists(ctx context.Context, r *filesystem.PathExistsRequest) (*filesystem.PathExistsResponse, error) {
	return call(f.t, "PathExists", func() (*filesystem.PathExistsResponse, error) { return f.t.p.Filesystem.PathExists(ctx, r) })
}

// Mkdir records the call, then makes it (or loses its answer, when the tracer is told to).
func (f tFS) Mkdir(ctx context.Context, r *filesystem.MkdirRequest) (*filesystem.MkdirResponse, error) {
	return call(f.t, "Mkdir", func() (*filesystem.MkdirResponse, error) { return f.t.p.Filesystem.Mkdir(ctx, r) })
}

// Rmdir records the call, then makes it (or loses its answer, when the tracer is told to).
func (f tFS) Rmdir(ctx context.Context, r *filesystem.RmdirRequest) (*filesystem.RmdirResponse, error) {
	return call(f.t, "Rmdir", func() (*filesystem.RmdirResponse, error) { return f.t.p.Filesystem.Rmdir(ctx, r) })
}

// CreateSymlink records the call, then makes it (or loses its answer, when the tracer is told to).
func (f tFS) CreateSymlink(ctx context.Context, r *filesystem.CreateSymlinkRequest) (*filesystem.CreateSymlinkResponse, error) {
	return call(f.t, "CreateSymlink", func() (*filesystem.CreateSymlinkResponse, error) { return f.t.p.Filesystem.CreateSymlink(ctx, r) })
}

// IsSymlink records the call, then makes it (or loses its answer, when the tracer is told to).
func (f tFS) IsSymlink(ctx context.Context, r *filesystem.IsSymlinkRequest) (*filesystem.IsSymlinkResponse, error) {
	return call(f.t, "IsSymlink", func() (*filesystem.IsSymlinkResponse, error) { return f.t.p.Filesystem.IsSymlink(ctx, r) })
}

// tSMB is the SMB group seen through a tracer.
type tSMB struct {
	t *tracer
	// The node's whole group when a mounter runs over the tracer: its
	// methods outside the drivers' set pass through untraced. Nil for
	// the raw flows, which call only the traced methods.
	smb.Interface
}

// NewSmbGlobalMapping records the call, then makes it (or loses its answer, when the tracer is told to).
func (s tSMB) NewSmbGlobalMapping(ctx context.Context, r *smb.NewSmbGlobalMappingRequest) (*smb.NewSmbGlobalMappingResponse, error) {
	resp, err := s.t.p.SMB.NewSmbGlobalMapping(ctx, r)
	if err == nil && r.LocalPath != "" {
		s.t.noteLink(r.LocalPath, r.RemotePath)
	}
	return call(s.t, "NewSmbGlobalMapping", func() (*smb.NewSmbGlobalMappingResponse, error) { return resp, err })
}

// RemoveSmbGlobalMapping records the call, then makes it (or loses its answer, when the tracer is told to).
func (s tSMB) RemoveSmbGlobalMapping(ctx context.Context, r *smb.RemoveSmbGlobalMappingRequest) (*smb.RemoveSmbGlobalMappingResponse, error) {
	return call(s.t, "RemoveSmbGlobalMapping", func() (*smb.RemoveSmbGlobalMappingResponse, error) {
		return s.t.p.SMB.RemoveSmbGlobalMapping(ctx, r)
	})
}

// tSystem is the system group seen through a tracer.
type tSystem struct {
	t *tracer
	// The node's whole group when a mounter runs over the tracer: its
	// methods outside the drivers' set pass through untraced. Nil for
	// the raw flows, which call only the traced methods.
	system.Interface
}

// GetBIOSSerialNumber records the call, then makes it (or loses its answer, when the tracer is told to).
func (s tSystem) GetBIOSSerialNumber(ctx context.Context, r *system.GetBIOSSerialNumberRequest) (*system.GetBIOSSerialNumberResponse, error) {
	return call(s.t, "GetBIOSSerialNumber", func() (*system.GetBIOSSerialNumberResponse, error) {
		return s.t.p.System.GetBIOSSerialNumber(ctx, r)
	})
}

// noteLink records that the SMB mapping made a link at local to remote.
func (t *tracer) noteLink(local, remote string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.links == nil {
		t.links = map[string]string{}
	}
	t.links[strings.ToLower(local)] = remote
}

// linkTarget returns what noteLink recorded for local.
func (t *tracer) linkTarget(local string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.links[strings.ToLower(local)]
	return r, ok
}
