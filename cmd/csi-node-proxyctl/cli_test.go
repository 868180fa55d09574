package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
	"github.com/csi-node-proxy/csi-node-proxy/groups"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smbmappings"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/simtest"
)

// simNode is the six group Services on a simulated host, as a groups.Node
// that outlives each CLI run (Close does nothing), so a test can run
// several commands against one world and inspect it with the host's
// helpers.
type simNode struct {
	host *simulated.Host
	d    disk.Interface
	v    volume.Interface
	f    filesystem.Interface
	s    smb.Interface
	m    smbmappings.Interface
	i    iscsi.Interface
	sys  system.Interface
}

func (n *simNode) Disk() disk.Interface             { return n.d }
func (n *simNode) Volume() volume.Interface         { return n.v }
func (n *simNode) Filesystem() filesystem.Interface { return n.f }
func (n *simNode) SMB() smb.Interface               { return n.s }
func (n *simNode) ISCSI() iscsi.Interface           { return n.i }
func (n *simNode) System() system.Interface         { return n.sys }
func (n *simNode) Close() error                     { return nil }

// SMBMappings is the SMB mappings group, as client.Client and
// inprocess.Node have it.
func (n *simNode) SMBMappings() smbmappings.Interface { return n.m }

// newSimNode builds a simNode on cfg.
func newSimNode(t *testing.T, cfg simulated.Config, allowed ...string) *simNode {
	t.Helper()
	h := simtest.Node(t, cfg)
	paths := simtest.Paths(t, h)
	shares := smb.NewService(h.SMB(), paths)
	return &simNode{
		host: h,
		m:    smbmappings.NewService(h.SMBMappingsGroup(), shares, paths),
		d:    disk.NewService(h.Disk()),
		v:    volume.NewService(h.Volume(), paths),
		f:    filesystem.NewService(h.Filesystem(), paths),
		s:    shares,
		i:    iscsi.NewService(h.ISCSI()),
		sys:  system.NewService(h.System(), allowed),
	}
}

// opener returns an opener that hands out n.
func (n *simNode) opener() opener {
	return func(context.Context, *globals, string) (groups.Node, error) { return n, nil }
}

// diskOnline reads disk d's state from the simulated host itself, not
// through the CLI.
func (n *simNode) diskOnline(t *testing.T, d uint32) bool {
	t.Helper()
	for _, di := range n.host.ListDisks() {
		if di.Number == d {
			return di.Online
		}
	}
	t.Fatalf("disk %d is not attached", d)
	return false
}

