// Package gizmov1alpha2 imitates protoc-gen-go output for the generator's
// legacy golden test: a version that names and types fields the way
// upstream's versions before v1beta3 did.
package gizmov1alpha2

// StatRequest names the disk by a decimal string.
type StatRequest struct {
	state  struct{}
	DiskId string `protobuf:"bytes,1,opt,name=disk_id,proto3"`
	Path   string `protobuf:"bytes,2,opt,name=path,proto3"`
}

// StatResponse has the size under another name and the disk number as an
// int64.
type StatResponse struct {
	state      struct{}
	Size       int64 `protobuf:"varint,1,opt,name=size,proto3"`
	DiskNumber int64 `protobuf:"varint,2,opt,name=disk_number,proto3"`
}

// ListRequest is empty.
type ListRequest struct {
	state struct{}
}

// ListResponse keys disks by decimal strings.
type ListResponse struct {
	state struct{}
	Disks map[string]*Disk `protobuf:"bytes,1,rep,name=disks,proto3"`
}

// Disk keeps its identifiers in a map.
type Disk struct {
	state       struct{}
	Name        string            `protobuf:"bytes,1,opt,name=name,proto3"`
	Identifiers map[string]string `protobuf:"bytes,2,rep,name=identifiers,proto3"`
}
