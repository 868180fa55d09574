package statuscode

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
)

// TestNamesAreGRPCs holds every name and number to gRPC's, which audit
// records and metric labels have always used.
func TestNamesAreGRPCs(t *testing.T) {
	for c := Code(0); c <= 20; c++ {
		if got, want := c.String(), codes.Code(c).String(); got != want {
			t.Errorf("Code(%d).String() = %q, gRPC says %q", c, got, want)
		}
	}
}

// TestOfAgreesWithErrdefs holds Of to errgrpc.Code for every error that
// is not a gRPC status.
func TestOfAgreesWithErrdefs(t *testing.T) {
	errs := []error{
		nil, errors.New("host failure"), context.Canceled, fmt.Errorf("x: %w", context.DeadlineExceeded),
		errdefs.ErrInvalidArgument, errdefs.ErrNotFound, errdefs.ErrAlreadyExists,
		errdefs.ErrFailedPrecondition, errdefs.ErrPermissionDenied, errdefs.ErrUnimplemented,
		errdefs.ErrOutOfRange, errdefs.ErrUnavailable,
		fmt.Errorf("both: %w, %w", errdefs.ErrNotFound, errdefs.ErrInvalidArgument),
	}
	for _, err := range errs {
		if got, want := Of(err), errgrpc.Code(err); uint32(got) != uint32(want) {
			t.Errorf("Of(%v) = %v, errgrpc.Code says %v", err, got, want)
		}
	}
}
