package errdefs_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// TestCodeNamesAreGRPCs holds every name and number to gRPC's, which
// audit records and metric labels have always used.
func TestCodeNamesAreGRPCs(t *testing.T) {
	for c := errdefs.Code(0); c <= 20; c++ {
		if got, want := c.String(), codes.Code(c).String(); got != want {
			t.Errorf("Code(%d).String() = %q, gRPC says %q", c, got, want)
		}
	}
}

// TestCodeOf states the mapping every answer uses (the daemon's status
// codes through errgrpc.Code, audit records, library mode's outcomes):
// each sentinel, context errors, and anything else as Internal; and
// Code.Kind, the way back.
func TestCodeOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want errdefs.Code
	}{
		{nil, errdefs.OK},
		{errors.New("host failure"), errdefs.Internal},
		{context.Canceled, errdefs.Canceled},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), errdefs.DeadlineExceeded},
		{errdefs.ErrInvalidArgument, errdefs.InvalidArgument},
		{errdefs.ErrNotFound, errdefs.NotFound},
		{errdefs.ErrAlreadyExists, errdefs.AlreadyExists},
		{errdefs.ErrFailedPrecondition, errdefs.FailedPrecondition},
		{errdefs.ErrPermissionDenied, errdefs.PermissionDenied},
		{errdefs.ErrUnimplemented, errdefs.Unimplemented},
		{errdefs.ErrOutOfRange, errdefs.OutOfRange},
		{errdefs.ErrUnavailable, errdefs.Unavailable},
		{fmt.Errorf("both: %w, %w", errdefs.ErrNotFound, errdefs.ErrInvalidArgument), errdefs.InvalidArgument},
	} {
		if got := errdefs.CodeOf(c.err); got != c.want {
			t.Errorf("CodeOf(%v) = %v, want %v", c.err, got, c.want)
		}
		switch c.want {
		case errdefs.OK, errdefs.Internal, errdefs.Canceled, errdefs.DeadlineExceeded:
		default:
			if !errors.Is(c.err, c.want.Kind()) {
				t.Errorf("%v.Kind() = %v, which %v does not wrap", c.want, c.want.Kind(), c.err)
			}
		}
	}
	for _, c := range []errdefs.Code{errdefs.OK, errdefs.Internal, errdefs.Canceled, errdefs.DeadlineExceeded, errdefs.Unknown, 99} {
		if k := c.Kind(); k != nil {
			t.Errorf("%v.Kind() = %v, want none", c, k)
		}
	}
}
