package client

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
)

// TestInvalidUTF8Refused: a request with a string that is not valid UTF-8
// anywhere (a field, a nested message, a list, a map key or value) is
// refused before it is sent, with errdefs.ErrInvalidArgument naming the
// field and never quoting the value; gRPC would fail to marshal it with a
// bare codes.Internal.
func TestInvalidUTF8Refused(t *testing.T) {
	const secret = "s3cr\xffet"
	bad := structpb.NewStringValue(secret)
	for name, tc := range map[string]struct {
		msg  proto.Message
		want string
	}{
		"a field":              {structpb.NewStringValue(secret), "string_value is not valid UTF-8"},
		"a nested message":     {&structpb.Struct{Fields: map[string]*structpb.Value{"ok": structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewStringValue("fine"), bad}})}}, "fields (the value of a key).list_value.values[1].string_value is not valid UTF-8"},
		"a map key":            {&structpb.Struct{Fields: map[string]*structpb.Value{secret: structpb.NewNullValue()}}, "fields (a key) is not valid UTF-8"},
		"a map value":          {&structpb.Struct{Fields: map[string]*structpb.Value{"k": bad}}, "fields (the value of a key).string_value is not valid UTF-8"},
		"valid UTF-8 is sent":  {&structpb.Struct{Fields: map[string]*structpb.Value{"ключ": structpb.NewStringValue("значение ✓")}}, ""},
		"an empty request too": {&structpb.Struct{}, ""},
	} {
		rec := &recorder{}
		g := &guardedConn{cc: rec, c: &Client{}}
		err := g.Invoke(context.Background(), "/v1.Test/Call", tc.msg, nil)
		if tc.want == "" {
			if err != nil || rec.method == "" {
				t.Errorf("%s: %v (sent: %v)", name, err, rec.method != "")
			}
			continue
		}
		if !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), "v1.Test.Call: "+tc.want) {
			t.Errorf("%s: %v, want InvalidArgument with %q", name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr") {
			t.Errorf("%s: the error quotes the value: %v", name, err)
		}
		if rec.method != "" {
			t.Errorf("%s: refused, yet sent", name)
		}
	}

	// Through a real stub: the CHAP secret of iscsi v1alpha2, and the
	// nested portal address.
	gv, _ := lookup("iscsi", "v1alpha2")
	c := &Client{}
	rec := &recorder{}
	gv.bind(&guardedConn{cc: rec, c: c}, &c.groups)
	_, err := c.ISCSI().ConnectTarget(context.Background(), &iscsi.ConnectTargetRequest{TargetPortal: &iscsi.TargetPortal{TargetAddress: "10.0.0.1"}, IQN: "iqn.2003-01.org.example:t", AuthType: iscsi.AuthOneWayCHAP, ChapUsername: "u", ChapSecret: secret})
	if !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), "chap_secret is not valid UTF-8") || strings.Contains(err.Error(), "s3cr") {
		t.Errorf("ConnectTarget with a bad secret: %v", err)
	}
	_, err = c.ISCSI().AddTargetPortal(context.Background(), &iscsi.AddTargetPortalRequest{TargetPortal: &iscsi.TargetPortal{TargetAddress: "10.0.0.\xff"}})
	if !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), "v1alpha2.Iscsi.AddTargetPortal: target_portal.target_address is not valid UTF-8") {
		t.Errorf("AddTargetPortal with a bad address: %v", err)
	}
	if rec.method != "" {
		t.Errorf("a refused request was sent: %s", rec.method)
	}
}

var _ grpc.ClientConnInterface = (*recorder)(nil)
