package statuscode

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
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

// TestOf states the mapping every answer uses (the daemon's status codes
// through errgrpc.Code, audit records, library mode's outcomes): each
// errdefs sentinel, context errors, and anything else as Internal.
func TestOf(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Code
	}{
		{nil, OK},
		{errors.New("host failure"), Internal},
		{context.Canceled, Canceled},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), DeadlineExceeded},
		{errdefs.ErrInvalidArgument, InvalidArgument},
		{errdefs.ErrNotFound, NotFound},
		{errdefs.ErrAlreadyExists, AlreadyExists},
		{errdefs.ErrFailedPrecondition, FailedPrecondition},
		{errdefs.ErrPermissionDenied, PermissionDenied},
		{errdefs.ErrUnimplemented, Unimplemented},
		{errdefs.ErrOutOfRange, OutOfRange},
		{errdefs.ErrUnavailable, Unavailable},
		{fmt.Errorf("both: %w, %w", errdefs.ErrNotFound, errdefs.ErrInvalidArgument), InvalidArgument},
	} {
		if got := Of(c.err); got != c.want {
			t.Errorf("Of(%v) = %v, want %v", c.err, got, c.want)
		}
		if c.want != OK && c.want != Internal && c.want != Canceled && c.want != DeadlineExceeded && !errors.Is(c.err, Kind(c.want)) {
			t.Errorf("Kind(%v) = %v, which %v does not wrap", c.want, Kind(c.want), c.err)
		}
	}
	if k := Kind(Internal); k != nil {
		t.Errorf("Kind(Internal) = %v, want none", k)
	}
}
