package wirecompat

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	diskv1 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1"
	"google.golang.org/grpc"
)

// untypedDisk answers like upstream csi-proxy: a plain Go error, which
// grpc-go sends as codes.Unknown.
type untypedDisk struct{ diskv1.UnimplementedDiskServer }

func (*untypedDisk) ListDiskIDs(context.Context, *diskv1.ListDiskIDsRequest) (*diskv1.ListDiskIDsResponse, error) {
	return nil, errors.New("exit status 1")
}

// TestRecorderCatchesUnknown proves the call recorder that guards the wire
// tests notices an Unknown error and a method that never succeeded, using
// an in-process server built from upstream's stubs.
func TestRecorderCatchesUnknown(t *testing.T) {
	dir, err := os.MkdirTemp("", "wcrec")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	diskv1.RegisterDiskServer(srv, &untypedDisk{})
	go srv.Serve(l)
	defer srv.Stop()

	r := newRecorder()
	cc, err := dialRecorded(sock, r)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if _, err := diskv1.NewDiskClient(cc).ListDiskIDs(ctx(t), &diskv1.ListDiskIDsRequest{}); err == nil {
		t.Fatal("ListDiskIDs succeeded")
	}
	if len(r.unknown) != 1 || !strings.Contains(r.unknown[0], "/v1.Disk/ListDiskIDs") {
		t.Errorf("recorder.unknown = %q, want the ListDiskIDs call", r.unknown)
	}
	msg, _ := r.problems(true)
	for _, want := range []string{"code Unknown: /v1.Disk/ListDiskIDs", "/v1.Disk/ListDiskIDs (disk/v1) never called successfully", "/v1alpha1.System/GetService (system/v1alpha1) never called successfully"} {
		if !strings.Contains(msg, want) {
			t.Errorf("problems() lacks %q:\n%s", want, msg)
		}
	}
}
