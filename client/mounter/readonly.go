package mounter

import (
	"context"
	"errors"
	"fmt"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
)

// ClearDiskReadOnly clears the read-only attribute of a disk that has it
// and tells whether it had: a disk re-attached to a VM can come back
// online read-only, and the volume then mounts but every write fails
// (kubernetes-csi/csi-proxy#437, vsphere-csi-driver#1631). Call it after
// FormatAndMount, or before, on a disk a driver found read-only. It works
// in library mode; through the daemon no wire version has the calls
// (errdefs.ErrUnimplemented), and the daemon's --clear-read-only-on-online
// does the same within SetDiskState, which FormatAndMount calls.
func (m *Mounter) ClearDiskReadOnly(ctx context.Context, diskNumber uint32) (bool, error) {
	ro, err := m.node.Disk().GetDiskReadOnly(ctx, &disk.GetDiskReadOnlyRequest{DiskNumber: diskNumber})
	if errors.Is(err, errdefs.ErrUnimplemented) {
		return false, fmt.Errorf("read-only attribute of disk %d: %w (through the daemon, start it with --clear-read-only-on-online instead)", diskNumber, err)
	}
	if err != nil {
		return false, fmt.Errorf("read-only attribute of disk %d: %w", diskNumber, err)
	}
	if !ro.IsReadOnly {
		return false, nil
	}
	if _, err := m.node.Disk().SetDiskReadOnly(ctx, &disk.SetDiskReadOnlyRequest{DiskNumber: diskNumber, IsReadOnly: false}); err != nil {
		return true, fmt.Errorf("clear the read-only attribute of disk %d: %w", diskNumber, err)
	}
	return true, nil
}
