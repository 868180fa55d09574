package client

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// recorder is a connection that records the last request sent and answers
// with an empty response.
type recorder struct {
	method string
	req    proto.Message
}

func (r *recorder) Invoke(_ context.Context, method string, args, _ any, _ ...grpc.CallOption) error {
	r.method = method
	r.req = proto.Clone(args.(proto.Message))
	return nil
}

func (r *recorder) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, errors.New("no streams")
}

// stubOf binds gv's stub to conn and returns it as its group's interface.
func stubOf(gv groupVersion, conn grpc.ClientConnInterface) reflect.Value {
	c := &Client{}
	gv.bind(conn, &c.groups)
	accessor := map[string]string{"disk": "Disk", "volume": "Volume", "filesystem": "Filesystem", "smb": "SMB", "iscsi": "ISCSI", "system": "System", "smbmappings": "SMBMappings"}[gv.group]
	return reflect.ValueOf(c).MethodByName(accessor).Call(nil)[0]
}

// stubMethod is one method of a group-version client's stub, called
// through reflection.
type stubMethod struct {
	name string
	reqT reflect.Type // the model request type
	stub reflect.Value
	i    int
}

// call calls the method with req and returns its response and error.
func (m stubMethod) call(ctx context.Context, req reflect.Value) (reflect.Value, error) {
	res := m.stub.Method(m.i).Call([]reflect.Value{reflect.ValueOf(ctx), req})
	err, _ := res[1].Interface().(error)
	return res[0], err
}

// stubMethods are the methods of gv's stub bound to conn.
func stubMethods(gv groupVersion, conn grpc.ClientConnInterface) []stubMethod {
	stub := stubOf(gv, conn)
	var out []stubMethod
	for i := range stub.NumMethod() {
		m := stub.Type().Method(i)
		out = append(out, stubMethod{name: m.Name, reqT: m.Type.In(1).Elem(), stub: stub, i: i})
	}
	return out
}

// setValue returns a non-zero value of type t: every field of a struct set.
func setValue(t reflect.Type) reflect.Value {
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.String:
		v.SetString("x7")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Pointer:
		v.Set(reflect.New(t.Elem()))
		v.Elem().Set(setValue(t.Elem()))
	case reflect.Struct:
		for i := range t.NumField() {
			v.Field(i).Set(setValue(t.Field(i).Type))
		}
	case reflect.Slice:
		v.Set(reflect.Append(reflect.MakeSlice(t, 0, 1), setValue(t.Elem())))
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
		v.SetMapIndex(setValue(t.Key()), setValue(t.Elem()))
	default:
		panic("setValue: unhandled kind " + t.Kind().String())
	}
	return v
}

