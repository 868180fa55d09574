package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
)

// TestSmbLsGcReconcile follows an operator on a simulated node after a
// reboot: smb ls shows the Disconnected mapping with its link and the
// leaked one without; smb gc without --apply removes nothing; with
// --apply it removes the leaked one only; smb reconcile re-creates the
// one the link uses, reading the password from stdin and printing it
// nowhere.
func TestSmbLsGcReconcile(t *testing.T) {
	const password = "cli-Secret-2026"
	cfg := simulated.DefaultConfig(nil)
	cfg.SMBShares = []simulated.SMBShare{
		{Path: `\\fs\vols`, Username: `DOM\u`, Password: password, Dirs: []string{"pvc-1"}},
		{Path: `\\fs\leaked`, Username: `DOM\u`, Password: password},
	}
	n := newSimNode(t, cfg)
	if err := n.host.MkdirAll(simulated.DefaultKubeletDir + `\plugins\smb`); err != nil {
		t.Fatal(err)
	}
	link := simulated.DefaultKubeletDir + `\plugins\smb\pv1`
	// The leaked mapping is an hour old; the staged one new.
	n.host.SetClock(func() time.Time { return time.Now().Add(-time.Hour) })
	if _, errOut, code := runApp(t, n.opener(), password+"\n", false, "smb", "map", `\\fs\leaked`, "--user", `DOM\u`, "--password-file", "-", "--yes"); code != exitOK {
		t.Fatalf("map leaked: exit %d: %s", code, errOut)
	}
	n.host.SetClock(nil)
	if _, errOut, code := runApp(t, n.opener(), password+"\n", false, "smb", "map", `\\fs\vols\pvc-1`, link, "--user", `DOM\u`, "--password-file", "-", "--yes"); code != exitOK {
		t.Fatalf("map vols: exit %d: %s", code, errOut)
	}
	n.host.RebootSMB()

	out, errOut, code := runApp(t, n.opener(), "", false, "smb", "ls", "-o", "json")
	if code != exitOK {
		t.Fatalf("smb ls: exit %d: %s", code, errOut)
	}
	var ls smbListOutput
	if err := json.Unmarshal([]byte(out), &ls); err != nil {
		t.Fatal(err)
	}
	if len(ls.Mappings) != 2 || ls.Mappings[0].RemotePath != `\\fs\leaked` || len(ls.Mappings[0].Links) != 0 ||
		ls.Mappings[1].Status != "Disconnected" || len(ls.Mappings[1].Links) != 1 || ls.Mappings[1].Links[0] != link {
		t.Errorf("smb ls = %+v; want the leaked mapping without links and the Disconnected one with %s", ls, link)
	}
	table, _, _ := runApp(t, n.opener(), "", false, "smb", "ls")
	if !strings.HasPrefix(table, "REMOTE") || !strings.Contains(table, link) {
		t.Errorf("smb ls table:\n%s", table)
	}

	// A dry run asks nothing and removes nothing.
	out, errOut, code = runApp(t, n.opener(), "", false, "smb", "gc")
	if code != exitOK || !strings.Contains(out, `would remove`) || !strings.Contains(out, `\\fs\leaked`) || len(n.host.SMBMappings()) != 2 {
		t.Fatalf("smb gc (dry run): exit %d, stdout %q, stderr %q, mappings %+v", code, out, errOut, n.host.SMBMappings())
	}
	// --apply without --yes and without a terminal declines.
	if _, _, code := runApp(t, n.opener(), "", false, "smb", "gc", "--apply"); code != exitDeclined || len(n.host.SMBMappings()) != 2 {
		t.Fatalf("smb gc --apply without --yes: exit %d, mappings %+v", code, n.host.SMBMappings())
	}
	if _, errOut, code := runApp(t, n.opener(), "", false, "smb", "gc", "--apply", "--yes"); code != exitOK {
		t.Fatalf("smb gc --apply: exit %d: %s", code, errOut)
	}
	if m := n.host.SMBMappings(); len(m) != 1 || m[0].Share != `\\fs\vols` {
		t.Errorf("after gc the mappings are %+v; want only \\\\fs\\vols", m)
	}

	out, errOut, code = runApp(t, n.opener(), password+"\n", false, "smb", "reconcile", `\\fs\vols`, "--user", `DOM\u`, "--password-file", "-", "--yes", "-o", "json")
	if code != exitOK || !strings.Contains(out, `"action": "Recreated"`) || strings.Contains(out+errOut, password) {
		t.Fatalf("smb reconcile: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if m := n.host.SMBMappings(); len(m) != 1 || m[0].Status != simulated.SMBOK {
		t.Errorf("after reconcile the mappings are %+v; want \\\\fs\\vols OK", m)
	}
	if _, _, code := runApp(t, n.opener(), "", false, "smb", "gc", "--grace", "0s"); code != exitUsage {
		t.Errorf("smb gc --grace 0s: exit %d, want %d", code, exitUsage)
	}
}