// TestDiskListRendering: the table and the JSON of disk list carry the
// simulated node's real values, sorted by disk number, with a "-" (null)
// for what the host does not report.
func TestDiskListRendering(t *testing.T) {
	cfg := simulated.DefaultConfig(nil)
	cfg.Disks = append(cfg.Disks, simulated.DiskSpec{Size: 3 << 30, Serial: "NO-LOCATION", Offline: true})
	n := newSimNode(t, cfg)

	out, errOut, code := runApp(t, n.opener(), "", false, "disk", "list")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	want := [][]string{
		{"DISK", "LOCATION", "PAGE83", "SERIAL", "SIZE", "BYTES", "ONLINE"},
		{"0", "0::0:0", "60022480000000000000000000000000", "SIM-SYSTEM-0000", "128", "GiB", "137438953472", "yes"},
		{"1", "1::0:0", "60022480000000000000000000000001", "SIM-DATA-0001", "1", "GiB", "1073741824", "yes"},
		{"2", "1::0:1", "60022480000000000000000000000002", "SIM-DATA-0002", "2", "GiB", "2147483648", "yes"},
		{"3", "-", "-", "NO-LOCATION", "3", "GiB", "3221225472", "no"},
	}
	if len(lines) != len(want) {
		t.Fatalf("table has %d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("line %d: %q, want %q", i, got, w)
		}
	}
	// Columns are aligned: every row's BYTES starts where the header's does.
	col := strings.Index(lines[0], "BYTES")
	for _, l := range lines[1:] {
		if l[col-1] != ' ' || l[col] == ' ' {
			t.Errorf("row not aligned with the header's BYTES column:\n%s\n%s", lines[0], l)
		}
	}

	out, _, code = runApp(t, n.opener(), "", false, "disk", "list", "-o", "json")
	if code != exitOK {
		t.Fatalf("-o json: exit %d", code)
	}
	var doc struct {
		Disks []struct {
			DiskNumber   uint32 `json:"disk_number"`
			Location     *struct{ Adapter, Bus, Target, LUNID string }
			SerialNumber string `json:"serial_number"`
			SizeBytes    int64  `json:"size_bytes"`
			Online       bool   `json:"online"`
		} `json:"disks"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	if len(doc.Disks) != 4 || doc.Disks[3].DiskNumber != 3 || doc.Disks[3].Location != nil ||
		doc.Disks[3].Online || doc.Disks[3].SizeBytes != 3<<30 || doc.Disks[1].SerialNumber != "SIM-DATA-0001" {
		t.Errorf("JSON does not match the node: %+v", doc.Disks)
	}
	if !strings.Contains(out, `"location": null`) {
		t.Errorf("a disk without a location should have \"location\": null:\n%s", out)
	}
}

// TestConfirmation: a mutating command on a terminal asks and acts only on
// "y"; without a terminal it refuses unless --yes; the node is unchanged
// whenever it does not proceed.
func TestConfirmation(t *testing.T) {
	n := newSimNode(t, simulated.DefaultConfig(nil))
	for _, tc := range []struct {
		name     string
		stdin    string
		terminal bool
		args     []string
		code     int
		online   bool
	}{
		{"terminal, no", "n\n", true, nil, exitDeclined, true},
		{"terminal, empty answer", "\n", true, nil, exitDeclined, true},
		{"terminal, end of input", "", true, nil, exitDeclined, true},
		{"not a terminal", "y\n", false, nil, exitDeclined, true},
		{"terminal, yes", "yes\n", true, nil, exitOK, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !n.diskOnline(t, 1) {
				if _, err := n.d.SetDiskState(context.Background(), &disk.SetDiskStateRequest{DiskNumber: 1, IsOnline: true}); err != nil {
					t.Fatal(err)
				}
			}
			out, errOut, code := runApp(t, n.opener(), tc.stdin, tc.terminal, append([]string{"disk", "offline", "1"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, errOut)
			}
			if got := n.diskOnline(t, 1); got != tc.online {
				t.Errorf("disk 1 online = %v, want %v", got, tc.online)
			}
			if tc.terminal && !strings.Contains(errOut, "This will take disk 1 offline.\nProceed? [y/N] ") {
				t.Errorf("no prompt on stderr: %q", errOut)
			}
			if !tc.terminal && !strings.Contains(errOut, "pass --yes") {
				t.Errorf("the refusal does not say to pass --yes: %q", errOut)
			}
			if code == exitOK && out != "disk 1 is offline\n" {
				t.Errorf("stdout %q", out)
			}
			if code != exitOK && out != "" {
				t.Errorf("a declined command printed %q", out)
			}
		})
	}
	// --yes needs no terminal and no answer.
	if _, errOut, code := runApp(t, n.opener(), "", false, "disk", "online", "1", "--yes"); code != exitOK || errOut != "" || !n.diskOnline(t, 1) {
		t.Errorf("--yes: exit %d, stderr %q, online %v", code, errOut, n.diskOnline(t, 1))
	}
}

// TestSecretInput: a password typed on the terminal (echo off) and the
// confirmation after it are read from the same stdin, and the password
// reaches the host but none of the CLI's output.
func TestSecretInput(t *testing.T) {
	const password = "terminal-Secret-5150"
	cfg := simulated.DefaultConfig(nil)
	cfg.SMBShares = []simulated.SMBShare{{Path: `\\fs\share`, Username: `DOM\u`, Password: password}}
	n := newSimNode(t, cfg)

	var echoOffCalls, restores int
	a, stdout, stderr := testApp(password+"\ny\n", true, n.opener())
	a.echoOff = func() (func(), error) {
		echoOffCalls++
		return func() { restores++ }, nil
	}
	code := a.run([]string{"smb", "map", `\\fs\share`, "--user", `DOM\u`, "-o", "json"})
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if echoOffCalls != 1 || restores != 1 {
		t.Errorf("echo turned off %d times and restored %d times, want 1 and 1", echoOffCalls, restores)
	}
	if m := n.host.SMBMappings(); len(m) != 1 || m[0].Username != `DOM\u` {
		t.Errorf("mappings %+v, want the share mapped as DOM\\u", m)
	}
	for name, s := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String()} {
		if strings.Contains(s, password) {
			t.Errorf("%s shows the password: %q", name, s)
		}
	}
	if !strings.Contains(stderr.String(), `Password for DOM\u: `) || !strings.Contains(stderr.String(), "Proceed? [y/N]") {
		t.Errorf("stderr %q lacks the password prompt or the confirmation", stderr.String())
	}

	// A wrong password from stdin (no terminal, --yes) is the host's
	// permission denied, exit 4, and the message does not carry it either.
	// Unmapped first: an existing healthy mapping would be reused.
	if _, errOut, code := runApp(t, n.opener(), "", false, "smb", "unmap", `\\fs\share`, "--yes"); code != exitOK || len(n.host.SMBMappings()) != 0 {
		t.Fatalf("unmap: exit %d, stderr %q, mappings %+v", code, errOut, n.host.SMBMappings())
	}
	const wrong = "wrong-Secret-0000"
	_, errOut, code := runApp(t, n.opener(), wrong+"\n", false, "smb", "map", `\\fs\share\pvc`, "--user", `DOM\u`, "--password-file", "-", "--yes")
	if code != exitPermission || strings.Contains(errOut, wrong) {
		t.Errorf("wrong password: exit %d, stderr %q; want 4 without the password", code, errOut)
	}
}

// TestExitCodes: every kind of failure maps to its documented code, also
// when it arrives as a gRPC status the client passed through.
func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
	}{
		{nil, exitOK},
		{errors.New("host exploded"), exitFailure},
		{fmt.Errorf("disk 3: %w", errdefs.ErrFailedPrecondition), exitFailure},
		{fmt.Errorf("x: %w", errdefs.ErrAlreadyExists), exitFailure},
		{usagef("bad"), exitUsage},
		{fmt.Errorf("disk 9: %w", errdefs.ErrNotFound), exitNotFound},
		{errgrpc.FromGRPC(status.Error(codes.NotFound, "disk 9")), exitNotFound},
		{errgrpc.FromGRPC(status.Error(codes.PermissionDenied, "denied")), exitPermission},
		{&unavailableError{err: errors.New("dial")}, exitUnavailable},
		{errgrpc.FromGRPC(status.Error(codes.Unavailable, "audit log full")), exitUnavailable},
		{status.Error(codes.DeadlineExceeded, "slow"), exitUnavailable},
		{fmt.Errorf("call: %w", context.DeadlineExceeded), exitUnavailable},
		{errgrpc.FromGRPC(status.Error(codes.InvalidArgument, "bad path")), exitInvalid},
		{fmt.Errorf("x: %w", errDeclined), exitDeclined},
		{&statusError{code: exitNotFound, msg: "missing"}, exitNotFound},
	} {
		if got := exitCode(tc.err); got != tc.code {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.code)
		}
	}
	// Every code has a meaning for --help, and the meanings are distinct.
	seen := map[string]int{}
	for c := exitOK; c <= exitDeclined; c++ {
		m, ok := exitMeaning[c]
		if !ok || m == "" {
			t.Errorf("exit code %d has no meaning", c)
		}
		if other, dup := seen[m]; dup {
			t.Errorf("exit codes %d and %d share a meaning", other, c)
		}
		seen[m] = c
	}
}

// TestFsExistsExitCodes: "fs exists" exits 0 for a path that exists and 3
// for one that does not, printing the answer either way; a path the proxy
// refuses is 6 (malformed) or 4 (outside the working directories).
func TestFsExistsExitCodes(t *testing.T) {
	n := newSimNode(t, simulated.DefaultConfig(nil))
	for _, tc := range []struct {
		path   string
		code   int
		stdout string
	}{
		{`C:\var\lib\kubelet`, exitOK, `"exists": true`},
		{`C:\var\lib\kubelet\nothing`, exitNotFound, `"exists": false`},
		{`relative\path`, exitInvalid, ""},
		{`C:\Windows`, exitPermission, ""},
	} {
		out, errOut, code := runApp(t, n.opener(), "", false, "fs", "exists", tc.path, "-o", "json")
		if code != tc.code || !strings.Contains(out, tc.stdout) {
			t.Errorf("fs exists %s: exit %d, stdout %q, stderr %q; want %d and %q", tc.path, code, out, errOut, tc.code, tc.stdout)
		}
		if code != exitOK && !strings.HasPrefix(errOut, progName+": fs exists: ") {
			t.Errorf("fs exists %s: stderr %q lacks the command's prefix", tc.path, errOut)
		}
	}
}

// TestParsers: portals, sizes, disk numbers, human sizes and flags among
// arguments.
func TestParsers(t *testing.T) {
	for in, want := range map[string]iscsi.TargetPortal{
		"10.0.0.1":         {TargetAddress: "10.0.0.1"},
		"10.0.0.1:3261":    {TargetAddress: "10.0.0.1", TargetPort: 3261},
		"target.example":   {TargetAddress: "target.example"},
		"[fd00::1]:3262":   {TargetAddress: "fd00::1", TargetPort: 3262},
		"[fd00::1]":        {TargetAddress: "[fd00::1]"},
		"fd00::1":          {TargetAddress: "fd00::1"},
		"host.example:860": {TargetAddress: "host.example", TargetPort: 860},
	} {
		got, err := parsePortal(in)
		if err != nil || *got != want {
			t.Errorf("parsePortal(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "h:0", "h:x", "h:65536", "[fd00::1]:port"} {
		if _, err := parsePortal(bad); exitCode(err) != exitUsage {
			t.Errorf("parsePortal(%q): %v, want a usage error", bad, err)
		}
	}
	for in, want := range map[string]int64{"0": 0, "512": 512, "1KiB": 1024, "10GiB": 10 << 30, "2t": 2 << 40, "3 MiB": 3 << 20} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "GiB", "10GB", "-1", "99999999999TiB", "1.5GiB"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) succeeded", bad)
		}
	}
	for in, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 1 << 30: "1 GiB", 21472739328: "20 GiB", 92266496: "88 MiB", 128 << 30: "128 GiB"} {
		if got := humanSize(in); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", in, got, want)
		}
	}
	for _, bad := range []string{"-1", "4294967296", "x", ""} {
		if _, err := parseDiskNumber(bad); exitCode(err) != exitUsage {
			t.Errorf("parseDiskNumber(%q) = %v, want a usage error", bad, err)
		}
	}

	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	yes := fs.Bool("yes", false, "")
	dir := fs.String("dir", "", "")
	pos, err := parseInterspersed(fs, []string{"a", "--yes", "b", "--dir=x", "--", "--not-a-flag", "c"})
	if err != nil || strings.Join(pos, " ") != "a b --not-a-flag c" || !*yes || *dir != "x" {
		t.Errorf("parseInterspersed: %q, %v, yes=%v dir=%q", pos, err, *yes, *dir)
	}
}
