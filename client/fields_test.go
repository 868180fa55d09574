package client

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// The field-mapping tests set one field (leaf) of a message at a time to a
// value no other leaf gets, convert it, and check that exactly the
// expected leaf of the other side changed, to exactly that value. A field
// dropped, sent to the wrong field, or copied into a second one fails.
//
// Leaves are named by path: fields by their lowercased names without
// underscores (the model's VolumeID and the wire's volume_id are both
// "volumeid"), "[]" for the element of a list, "{key}" and "{}" for the
// key and the value of a map entry. A leaf lands by default on the leaf of
// the same path; the tables below hold the exceptions, each documented in
// the hand-written conversion.go of its version.

// requestMapping is, per "<group> <version> <model request>.<leaf>", the
// wire leaf a model request leaf lands on when the name differs.
var requestMapping = map[string]string{}

func init() {
	for _, v := range []string{"v1alpha1", "v1beta1", "v1beta2"} {
		requestMapping["disk "+v+" PartitionDiskRequest.disknumber"] = "diskid"
		requestMapping["volume "+v+" ListVolumesOnDiskRequest.disknumber"] = "diskid"
		requestMapping["volume "+v+" MountVolumeRequest.targetpath"] = "path"
		requestMapping["volume "+v+" UnmountVolumeRequest.targetpath"] = "path"
		requestMapping["volume "+v+" ResizeVolumeRequest.sizebytes"] = "size"
	}
	for _, v := range []string{"v1beta1", "v1beta2"} {
		requestMapping["disk "+v+" GetDiskStatsRequest.disknumber"] = "diskid"
		requestMapping["volume "+v+" GetVolumeIDFromTargetPathRequest.targetpath"] = "mount"
	}
	requestMapping["disk v1beta2 SetDiskStateRequest.disknumber"] = "diskid"
	requestMapping["disk v1beta2 GetDiskStateRequest.disknumber"] = "diskid"
}

// responseMapping is, per "<group> <version> <wire response>.<leaf>", the
// model leaf a wire response leaf lands on when the name differs; "" means
// the leaf is dropped on purpose.
var responseMapping = map[string]string{}

func init() {
	for _, v := range []string{"v1beta1", "v1beta2"} {
		responseMapping["disk "+v+" DiskStatsResponse.disksize"] = "totalbytes"
		// Only the keys upstream filled are read (toModelDiskIDs); the
		// explicit cases in responseCases check those.
		responseMapping["disk "+v+" ListDiskIDsResponse.diskids{}.identifiers{key}"] = ""
		responseMapping["disk "+v+" ListDiskIDsResponse.diskids{}.identifiers{}"] = ""
		responseMapping["volume "+v+" VolumeStatsResponse.volumesize"] = "totalbytes"
		responseMapping["volume "+v+" VolumeStatsResponse.volumeusedsize"] = "usedbytes"
	}
	for _, v := range []string{"v1alpha1", "v1beta1"} {
		responseMapping["filesystem "+v+" IsMountPointResponse.ismountpoint"] = "issymlink"
		// Upstream never filled the error strings (//convgen:ignore).
		for _, r := range []string{"PathExistsResponse", "MkdirResponse", "RmdirResponse", "LinkPathResponse", "IsMountPointResponse"} {
			responseMapping["filesystem "+v+" "+r+".error"] = ""
		}
		for _, r := range []string{"NewSmbGlobalMappingResponse", "RemoveSmbGlobalMappingResponse"} {
			responseMapping["smb "+v+" "+r+".error"] = ""
		}
	}
}

// responseCase is a wire response whose model leaves are given: what the
// generic variants cannot reach (map keys with a meaning).
type responseCase struct {
	group, versions, method string
	wire                    func(reflect.Type) reflect.Value // a value of the wire response type
	want                    map[string]string
}

var responseCases = []responseCase{
	{"disk", "v1beta1 v1beta2", "ListDiskIDs", func(t reflect.Type) reflect.Value {
		return fill(t, map[string]any{"DiskIDs": map[string]map[string]string{"17": {"page83": "6002", "serialNumber": "SER-9", "other": "x"}}})
	}, map[string]string{"diskids{key}": "17", "diskids{}.page83": "6002", "diskids{}.serialnumber": "SER-9"}},
}

// fill builds a value of struct type t (a wire message) from the given
// fields, for responseCases: a map[string]map[string]string field becomes
// a map of messages whose only field is that map (DiskIDs.Identifiers).
func fill(t reflect.Type, fields map[string]any) reflect.Value {
	v := reflect.New(t).Elem()
	for name, val := range fields {
		f := v.FieldByName(name)
		src := reflect.ValueOf(val)
		m := reflect.MakeMap(f.Type())
		for _, k := range src.MapKeys() {
			elem := reflect.New(f.Type().Elem().Elem())
			inner := elem.Elem()
			for i := range inner.NumField() {
				if inner.Type().Field(i).IsExported() && inner.Field(i).Kind() == reflect.Map {
					inner.Field(i).Set(src.MapIndex(k))
				}
			}
			m.SetMapIndex(k, elem)
		}
		f.Set(m)
	}
	return v
}

