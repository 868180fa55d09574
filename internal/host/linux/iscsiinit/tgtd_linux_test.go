//go:build linux

package iscsiinit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/hostdaemon"
)

// tgtdSocketDir is where tgtd keeps its control sockets, fixed at build
// time.
const tgtdSocketDir = "/var/run/tgtd"

// tgtdServer is a real user-space iSCSI target (tgt's tgtd) on
// 127.0.0.1:port with control port ctl.
type tgtdServer struct {
	t    *testing.T
	dir  string
	port int
	ctl  int
}

// startTgtd starts tgtd for the test and, when the test ends, deletes it
// through its control socket, kills it by PID if it lingers, and removes
// its socket files.
func startTgtd(t *testing.T) *tgtdServer {
	t.Helper()
	testutil.RequireRoot(t)
	testutil.RequireTool(t, "tgt", "tgtd", "tgtadm")
	s := &tgtdServer{t: t, dir: t.TempDir(), port: hostdaemon.FreePort(t)}
	// A control port no other tgtd on the machine uses.
	for {
		s.ctl = 1000 + rand.IntN(31000) // tgtd accepts -C up to 32767
		if _, err := os.Stat(filepath.Join(tgtdSocketDir, "socket."+strconv.Itoa(s.ctl))); errors.Is(err, os.ErrNotExist) {
			break
		}
	}
	hadDir := true
	if _, err := os.Stat(tgtdSocketDir); errors.Is(err, os.ErrNotExist) {
		hadDir = false
	}
	// Its own process group (hostdaemon.Start), so nothing it signals
	// reaches the test.
	p := hostdaemon.Start(t, "tgtd", exec.Command("tgtd", "-f", "-C", strconv.Itoa(s.ctl), "--iscsi", fmt.Sprintf("portal=127.0.0.1:%d", s.port)))
	cmd, exited := p.Cmd, p.Exited
	t.Cleanup(func() {
		// "system delete" makes tgtd exit; it refuses while targets
		// exist, so delete them first.
		out, _ := exec.Command("tgtadm", "-C", strconv.Itoa(s.ctl), "--lld", "iscsi", "--mode", "target", "--op", "show").Output()
		for _, line := range strings.Split(string(out), "\n") {
			if rest, ok := strings.CutPrefix(line, "Target "); ok {
				tid, _, _ := strings.Cut(rest, ":")
				_ = exec.Command("tgtadm", "-C", strconv.Itoa(s.ctl), "--lld", "iscsi", "--mode", "target", "--op", "delete", "--force", "--tid", tid).Run()
			}
		}
		_ = exec.Command("tgtadm", "-C", strconv.Itoa(s.ctl), "--mode", "system", "--op", "delete").Run()
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
			t.Logf("tgtd did not exit after system delete; killing pid %d", cmd.Process.Pid)
			_ = cmd.Process.Kill()
			<-exited
		}
		files, _ := filepath.Glob(filepath.Join(tgtdSocketDir, "socket."+strconv.Itoa(s.ctl)+"*"))
		for _, f := range files {
			_ = os.Remove(f)
		}
		if !hadDir {
			_ = os.Remove(tgtdSocketDir) // only if empty: another tgtd may use it
		}
	})
	p.WaitListening(t, s.port)
	return s
}

// tgtadm runs tgtadm against this tgtd.
func (s *tgtdServer) tgtadm(args ...string) {
	s.t.Helper()
	full := append([]string{"-C", strconv.Itoa(s.ctl), "--lld", "iscsi"}, args...)
	if out, err := exec.Command("tgtadm", full...).CombinedOutput(); err != nil {
		s.t.Fatalf("tgtadm %s: %v: %s", strings.Join(full, " "), err, out)
	}
}

// addTarget creates target tid named iqn with one LUN backed by a small
// sparse file, open to every initiator.
func (s *tgtdServer) addTarget(tid int, iqn string) {
	s.t.Helper()
	img := filepath.Join(s.dir, fmt.Sprintf("lun%d.img", tid))
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		s.t.Fatal(err)
	}
	if err := os.Truncate(img, 16<<20); err != nil {
		s.t.Fatal(err)
	}
	t := strconv.Itoa(tid)
	s.tgtadm("--mode", "target", "--op", "new", "--tid", t, "--targetname", iqn)
	s.tgtadm("--mode", "logicalunit", "--op", "new", "--tid", t, "--lun", "1", "--backing-store", img)
	s.tgtadm("--mode", "target", "--op", "bind", "--tid", t, "--initiator-address", "ALL")
}

