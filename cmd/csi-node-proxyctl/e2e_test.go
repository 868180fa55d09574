package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/daemonbin"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/sockdir"
)

// The end-to-end tests build the CLI and the daemon once (TestMain), start
// the daemon on the simulated host with the world below, and run every
// command as an operator would: the CLI binary over the daemon's real
// sockets, in both output formats.

// e2eVersion is stamped into the CLI binary, so version can be checked.
const e2eVersion = "v0.0.0-e2e"

// Secrets of the simulated world. No CLI output and no line of the
// daemon's log (at -v=5, which logs requests) may contain them.
const (
	smbPassword = "smb-Secret-7731"
	chapSecret  = "chapSecret4242"
)

// simWorld is the simulated node: disks 0 (system), 1, 2 (NTFS, D:) and 7
// (offline) from the file, disk 3 from --sim-disk; an SMB share with
// credentials; an open iSCSI target with two LUNs and one with CHAP; two
// services.
const simWorld = `{
  "workingDirs": ["C:\\var\\lib\\kubelet", "C:\\csi"],
  "biosSerial": "CLI-E2E-SERIAL-42",
  "seed": 42,
  "disks": [
    {"size": "1GiB", "location": "1:0:0:0", "page83": "60022480000000000000000000000001", "serial": "SIM-DATA-0001"},
    {"number": 7, "size": "2GiB", "location": "1:0:0:1", "offline": true},
    {"size": "20GiB", "fileSystem": "NTFS", "driveLetter": "D", "serial": "NTFS-D"}
  ],
  "smbShares": [
    {"path": "\\\\fileserver\\share", "username": "CONTOSO\\csi", "password": "` + smbPassword + `", "dirs": ["pvc-1"]}
  ],
  "iscsiTargets": [
    {"portal": {"address": "10.0.0.10", "port": 3260}, "iqn": "iqn.2003-01.org.example:target1", "chapUsername": "initiator", "chapSecret": "` + chapSecret + `", "luns": [{"size": "1GiB"}]},
    {"portal": {"address": "10.0.0.10"}, "iqn": "iqn.2003-01.org.example:open", "luns": [{"size": "512MiB"}, {"size": "256MiB"}]}
  ],
  "services": [
    {"name": "MSiSCSI", "displayName": "Microsoft iSCSI Initiator Service", "startType": "manual", "status": "stopped"},
    {"name": "W32Time", "displayName": "Windows Time", "startType": "manual", "status": "running"}
  ]
}`

// simDiskFlag is the disk added with --sim-disk: number 3, partitioned, a
// RAW volume.
const simDiskFlag = "size=4GiB,location=2:0:0:5,serial=FLAG-DISK,partitioned"

// Built once by TestMain.
var (
	cliBin, daemonBin string
	worldFile         string
)

func TestMain(m *testing.M) {
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "csi-node-proxyctl-e2e")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		cliBin = filepath.Join(dir, "csi-node-proxyctl")
		worldFile = filepath.Join(dir, "world.json")
		const pkg = "github.com/csi-node-proxy/csi-node-proxy/internal/version"
		// Static and -trimpath, as the release builds it (and daemonbin the
		// daemon): the packages are the ones every build without the race
		// detector compiled already, only the link is left (issue 26).
		build := exec.Command("go", "build", "-trimpath", "-ldflags", "-X "+pkg+".Version="+e2eVersion, "-o", cliBin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "go build .: %v\n%s", err, out)
			return 1
		}
		// The daemon, as every test of the repository builds it.
		if daemonBin, err = daemonbin.Build(false); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer daemonbin.Remove()
		if err := os.WriteFile(worldFile, []byte(simWorld), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return m.Run()
	}())
}

// daemon is a running csi-node-proxy on the simulated host.
type daemon struct {
	socketDir string
	logPath   string
	// prefix is the daemon's --endpoint-prefix ("" for the default).
	prefix string
	// metricsAddr is its metrics listener (-metrics-bind-address).
	metricsAddr string
}

