//go:build linux

package objecthost

import (
	"errors"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blockdev"
	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
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
	set, err := hostset.New(hostset.Config{Host: hostset.Linux, WorkingDirs: []string{t.TempDir()}, LinuxHostMountTable: "none"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	o := NewHostObjects(set)
	if o.Mounts == nil {
		t.Fatal("the Linux host's object answers cannot tell where a volume is mounted")
	}
	_, err = o.VolumeMounts(t.Context(), "not-a-volume")
	if !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("VolumeMounts of no volume = %v, want NotFound from the block backend", err)
	}
}
