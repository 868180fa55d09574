package groups

import (
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
)

// Node is the six API groups of one node, however they are reached: through
// the daemon's endpoints (package client's Dial) or inside the calling
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

// Set is the six groups of one node as values, one implementation each,
// plus csi-node-proxy's own SMBMappings group:
// what package hostset builds on a host backend, what the daemon's gRPC
// adapters serve (each adapter takes its group's field) and what library
// mode puts its call gate in front of. It is the one shape of "the six
// groups" inside csi-node-proxy, so a seventh group or a renamed one is
// one field here rather than a copy in every layer that passes them on.
// Node is the same six behind methods, for drivers (without SMBMappings,
// see its field); a Set is not a Node
// because a Node also owns what it must Close.
//
// A field may be nil where a caller serves fewer groups (a test serving
// only the filesystem group); registering a version of a group whose
// field is nil is the caller's mistake.
type Set struct {
	// Disk is the disk group.
	Disk disk.Interface
	// Volume is the volume group.
	Volume volume.Interface
	// Filesystem is the filesystem group.
	Filesystem filesystem.Interface
	// SMB is the SMB group.
	SMB smb.Interface
	// ISCSI is the iSCSI group.
	ISCSI iscsi.Interface
	// System is the system group.
	System system.Interface
	// SMBMappings is csi-node-proxy's own group, the hygiene of SMB
	// global mappings (package smbmappings). It is not on Node, so that a
	// driver's own Node implementations keep compiling: reach it through
	// inprocess.Node.SMBMappings or client.Client.SMBMappings.
	SMBMappings smbmappings.Interface
}
