package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
	systemv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/system/v1alpha1"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/audit"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/auditlog"
)

// callerSmb records the caller its handlers see.
type callerSmb struct {
	smb.Interface
	mu     sync.Mutex
	caller identity.Caller
	calls  int
}

func (f *callerSmb) NewSmbGlobalMapping(ctx context.Context, req *smb.NewSmbGlobalMappingRequest) (*smb.NewSmbGlobalMappingResponse, error) {
	c, _ := identity.FromContext(ctx)
	f.mu.Lock()
	f.caller, f.calls = c, f.calls+1
	f.mu.Unlock()
	if req.RemotePath == "panic" {
		panic("handler bug")
	}
	return &smb.NewSmbGlobalMappingResponse{}, nil
}

func (f *callerSmb) RemoveSmbGlobalMapping(context.Context, *smb.RemoveSmbGlobalMappingRequest) (*smb.RemoveSmbGlobalMappingResponse, error) {
	return nil, status.Error(codes.NotFound, "no mapping")
}

// smbGroupAPI serves f as the smb group (the policy names groups).
func smbGroupAPI(f *callerSmb) adapter.API {
	// The policy names the group; a unique version keeps pipe names
	// (global on Windows) apart.
	return smbAPIOf("smb", "v"+uniqueGroup(), f)
}

// writePolicy writes a policy file and loads it.
func writePolicy(t *testing.T, yaml string) *policy.Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := policy.Load(path, policy.Options{Style: hostpath.Windows})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// readAudit returns the outcome ("done") records of the audit file, one
// per call, after checking that every line is a complete JSON record and
// that the intent records pair with them (auditlog.CheckIntents): every
// allowed call that changes the node has its intent before its outcome,
// under the same ID, unless it was refused because its intent could not
// be written; and no intent is left without its outcome.
func readAudit(t *testing.T, path string) []auditlog.Record {
	t.Helper()
	recs := readAuditLines(t, path)
	for _, p := range auditlog.CheckIntents(recs, auditlog.IntentOptions{Refused: auditlog.AuditUnavailable}) {
		t.Error(p)
	}
	return auditlog.Done(recs)
}

// readAuditLines returns every line of the audit file, failing unless
// each is a complete JSON record (the file's last byte a newline
// included).
func readAuditLines(t *testing.T, path string) []auditlog.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if torn := auditlog.Torn(b); len(torn) > 0 {
		t.Errorf("audit file ends in a torn record: %q", torn)
	}
	return auditlog.Parse(t, b)
}

func openAudit(t *testing.T, reads bool) (*audit.Logger, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	l, err := audit.Open(path, audit.Options{Reads: reads})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, path
}

func TestCallerInHandlerAndLog(t *testing.T) {
	logs := captureLogs(t, 2)
	f := &callerSmb{}
	s := start(t, testConfig(t), smbGroupAPI(f))
	c := smbv1.NewSmbClient(dial(t, s.Endpoints()[0].Address))
	if _, err := c.NewSmbGlobalMapping(callCtx(t), &smbv1.NewSmbGlobalMappingRequest{RemotePath: `\\s\x`}); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	got := f.caller
	f.mu.Unlock()
	if got.PID != os.Getpid() || !got.HasUnixIDs && isUnixSocketOS() || got.UID != uint32(os.Geteuid()) && isUnixSocketOS() {
		t.Errorf("handler saw caller %+v, want this process", got)
	}
	// The line of a successful call is written by the call log's writer
	// after the answer (callLog): wait for it.
	want := `caller=` + strconv.Quote(got.String())
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), want) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if out := logs.String(); !strings.Contains(out, want) {
		t.Errorf("call log does not name the caller %q:\n%s", got, out)
	}
}

