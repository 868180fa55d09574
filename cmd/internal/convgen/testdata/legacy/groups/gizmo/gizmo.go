// Package gizmo is the model of the legacy golden test's group: its older
// wire versions differ from it the way upstream's pre-v1beta3 versions
// differ from the groups (renamed fields, disk numbers as strings and
// int64s, identifiers in a map).
package gizmo

import "context"

// Interface is the group.
type Interface interface {
	Stat(context.Context, *StatRequest) (*StatResponse, error)
	List(context.Context, *ListRequest) (*ListResponse, error)
}

// StatRequest names a disk by number.
type StatRequest struct {
	DiskNumber uint32
	TargetPath string
	// PartitionNumber has no wire field: the client refuses a set one.
	PartitionNumber uint32
}

// StatResponse has fields the wire calls otherwise or types otherwise.
type StatResponse struct {
	TotalBytes int64
	DiskNumber uint32
}

// ListRequest is empty.
type ListRequest struct{}

// ListResponse keys disks by number.
type ListResponse struct {
	Disks map[uint32]*Disk
}

// Disk has as fields what the wire keeps in a map.
type Disk struct {
	Name         string
	Page83       string
	SerialNumber string
}
