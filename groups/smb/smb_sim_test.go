package smb_test

import (
	"context"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/simtest"
)

var ctx = context.Background()

const (
	kubelet  = `C:\var\lib\kubelet`
	password = "Correct-Horse-9"
)

func simServices(t *testing.T) (*smb.Service, *filesystem.Service, *simulated.Host) {
	t.Helper()
	cfg := simulated.DefaultConfig(nil)
	cfg.SMBShares = []simulated.SMBShare{
		{Path: `\\files\vols`, Username: `CORP\csi`, Password: password, Dirs: []string{"pvc-1", "pvc-2"}},
		{Path: `\\files\home`, Username: `CORP\bob`, Password: password},
	}
	h := simtest.Node(t, cfg)
	paths := simtest.Paths(t, h)
	simtest.Must(t, h.MkdirAll(kubelet+`\plugins\smb`))
	return smb.NewService(h.SMB(), paths), filesystem.NewService(h.Filesystem(), paths), h
}

// TestSimStageTwoVolumesOnOneShare follows csi-driver-smb: two PVs on one
// share use one mapping, each with its own link.
func TestSimStageTwoVolumesOnOneShare(t *testing.T) {
	s, fs, h := simServices(t)
	for _, pv := range []string{"pvc-1", "pvc-2"} {
		local := kubelet + `\plugins\smb\` + pv
		// Forward slashes and another case: the same share.
		_, err := s.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{
			RemotePath: "//FILES/vols/" + pv, LocalPath: local, Username: `CORP\csi`, Password: password})
		simtest.Must(t, err)
		r, err := fs.IsSymlink(ctx, &filesystem.IsSymlinkRequest{Path: local})
		if err != nil || !r.IsSymlink {
			t.Errorf("IsSymlink(%s) = %+v, %v", local, r, err)
		}
	}
	if m := h.SMBMappings(); len(m) != 1 || m[0].Share != `\\files\vols` {
		t.Errorf("mappings = %+v; want one for the share root", m)
	}
	// Removing by a path below the share removes the share's mapping.
	_, err := s.RemoveSmbGlobalMapping(ctx, &smb.RemoveSmbGlobalMappingRequest{RemotePath: `\\files\vols\pvc-1`})
	simtest.Must(t, err)
	_, err = s.RemoveSmbGlobalMapping(ctx, &smb.RemoveSmbGlobalMappingRequest{RemotePath: `\\files\vols`})
	simtest.WantKind(t, err, errdefs.ErrNotFound)
	_, err = fs.Rmdir(ctx, &filesystem.RmdirRequest{Path: kubelet + `\plugins\smb\pvc-1`, Force: true})
	simtest.Must(t, err)
}

func TestSimSmbErrors(t *testing.T) {
	s, _, h := simServices(t)
	_, err := s.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{
		RemotePath: `\\files\vols`, Username: `CORP\csi`, Password: "wrong" + password})
	simtest.WantKind(t, err, errdefs.ErrPermissionDenied)
	if strings.Contains(err.Error(), password) {
		t.Errorf("the error %q contains the password", err)
	}
	_, err = s.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{RemotePath: `\\files\nope`, Username: "u", Password: "p"})
	simtest.WantKind(t, err, errdefs.ErrNotFound)
	_, err = s.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{
		RemotePath: `\\files\vols`, LocalPath: `C:\var\lib\kubelet-x\smb`, Username: `CORP\csi`, Password: password})
	simtest.WantKind(t, err, errdefs.ErrPermissionDenied)
	_, err = s.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{RemotePath: `C:\not\unc`})
	simtest.WantKind(t, err, errdefs.ErrInvalidArgument)

	// Error 1219: another user on the same server.
	_, err = s.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{RemotePath: `\\files\vols`, Username: `CORP\csi`, Password: password})
	simtest.Must(t, err)
	_, err = s.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{RemotePath: `\\files\home`, Username: `CORP\bob`, Password: password})
	simtest.WantKind(t, err, errdefs.ErrAlreadyExists)
	if !strings.Contains(err.Error(), "1219") {
		t.Errorf("the error %q does not name Windows error 1219", err)
	}
	// A stale mapping is re-created.
	simtest.Must(t, h.DisconnectSMB(`\\files\vols`))
	_, err = s.NewSmbGlobalMapping(ctx, &smb.NewSmbGlobalMappingRequest{RemotePath: `\\files\vols`, Username: `CORP\csi`, Password: password})
	simtest.Must(t, err)
	if m := h.SMBMappings(); m[0].Status != simulated.SMBOK {
		t.Errorf("mapping status = %s", m[0].Status)
	}
}