func TestPolicyDeniesAndAudits(t *testing.T) {
	captureLogs(t, 0)
	me := os.Geteuid()
	if !isUnixSocketOS() {
		t.Skip("needs Unix peer credentials")
	}
	// uid 4242 may map shares; this process (another uid) may not. Any
	// caller may read its health.
	store := writePolicy(t, `
rules:
- name: smb-driver
  callers: [{uids: [4242]}]
  allow: [{groups: [smb], methods: ["*"]}]
`)
	al, path := openAudit(t, false)
	f := &callerSmb{}
	cfg := testConfig(t)
	cfg.Policy, cfg.Audit = store, al
	s := start(t, cfg, smbGroupAPI(f))
	cc := dial(t, s.Endpoints()[0].Address)
	c := smbv1.NewSmbClient(cc)
	_, err := c.NewSmbGlobalMapping(callCtx(t), &smbv1.NewSmbGlobalMappingRequest{RemotePath: `\\s\x`, Password: "pw-must-not-leak"})
	st := status.Convert(err)
	if st.Code() != codes.PermissionDenied || !strings.Contains(st.Message(), "may not call smb.NewSmbGlobalMapping: no rule allows it") ||
		!strings.Contains(st.Message(), "uid "+itoa(me)) {
		t.Errorf("call = %v, want PermissionDenied naming the caller", err)
	}
	if f.calls != 0 {
		t.Error("the handler ran for a denied call")
	}
	// Health stays open to every caller that can reach the endpoint.
	if _, err := healthpb.NewHealthClient(cc).Check(callCtx(t), &healthpb.HealthCheckRequest{}); err != nil {
		t.Errorf("health under a policy: %v", err)
	}
	w, err := healthpb.NewHealthClient(cc).Watch(callCtx(t), &healthpb.HealthCheckRequest{})
	if err == nil {
		_, err = w.Recv()
	}
	if err != nil {
		t.Errorf("health watch (a stream) under a policy: %v", err)
	}
	recs := readAudit(t, path)
	if len(recs) != 1 {
		t.Fatalf("%d audit records, want 1: %+v", len(recs), recs)
	}
	r := recs[0]
	if r.Method != "NewSmbGlobalMapping" || r.Group != "smb" || r.Decision != "deny" || r.Code != "PermissionDenied" ||
		r.Reason != "no rule allows it" || r.Caller.UID == nil || *r.Caller.UID != uint32(me) || r.Request["password"] != "REDACTED" {
		t.Errorf("audit record %+v", r)
	}

	// The same server with a policy that allows this uid: the call runs
	// and is audited with the rule.
	store2 := writePolicy(t, `
rules:
- name: me
  callers: [{uids: [`+itoa(me)+`]}]
  allow: [{methods: ["smb.*"]}]
`)
	al2, path2 := openAudit(t, false)
	cfg2 := testConfig(t)
	cfg2.Policy, cfg2.Audit = store2, al2
	s2 := start(t, cfg2, smbGroupAPI(f))
	c2 := smbv1.NewSmbClient(dial(t, s2.Endpoints()[0].Address))
	if _, err := c2.NewSmbGlobalMapping(callCtx(t), &smbv1.NewSmbGlobalMappingRequest{RemotePath: `\\s\x`}); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.RemoveSmbGlobalMapping(callCtx(t), &smbv1.RemoveSmbGlobalMappingRequest{RemotePath: `\\s\x`}); status.Code(err) != codes.NotFound {
		t.Fatal(err)
	}
	recs = readAudit(t, path2)
	if len(recs) != 2 || recs[0].Decision != "allow" || recs[0].Rule != "me" || recs[0].Code != "OK" ||
		recs[1].Code != "NotFound" || recs[1].Message != "no mapping" {
		t.Errorf("audit records %+v", recs)
	}
}

func TestAuditReadsAndPanics(t *testing.T) {
	captureLogs(t, 0)
	f := newFakeSystem()
	for _, reads := range []bool{false, true} {
		al, path := openAudit(t, reads)
		cfg := testConfig(t)
		cfg.Audit = al
		s := start(t, cfg, systemAPI(f), smbGroupAPI(&callerSmb{}))
		c := systemv1alpha1.NewSystemClient(dial(t, s.Endpoints()[0].Address))
		if _, err := c.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "ok"}); err != nil {
			t.Fatal(err)
		}
		sc := smbv1.NewSmbClient(dial(t, s.Endpoints()[1].Address))
		if _, err := sc.NewSmbGlobalMapping(callCtx(t), &smbv1.NewSmbGlobalMappingRequest{RemotePath: "panic"}); status.Code(err) != codes.Internal {
			t.Fatalf("panicking call = %v", err)
		}
		recs := readAudit(t, path)
		want := 1 // the panicking mutation
		if reads {
			want = 2
		}
		if len(recs) != want {
			t.Fatalf("reads=%v: %d records, want %d: %+v", reads, len(recs), want, recs)
		}
		last := recs[len(recs)-1]
		if last.Method != "NewSmbGlobalMapping" || last.Code != "Internal" || last.Kind != "mutate" {
			t.Errorf("panicking call recorded as %+v", last)
		}
		if reads && (recs[0].Method != "GetService" || recs[0].Kind != "read" || recs[0].Decision != "allow") {
			t.Errorf("read recorded as %+v", recs[0])
		}
	}
}

// brokenWriter fails every write while broken is set.
type brokenWriter struct {
	mu     sync.Mutex
	broken bool
	lines  int
}

