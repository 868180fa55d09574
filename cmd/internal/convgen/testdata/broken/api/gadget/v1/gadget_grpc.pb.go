package gadgetv1

import (
	"context"

	"google.golang.org/grpc"
)

// Full method names, as protoc-gen-go-grpc writes them.
const (
	Widget_Get_FullMethodName = "/v1.Widget/Get"
)

// WidgetServer is the server API.
type WidgetServer interface {
	Get(context.Context, *GetRequest) (*GetResponse, error)
	mustEmbedUnimplementedWidgetServer()
}

// UnimplementedWidgetServer must be embedded.
type UnimplementedWidgetServer struct{}

// Get is unimplemented.
func (UnimplementedWidgetServer) Get(context.Context, *GetRequest) (*GetResponse, error) {
	return nil, nil
}
func (UnimplementedWidgetServer) mustEmbedUnimplementedWidgetServer() {}

// RegisterWidgetServer registers srv.
func RegisterWidgetServer(s grpc.ServiceRegistrar, srv WidgetServer) {}
