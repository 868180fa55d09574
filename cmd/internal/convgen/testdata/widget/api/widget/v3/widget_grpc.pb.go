package widgetv3

import (
	"context"

	"google.golang.org/grpc"
)

// Full method names, as protoc-gen-go-grpc writes them.
const (
	Widget_Fetch_FullMethodName = "/v3.Widget/Fetch"
)

// WidgetServer is the server API.
type WidgetServer interface {
	Fetch(context.Context, *FetchRequest) (*FetchResponse, error)
	mustEmbedUnimplementedWidgetServer()
}

// UnimplementedWidgetServer must be embedded.
type UnimplementedWidgetServer struct{}

// Fetch is unimplemented.
func (UnimplementedWidgetServer) Fetch(context.Context, *FetchRequest) (*FetchResponse, error) {
	return nil, nil
}
func (UnimplementedWidgetServer) mustEmbedUnimplementedWidgetServer() {}

// RegisterWidgetServer registers srv.
func RegisterWidgetServer(s grpc.ServiceRegistrar, srv WidgetServer) {}

// WidgetClient is the client API.
type WidgetClient interface {
	Fetch(ctx context.Context, in *FetchRequest, opts ...grpc.CallOption) (*FetchResponse, error)
}

// NewWidgetClient returns a client whose calls answer empty responses.
func NewWidgetClient(grpc.ClientConnInterface) WidgetClient { return widgetClient{} }

type widgetClient struct{}

// Fetch answers an empty response.
func (widgetClient) Fetch(context.Context, *FetchRequest, ...grpc.CallOption) (*FetchResponse, error) {
	return &FetchResponse{}, nil
}
