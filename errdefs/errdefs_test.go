package errdefs

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

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
	plain := errors.New("not a status")
	if FromGRPC(plain) != plain {
		t.Error("a non-status error was changed")
	}
}
