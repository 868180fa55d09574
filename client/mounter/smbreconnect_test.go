package mounter_test

import (
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/client/mounter"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
)

// TestSMBMountRecreatesDisconnectedMapping: a share's global mapping that
// went Disconnected (the server dropped the session; after a node reboot)
// is removed and re-created with the credentials the re-stage passes, as
// csi-driver-smb's HostProcess mounter does before mapping
// (kubernetes-csi/csi-driver-smb @ 95c69680
// pkg/mounter/safe_mounter_host_process_windows.go: IsSmbMapped reads
// Get-SmbGlobalMapping's Status, anything but OK is mapped anew), and the
// link at the staging path then reaches the share again. The proxy's
// NewSmbGlobalMapping does the status check and the re-creation; the
// mounter passes the stage through to it even when its link is already in
// place. Simulated host, both modes.
func TestSMBMountRecreatesDisconnectedMapping(t *testing.T) {
	modes(t, func(t *testing.T, node groups.Node, sim *simulated.Host) {
		ctx := t.Context()
		m := mounter.New(node, mounter.Options{SMBStateDir: t.TempDir()})
		target := podVols + `\smb-1\mount`
		creds := mounter.SMBCredentials{Username: smbUser, Password: smbPass}
		if err := m.SMBMount(ctx, share+`\pvc-1`, target, creds); err != nil {
			t.Fatal(err)
		}
		if err := sim.WriteFile(share+`\pvc-1\data`, []byte("on the share")); err != nil {
			t.Fatal(err)
		}
		if err := sim.DisconnectSMB(share); err != nil {
			t.Fatal(err)
		}
		if got := sim.SMBMappings(); len(got) != 1 || got[0].Status != simulated.SMBDisconnected {
			t.Fatalf("mappings after DisconnectSMB: %+v, want one Disconnected", got)
		}
		if err := m.SMBMount(ctx, share+`\pvc-1`, target, creds); err != nil {
			t.Fatalf("re-stage over a Disconnected mapping: %v", err)
		}
		got := sim.SMBMappings()
		if len(got) != 1 || got[0].Status != simulated.SMBOK {
			t.Fatalf("mappings after the re-stage: %+v, want one OK", got)
		}
		if data, err := sim.ReadFile(target + `\data`); err != nil || string(data) != "on the share" {
			t.Fatalf("read through the staging link after the re-stage: %q, %v", data, err)
		}
	})
}
