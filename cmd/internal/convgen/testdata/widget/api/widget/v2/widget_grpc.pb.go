package widgetv2

import (
	"context"

	"google.golang.org/grpc"
)

// Full method names, as protoc-gen-go-grpc writes them.
const (
	Widget_Get_FullMethodName = "/v2.Widget/Get"
	Widget_Old_FullMethodName = "/v2.Widget/Old"
)

// WidgetServer is the server API.
type WidgetServer interface {
	Get(context.Context, *GetRequest) (*GetResponse, error)
	Old(context.Context, *OldRequest) (*OldResponse, error)
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
func (UnimplementedWidgetServer) mustEmbedUnimplementedWidgetServer() {}

// RegisterWidgetServer registers srv.
func RegisterWidgetServer(s grpc.ServiceRegistrar, srv WidgetServer) {}

// WidgetClient is the client API.
type WidgetClient interface {
	Get(ctx context.Context, in *GetRequest, opts ...grpc.CallOption) (*GetResponse, error)
	Old(ctx context.Context, in *OldRequest, opts ...grpc.CallOption) (*OldResponse, error)
}

// NewWidgetClient returns a client whose calls answer empty responses.
func NewWidgetClient(grpc.ClientConnInterface) WidgetClient { return widgetClient{} }

type widgetClient struct{}

// Get answers an empty response.
func (widgetClient) Get(context.Context, *GetRequest, ...grpc.CallOption) (*GetResponse, error) {
	return &GetResponse{}, nil
}

// Old answers an empty response.
func (widgetClient) Old(context.Context, *OldRequest, ...grpc.CallOption) (*OldResponse, error) {
	return &OldResponse{}, nil
}
