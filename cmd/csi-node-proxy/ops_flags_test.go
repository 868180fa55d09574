package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
)

// TestOpsFlags: --endpoint-prefix and --logging-format take what they
// document and refuse the rest; the defaults are upstream's names and
// klog's text.
func TestOpsFlags(t *testing.T) {
	resetKlog(t)
	cfg, err := parseFlagsWith([]string{"--host=simulated"}, registry)
	if err != nil || cfg.EndpointPrefix != "csi-proxy" || cfg.LoggingFormat != "text" {
		t.Fatalf("defaults: prefix %q, format %q, %v", cfg.EndpointPrefix, cfg.LoggingFormat, err)
	}
	cfg, err = parseFlagsWith([]string{"--host=simulated", "--endpoint-prefix=csi-node-proxy", "--logging-format=json"}, registry)
	if err != nil || cfg.EndpointPrefix != "csi-node-proxy" || cfg.LoggingFormat != "json" {
		t.Fatalf("set: prefix %q, format %q, %v", cfg.EndpointPrefix, cfg.LoggingFormat, err)
	}
	for _, bad := range [][]string{{"--endpoint-prefix="}, {"--endpoint-prefix=a/b"}, {`--endpoint-prefix=..\x`}, {"--logging-format=yaml"}} {
		if _, err := parseFlagsWith(append([]string{"--host=simulated"}, bad...), registry); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestLegacyPathFlags: upstream's pre-1.0 flags are accepted; their
// directories become the working directories, replacing -kubelet-path's
// default as they did, unless -kubelet-path is given too.
func TestLegacyPathFlags(t *testing.T) {
	resetKlog(t)
	cfg, err := parseFlagsWith([]string{"--host=simulated", `-kubelet-csi-plugins-path=C:\var\lib\kubelet\plugins`, `--kubelet-pod-path=C:\var\lib\kubelet\pods`}, registry)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`C:\var\lib\kubelet\plugins`, `C:\var\lib\kubelet\pods`}; !reflect.DeepEqual(cfg.WorkingDirs, want) || len(cfg.legacyPathFlags) != 2 {
		t.Errorf("working dirs %q (legacy %q), want %q", cfg.WorkingDirs, cfg.legacyPathFlags, want)
	}
	cfg, err = parseFlagsWith([]string{"--host=simulated", `-kubelet-pod-path=D:\pods`, `-kubelet-path=C:\k`}, registry)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`D:\pods`, `C:\k`}; !reflect.DeepEqual(cfg.WorkingDirs, want) {
		t.Errorf("working dirs %q, want %q", cfg.WorkingDirs, want)
	}
}

// TestKubeletPathDefaultPerHost: the default follows --host, whatever OS
// parses the flags, and help shows the default of this OS's backend.
func TestKubeletPathDefaultPerHost(t *testing.T) {
	resetKlog(t)
	for host, want := range map[string]string{hostSimulated: `C:\var\lib\kubelet`, hostWindows: `C:\var\lib\kubelet`, hostLinux: "/var/lib/kubelet"} {
		cfg, err := parseFlagsWith([]string{"--host=" + host}, registry)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.KubeletPath != want {
			t.Errorf("--host=%s: kubelet path %q, want %q", host, cfg.KubeletPath, want)
		}
	}
	var b strings.Builder
	usage(&b)
	// The flag package prints a string default quoted (%q), so a Windows
	// path shows its backslashes doubled.
	if want := hostset.KubeletPath(defaultHost()); !strings.Contains(b.String(), "(default "+strconv.Quote(want)+")") {
		t.Errorf("help does not show this OS's default %q:\n%s", want, b.String())
	}
}

