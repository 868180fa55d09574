package errgrpc

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// kinds is the mapping the daemon's answers promise: each errdefs
// sentinel and its gRPC code.
var kinds = []struct {
	err  error
	code codes.Code
}{
	{errdefs.ErrInvalidArgument, codes.InvalidArgument},
	{errdefs.ErrPermissionDenied, codes.PermissionDenied},
	{errdefs.ErrNotFound, codes.NotFound},
	{errdefs.ErrAlreadyExists, codes.AlreadyExists},
	{errdefs.ErrFailedPrecondition, codes.FailedPrecondition},
	{errdefs.ErrOutOfRange, codes.OutOfRange},
	{errdefs.ErrUnimplemented, codes.Unimplemented},
	{errdefs.ErrUnavailable, codes.Unavailable},
}

func TestToGRPCMapsEverySentinel(t *testing.T) {
	for _, k := range kinds {
		err := fmt.Errorf("disk 7: %w", k.err)
		st := status.Convert(ToGRPC(err))
		if st.Code() != k.code {
			t.Errorf("%v: code %v, want %v", k.err, st.Code(), k.code)
		}
		if st.Message() != err.Error() {
			t.Errorf("%v: message %q, want %q", k.err, st.Message(), err.Error())
		}
	}
}

func TestToGRPCNeverUnknown(t *testing.T) {
	cases := map[string]error{
		"plain error":    errors.New("boom"),
		"unknown status": status.Error(codes.Unknown, "boom"),
	}
	for name, err := range cases {
		st := status.Convert(ToGRPC(err))
		if st.Code() != codes.Internal || st.Message() != "boom" {
			t.Errorf("%s: got %v %q, want Internal \"boom\"", name, st.Code(), st.Message())
		}
	}
	if got := status.Code(ToGRPC(fmt.Errorf("x: %w", context.DeadlineExceeded))); got != codes.DeadlineExceeded {
		t.Errorf("deadline: %v", got)
	}
	if ToGRPC(nil) != nil {
		t.Error("ToGRPC(nil) != nil")
	}
	// A status with a real code passes through untouched.
	in := status.Error(codes.NotFound, "gone")
	if got := ToGRPC(in); got != in {
		t.Errorf("status changed: %v", got)
	}
}

func TestFromGRPCRestoresSentinels(t *testing.T) {
	for _, k := range kinds {
		err := FromGRPC(status.Error(k.code, "volume x: whatever"))
		if !errors.Is(err, k.err) {
			t.Errorf("%v: errors.Is lost after a round trip", k.code)
		}
		if err.Error() != "volume x: whatever" {
			t.Errorf("message %q", err.Error())
		}
		if status.Code(err) != k.code {
			t.Errorf("code lost: %v", status.Code(err))
		}
	}
	// The context codes come back as the context errors, as they are in
	// library mode, and keep their code both ways.
	for code, want := range map[codes.Code]error{codes.DeadlineExceeded: context.DeadlineExceeded, codes.Canceled: context.Canceled} {
		err := FromGRPC(status.Error(code, "context deadline exceeded"))
		if !errors.Is(err, want) {
			t.Errorf("%v: errors.Is(err, %v) is false after FromGRPC", code, want)
		}
		for _, k := range kinds {
			if errors.Is(err, k.err) {
				t.Errorf("%v: wraps %v too", code, k.err)
			}
		}
		if err.Error() != "context deadline exceeded" {
			t.Errorf("%v: message %q", code, err.Error())
		}
		if status.Code(err) != code || Code(err) != code || status.Code(ToGRPC(err)) != code {
			t.Errorf("%v: code lost: status.Code %v, Code %v, ToGRPC %v", code, status.Code(err), Code(err), status.Code(ToGRPC(err)))
		}
		if Code(want) != code || status.Code(ToGRPC(want)) != code {
			t.Errorf("%v: the context error itself maps to %v / %v", code, Code(want), status.Code(ToGRPC(want)))
		}
	}
	// Other codes without a sentinel pass through unchanged.
	internal := status.Error(codes.Internal, "boom")
	if FromGRPC(internal) != internal {
		t.Error("an Internal status was changed")
	}
	plain := errors.New("not a status")
	if FromGRPC(plain) != plain {
		t.Error("a non-status error was changed")
	}
}