// startDaemon starts the daemon with the simulated world and extra flags,
// waits until it serves, and stops it when the test ends.
func startDaemon(t *testing.T, extra ...string) *daemon {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the end-to-end tests use Unix sockets in a temporary directory")
	}
	// Socket paths are limited to about 100 bytes; t.TempDir can be long.
	dir := sockdir.New(t, "cnp")
	d := &daemon{socketDir: filepath.Join(dir, "s"), logPath: filepath.Join(dir, "daemon.log"), metricsAddr: freeAddress(t)}
	for _, a := range extra {
		// A later flag wins, as in the daemon: a test may share a socket
		// directory between daemons, or name another prefix.
		if v, ok := strings.CutPrefix(a, "--socket-dir="); ok {
			d.socketDir = v
		}
		if v, ok := strings.CutPrefix(a, "--endpoint-prefix="); ok {
			d.prefix = v
		}
	}
	args := append([]string{"--host=simulated", "--socket-dir=" + d.socketDir, "--sim-config=" + worldFile,
		"--sim-disk=" + simDiskFlag, `--working-dir=C:\csi`, "--allowed-service=MSiSCSI", "-v=5", "-metrics-bind-address=" + d.metricsAddr}, extra...)
	daemonbin.Start(t, daemonBin, daemonbin.Options{
		Args:    args,
		LogFile: d.logPath,
		Ready: func() error {
			if _, err := os.Stat(filepath.Join(d.socketDir, d.endpointPrefix()+"-volume-v2alpha1.sock")); err != nil {
				return err
			}
			// Every test daemon serves disk.
			if _, _, code := d.cli(t, "", "health", "--group", "disk"); code != exitOK {
				return fmt.Errorf("health --group disk exited %d", code)
			}
			return nil
		},
		ReadyTimeout: 20 * time.Second,
		AtEnd:        daemonbin.Unchecked,
		StopTimeout:  30 * time.Second,
	})
	return d
}

// cli runs the CLI binary against the daemon with stdin text; stdin is a
// pipe, never a terminal.
func (d *daemon) cli(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	return runCLI(t, stdin, append(d.flags(), args...)...)
}

// flags are the CLI flags that reach d.
func (d *daemon) flags() []string {
	return []string{"--socket-dir", d.socketDir, "--endpoint-prefix", d.endpointPrefix()}
}

// endpointPrefix is d's endpoint prefix.
func (d *daemon) endpointPrefix() string {
	if d.prefix == "" {
		return "csi-proxy"
	}
	return d.prefix
}

// freeAddress returns a localhost TCP address nothing listens on now.
func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// runCLI runs the CLI binary with args.
func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cliBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run %q: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return stdout.String(), stderr.String(), code
}

// volumeOf returns the one volume on disk d, read with the CLI.
func (d *daemon) volumeOf(t *testing.T, disk string) (id string, size int64) {
	t.Helper()
	out, errOut, code := d.cli(t, "", "volume", "list", "--disk", disk, "-o", "json")
	var doc volumeListOutput
	if code != exitOK || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Volumes) != 1 {
		t.Fatalf("volume list --disk %s: exit %d, %s %s", disk, code, out, errOut)
	}
	v := doc.Volumes[0]
	if v.SizeBytes != nil {
		size = *v.SizeBytes
	}
	return v.VolumeID, size
}

