package widgetv2

import (
	"context"

	pb "github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/widget/api/widget/v2"
	"github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/widget/groups/widget"
)

// toModelGetRequest overrides the generated conversion: v2 renamed id to
// widget_id.
func toModelGetRequest(in *pb.GetRequest) *widget.GetRequest {
	out := autoToModelGetRequest(in)
	out.ID = in.WidgetId
	return out
}

// Old is the v2 name of Get.
func (s *Server) Old(ctx context.Context, in *pb.OldRequest) (*pb.OldResponse, error) {
	_, err := s.group.Get(ctx, &widget.GetRequest{ID: in.Id})
	return &pb.OldResponse{}, err
}
