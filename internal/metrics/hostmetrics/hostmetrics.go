// Package hostmetrics times host backend operations. It wraps each group's
// Host interface in a decorator that passes every call through unchanged
// and reports, when it returns, the group, the Host method's name, how
// long it took and its error to an Observer (metrics.HostObserver records
// them in csi_node_proxy_host_operation_duration_seconds).
//
// The decorators see arguments but never report them: an observation
// carries only names fixed in this package, so no path, volume ID, share,
// user name or secret can reach a metric label. A call that panics is not
// observed; the gRPC metrics count it as Internal.
//
// Every method of every Host interface is wrapped by hand; the decorators
// do not embed the interface, so a method added to a Host interface fails
// to compile here until it is timed too.
package hostmetrics

import (
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// Group names, the group label of every observation.
const (
	GroupDisk       = "disk"
	GroupVolume     = "volume"
	GroupFilesystem = "filesystem"
	GroupSMB        = "smb"
	GroupISCSI      = "iscsi"
	GroupSystem     = "system"
)

// Observer receives one observation per completed host operation:
// operation is the Host method's name (PartitionDisk, MountVolume, ...),
// d its duration and err what it returned.
type Observer interface {
	ObserveHostOperation(group, operation string, d time.Duration, err error)
}

// timer times one operation.
type timer struct {
	o         Observer
	group, op string
	start     time.Time
}

func begin(o Observer, group, op string) timer {
	return timer{o: o, group: group, op: op, start: time.Now()}
}

// done reports the operation with its outcome.
func (t timer) done(err error) { t.o.ObserveHostOperation(t.group, t.op, time.Since(t.start), err) }

// Disk returns h with every operation timed into o; a nil o returns h.
func Disk(h disk.Host, o Observer) disk.Host {
	if o == nil {
		return h
	}
	return diskHost{h: h, o: o}
}

// Volume returns h with every operation timed into o; a nil o returns h.
func Volume(h volume.Host, o Observer) volume.Host {
	if o == nil {
		return h
	}
	return volumeHost{h: h, o: o}
}

// Filesystem returns h with every operation timed into o; a nil o returns
// h.
func Filesystem(h filesystem.Host, o Observer) filesystem.Host {
	if o == nil {
		return h
	}
	return filesystemHost{h: h, o: o}
}

// SMB returns h with every operation timed into o; a nil o returns h.
func SMB(h smb.Host, o Observer) smb.Host {
	if o == nil {
		return h
	}
	return smbHost{h: h, o: o}
}

// ISCSI returns h with every operation timed into o; a nil o returns h.
func ISCSI(h iscsi.Host, o Observer) iscsi.Host {
	if o == nil {
		return h
	}
	return iscsiHost{h: h, o: o}
}

// System returns h with every operation timed into o; a nil o returns h.
func System(h system.Host, o Observer) system.Host {
	if o == nil {
		return h
	}
	return systemHost{h: h, o: o}
}
