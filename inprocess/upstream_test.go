package inprocess

import (
	"errors"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
)

// TestUpstreamV2Names: code written against upstream's v2 library
// (pkg/smb, pkg/iscsi, pkg/system) compiles against the groups with its
// names and calls the same methods through the gate.
func TestUpstreamV2Names(t *testing.T) {
	n := simNode(t, Options{PolicyData: []byte(onlyBIOS)})
	s := &smb.SMB{Interface: n.SMB()}
	_, err := s.RemoveSMBGlobalMapping(t.Context(), &smb.RemoveSMBGlobalMappingRequest{RemotePath: `\\server\share`})
	if !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("RemoveSMBGlobalMapping: %v; want the policy's denial of smb.RemoveSmbGlobalMapping", err)
	}
	_, err = s.NewSMBGlobalMapping(t.Context(), &smb.NewSMBGlobalMappingRequest{RemotePath: `\\server\share`})
	if !errors.Is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("NewSMBGlobalMapping: %v; want the policy's denial", err)
	}
	if iscsi.ONE_WAY_CHAP != iscsi.AuthOneWayCHAP || system.SERVICE_STATUS_RUNNING != system.StatusRunning || system.START_TYPE_DISABLED != system.StartDisabled {
		t.Error("upstream's constants differ from ours")
	}
}