// TestJSONLogging: with --logging-format=json every klog call becomes one
// JSON line in the log file: info lines with their verbosity, errors at
// level error with the error's text, durations as text; klog's -v still
// decides what is written.
func TestJSONLogging(t *testing.T) {
	resetKlog(t)
	file := filepath.Join(t.TempDir(), "daemon.log")
	cfg, err := parseFlagsWith([]string{"--host=simulated", "--logging-format=json", "-logtostderr=false", "-log_file=" + file, "-v=2"}, registry)
	if err != nil {
		t.Fatal(err)
	}
	logs, err := setupLogging(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	klog.InfoS("plain", "key", "value")
	klog.V(2).InfoS("verbose", "took", 1500*time.Millisecond)
	klog.V(3).InfoS("too verbose")
	klog.ErrorS(errors.New("disk on fire"), "call failed", "code", "Internal", "caller", "pid 1")
	logs.close()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		// ts: float milliseconds since the epoch, as Kubernetes' JSON
		// logs have it; caller: this file and the klog call's line.
		ts, ok := m["ts"].(float64)
		if !ok || ts < float64(start.UnixMilli()) || ts > float64(time.Now().UnixMilli())+1 {
			t.Errorf("ts = %v, want milliseconds since the epoch around %d", m["ts"], start.UnixMilli())
		}
		if c, _ := m["caller"].(string); !strings.HasPrefix(c, "csi-node-proxy/ops_flags_test.go:") {
			t.Errorf("caller = %q, want csi-node-proxy/ops_flags_test.go:LINE", m["caller"])
		}
		delete(m, "ts")
		delete(m, "caller")
		got = append(got, m)
	}
	want := []map[string]any{
		{"v": 0.0, "msg": "plain", "key": "value"},
		{"v": 2.0, "msg": "verbose", "took": "1.5s"},
		{"msg": "call failed", "code": "Internal", "err": "disk on fire", "peer": "pid 1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("log lines\n%v\nwant\n%v", got, want)
	}

	// -log_dir names no one file.
	cfg, err = parseFlagsWith([]string{"--host=simulated", "--logging-format=json", "-logtostderr=false", "-log_file=", "-log_dir=" + t.TempDir()}, registry)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := setupLogging(cfg); err == nil || !strings.Contains(err.Error(), "-log_file") {
		t.Errorf("json with -log_dir: %v, want an error naming -log_file", err)
	}
}

// recordedWrites keeps each write it is given, as stderr would receive it.
type recordedWrites struct {
	mu     sync.Mutex
	writes []string
}

func (r *recordedWrites) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, string(p))
	return len(p), nil
}

// TestTextLoggingBatchesOnStderr: in klog's text format on stderr (the
// default), klog still formats each line (header with severity, time,
// pid, file:line), a line outside a batch is one write as before, and the
// lines written between the batch's Hold and Release are one write: what
// the call log does with the lines of calls that ended together. -v still
// decides. With -logtostderr=false (klog's own buffered files) or below
// -v=2 (no call writes a line) there is no batch.
func TestTextLoggingBatchesOnStderr(t *testing.T) {
	resetKlog(t)
	cfg, err := parseFlagsWith([]string{"--host=simulated", "-v=2"}, registry)
	if err != nil {
		t.Fatal(err)
	}
	stderr := &recordedWrites{}
	logs, err := setupLoggingTo(cfg, stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer logs.close()
	if logs.batch == nil || logs.text != logs.batch {
		t.Fatal("no batch for text logs on stderr, or the call log may not write its text lines to it")
	}
	klog.InfoS("alone", "key", "value")
	logs.batch.Hold()
	klog.V(2).InfoS("call", "method", "/a")
	klog.V(3).InfoS("too verbose")
	klog.V(2).InfoS("call", "method", "/b")
	logs.batch.Release()
	stderr.mu.Lock()
	got := append([]string(nil), stderr.writes...)
	stderr.mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("%d writes %q, want 2: the line alone and the batch", len(got), got)
	}
	line := regexp.MustCompile(`^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ ops_flags_test\.go:\d+\] "alone" key="value"\n$`)
	if !line.MatchString(got[0]) {
		t.Errorf("line %q is not klog's text format", got[0])
	}
	if lines := strings.Split(strings.TrimSuffix(got[1], "\n"), "\n"); len(lines) != 2 ||
		!strings.HasSuffix(lines[0], `"call" method="/a"`) || !strings.HasSuffix(lines[1], `"call" method="/b"`) {
		t.Errorf("batch %q, want the two -v=2 lines in order", got[1])
	}

	logs.close()
	for _, args := range [][]string{
		{"-v=2", "-logtostderr=false", "-log_file=" + filepath.Join(t.TempDir(), "d.log")}, // klog buffers its files itself
		{"-v=1"}, // no call writes a line
	} {
		cfg, err = parseFlagsWith(append([]string{"--host=simulated"}, args...), registry)
		if err != nil {
			t.Fatal(err)
		}
		logs, err = setupLoggingTo(cfg, stderr)
		if err != nil {
			t.Fatal(err)
		}
		if logs.batch != nil {
			t.Errorf("%v: a batch, want klog's own output", args)
		}
		logs.close()
	}
}
