package gizmov1alpha2

import (
	"strings"

	pb "github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/legacy/api/gizmo/v1alpha2"
	"github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/legacy/groups/gizmo"
)

// v1alpha2 is v1alpha1 under another package.
//
//convgen:like v1alpha1

// toModelStatRequest trims the trailing slash v1alpha2 sent, after the
// generated conversion (which can fail: it parses the disk ID).
func toModelStatRequest(in *pb.StatRequest) (*gizmo.StatRequest, error) {
	out, err := autoToModelStatRequest(in)
	if err != nil {
		return nil, err
	}
	out.TargetPath = strings.TrimSuffix(out.TargetPath, "/")
	return out, nil
}
