package diskv1alpha1

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1alpha1"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
)

// idsOnly is a disk group that only lists identifiers.
type idsOnly struct {
	disk.Interface
	ids map[uint32]*disk.DiskIDs
	err error
}

func (g idsOnly) ListDiskIDs(context.Context, *disk.ListDiskIDsRequest) (*disk.ListDiskIDsResponse, error) {
	return &disk.ListDiskIDsResponse{DiskIDs: g.ids}, g.err
}

func TestGetDiskNumberByName(t *testing.T) {
	s := New(idsOnly{ids: map[uint32]*disk.DiskIDs{
		0:  {Page83: "", SerialNumber: "SYS"},
		3:  {Page83: "6002248000000001", SerialNumber: "A"},
		12: {Page83: "6002248000000002", SerialNumber: "B"},
		7:  {Page83: "6002248000000002", SerialNumber: "B-clone"},
		9:  nil,
	}})
	ctx := context.Background()
	for name, want := range map[string]string{"6002248000000001": "3", "6002248000000002": "7"} {
		got, err := s.GetDiskNumberByName(ctx, &pb.GetDiskNumberByNameRequest{DiskName: name})
		if err != nil || got.DiskNumber != want {
			t.Errorf("GetDiskNumberByName(%s) = %v, %v; want %s", name, got, err, want)
		}
	}
	for name, want := range map[string]codes.Code{"": codes.InvalidArgument, "SYS": codes.NotFound, "6002248000000003": codes.NotFound} {
		_, err := s.GetDiskNumberByName(ctx, &pb.GetDiskNumberByNameRequest{DiskName: name})
		if status.Code(err) != want {
			t.Errorf("GetDiskNumberByName(%q) = %v; want %v", name, err, want)
		}
	}
	_, err := New(idsOnly{err: errors.New("host down")}).GetDiskNumberByName(ctx, &pb.GetDiskNumberByNameRequest{DiskName: "x"})
	if status.Code(err) != codes.Internal {
		t.Errorf("GetDiskNumberByName with a failing host = %v; want Internal", err)
	}
}
