//go:build linux

package iscsiinit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

func TestIscsiadmError_RecordedTransportMissing(t *testing.T) {
	s := loadSample(t, "recorded/discovery_sendtargets_no_kernel")
	err := newIscsiadmError("discover", s.out)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("err = %v, want ErrFailedPrecondition", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "no iSCSI TCP transport") || !strings.Contains(msg, "iSCSI driver tcp is not loaded") || strings.Contains(msg, "systemd") {
		t.Errorf("err = %q", msg)
	}
}

func TestIscsiadmError_Kinds(t *testing.T) {
	for code, kind := range map[int]error{
		24: errdefs.ErrPermissionDenied,
		21: errdefs.ErrNotFound,
		12: errdefs.ErrFailedPrecondition,
		19: errdefs.ErrFailedPrecondition,
		20: errdefs.ErrUnavailable,
		8:  errdefs.ErrUnavailable,
		4:  errdefs.ErrUnavailable,
		15: errdefs.ErrAlreadyExists,
	} {
		if err := newIscsiadmError("op", output{ExitCode: code}); !errors.Is(err, kind) {
			t.Errorf("exit code %d: %v, want %v", code, err, kind)
		}
	}
	if err := newIscsiadmError("op", output{ExitCode: 1, Stderr: []byte("iscsiadm: boom\n")}); err.Unwrap() != nil || !strings.Contains(err.Error(), "iscsiadm: boom") {
		t.Errorf("generic failure: %v", err)
	}
}

func TestExecRunner(t *testing.T) {
	ctx := context.Background()
	var r execRunner
	out, err := r.Run(ctx, "sh", "-c", `printf '%s|' "$@"; echo; env; echo oops >&2; exit 3`, "sh", "a b", "$HOME", ";")
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode != 3 || string(out.Stderr) != "oops\n" {
		t.Errorf("exit %d stderr %q", out.ExitCode, out.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(out.Stdout)), "\n")
	// Arguments arrive verbatim, one each: no shell in between.
	if !strings.HasPrefix(lines[0], "a b|$HOME|;|") {
		t.Errorf("arguments: %q", lines[0])
	}
	env := map[string]bool{}
	for _, l := range lines[1:] {
		k, _, _ := strings.Cut(l, "=")
		env[k] = true
	}
	delete(env, "PWD")   // the shell adds these itself
	delete(env, "SHLVL") //
	delete(env, "_")     //
	delete(env, "OLDPWD")
	if !reflect.DeepEqual(env, map[string]bool{"PATH": true, "LC_ALL": true}) {
		t.Errorf("environment: %v, want only PATH and LC_ALL", env)
	}
	if _, err := r.Run(ctx, "/nonexistent/iscsiadm"); err == nil {
		t.Error("a missing program is no error")
	}
	tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := r.Run(tctx, "sleep", "10"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout: %v", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Error("the timeout did not stop the program")
	}
}

// TestMissingIscsiadmIsFailedPrecondition: a node without open-iscsi
// answers FailedPrecondition, saying so, for a program name looked up in
// PATH and for an absolute path alike.
func TestMissingIscsiadmIsFailedPrecondition(t *testing.T) {
	ctx := context.Background()
	for _, prog := range []string{"csi-node-proxy-no-such-iscsiadm", "/nonexistent/iscsiadm"} {
		cfg := Config{Iscsiadm: prog, NodeDir: filepath.Join(t.TempDir(), "nodes"), SysfsRoot: t.TempDir()}
		if err := os.Mkdir(cfg.NodeDir, 0o700); err != nil {
			t.Fatal(err)
		}
		h, err := newHost(cfg, execRunner{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.ListTargetPortals(ctx)
		if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "open-iscsi is not installed") {
			t.Errorf("%s: ListTargetPortals = %v, want FailedPrecondition saying open-iscsi is not installed", prog, err)
		}
		if err := h.RemoveTargetPortal(ctx, recPortal); !errors.Is(err, errdefs.ErrFailedPrecondition) {
			t.Errorf("%s: RemoveTargetPortal = %v, want FailedPrecondition", prog, err)
		}
	}
}
