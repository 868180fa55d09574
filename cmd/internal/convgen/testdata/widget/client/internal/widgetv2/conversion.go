package widgetv2

import (
	pb "github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/widget/api/widget/v2"
	"github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/widget/groups/widget"
)

// Old has no model method.
//
//convgen:skip Old

// fromModelGetRequest overrides the generated conversion: v2 renamed id to
// widget_id. v2 has no number either; the override would have to refuse
// one, but the golden test only checks that the generator steps aside.
func fromModelGetRequest(in *widget.GetRequest) *pb.GetRequest {
	out := autoFromModelGetRequest(in)
	out.WidgetId = in.ID
	return out
}