func (s *tgtdServer) portal() iscsi.Portal {
	return iscsi.Portal{Address: "127.0.0.1", Port: uint32(s.port)}
}

// TestSendTargets_RealTgtd runs the pure-Go discovery against a real tgtd.
func TestSendTargets_RealTgtd(t *testing.T) {
	s := startTgtd(t)
	const one, two = "iqn.2026-11.io.example:tgtd-one", "iqn.2026-11.io.example:tgtd-two"
	s.addTarget(1, one)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))

	t.Run("one target", func(t *testing.T) {
		got, err := SendTargets(ctx, addr, "iqn.2026-11.io.example:initiator")
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Name != one {
			t.Fatalf("targets = %+v, want %s", got, one)
		}
		if want := fmt.Sprintf("127.0.0.1:%d,1", s.port); !reflect.DeepEqual(got[0].Addresses, []string{want}) {
			t.Errorf("addresses = %q, want [%s]", got[0].Addresses, want)
		}
	})
	t.Run("several targets, through the Host", func(t *testing.T) {
		s.addTarget(2, two)
		r := newReplay(t)
		h := newTestHost(t, r, Config{})
		got, err := h.DiscoverTargetPortal(ctx, s.portal())
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{one, two}; !reflect.DeepEqual(got, want) {
			t.Errorf("IQNs = %q, want %q", got, want)
		}
		if len(r.calls) != 0 {
			t.Errorf("discovery ran iscsiadm: %q", r.calls)
		}
	})
	t.Run("AddTargetPortal talks to the portal, then registers it", func(t *testing.T) {
		r := newReplay(t, "recorded/discoverydb_list_empty", "recorded/discoverydb_new")
		r.queue[1].argv[5] = addr // recorded for port 3260; tgtd listens elsewhere
		h := newTestHost(t, r, Config{})
		if err := h.AddTargetPortal(ctx, s.portal()); err != nil {
			t.Fatal(err)
		}
		want := [][]string{
			{"-m", "discoverydb"},
			{"-m", "discoverydb", "-t", "sendtargets", "-p", addr, "-o", "new"},
		}
		if !reflect.DeepEqual(r.calls, want) {
			t.Errorf("iscsiadm calls = %q, want %q", r.calls, want)
		}
	})
	t.Run("a long answer in several PDUs", func(t *testing.T) {
		// Declare the smallest receive segment RFC 7143 allows so that
		// tgtd must continue its answer (C bit, target transfer tag).
		defer func(old int) { declaredMaxRecv = old }(declaredMaxRecv)
		declaredMaxRecv = 512
		var want []string
		for i := 3; i <= 14; i++ {
			iqn := fmt.Sprintf("iqn.2026-11.io.example:tgtd-many-%02d", i)
			s.tgtadm("--mode", "target", "--op", "new", "--tid", strconv.Itoa(i), "--targetname", iqn)
			s.tgtadm("--mode", "target", "--op", "bind", "--tid", strconv.Itoa(i), "--initiator-address", "ALL")
			want = append(want, iqn)
		}
		got, err := SendTargets(ctx, addr, "iqn.2026-11.io.example:initiator")
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, g := range got {
			names = append(names, g.Name)
		}
		if want = append([]string{one, two}, want...); !reflect.DeepEqual(names, want) {
			t.Errorf("IQNs = %q, want %q", names, want)
		}
	})
	t.Run("wrong port is Unavailable", func(t *testing.T) {
		bad := net.JoinHostPort("127.0.0.1", strconv.Itoa(hostdaemon.FreePort(t)))
		_, err := SendTargets(ctx, bad, "iqn.2026-11.io.example:initiator")
		if !errors.Is(err, errdefs.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
		r := newReplay(t)
		h := newTestHost(t, r, Config{})
		p := s.portal()
		p.Port = uint32(hostdaemon.FreePort(t))
		if err := h.AddTargetPortal(ctx, p); !errors.Is(err, errdefs.ErrUnavailable) {
			t.Errorf("AddTargetPortal: %v, want ErrUnavailable", err)
		}
		if len(r.calls) != 0 {
			t.Errorf("an unreachable portal reached iscsiadm: %q", r.calls)
		}
	})
}
