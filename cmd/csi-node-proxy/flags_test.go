package main

import (
	"errors"
	"flag"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/blockdev"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// resetKlog undoes the global klog settings a parse made (klog's flags
// write into package state), so no test leaves log files behind.
func resetKlog(t *testing.T) {
	t.Cleanup(func() {
		var fs flag.FlagSet
		klog.InitFlags(&fs)
		for _, kv := range [][2]string{{"v", "0"}, {"logtostderr", "true"}, {"log_file", ""}, {"log_dir", ""}, {"vmodule", ""}} {
			if err := fs.Set(kv[0], kv[1]); err != nil {
				t.Errorf("reset klog -%s: %v", kv[0], err)
			}
		}
	})
}

// registry stands in for adapter.All, so these tests do not depend on the
// generated registry's contents.
var registry = []adapter.API{
	{Group: "disk", Version: "v1"},
	{Group: "filesystem", Version: "v1"},
	{Group: "filesystem", Version: "v2alpha1"},
	{Group: "iscsi", Version: "v1alpha2"},
	{Group: "smb", Version: "v1"},
	{Group: "system", Version: "v1alpha1"},
	{Group: "volume", Version: "v1"},
	{Group: "volume", Version: "v2alpha1"},
}

func apiNames(apis []adapter.API) []string {
	var n []string
	for _, a := range apis {
		n = append(n, a.Name())
	}
	return n
}

func TestParseDefaults(t *testing.T) {
	resetKlog(t)
	cfg, err := parseFlagsWith(nil, registry)
	if err != nil {
		t.Fatal(err)
	}
	// Upstream's default, except where the default backend is Linux's.
	wantKubelet := `C:\var\lib\kubelet`
	if cfg.Host == hostLinux {
		wantKubelet = "/var/lib/kubelet"
	}
	if cfg.KubeletPath != wantKubelet || !slices.Equal(cfg.WorkingDirs, []string{wantKubelet}) {
		t.Errorf("kubelet path %q, working dirs %q; want %q", cfg.KubeletPath, cfg.WorkingDirs, wantKubelet)
	}
	if !cfg.RequirePrivacy || cfg.WindowsService || cfg.MetricsBindAddress != "" {
		t.Errorf("upstream defaults wrong: %+v", cfg)
	}
	if want := map[string]string{"windows": "windows", "linux": "linux"}[runtime.GOOS]; want != "" && cfg.Host != want {
		t.Errorf("default host %q on %s", cfg.Host, runtime.GOOS)
	}
	if cfg.Transport != transport.DefaultOptions() {
		t.Errorf("transport %+v, want %+v", cfg.Transport, transport.DefaultOptions())
	}
	if len(cfg.APIs) != len(registry) {
		t.Errorf("APIs %v, want all", apiNames(cfg.APIs))
	}
	if len(cfg.AllowedServices) != 0 || cfg.SimConfigFile != "" || len(cfg.SimDisks) != 0 {
		t.Errorf("new flags not empty by default: %+v", cfg)
	}
	if cfg.ShutdownTimeout != defaultShutdownTimeout || !cfg.logsToStderr {
		t.Errorf("shutdown %v, logsToStderr %v", cfg.ShutdownTimeout, cfg.logsToStderr)
	}
}

// The command line from upstream's README and CI must keep working.
func TestParseUpstreamCommandLine(t *testing.T) {
	resetKlog(t)
	cfg, err := parseFlagsWith([]string{
		"-v=5", "-windows-service",
		`-log_file=C:\etc\kubernetes\logs\csi-proxy.log`, "-logtostderr=false",
		`-kubelet-path=D:\kubelet`, "-working-dir=a", "-working-dir=b",
		"-require-privacy=false", "-metrics-bind-address=localhost:8888",
	}, registry)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.WindowsService || cfg.RequirePrivacy || cfg.MetricsBindAddress != "localhost:8888" {
		t.Errorf("upstream flags: %+v", cfg)
	}
	if cfg.KubeletPath != `D:\kubelet` || !slices.Equal(cfg.WorkingDirs, []string{"a", "b", `D:\kubelet`}) {
		t.Errorf("kubelet path %q, working dirs %q", cfg.KubeletPath, cfg.WorkingDirs)
	}
	if !klog.V(5).Enabled() || klog.V(6).Enabled() {
		t.Error("-v=5 did not reach klog")
	}
	if cfg.logsToStderr {
		t.Error("-logtostderr=false not recorded")
	}
}

func TestParseNewFlags(t *testing.T) {
	resetKlog(t)
	cfg, err := parseFlagsWith([]string{
		"--host=simulated", "--socket-dir=/tmp/s", "--socket-mode=0600",
		"--socket-owner=0", "--socket-group=1000", "--pipe-sddl=D:P(A;;GA;;;SY)",
		"--apis=disk-v1,volume-v2alpha1", "--allowed-service=MSiSCSI", "--allowed-service=W32Time",
		"--sim-config=/etc/sim.json", "--sim-disk=size=1GiB", "--sim-disk=size=2GiB,offline",
		"--shutdown-timeout=5s",
	}, registry)
	if err != nil {
		t.Fatal(err)
	}
	want := transport.Options{SocketDir: "/tmp/s", SocketMode: 0o600, SocketUID: 0, SocketGID: 1000, PipeSDDL: "D:P(A;;GA;;;SY)"}
	if cfg.Transport != want {
		t.Errorf("transport %+v, want %+v", cfg.Transport, want)
	}
	if cfg.Host != "simulated" || cfg.SimConfigFile != "/etc/sim.json" || cfg.ShutdownTimeout != 5*time.Second {
		t.Errorf("cfg %+v", cfg)
	}
	if got := apiNames(cfg.APIs); !slices.Equal(got, []string{"csi-proxy-disk-v1", "csi-proxy-volume-v2alpha1"}) {
		t.Errorf("APIs %v", got)
	}
	if !slices.Equal(cfg.AllowedServices, []string{"MSiSCSI", "W32Time"}) || !slices.Equal(cfg.SimDisks, []string{"size=1GiB", "size=2GiB,offline"}) {
		t.Errorf("repeatable flags: %q %q", cfg.AllowedServices, cfg.SimDisks)
	}
}

func TestParseAPIGroups(t *testing.T) {
	resetKlog(t)
	cfg, err := parseFlagsWith([]string{"-apis=volume,smb"}, registry)
	if err != nil {
		t.Fatal(err)
	}
	if got := apiNames(cfg.APIs); !slices.Equal(got, []string{"csi-proxy-smb-v1", "csi-proxy-volume-v1", "csi-proxy-volume-v2alpha1"}) {
		t.Errorf("APIs %v", got)
	}
}

func TestParseErrors(t *testing.T) {
	resetKlog(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--apis=disk-v1,disk-v9"}, []string{`-apis: unknown API "disk-v9"`, "disk-v1", "volume-v2alpha1", "system-v1alpha1"}},
		{[]string{"--host=macos"}, []string{`-host "macos"`, "windows, linux or simulated"}},
		{[]string{"--socket-mode=rw"}, []string{"socket-mode", "octal"}},
		{[]string{"--socket-mode=01777"}, []string{"socket-mode"}},
		{[]string{"--socket-mode=0"}, []string{"socket-mode", "0600"}},
		{[]string{"--socket-owner=root"}, []string{"socket-owner", "numeric"}},
		{[]string{"--socket-group=-1"}, []string{"socket-group", "numeric"}},
		{[]string{"--no-such-flag"}, []string{"no-such-flag"}},
		{[]string{"serve"}, []string{"unexpected arguments"}},
		{[]string{"--shutdown-timeout=0s"}, []string{"positive"}},
	} {
		_, err := parseFlagsWith(tc.args, registry)
		if err == nil {
			t.Errorf("%q parsed", tc.args)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q lacks %q", tc.args, err, w)
			}
		}
	}
	if _, err := parseFlagsWith([]string{"-help"}, registry); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-help: %v", err)
	}
}

