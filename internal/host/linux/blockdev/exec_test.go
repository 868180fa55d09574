package blockdev

import (
	"context"
	"errors"
	"os/exec"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestOSExec(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("runs sh")
	}
	ctx := context.Background()
	x := NewExec(time.Minute)
	out, err := x.Run(ctx, []string{"sh", "-c", `echo "$LC_ALL $1"`, "sh", "a b; rm -rf /"})
	if err != nil || string(out) != "C a b; rm -rf /\n" {
		t.Fatalf("Run = %q, %v (arguments must arrive as one word, with LC_ALL=C)", out, err)
	}

	_, err = x.Run(ctx, []string{"sh", "-c", "echo bad things >&2; exit 3"})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 3 || ee.Stderr != "bad things" {
		t.Fatalf("Run = %#v", err)
	}
	if !strings.Contains(err.Error(), "exit status 3: bad things") {
		t.Fatalf("message %q lacks the status and stderr", err)
	}

	_, err = x.Run(ctx, []string{"csi-node-proxy-no-such-tool"})
	if !errors.Is(err, exec.ErrNotFound) || !errors.As(err, &ee) || ee.Code != -1 {
		t.Fatalf("missing tool: %v", err)
	}
	if got := toolError(&ExitError{Argv: []string{"mkfs.ext4"}, Code: -1, Err: exec.ErrNotFound}); !strings.Contains(got.Error(), "Debian package e2fsprogs") {
		t.Fatalf("toolError = %v", got)
	}

	start := time.Now()
	_, err = NewExec(100*time.Millisecond).Run(ctx, []string{"sleep", "10"})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("timeout: %v after %s", err, time.Since(start))
	}
	if _, err := x.Run(ctx, nil); err == nil {
		t.Fatal("empty argv ran")
	}
}

func TestFakeExec(t *testing.T) {
	f := &FakeExec{}
	if _, err := f.Run(context.Background(), []string{"mkfs.xfs", "-q", "/dev/x"}); err != nil {
		t.Fatal(err)
	}
	f.Respond = func(argv []string) ([]byte, error) { return []byte("out"), nil }
	if out, _ := f.Run(context.Background(), []string{"b"}); string(out) != "out" {
		t.Fatalf("Respond output = %q", out)
	}
	if got := f.Calls(); !reflect.DeepEqual(got, [][]string{{"mkfs.xfs", "-q", "/dev/x"}, {"b"}}) {
		t.Fatalf("Calls = %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Run(ctx, []string{"c"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Run = %v", err)
	}
}
