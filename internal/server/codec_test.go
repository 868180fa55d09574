package server

import (
	"io"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
	systemv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/system/v1alpha1"
)

// rawCodec sends request bytes as they are, so a test can send what no
// generated client can marshal.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *v.(*[]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*[]byte) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

func decodeMarks() int {
	n := 0
	decodeErrors.Range(func(any, any) bool { n++; return true })
	return n
}

// malformed are request bodies that do not decode as GetServiceRequest.
var malformed = []struct {
	what string
	msg  []byte
}{
	{"a string that is not UTF-8", protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "ssh\xffd")},
	{"an overlong UTF-8 spelling", protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), "\xc0\xae")},
	{"a truncated length-delimited field", []byte{0x0a, 0x40, 'x'}},
	{"field number 0", []byte{0x00, 0x01}},
	{"a varint over 10 bytes", []byte{0x10, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	{"an end-group tag without a group", []byte{0x0c}},
}

// TestMalformedRequestIsInvalidArgument sends raw bad bytes over a real
// connection: each is answered InvalidArgument (grpc-go alone answers
// Internal), the handler never runs (it would answer OK to the empty
// message), the endpoint keeps serving, and no mark outlives its call.
func TestMalformedRequestIsInvalidArgument(t *testing.T) {
	logs := captureLogs(t, 0)
	f := newFakeSystem()
	s := start(t, testConfig(t), systemAPI(f))
	cc := dial(t, s.Endpoints()[0].Address)
	for _, m := range malformed {
		req, resp := m.msg, []byte(nil)
		err := cc.Invoke(callCtx(t), systemv1alpha1.System_GetService_FullMethodName, &req, &resp, grpc.ForceCodec(rawCodec{}))
		if st := status.Convert(err); st.Code() != codes.InvalidArgument {
			t.Errorf("%s: %v, want InvalidArgument", m.what, err)
		}
	}
	// A well-formed request still reaches the handler.
	r, err := systemv1alpha1.NewSystemClient(cc).GetService(callCtx(t), &systemv1alpha1.GetServiceRequest{Name: "sshd"})
	if err != nil || r.GetDisplayName() != "shown sshd" {
		t.Errorf("a good request after the bad ones: %v, %v", r, err)
	}
	// The health service's stream too.
	stream, err := cc.NewStream(callCtx(t), &grpc.StreamDesc{ServerStreams: true}, healthpb.Health_Watch_FullMethodName, grpc.ForceCodec(rawCodec{}))
	if err != nil {
		t.Fatal(err)
	}
	bad := malformed[0].msg
	if err := stream.SendMsg(&bad); err != nil {
		t.Fatal(err)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	var got []byte
	if err := stream.RecvMsg(&got); status.Code(err) != codes.InvalidArgument || err == io.EOF {
		t.Errorf("health Watch with a malformed request: %v, want InvalidArgument", err)
	}
	if n := decodeMarks(); n != 0 {
		t.Errorf("%d decode marks outlived their calls", n)
	}
	if !strings.Contains(logs.String(), `code="InvalidArgument"`) {
		t.Errorf("the malformed calls were not logged as failed:\n%s", logs)
	}
}

// TestMalformedRequestRefusedBeforeGate: a request that does not decode
// is refused InvalidArgument before the gate, whoever sends it (the gate
// judges model requests, and there is none): it reaches no group, even
// from a caller the policy does not allow, and the mark of the request
// does not outlive the call.
func TestMalformedRequestRefusedBeforeGate(t *testing.T) {
	captureLogs(t, 0)
	if !isUnixSocketOS() {
		t.Skip("needs Unix peer credentials")
	}
	store := writePolicy(t, `
rules:
- name: someone-else
  callers: [{uids: [4242]}]
  allow: [{groups: [smb], methods: ["*"]}]
`)
	cfg := testConfig(t)
	cfg.Policy = store
	f := &callerSmb{}
	s := start(t, cfg, smbGroupAPI(f))
	cc := dial(t, s.Endpoints()[0].Address)
	req := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), `\\srv\`+"\xff")
	var resp []byte
	err := cc.Invoke(callCtx(t), smbv1.Smb_NewSmbGlobalMapping_FullMethodName, &req, &resp, grpc.ForceCodec(rawCodec{}))
	if code := status.Code(err); code != codes.InvalidArgument {
		t.Errorf("malformed request from a caller no rule allows: %v, want InvalidArgument", err)
	}
	if f.calls != 0 {
		t.Errorf("the group ran %d times for a malformed request", f.calls)
	}
	if n := decodeMarks(); n != 0 {
		t.Errorf("%d decode marks outlived a denied call", n)
	}
}