// The real registry: --apis names the group-versions the generated
// registry lists.
func TestParseRealRegistry(t *testing.T) {
	resetKlog(t)
	if len(adapter.All()) == 0 {
		t.Skip("the adapter registry is empty")
	}
	cfg, err := parseFlags([]string{"--apis=disk-v1,volume-v2alpha1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := apiNames(cfg.APIs); !slices.Equal(got, []string{"csi-proxy-disk-v1", "csi-proxy-volume-v2alpha1"}) {
		t.Errorf("APIs %v", got)
	}
}

func TestStartupRefusals(t *testing.T) {
	resetKlog(t)
	cfg, err := parseFlagsWith([]string{"-windows-service", "--host=simulated"}, registry)
	if err != nil {
		t.Fatal(err)
	}
	err = checkStartup(cfg)
	want := "-windows-service is only available on Windows"
	if runtime.GOOS == "windows" {
		if err != nil {
			t.Errorf("checkStartup(-windows-service) on Windows = %v, want nil", err)
		}
	} else if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("checkStartup(-windows-service) = %v, want %q", err, want)
	}

	// A real backend on the wrong OS is refused before anything is made.
	foreign := map[string]string{
		"linux":   "--host=linux runs only on Linux",
		"windows": "--host=windows runs only on Windows",
	}
	for host, want := range foreign {
		if host == runtime.GOOS {
			continue
		}
		cfg, err := parseFlagsWith([]string{"--host=" + host}, registry)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := testNode(cfg); err == nil || !strings.Contains(err.Error(), want) {
			if err == nil {
				_ = n.Close()
			}
			t.Errorf("newNode(%s) on %s = %v, want %q", host, runtime.GOOS, err, want)
		}
	}
}

