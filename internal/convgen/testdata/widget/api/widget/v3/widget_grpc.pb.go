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
