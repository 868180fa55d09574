//go:build linux

package objecthost

import (
	"errors"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blockdev"
)

// The Linux block backend is the one NewHostObjects asks where a volume
// is mounted; a rename of its method would silently leave Linux failing
// closed again.
var _ VolumeMounter = (*blockdev.Backend)(nil)

// TestLinuxHostObjectsAskTheBlockBackend: on the Linux host, the object
// answers come from the block backend: a volume that does not exist is
// NotFound (the call then fails as such), not the Unimplemented of a host
// that cannot tell, which refuses every confined call. The ID is no GUID,
// so no disk of the machine is read.
func TestLinuxHostObjectsAskTheBlockBackend(t *testing.T) {
	// The block backend as package hostset builds it for the Linux host
	// (hostset imports this package, so its test cannot use hostset).
	b, err := blockdev.New(blockdev.Config{MountRoots: []string{t.TempDir()}, HostMountTable: "none"})
	if err != nil {
		t.Fatal(err)
	}
	o := NewHostObjects(b.Volume(), b.Disk(), nil)
	if o.Mounts == nil {
		t.Fatal("the Linux host's object answers cannot tell where a volume is mounted")
	}
	_, err = o.VolumeMounts(t.Context(), "not-a-volume")
	if !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("VolumeMounts of no volume = %v, want NotFound from the block backend", err)
	}
}