// TestLinuxDefaults: with --host=linux the kubelet's directory is the Linux
// one unless -kubelet-path says otherwise, and FormatVolume's filesystem is
// ext4 unless --linux-filesystem says xfs.
func TestLinuxDefaults(t *testing.T) {
	resetKlog(t)
	cfg, err := parseFlagsWith([]string{"--host=linux"}, registry)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/var/lib/kubelet"}; !reflect.DeepEqual(cfg.WorkingDirs, want) || cfg.LinuxFilesystem != "ext4" {
		t.Errorf("working dirs %v, filesystem %q; want %v, ext4", cfg.WorkingDirs, cfg.LinuxFilesystem, want)
	}
	cfg, err = parseFlagsWith([]string{"--host=linux", "-kubelet-path=/data/kubelet", "-working-dir=/csi", "--linux-filesystem=xfs"}, registry)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"/csi", "/data/kubelet"}; !reflect.DeepEqual(cfg.WorkingDirs, want) || cfg.LinuxFilesystem != "xfs" {
		t.Errorf("working dirs %v, filesystem %q; want %v, xfs", cfg.WorkingDirs, cfg.LinuxFilesystem, want)
	}
	if _, err := parseFlagsWith([]string{"--host=linux", "--linux-filesystem=btrfs"}, registry); err == nil || !strings.Contains(err.Error(), "want ext4 or xfs") {
		t.Errorf("--linux-filesystem=btrfs: %v", err)
	}
	if runtime.GOOS == "linux" {
		cfg, err := parseFlagsWith([]string{"--host=linux"}, registry)
		if err != nil {
			t.Fatal(err)
		}
		n, err := testNode(cfg)
		if err != nil {
			t.Fatalf("newNode(linux): %v", err)
		}
		defer n.Close()
		h := n.Backends
		if h.Style != hostpath.POSIX || h.Disk == nil || h.Volume == nil || h.Filesystem == nil || h.SMB == nil || h.ISCSI == nil || h.System == nil {
			t.Errorf("linux host incomplete: %+v", h)
		}
	}
}

// TestHostMountTableFlag: --linux-host-mount-table is the backend's
// default when not given (""), else the path given or none; a relative
// path is refused. hostmounts_linux_test.go follows it into the backend.
func TestHostMountTableFlag(t *testing.T) {
	resetKlog(t)
	if defaultHostMountTable != blockdev.DefaultHostMountTable {
		t.Errorf("the flag's default %q is not the backend's %q", defaultHostMountTable, blockdev.DefaultHostMountTable)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"--linux-host-mount-table=/proc/1/mountinfo"}, "/proc/1/mountinfo"},
		{[]string{"--linux-host-mount-table=/host/proc/1/mountinfo"}, "/host/proc/1/mountinfo"},
		{[]string{"--linux-host-mount-table=none"}, "none"},
	} {
		cfg, err := parseFlagsWith(append([]string{"--host=linux"}, tc.args...), registry)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if cfg.LinuxHostMountTable != tc.want {
			t.Errorf("%q: LinuxHostMountTable = %q, want %q", tc.args, cfg.LinuxHostMountTable, tc.want)
		}
	}
	for _, bad := range []string{"proc/1/mountinfo", "", "None"} {
		if _, err := parseFlagsWith([]string{"--host=linux", "--linux-host-mount-table=" + bad}, registry); err == nil || !strings.Contains(err.Error(), "absolute path, or none") {
			t.Errorf("--linux-host-mount-table=%q: %v, want refused", bad, err)
		}
	}
	var b strings.Builder
	usage(&b)
	if !strings.Contains(b.String(), "(default \"/proc/1/mountinfo\")") {
		t.Errorf("the usage does not show the default /proc/1/mountinfo:\n%s", b.String())
	}
}

func TestSimulatedHost(t *testing.T) {
	resetKlog(t)
	cfg, err := parseFlagsWith([]string{"--host=simulated", `-working-dir=C:\csi`, "--sim-disk=size=3GiB,location=1:0:0:7"}, registry)
	if err != nil {
		t.Fatal(err)
	}
	n, err := testNode(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	locs, err := n.Backends.Disk.ListDiskLocations(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range locs {
		if l.LUNID == "7" {
			found = true
		}
	}
	if !found {
		t.Errorf("--sim-disk location not among %+v", locs)
	}

	cfg.SimDisks = []string{"size=lots"}
	if n, err := testNode(cfg); err == nil || !strings.Contains(err.Error(), "-sim-disk") {
		if err == nil {
			_ = n.Close()
		}
		t.Errorf("bad --sim-disk: %v", err)
	}
}
