package gadgetv2

import (
	"context"

	pb "github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/broken/api/gadget/v2"
	"github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/broken/groups/gadget"
)

// Every directive and override here is wrong in its own way.
//
//convgen:rename Old=Nope Missing=Get
//convgen:rename Hand=Get
//convgen:rename Get
//convgen:ignore Nothing
//convgen:frobnicate Get

// fromModelGetResponse may not fail: only a request's conversion may.
func fromModelGetResponse(in *gadget.GetResponse) (*pb.GetResponse, error) {
	return &pb.GetResponse{}, nil
}

// Hand is hand-written and renamed at once.
func (s *Server) Hand(ctx context.Context, in *pb.HandRequest) (*pb.HandResponse, error) {
	return &pb.HandResponse{}, nil
}
