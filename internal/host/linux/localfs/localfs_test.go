package localfs

import (
	"errors"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

func TestNewRejects(t *testing.T) {
	for _, dirs := range [][]string{nil, {"relative/dir"}, {"/"}, {"/var/lib/kubelet", "//"}, {"/a/../b"}} {
		if _, err := New(dirs); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("New(%q) = %v, want ErrInvalidArgument", dirs, err)
		}
	}
}
