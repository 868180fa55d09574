package mounter_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/client/mounter"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
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

// TestMounterReconcilesDisconnectedMappingsBetweenStages: a staged share
// whose global mapping goes Disconnected while no stage of it runs (the
// node rebooted, the server dropped the session) is re-created with the
// credentials the driver's Options.SMBCredentials gives: on the next
// publish of a volume (Mount), on the next stage of another share
// (SMBMount), and by an explicit ReconcileSMBMappings. A share the
// callback does not know is left as it is; without the callback nothing
// is re-created. Simulated host, both modes.
func TestMounterReconcilesDisconnectedMappingsBetweenStages(t *testing.T) {
	const other = `\\otherserver\data`
	withOther := func(cfg *simulated.Config) {
		cfg.SMBShares = append(cfg.SMBShares, simulated.SMBShare{Path: other, Username: smbUser, Password: smbPass, Dirs: []string{"pvc-9"}})
	}
	staging := kubelet + `\plugins\kubernetes.io\csi\smb.csi.k8s.io\vol1\globalmount`
	creds := mounter.SMBCredentials{Username: smbUser, Password: smbPass}
	var asked []string
	known := func(_ context.Context, s string) (mounter.SMBCredentials, bool, error) {
		asked = append(asked, s)
		if strings.EqualFold(s, share) {
			return creds, true, nil
		}
		return mounter.SMBCredentials{}, false, nil
	}
	for _, tc := range []struct {
		name  string
		creds func(context.Context, string) (mounter.SMBCredentials, bool, error)
		next  func(t *testing.T, m *mounter.Mounter) error
		want  simulated.SMBStatus
	}{
		{"publish", known, func(t *testing.T, m *mounter.Mounter) error {
			return m.Mount(staging, podVols+`\smb-pv\mount`, "", nil)
		}, simulated.SMBOK},
		{"stage of another share", known, func(t *testing.T, m *mounter.Mounter) error {
			return m.SMBMount(t.Context(), other+`\pvc-9`, kubelet+`\plugins\kubernetes.io\csi\smb.csi.k8s.io\vol9\globalmount`, creds)
		}, simulated.SMBOK},
		{"explicit", known, func(t *testing.T, m *mounter.Mounter) error {
			got, err := m.ReconcileSMBMappings(t.Context())
			if err == nil && (len(got) != 1 || !strings.EqualFold(got[0].RemotePath, share) || got[0].Action != smbmappings.ActionRecreated) {
				t.Errorf("ReconcileSMBMappings = %+v, want %s re-created", got, share)
			}
			return err
		}, simulated.SMBOK},
		{"no callback", nil, func(t *testing.T, m *mounter.Mounter) error {
			return m.Mount(staging, podVols+`\smb-pv\mount`, "", nil)
		}, simulated.SMBDisconnected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			modesWith(t, withOther, func(t *testing.T, node groups.Node, sim *simulated.Host) {
				ctx := t.Context()
				m := mounter.New(node, mounter.Options{SMBStateDir: t.TempDir(), SMBCredentials: tc.creds})
				if err := m.SMBMount(ctx, share+`\pvc-1`, staging, creds); err != nil {
					t.Fatal(err)
				}
				if err := sim.DisconnectSMB(share); err != nil {
					t.Fatal(err)
				}
				if err := tc.next(t, m); err != nil {
					t.Fatal(err)
				}
				if st := statusOf(sim, share); st != tc.want {
					t.Errorf("mapping of %s after the %s: %v, want %v", share, tc.name, st, tc.want)
				}
				if tc.want == simulated.SMBOK {
					if err := sim.WriteFile(share+`\pvc-1\data`, []byte("x")); err != nil {
						t.Fatal(err)
					}
					if _, err := sim.ReadFile(staging + `\data`); err != nil {
						t.Errorf("read through the staging link after the re-creation: %v", err)
					}
				}
			})
		})
	}
	if !slices.ContainsFunc(asked, func(s string) bool { return strings.EqualFold(s, share) }) {
		t.Errorf("the credentials callback was asked for %v, never for %s", asked, share)
	}
}

// statusOf returns the simulated host's status of share's mapping, "" for
// none.
func statusOf(sim *simulated.Host, share string) simulated.SMBStatus {
	for _, m := range sim.SMBMappings() {
		if strings.EqualFold(m.Share, share) {
			return m.Status
		}
	}
	return ""
}