// TestNoDaemon: with nothing listening every command that needs the
// daemon exits 5 with one line naming the command, in both formats, and
// prints nothing on stdout; health says which groups are missing.
func TestNoDaemon(t *testing.T) {
	empty := t.TempDir()
	for _, format := range []string{formatTable, formatJSON} {
		for _, args := range [][]string{
			{"disk", "list"},
			{"volume", "stats", `\\?\Volume{00000000-0000-0000-0000-000000000000}\`},
			{"system", "bios-serial"},
			{"disk", "online", "1", "--yes"},
		} {
			out, errOut, code := runCLI(t, "", append([]string{"--socket-dir", empty, "-o", format}, args...)...)
			if code != exitUnavailable || out != "" || !strings.HasPrefix(errOut, progName+": "+commandOf(args)+": ") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("%q -o %s: exit %d, stdout %q, stderr %q; want 5 and one error line", args, format, code, out, errOut)
			}
		}
		// version prints the CLI's own version, then says no daemon answers.
		out, errOut, code := runCLI(t, "", "--socket-dir", empty, "-o", format, "version")
		if code != exitUnavailable || !strings.Contains(out, e2eVersion) || !strings.Contains(errOut, "version: no endpoint answers") {
			t.Errorf("version -o %s: exit %d, stdout %q, stderr %q", format, code, out, errOut)
		}
		out, errOut, code = runCLI(t, "", "--socket-dir", empty, "-o", format, "health")
		if code != exitUnavailable || !strings.Contains(errOut, "not served: disk, filesystem, iscsi, smb, smbmappings, system, volume") {
			t.Errorf("health -o %s: exit %d, stderr %q", format, code, errOut)
		}
		if format == formatJSON && !strings.Contains(out, `"healthy": false`) {
			t.Errorf("health -o json: %s", out)
		}
		if format == formatTable && !strings.Contains(out, "disk         NOT SERVED  -") {
			t.Errorf("health: %s", out)
		}
	}
	// A timeout that cannot be met is unavailable too.
	if _, errOut, code := runCLI(t, "", "--socket-dir", empty, "--timeout", "1ns", "disk", "list"); code != exitUnavailable {
		t.Errorf("--timeout 1ns: exit %d, stderr %q", code, errOut)
	}
}

// TestHealthOfSomeGroups: a daemon serving only disk and volume (--apis)
// is healthy for those groups and not for the others; the commands of the
// groups it serves work, the others' exit 5.
func TestHealthOfSomeGroups(t *testing.T) {
	d := startDaemon(t, "--apis=disk-v1,volume")
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"health", "--group", "disk", "--group", "volume"}, exitOK, `"healthy": true`},
		{[]string{"health", "--group", "disk", "--group", "smb"}, exitUnavailable, `"missing": [
    "smb"
  ]`},
		{[]string{"health"}, exitUnavailable, `"groups": [`},
		{[]string{"version"}, exitOK, `"served": [
        "v1"
      ],
      "negotiated": "v1"`},
		{[]string{"disk", "stats", "1"}, exitOK, `"size_bytes": 1073741824`},
		{[]string{"fs", "exists", `C:\csi`}, exitUnavailable, ""},
	} {
		out, errOut, code := d.cli(t, "", append(tc.args, "-o", "json")...)
		if code != tc.code || !strings.Contains(out, tc.out) {
			t.Errorf("%q: exit %d, stdout %s, stderr %q; want %d and %q", tc.args, code, out, errOut, tc.code, tc.out)
		}
	}
	out, _, _ := d.cli(t, "", "health")
	for _, want := range []string{"disk         ok          v1\n", "smb          NOT SERVED  -\n", "volume       ok          v2alpha1,v1,v1beta3,v1beta2,v1beta1,v1alpha1\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("health table lacks %q:\n%s", want, out)
		}
	}
}

// TestLocal runs commands in-process (--local) on the simulated host built
// from the same world file: the same answers as through the daemon, with
// no daemon at all.
func TestLocal(t *testing.T) {
	local := []string{"--local", "--host=simulated", "--sim-config", worldFile, "--sim-disk", simDiskFlag, `--working-dir=C:\csi`, "--socket-dir", t.TempDir()}
	for _, tc := range []struct {
		args  []string
		code  int
		table string
		json  string
	}{
		{[]string{"disk", "stats", "3"}, exitOK, "3     4 GiB  4294967296  yes", `"size_bytes": 4294967296`},
		{[]string{"disk", "ids"}, exitOK, "1     60022480000000000000000000000001  SIM-DATA-0001", `"serial_number": "FLAG-DISK"`},
		{[]string{"system", "bios-serial"}, exitOK, "CLI-E2E-SERIAL-42", `"serial_number": "CLI-E2E-SERIAL-42"`},
		{[]string{"fs", "exists", `C:\csi`}, exitOK, `C:\csi  yes`, `"exists": true`},
		{[]string{"fs", "exists", `C:\Windows`}, exitPermission, "", ""},
		{[]string{"version"}, exitOK, "disk         inprocess  inprocess", `"mode": "local"`},
		{[]string{"health"}, exitOK, "system       ok      inprocess", `"healthy": true`},
		{[]string{"system", "start-service", "MSiSCSI", "--yes"}, exitPermission, "", ""},
	} {
		for _, format := range []string{formatTable, formatJSON} {
			out, errOut, code := runCLI(t, "", append(append(local, "-o", format), tc.args...)...)
			want := tc.table
			if format == formatJSON {
				want = tc.json
			}
			if code != tc.code || !strings.Contains(out, want) {
				t.Errorf("--local %q -o %s: exit %d, stdout %s, stderr %q; want %d and %q", tc.args, format, code, out, errOut, tc.code, want)
			}
		}
	}
	// --allowed-service applies in-process as in the daemon.
	if _, errOut, code := runCLI(t, "", append(local, "--allowed-service", "MSiSCSI", "system", "start-service", "MSiSCSI", "--yes")...); code != exitOK {
		t.Errorf("--local start-service with --allowed-service: exit %d, %s", code, errOut)
	}
	// --policy applies in-process as in the daemon: this process is the
	// caller, and what no rule allows is refused (exit 4).
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	const onlyBIOS = "rules:\n- name: bios\n  callers: [{any: true}]\n  allow: [{methods: [system.GetBIOSSerialNumber]}]\n"
	if err := os.WriteFile(policy, []byte(onlyBIOS), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := runCLI(t, "", append(local, "--policy", policy, "system", "bios-serial")...); code != exitOK || !strings.Contains(out, "CLI-E2E-SERIAL-42") {
		t.Errorf("--local --policy allowing bios-serial: exit %d, %s%s", code, out, errOut)
	}
	if _, errOut, code := runCLI(t, "", append(local, "--policy", policy, "disk", "stats", "3")...); code != exitPermission || !strings.Contains(errOut, "no rule allows it") {
		t.Errorf("--local --policy not allowing disk stats: exit %d, %s; want %d, no rule allows it", code, errOut, exitPermission)
	}
	// A node the flags do not describe is a usage error.
	if _, errOut, code := runCLI(t, "", "--local", "--host=simulated", "--sim-disk", "size=1", "disk", "list"); code != exitUsage || !strings.Contains(errOut, "--local: ") {
		t.Errorf("--local with a bad --sim-disk: exit %d, %s", code, errOut)
	}
}
