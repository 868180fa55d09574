package volume_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/simtest"
)

// answerHost is a volume.Host whose VolumeAt answers err; nothing else is
// called.
type answerHost struct {
	volume.Host
	err error
}

func (h answerHost) VolumeAt(context.Context, string) (string, error) { return "", h.err }

// TestNotMountedIsWordedForDrivers: whatever a backend says when nothing
// is mounted at a path (the Windows backend "not a mounted folder", the
// Linux backend "not a mount point"), GetVolumeIDFromTargetPath answers
// NotFound with the phrase aws-ebs-csi-driver matches to mean "not
// mounted" (kubernetes-sigs/aws-ebs-csi-driver @ 429e202e
// pkg/mounter/mount_windows.go handleGetDeviceNameFromMountError), keeping
// the backend's detail. Other errors pass unchanged.
func TestNotMountedIsWordedForDrivers(t *testing.T) {
	for _, tc := range []struct {
		style      hostpath.Style
		root, path string
	}{
		{hostpath.Windows, kubelet, kubelet + `\plugins\x\globalmount`},
		{hostpath.POSIX, "/var/lib/kubelet", "/var/lib/kubelet/plugins/x/globalmount"},
	} {
		paths, err := hostpath.NewPolicy(tc.style, []string{tc.root})
		simtest.Must(t, err)
		detail := "it is not a mount point (backend detail)"
		s := volume.NewService(answerHost{err: errdefs.Errorf(errdefs.ErrNotFound, "%s", detail)}, paths)
		_, err = s.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: tc.path})
		simtest.WantKind(t, err, errdefs.ErrNotFound)
		for _, want := range []string{"because it does not exist", detail, fmt.Sprintf("%q", tc.path)} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%v: answer %q lacks %q", tc.style, err, want)
			}
		}
		if n := strings.Count(err.Error(), errdefs.ErrNotFound.Error()); n != 1 {
			t.Errorf("%v: answer %q says %q %d times", tc.style, err, errdefs.ErrNotFound, n)
		}

		other := errdefs.Errorf(errdefs.ErrFailedPrecondition, "disk 3 is offline")
		s = volume.NewService(answerHost{err: other}, paths)
		_, err = s.GetVolumeIDFromTargetPath(ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: tc.path})
		if !errors.Is(err, errdefs.ErrFailedPrecondition) || strings.Contains(err.Error(), "because it does not exist") {
			t.Errorf("%v: a failure that is not \"not found\" became %q", tc.style, err)
		}
	}
}