// leafName normalises a field name: VolumeID, VolumeId and volume_id are
// all volumeid.
func leafName(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }

// flatten writes v's set leaves into out, by path. Zero scalars are not
// set; map keys always are.
func flatten(v reflect.Value, path string, out map[string]string) {
	join := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			flatten(v.Elem(), path, out)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.IsExported() && !strings.HasPrefix(f.Name, "XXX_") {
				flatten(v.Field(i), join(leafName(f.Name)), out)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			flatten(v.Index(i), path+"[]", out)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			out[path+"{key}"] = scalar(k)
			flatten(v.MapIndex(k), path+"{}", out)
		}
	default:
		if !v.IsZero() {
			out[path] = scalar(v)
		}
	}
}

// scalar formats a scalar so that a value reads the same on both sides:
// 4242 as uint32, int64, enum or decimal string.
func scalar(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	}
	panic("scalar: unhandled kind " + v.Kind().String())
}

// setScalar sets a scalar to n (a string to n in decimal, so that it can
// be a disk ID; a bool to true).
func setScalar(v reflect.Value, n int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(strconv.Itoa(n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(n))
	default:
		panic("setScalar: unhandled kind " + v.Kind().String())
	}
}

// variants returns values of type t each with exactly one leaf set (a map
// entry's key, or its key and one leaf of its value), to a value from next
// no other variant gets.
func variants(t reflect.Type, next func() int) []reflect.Value {
	var out []reflect.Value
	switch t.Kind() {
	case reflect.Pointer:
		for _, sub := range variants(t.Elem(), next) {
			p := reflect.New(t.Elem())
			p.Elem().Set(sub)
			out = append(out, p)
		}
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || strings.HasPrefix(f.Name, "XXX_") {
				continue
			}
			for _, sub := range variants(f.Type, next) {
				v := reflect.New(t).Elem()
				v.Field(i).Set(sub)
				out = append(out, v)
			}
		}
	case reflect.Slice:
		for _, sub := range variants(t.Elem(), next) {
			s := reflect.MakeSlice(t, 1, 1)
			s.Index(0).Set(sub)
			out = append(out, s)
		}
	case reflect.Map:
		key := func() reflect.Value {
			k := reflect.New(t.Key()).Elem()
			setScalar(k, next())
			return k
		}
		// The key alone, with an empty (not nil) value.
		m := reflect.MakeMap(t)
		empty := reflect.New(t.Elem()).Elem()
		if t.Elem().Kind() == reflect.Pointer {
			empty = reflect.New(t.Elem().Elem())
		}
		m.SetMapIndex(key(), empty)
		out = append(out, m)
		for _, sub := range variants(t.Elem(), next) {
			m := reflect.MakeMap(t)
			m.SetMapIndex(key(), sub)
			out = append(out, m)
		}
	default:
		v := reflect.New(t).Elem()
		setScalar(v, next())
		out = append(out, v)
	}
	return out
}

// diff returns the leaves of after that are not the same in before, and
// those of before that are gone (as "").
func diff(before, after map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range after {
		if before[k] != v {
			out[k] = v
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			out[k] = ""
		}
	}
	return out
}

// checkLanded compares the leaves that changed (got) with those expected
// from the leaves set (set), mapped by mapping under prefix; the mapping
// entries it uses are marked in used, so stale ones can be found.
func checkLanded(prefix string, set, got map[string]string, mapping map[string]string, used map[string]bool) error {
	want := map[string]string{}
	for p, v := range set {
		q, ok := mapping[prefix+"."+p]
		if ok {
			used[prefix+"."+p] = true
		} else {
			q = p
		}
		if q != "" {
			want[q] = v
		}
	}
	if reflect.DeepEqual(want, got) {
		return nil
	}
	return fmt.Errorf("set %s; want %s; got %s", show(set), show(want), show(got))
}

func show(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%q", k, m[k])
	}
	b.WriteString("}")
	return b.String()
}

