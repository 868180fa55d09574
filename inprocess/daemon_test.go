//go:build !windows

package inprocess

import (
	"errors"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonserver"
)

// TestValidationAsDaemon: a bad request is refused with the same code and
// the same message in-process as through the daemon's v1 endpoints, since
// both reach the same group Service.
func TestValidationAsDaemon(t *testing.T) {
	// The daemon's server, wired through hostset as the daemon wires it.
	dir := daemonserver.Start(t, daemonserver.Options{
		Host: hostset.Config{Host: hostset.Simulated, WorkingDirs: []string{kubelet}},
		APIs: "filesystem-v1,volume-v1",
	}).SocketDir
	conn := func(name string) *grpc.ClientConn {
		c, err := grpc.NewClient("unix://"+filepath.Join(dir, name+".sock"), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	fsWire := filesystemv1.NewFilesystemClient(conn("csi-proxy-filesystem-v1"))
	volWire := volumev1.NewVolumeClient(conn("csi-proxy-volume-v1"))
	n := simNode(t, Options{})
	ctx := t.Context()

	cases := []struct {
		name       string
		wire, lib  error
		wantKindOf error
	}{
		{name: "traversal", wantKindOf: errdefs.ErrInvalidArgument},
		{name: "outside", wantKindOf: errdefs.ErrPermissionDenied},
		{name: "working dir itself", wantKindOf: errdefs.ErrPermissionDenied},
		{name: "bad volume ID", wantKindOf: errdefs.ErrInvalidArgument},
	}
	bad := kubelet + `\a\..\..\..\Windows`
	_, cases[0].wire = fsWire.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: bad})
	_, cases[0].lib = n.Filesystem().Mkdir(ctx, &filesystem.MkdirRequest{Path: bad})
	_, cases[1].wire = fsWire.CreateSymlink(ctx, &filesystemv1.CreateSymlinkRequest{SourcePath: kubelet + `\x`, TargetPath: `C:\Windows\x`})
	_, cases[1].lib = n.Filesystem().CreateSymlink(ctx, &filesystem.CreateSymlinkRequest{SourcePath: kubelet + `\x`, TargetPath: `C:\Windows\x`})
	_, cases[2].wire = fsWire.Rmdir(ctx, &filesystemv1.RmdirRequest{Path: kubelet, Force: true})
	_, cases[2].lib = n.Filesystem().Rmdir(ctx, &filesystem.RmdirRequest{Path: kubelet, Force: true})
	_, cases[3].wire = volWire.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: "not-a-volume"})
	_, cases[3].lib = n.Volume().FormatVolume(ctx, &volume.FormatVolumeRequest{VolumeID: "not-a-volume"})
	for _, c := range cases {
		if !errors.Is(c.lib, c.wantKindOf) {
			t.Errorf("%s: in-process %v, want %v", c.name, c.lib, c.wantKindOf)
			continue
		}
		st := status.Convert(c.wire)
		if st.Code() != errgrpc.Code(c.lib) || st.Message() != c.lib.Error() {
			t.Errorf("%s: daemon %v %q, in-process %v %q", c.name, st.Code(), st.Message(), errgrpc.Code(c.lib), c.lib.Error())
		}
	}
}