func (w *brokenWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken {
		return 0, errors.New("no space left on device")
	}
	w.lines++
	return len(p), nil
}

func (w *brokenWriter) set(b bool) {
	w.mu.Lock()
	w.broken = b
	w.mu.Unlock()
}

// While the audit log cannot be written, calls that change the node are
// refused before they run, from the very first one: the intent record
// must be written before the handler is called. Reads go on; the first
// change whose intent is written goes ahead.
func TestAuditFailureRefusesMutations(t *testing.T) {
	captureLogs(t, 0)
	w := &brokenWriter{}
	al := audit.New(w, audit.Options{})
	cfg := testConfig(t)
	cfg.Audit = al
	f := &callerSmb{}
	s := start(t, cfg, smbGroupAPI(f), systemAPI(newFakeSystem()))
	sc := smbv1.NewSmbClient(dial(t, s.Endpoints()[0].Address))
	sys := systemv1alpha1.NewSystemClient(dial(t, s.Endpoints()[1].Address))
	mapShare := func() error {
		_, err := sc.NewSmbGlobalMapping(callCtx(t), &smbv1.NewSmbGlobalMappingRequest{RemotePath: `\\s\x`})
		return err
	}

	w.set(true)
	if err := mapShare(); status.Code(err) != codes.Unavailable {
		t.Errorf("first mutation after the audit log broke = %v, want Unavailable", err)
	}
	if err := mapShare(); status.Code(err) != codes.Unavailable {
		t.Errorf("mutation with a broken audit log = %v, want Unavailable", err)
	}
	if f.calls != 0 {
		t.Errorf("handler ran %d times while the audit log was broken, want 0", f.calls)
	}
	if al.Healthy() || al.Failures() != 4 { // each refusal: its intent and its refusal record
		t.Errorf("healthy %v failures %d, want unhealthy and 4", al.Healthy(), al.Failures())
	}
	if _, err := sys.GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "ok"}); err != nil {
		t.Errorf("read with a broken audit log: %v", err)
	}
	w.set(false)
	if err := mapShare(); err != nil {
		t.Errorf("mutation after the audit log recovered: %v", err)
	}
	if !al.Healthy() || f.calls != 1 || w.lines != 2 { // intent and outcome
		t.Errorf("healthy %v, handler calls %d, lines %d; want healthy, 1, 2", al.Healthy(), f.calls, w.lines)
	}
}

func TestMethodName(t *testing.T) {
	for in, want := range map[string]string{"/v1.Disk/PartitionDisk": "PartitionDisk", "/grpc.health.v1.Health/Check": "Check", "x": "x"} {
		if got := methodName(in); got != want {
			t.Errorf("methodName(%q) = %q", in, got)
		}
	}
}

func TestGroupMethods(t *testing.T) {
	m, err := GroupMethods(adapter.All())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(m["disk"], ","), "PartitionDisk") || !strings.Contains(strings.Join(m["smb"], ","), "NewSmbGlobalMapping") {
		t.Errorf("GroupMethods = %v", m)
	}
	if _, err := MethodsOf(adapter.API{Group: "x", Version: "v1", Service: "no.Such"}); err == nil {
		t.Error("MethodsOf an unknown service succeeded")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// isUnixSocketOS tells whether callers are identified by Unix peer
// credentials here.
func isUnixSocketOS() bool { return runtime.GOOS == "linux" }

// TestRequestIDInAuditRecord: a short x-request-id the client sends is
// the audit record's request ID; one too long is left out, so a client
// cannot bloat the log with it (gRPC itself refuses unprintable values).
func TestRequestIDInAuditRecord(t *testing.T) {
	captureLogs(t, 0)
	al, path := openAudit(t, false)
	cfg := testConfig(t)
	cfg.Audit = al
	s := start(t, cfg, smbGroupAPI(&callerSmb{}))
	c := smbv1.NewSmbClient(dial(t, s.Endpoints()[0].Address))
	ids := []string{"req-42", strings.Repeat("x", maxRequestID+1)}
	for _, id := range ids {
		ctx := metadata.AppendToOutgoingContext(callCtx(t), audit.RequestIDMetadata, id)
		if _, err := c.NewSmbGlobalMapping(ctx, &smbv1.NewSmbGlobalMappingRequest{RemotePath: `\\s\x`}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, r := range readAudit(t, path) {
		if r.Phase == "done" {
			got = append(got, r.RequestID)
		}
	}
	if want := []string{"req-42", ""}; !slices.Equal(got, want) {
		t.Errorf("request IDs of the done records %q, want %q", got, want)
	}
}