// TestRequestFieldsLand: for every method of every group-version the client
// is built with, each leaf of the model request, set alone to a distinct
// value, lands on exactly the wire leaf of the same name (or the one
// requestMapping names), with that value; or it is refused with
// errdefs.ErrInvalidArgument naming the field.
func TestRequestFieldsLand(t *testing.T) {
	ctx := context.Background()
	checked, refused := 0, 0
	used := map[string]bool{}
	for _, gv := range builtIn {
		rec := &recorder{}
		for _, m := range stubMethods(gv, rec) {
			reqT := m.reqT
			call := func(req reflect.Value) (map[string]string, error) {
				rec.method, rec.req = "", nil
				_, err := m.call(ctx, req)
				if err != nil || rec.req == nil {
					return nil, err
				}
				out := map[string]string{}
				flatten(reflect.ValueOf(rec.req), "", out)
				return out, nil
			}
			base, err := call(reflect.New(reqT))
			if errors.Is(err, errdefs.ErrUnimplemented) {
				continue // TestNoFieldSilentlyDropped checks these
			}
			if err != nil {
				t.Errorf("%s %s %s with an empty request: %v", gv.group, gv.version, m.name, err)
				continue
			}
			n := 4200
			for _, v := range variants(reqT, func() int { n++; return n }) {
				req := reflect.New(reqT)
				req.Elem().Set(v)
				set := map[string]string{}
				flatten(req, "", set)
				got, err := call(req)
				prefix := fmt.Sprintf("%s %s %s", gv.group, gv.version, reqT.Name())
				if errors.Is(err, errdefs.ErrInvalidArgument) {
					refused++
					continue // TestNoFieldSilentlyDropped checks the refusals
				}
				if err != nil {
					t.Errorf("%s: set %s: %v", prefix, show(set), err)
					continue
				}
				checked++
				if err := checkLanded(prefix, set, diff(base, got), requestMapping, used); err != nil {
					t.Errorf("%s (%s): %v", prefix, m.name, err)
				}
			}
		}
	}
	staleEntries(t, "requestMapping", requestMapping, used)
	t.Logf("%d request leaves checked, %d refused", checked, refused)
}

// staleEntries reports the entries of mapping (named name) that no leaf
// used.
func staleEntries(t *testing.T, name string, mapping map[string]string, used map[string]bool) {
	t.Helper()
	for k := range mapping {
		if !used[k] {
			t.Errorf("%s[%q] matches no %s leaf: a stale entry", name, k, strings.TrimSuffix(name, "Mapping"))
		}
	}
}

// answerer is a connection that answers every call with the response its
// fill function makes from the reply's type, and records that type.
type answerer struct {
	replyT reflect.Type
	fill   func(reflect.Type) reflect.Value
}

func (a *answerer) Invoke(_ context.Context, _ string, _, reply any, _ ...grpc.CallOption) error {
	rv := reflect.ValueOf(reply)
	a.replyT = rv.Type().Elem()
	if a.fill != nil {
		rv.Elem().Set(a.fill(a.replyT))
	}
	return nil
}

func (a *answerer) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, errors.New("no streams")
}

// TestResponseFieldsLand: for every method of every group-version the
// client is built with, each leaf of the wire response, set alone to a
// distinct value, lands on exactly the model leaf of the same name (or the
// one responseMapping names, or nowhere where it says so), with that value.
func TestResponseFieldsLand(t *testing.T) {
	ctx := context.Background()
	checked := 0
	used := map[string]bool{}
	cases := map[string]bool{}
	for _, gv := range builtIn {
		a := &answerer{}
		for _, m := range stubMethods(gv, a) {
			call := func(fill func(reflect.Type) reflect.Value) (map[string]string, error) {
				a.fill = fill
				res, err := m.call(ctx, reflect.New(m.reqT))
				if err != nil {
					return nil, err
				}
				out := map[string]string{}
				flatten(res, "", out)
				return out, nil
			}
			a.replyT = nil
			base, err := call(nil)
			if errors.Is(err, errdefs.ErrUnimplemented) {
				continue
			}
			if err != nil || a.replyT == nil {
				t.Errorf("%s %s %s with an empty response: %v", gv.group, gv.version, m.name, err)
				continue
			}
			wireT := a.replyT
			prefix := fmt.Sprintf("%s %s %s", gv.group, gv.version, wireT.Name())
			n := 4200
			for _, v := range variants(wireT, func() int { n++; return n }) {
				set := map[string]string{}
				flatten(v, "", set)
				got, err := call(func(reflect.Type) reflect.Value { return v })
				if err != nil {
					t.Errorf("%s: set %s: %v", prefix, show(set), err)
					continue
				}
				checked++
				if err := checkLanded(prefix, set, diff(base, got), responseMapping, used); err != nil {
					t.Errorf("%s (%s): %v", prefix, m.name, err)
				}
			}
			for _, rc := range responseCases {
				if rc.group != gv.group || rc.method != m.name || !strings.Contains(" "+rc.versions+" ", " "+gv.version+" ") {
					continue
				}
				cases[rc.group+" "+gv.version+" "+rc.method] = true
				got, err := call(rc.wire)
				if err != nil {
					t.Errorf("%s: %v", prefix, err)
				} else if d := diff(base, got); !reflect.DeepEqual(d, rc.want) {
					t.Errorf("%s: got %s, want %s", prefix, show(d), show(rc.want))
				}
			}
		}
	}
	staleEntries(t, "responseMapping", responseMapping, used)
	for _, rc := range responseCases {
		for _, v := range strings.Fields(rc.versions) {
			if !cases[rc.group+" "+v+" "+rc.method] {
				t.Errorf("responseCases: %s %s %s was never checked", rc.group, v, rc.method)
			}
		}
	}
	t.Logf("%d response leaves checked", checked)
}
