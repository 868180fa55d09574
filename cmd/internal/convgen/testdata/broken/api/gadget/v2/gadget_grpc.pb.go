package gadgetv2

import (
	"context"

	"google.golang.org/grpc"
)

// Full method names, as protoc-gen-go-grpc writes them.
const (
	Widget_Get_FullMethodName  = "/v2.Widget/Get"
	Widget_Old_FullMethodName  = "/v2.Widget/Old"
	Widget_Hand_FullMethodName = "/v2.Widget/Hand"
)

// WidgetServer is the server API.
type WidgetServer interface {
	Get(context.Context, *GetRequest) (*GetResponse, error)
	Old(context.Context, *OldRequest) (*OldResponse, error)
	Hand(context.Context, *HandRequest) (*HandResponse, error)
	mustEmbedUnimplementedWidgetServer()
}

// UnimplementedWidgetServer must be embedded.
type UnimplementedWidgetServer struct{}

// Get is unimplemented.
func (UnimplementedWidgetServer) Get(context.Context, *GetRequest) (*GetResponse, error) {
	return nil, nil
}

// Old is unimplemented.
func (UnimplementedWidgetServer) Old(context.Context, *OldRequest) (*OldResponse, error) {
	return nil, nil
}

// Hand is unimplemented.
func (UnimplementedWidgetServer) Hand(context.Context, *HandRequest) (*HandResponse, error) {
	return nil, nil
}
func (UnimplementedWidgetServer) mustEmbedUnimplementedWidgetServer() {}

// RegisterWidgetServer registers srv.
func RegisterWidgetServer(s grpc.ServiceRegistrar, srv WidgetServer) {}
