//go:build linux

package server

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/metrics"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
	"github.com/csi-node-proxy/csi-node-proxy/internal/version"
)

// passFDEnv, when set, makes the test binary connect to the socket it
// names, send the connection over fd 3 (SCM_RIGHTS) and exit: a process
// that opens a connection and hands it on before it goes.
const passFDEnv = "CSI_NODE_PROXY_TEST_PASS_FD"

// init runs the hand-on helper before TestMain: that TestMain is shared
// with other tests, and this role needs nothing of it.
func init() {
	addr := os.Getenv(passFDEnv)
	if addr == "" {
		return
	}
	c, err := net.Dial("unix", addr)
	if err != nil {
		os.Exit(2)
	}
	f, err := c.(*net.UnixConn).File()
	if err != nil {
		os.Exit(3)
	}
	if err := unix.Sendmsg(3, []byte{0}, unix.UnixRights(int(f.Fd())), nil, 0); err != nil {
		os.Exit(4)
	}
	os.Exit(0)
}

// handedOnConn starts a helper that connects to addr, passes the
// connection to this process and exits, and returns the connection once
// the helper is gone.
func handedOnConn(t *testing.T, addr string) net.Conn {
	t.Helper()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	mine, theirs := os.NewFile(uintptr(pair[0]), "mine"), os.NewFile(uintptr(pair[1]), "theirs")
	t.Cleanup(func() { mine.Close(); theirs.Close() })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), passFDEnv+"="+addr)
	cmd.ExtraFiles = []*os.File{theirs}
	if err := cmd.Run(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(pair[0], buf, oob, 0)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		t.Fatalf("control messages %v: %v", msgs, err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		t.Fatalf("rights %v: %v", fds, err)
	}
	f := os.NewFile(uintptr(fds[0]), "handed-on")
	defer f.Close()
	conn, err := net.FileConn(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// A connection whose connecting process has exited is refused once the
// daemon has seen the exit, although the process that now holds it is of
// the very user the policy names; a connection whose process runs is
// served.
func TestCallOnConnectionOfExitedProcessRefused(t *testing.T) {
	captureLogs(t, 0)
	cfg := testConfig(t)
	cfg.Policy = writePolicy(t, fmt.Sprintf("rules:\n- {name: me, callers: [{uids: [%d]}], allow: [{groups: [smb], methods: ['*']}]}\n", os.Geteuid()))
	al, auditPath := openAudit(t, false)
	cfg.Audit = al
	f := &callerSmb{}
	served := refusesExitedCaller(t, cfg, f, smbGroupAPI(f), "")
	recs := readAudit(t, auditPath)
	if last := len(recs) - 1; len(recs) != 2+served || recs[last].Decision != "deny" || recs[last].Code != "Unauthenticated" || !strings.Contains(recs[last].Reason, "has exited") {
		t.Errorf("audit records %+v, want the call, %d served before the exit was seen, and the refusal", recs, served)
	}
}

// refusesExitedCaller starts a server with cfg serving api, whose handler
// is f, and checks what both liveness tests check first: a call on a
// connection of this running process is served, and calls on a connection
// whose connecting process has exited are refused as Unauthenticated,
// saying so, before the handler runs, once the daemon has seen the exit.
// The daemon learns of it from the runtime's poller (identity.process),
// so the calls made in the moment between the exit and the poller's event
// may still be served: it returns how many were, after checking that they
// stopped within 5 s. how tells the two tests' failures apart.
func refusesExitedCaller(t *testing.T, cfg Config, f *callerSmb, api adapter.API, how string) (served int) {
	t.Helper()
	s := start(t, cfg, api)
	addr := s.Endpoints()[0].Address

	own, err := transport.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := smbCallsOn(t, addr, own)(); err != nil {
		t.Fatalf("a connection of this running process: %v", err)
	}
	call := smbCallsOn(t, addr, handedOnConn(t, addr))
	deadline := time.Now().Add(5 * time.Second)
	for err = call(); err == nil && time.Now().Before(deadline); err = call() {
		served++
	}
	t.Logf("calls served between the exit and the daemon seeing it: %d", served)
	if st := status.Convert(err); st.Code() != codes.Unauthenticated || !strings.Contains(st.Message(), "has exited") {
		t.Errorf("a connection whose process exited%s, after %d calls served: %v, want Unauthenticated saying the process exited", how, served, err)
	}
	if f.calls != 1+served {
		t.Errorf("handler ran %d times, want once and for the %d calls served before the exit was seen", f.calls, served)
	}
	return served
}

// smbCallsOn returns a function that makes one NewSmbGlobalMapping call to
// the endpoint at addr over conn, a client connection of its own made of
// it; the client is closed when the test ends.
func smbCallsOn(t *testing.T, addr string, conn net.Conn) func() error {
	used := false
	cc, err := grpc.NewClient(transport.Target(addr), grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) {
		if used {
			return nil, syscall.ECONNREFUSED
		}
		used = true
		return conn, nil
	}), grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithAuthority("localhost"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	client := smbv1.NewSmbClient(cc)
	return func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := client.NewSmbGlobalMapping(ctx, &smbv1.NewSmbGlobalMappingRequest{RemotePath: `\\srv\share`, LocalPath: "/mnt/x"})
		return err
	}
}

// Without a policy too, a connection whose connecting process has exited
// is refused on its next call, and the refusal is audited and counted
// under denied_calls_total{reason="caller_exited"}: the connection no
// longer says who calls, whatever the policy would have decided. A
// connection whose process runs is served.
func TestExitedProcessRefusedWithoutPolicy(t *testing.T) {
	captureLogs(t, 0)
	cfg := testConfig(t)
	al, auditPath := openAudit(t, false)
	cfg.Audit = al
	cfg.Metrics = metrics.New(version.Get())
	f := &callerSmb{}
	api := smbGroupAPI(f)
	served := refusesExitedCaller(t, cfg, f, api, ", no policy")
	key := "csi_node_proxy_denied_calls_total{group=" + api.Group + ",method=NewSmbGlobalMapping,reason=" + metrics.DeniedCallerExited + ",version=" + api.Version + "}"
	if got := series(t, cfg.Metrics)[key]; got != 1 {
		t.Errorf("%s = %v, want 1", key, got)
	}
	recs := readAudit(t, auditPath)
	if last := len(recs) - 1; len(recs) != 2+served || recs[last].Decision != "deny" || recs[last].Code != "Unauthenticated" {
		t.Errorf("audit records %+v, want the call, %d served before the exit was seen, and the refusal", recs, served)
	}
}