// TestNoFieldSilentlyDropped: for every method of every group-version the
// client is built with, setting any one field of the model request either
// changes the wire request or is refused with errdefs.ErrInvalidArgument.
// An older version that cannot carry a field must say so, not drop it (a
// dropped PartitionNumber would list a whole disk's volumes). Methods the
// version lacks must fail with errdefs.ErrUnimplemented without calling.
func TestNoFieldSilentlyDropped(t *testing.T) {
	ctx := context.Background()
	calls, refused, unimplemented := 0, 0, 0
	for _, gv := range builtIn {
		rec := &recorder{}
		for _, m := range stubMethods(gv, rec) {
			reqT := m.reqT
			call := func(req reflect.Value) error {
				rec.method, rec.req = "", nil
				_, err := m.call(ctx, req)
				return err
			}
			err := call(reflect.New(reqT))
			if errors.Is(err, errdefs.ErrUnimplemented) {
				unimplemented++
				if rec.method != "" {
					t.Errorf("%s %s %s: unimplemented, yet it called %s", gv.group, gv.version, m.name, rec.method)
				}
				if !strings.Contains(err.Error(), gv.version) || !strings.Contains(err.Error(), m.name) {
					t.Errorf("%s %s %s: the error %q names neither the method nor the version", gv.group, gv.version, m.name, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %s %s with an empty request: %v", gv.group, gv.version, m.name, err)
				continue
			}
			if !strings.HasPrefix(rec.method, "/"+gv.service+"/") {
				t.Errorf("%s %s %s called %q, not a method of %s", gv.group, gv.version, m.name, rec.method, gv.service)
			}
			calls++
			empty := rec.req
			for f := range reqT.NumField() {
				field := reqT.Field(f)
				req := reflect.New(reqT)
				req.Elem().Field(f).Set(setValue(field.Type))
				err := call(req)
				switch {
				case errors.Is(err, errdefs.ErrInvalidArgument):
					refused++
					if rec.method != "" {
						t.Errorf("%s %s %s.%s: refused, yet it called %s", gv.group, gv.version, reqT.Name(), field.Name, rec.method)
					}
					if !strings.Contains(err.Error(), field.Name) {
						t.Errorf("%s %s %s.%s: the refusal %q does not name the field", gv.group, gv.version, reqT.Name(), field.Name, err)
					}
				case err != nil:
					t.Errorf("%s %s %s.%s set: %v", gv.group, gv.version, reqT.Name(), field.Name, err)
				case proto.Equal(rec.req, empty):
					t.Errorf("%s %s: %s.%s was set but the wire request did not change: the field is dropped silently", gv.group, gv.version, reqT.Name(), field.Name)
				}
			}
		}
	}
	t.Logf("%d calls checked field by field, %d fields refused by older versions, %d methods unimplemented by older versions", calls, refused, unimplemented)
	// The volume versions before v1beta3 cannot select a partition; the
	// disk and volume versions before v1beta1 lack whole methods.
	if refused < 3 || unimplemented == 0 {
		t.Errorf("expected the older versions to refuse PartitionNumber (3 versions) and lack methods; got %d refusals, %d unimplemented", refused, unimplemented)
	}
}

// TestNotDialedAndClosed: a group not in Options.Groups, and every group
// after Close, fail with errdefs.ErrFailedPrecondition and say why.
func TestNotDialedAndClosed(t *testing.T) {
	// A Client built the way Dial builds one (no daemon is needed: neither
	// call may reach a connection): system dialed, disk not.
	c := &Client{conns: map[string]*grpc.ClientConn{}, versions: map[string]string{}}
	gv, _ := lookup("system", "v1alpha1")
	gv.bind(&guardedConn{c: c}, &c.groups)
	gvd, _ := lookup("disk", "v1")
	gvd.bind(notDialed("disk"), &c.groups)

	_, err := c.Disk().Rescan(context.Background(), nil)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "group disk was not dialed; add it to Options.Groups") {
		t.Errorf("a group not dialed: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err = c.System().GetBIOSSerialNumber(context.Background(), nil)
	if !errors.Is(err, errdefs.ErrFailedPrecondition) || !strings.Contains(err.Error(), "closed") {
		t.Errorf("a call after Close: %v", err)
	}
}

// TestOptionsRefused: mistakes in Options fail Dial before anything is
// dialed, with errdefs.ErrInvalidArgument and a message naming the mistake.
func TestOptionsRefused(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		o    Options
		want string
	}{
		"unknown group":      {Options{Groups: []string{"tape"}}, `unknown group "tape"`},
		"group twice":        {Options{Groups: []string{"disk", "disk"}}, "disk listed twice"},
		"unknown version":    {Options{Versions: map[string][]string{"disk": {"v9"}}}, "disk v9 is not a version this client is built with (v1, v1beta3, v1beta2, v1beta1, v1alpha1)"},
		"empty version list": {Options{Versions: map[string][]string{"disk": {}}}, "no version listed for disk"},
		"version of a group not dialed": {Options{Groups: []string{"disk"}, Versions: map[string][]string{"smb": {"v1"}}},
			`Options.Versions names "smb", which is not a group being dialed`},
	} {
		tc.o.SocketDir = dir
		c, err := Dial(context.Background(), tc.o)
		if err == nil {
			_ = c.Close()
			t.Errorf("%s: Dial succeeded", name)
			continue
		}
		if !errors.Is(err, errdefs.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want InvalidArgument with %q", name, err, tc.want)
		}
	}
}

// TestKnownVersionsNewestFirst pins the negotiation order the package
// documentation promises.
func TestKnownVersionsNewestFirst(t *testing.T) {
	want := map[string]string{
		"disk":       "v1 v1beta3 v1beta2 v1beta1 v1alpha1",
		"filesystem": "v2alpha1 v1 v1beta2 v1beta1 v1alpha1",
		"iscsi":      "v1alpha2 v1alpha1",
		"smb":        "v1 v1beta2 v1beta1 v1alpha1",
		// csi-node-proxy's own group, on an endpoint upstream does not have.
		"smbmappings": "v1alpha1",
		"system":      "v1alpha1",
		"volume":      "v2alpha1 v1 v1beta3 v1beta2 v1beta1 v1alpha1",
	}
	got := KnownVersions()
	if len(got) != len(want) {
		t.Errorf("groups %v, want %v", got, want)
	}
	for g, vs := range want {
		if s := strings.Join(got[g], " "); s != vs {
			t.Errorf("%s: %s, want %s", g, s, vs)
		}
	}
	if s := strings.Join(KnownGroups(), " "); s != "disk filesystem iscsi smb smbmappings system volume" {
		t.Errorf("KnownGroups: %s", s)
	}
}
