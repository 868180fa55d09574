package groups

import (
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// Node is the six API groups of one node, however they are reached: through
// the daemon's endpoints (the client module's Dial) or inside the calling
// process (library mode, package inprocess). Driver code written against
// Node runs unchanged in both modes; switching is a change of constructor.
//
// Every method of every group validates its request the same way in both
// modes and returns errors that wrap an errdefs sentinel, so errors.Is and
// the errdefs helpers work alike on both sides of the pipe.
type Node interface {
	// Disk returns the disk group.
	Disk() disk.Interface
	// Volume returns the volume group.
	Volume() volume.Interface
	// Filesystem returns the filesystem group.
	Filesystem() filesystem.Interface
	// SMB returns the SMB group.
	SMB() smb.Interface
	// ISCSI returns the iSCSI group.
	ISCSI() iscsi.Interface
	// System returns the system group.
	System() system.Interface
	// Close releases what the Node holds (connections, audit log). Calls
	// made after Close fail.
	Close() error
}
