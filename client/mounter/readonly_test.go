package mounter_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/client/mounter"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/inprocess"
)

// TestClearDiskReadOnly: in library mode a disk that came back online
// read-only is staged, then cleared once; a node whose disk group does not
// have the calls (the client, through the daemon) gets ErrUnimplemented
// with the daemon flag named.
func TestClearDiskReadOnly(t *testing.T) {
	ctx := t.Context()
	n, err := inprocess.New(ctx, inprocess.Options{Host: inprocess.HostSimulated, KubeletPath: kubelet,
		SimDisks: []string{"size=1GiB,number=9,offline,readonly"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	m := mounter.New(n, mounter.Options{})
	if _, err := m.FormatAndMount(ctx, 9, kubelet+`\plugins\ro\globalmount`); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		was, err := m.ClearDiskReadOnly(ctx, 9)
		if err != nil || was != want {
			t.Fatalf("ClearDiskReadOnly #%d = %v, %v; want %v", i+1, was, err, want)
		}
	}
	_, err = mounter.New(noReadOnly{n}, mounter.Options{}).ClearDiskReadOnly(ctx, 9)
	if !errors.Is(err, errdefs.ErrUnimplemented) || !strings.Contains(err.Error(), "--clear-read-only-on-online") {
		t.Fatalf("through a node without the calls: %v", err)
	}
}

// noReadOnly is a node whose disk group answers the read-only calls as
// the client does: no wire version has them.
type noReadOnly struct{ groups.Node }

func (n noReadOnly) Disk() disk.Interface { return noReadOnlyDisk{n.Node.Disk()} }

type noReadOnlyDisk struct{ disk.Interface }

func (noReadOnlyDisk) GetDiskReadOnly(context.Context, *disk.GetDiskReadOnlyRequest) (*disk.GetDiskReadOnlyResponse, error) {
	return nil, errdefs.Errorf(errdefs.ErrUnimplemented, "disk GetDiskReadOnly: no such call")
}
