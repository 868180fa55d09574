package hostmetrics

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs/errgrpc"
	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
	"github.com/csi-node-proxy/csi-node-proxy/groups/filesystem"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
)

// observation is one ObserveHostOperation call.
type observation struct {
	group, op string
	d         time.Duration
	err       error
}

type recorder struct {
	mu  sync.Mutex
	obs []observation
}

func (r *recorder) ObserveHostOperation(group, op string, d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.obs = append(r.obs, observation{group, op, d, err})
}

func (r *recorder) take() []observation {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.obs
	r.obs = nil
	return o
}

func newSim(t *testing.T) *simulated.Host {
	t.Helper()
	cfg := simulated.DefaultConfig(nil)
	cfg.Seed = 7 // the same volume IDs on every host
	h, err := simulated.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Every method of every Host interface, called through its decorator,
// reaches the wrapped Host with the same arguments, returns what it
// returned, and is observed exactly once under its own name and group
// with its error. Two identical simulated hosts get the same calls, one
// directly and one through the decorators, and must answer alike.
func TestEveryMethodTimedAndPassedThrough(t *testing.T) {
	direct, wrapped := newSim(t), newSim(t)
	rec := &recorder{}
	methods := 0
	for _, tc := range []struct {
		group        string
		iface        reflect.Type
		direct, wrap any
	}{
		{GroupDisk, reflect.TypeFor[disk.Host](), direct.Disk(), Disk(wrapped.Disk(), rec)},
		{GroupVolume, reflect.TypeFor[volume.Host](), direct.Volume(), Volume(wrapped.Volume(), rec)},
		{GroupFilesystem, reflect.TypeFor[filesystem.Host](), direct.Filesystem(), Filesystem(wrapped.Filesystem(), rec)},
		{GroupSMB, reflect.TypeFor[smb.Host](), direct.SMB(), SMB(wrapped.SMB(), rec)},
		{GroupISCSI, reflect.TypeFor[iscsi.Host](), direct.ISCSI(), ISCSI(wrapped.ISCSI(), rec)},
		{GroupSystem, reflect.TypeFor[system.Host](), direct.System(), System(wrapped.System(), rec)},
	} {
		if reflect.TypeOf(tc.wrap) == reflect.TypeOf(tc.direct) {
			t.Fatalf("%s: not wrapped", tc.group)
		}
		for i := range tc.iface.NumMethod() {
			name := tc.iface.Method(i).Name
			methods++
			dm := reflect.ValueOf(tc.direct).MethodByName(name)
			wm := reflect.ValueOf(tc.wrap).MethodByName(name)
			args := zeroArgs(dm.Type())
			want, got := dm.Call(args), wm.Call(args)
			if w, g := render(want), render(got); w != g {
				t.Errorf("%s.%s through the decorator returned %s, directly %s", tc.group, name, g, w)
			}
			obs := rec.take()
			if len(obs) != 1 || obs[0].group != tc.group || obs[0].op != name || obs[0].d < 0 {
				t.Errorf("%s.%s observed as %+v, want one observation of itself", tc.group, name, obs)
				continue
			}
			lastErr, _ := got[len(got)-1].Interface().(error)
			if errgrpc.Code(obs[0].err) != errgrpc.Code(lastErr) || fmt.Sprint(obs[0].err) != fmt.Sprint(lastErr) {
				t.Errorf("%s.%s observed error %v, returned %v", tc.group, name, obs[0].err, lastErr)
			}
		}
	}
	if methods < 39 {
		t.Errorf("only %d Host methods checked; the six interfaces had 39 when this was written", methods)
	}
}

// zeroArgs is a context and zero values for the rest of a method's
// parameters.
func zeroArgs(ft reflect.Type) []reflect.Value {
	args := []reflect.Value{reflect.ValueOf(context.Background())}
	for i := 1; i < ft.NumIn(); i++ {
		args = append(args, reflect.Zero(ft.In(i)))
	}
	return args
}

// render prints results for comparison; errors by code and text.
func render(vs []reflect.Value) string {
	s := ""
	for _, v := range vs {
		if err, ok := v.Interface().(error); ok || v.Type().String() == "error" {
			s += fmt.Sprintf("[%v %v]", errgrpc.Code(err), err)
			continue
		}
		s += fmt.Sprintf("[%#v]", v.Interface())
	}
	return s
}

func TestNilObserverLeavesHostAlone(t *testing.T) {
	h := newSim(t)
	if Disk(h.Disk(), nil) != h.Disk() || Volume(h.Volume(), nil) != h.Volume() ||
		Filesystem(h.Filesystem(), nil) != h.Filesystem() || SMB(h.SMB(), nil) != h.SMB() ||
		ISCSI(h.ISCSI(), nil) != h.ISCSI() || System(h.System(), nil) != h.System() {
		t.Error("a nil Observer wrapped a host")
	}
}

// panicking is a disk host whose every call panics.
type panicking struct{ disk.Host }

func (panicking) Rescan(context.Context) error { panic("backend bug") }

// A panicking backend is not observed (the gRPC metrics count the call
// as Internal) and the panic goes on up unchanged.
func TestPanicNotObserved(t *testing.T) {
	rec := &recorder{}
	d := Disk(panicking{}, rec)
	func() {
		defer func() {
			if r := recover(); r != "backend bug" {
				t.Errorf("recovered %v", r)
			}
		}()
		_ = d.Rescan(context.Background())
	}()
	if obs := rec.take(); len(obs) != 0 {
		t.Errorf("a panic was observed: %+v", obs)
	}
}
