package gizmov1alpha2

import (
	"context"

	"google.golang.org/grpc"
)

// Full method names, as protoc-gen-go-grpc writes them.
const (
	Gizmo_Stat_FullMethodName = "/v1alpha2.Gizmo/Stat"
	Gizmo_List_FullMethodName = "/v1alpha2.Gizmo/List"
)

// GizmoServer is the server API.
type GizmoServer interface {
	Stat(context.Context, *StatRequest) (*StatResponse, error)
	List(context.Context, *ListRequest) (*ListResponse, error)
	mustEmbedUnimplementedGizmoServer()
}

// UnimplementedGizmoServer must be embedded.
type UnimplementedGizmoServer struct{}

// Stat is unimplemented.
func (UnimplementedGizmoServer) Stat(context.Context, *StatRequest) (*StatResponse, error) {
	return nil, nil
}

// List is unimplemented.
func (UnimplementedGizmoServer) List(context.Context, *ListRequest) (*ListResponse, error) {
	return nil, nil
}
func (UnimplementedGizmoServer) mustEmbedUnimplementedGizmoServer() {}

// RegisterGizmoServer registers srv.
func RegisterGizmoServer(s grpc.ServiceRegistrar, srv GizmoServer) {}

// GizmoClient is the client API.
type GizmoClient interface {
	Stat(ctx context.Context, in *StatRequest, opts ...grpc.CallOption) (*StatResponse, error)
	List(ctx context.Context, in *ListRequest, opts ...grpc.CallOption) (*ListResponse, error)
}

// NewGizmoClient returns a client whose calls answer empty responses.
func NewGizmoClient(grpc.ClientConnInterface) GizmoClient { return gizmoClient{} }

type gizmoClient struct{}

// Stat answers an empty response.
func (gizmoClient) Stat(context.Context, *StatRequest, ...grpc.CallOption) (*StatResponse, error) {
	return &StatResponse{}, nil
}

// List answers an empty response.
func (gizmoClient) List(context.Context, *ListRequest, ...grpc.CallOption) (*ListResponse, error) {
	return &ListResponse{}, nil
}
