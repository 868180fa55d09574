package convgen

import (
	"path/filepath"
	"strings"
	"testing"
)

// widgetClient generates the widget tree with the client side.
func widgetClient(t *testing.T) map[string][]byte {
	t.Helper()
	return generate(t, Config{Dir: filepath.Join("testdata", "widget"), ErrdefsPath: errdefsPath, ClientDir: "client"})
}

// TestGoldenWidgetClient compares the client stubs and registry generated
// for the widget tree (a model field v1 cannot carry, an override that
// steps in for a renamed field, a skipped RPC, a renamed RPC with a
// fallible response override and ignored fields) with golden files.
func TestGoldenWidgetClient(t *testing.T) {
	files := widgetClient(t)
	want := map[string]string{
		"client/internal/widgetv1/" + ClientFileName: "client-widgetv1.go.golden",
		"client/internal/widgetv2/" + ClientFileName: "client-widgetv2.go.golden",
		"client/internal/widgetv3/" + ClientFileName: "client-widgetv3.go.golden",
		"client/" + ClientRegistryFileName:           "client-versions.go.golden",
	}
	checkGolden(t, filepath.Join("testdata", "widget"), files, want)
	// Without ClientDir nothing of the client is generated.
	plain := generate(t, Config{Dir: filepath.Join("testdata", "widget"), ErrdefsPath: errdefsPath})
	for name := range plain {
		if strings.HasPrefix(name, "client/") {
			t.Errorf("generated %s without ClientDir", name)
		}
	}
	again := widgetClient(t)
	for name, src := range files {
		if string(again[name]) != string(src) {
			t.Errorf("%s differs between two runs", name)
		}
	}
}

// TestGoldenClientBehaviour checks what the client golden files encode, so
// a careless -update cannot bless a regression.
func TestGoldenClientBehaviour(t *testing.T) {
	files := widgetClient(t)
	v1 := string(files["client/internal/widgetv1/"+ClientFileName])
	v2 := string(files["client/internal/widgetv2/"+ClientFileName])
	v3 := string(files["client/internal/widgetv3/"+ClientFileName])
	reg := string(files["client/"+ClientRegistryFileName])
	for _, c := range []struct{ file, name, s string }{
		// v1 has no number: the generated request conversion refuses one.
		{v1, "v1", "func fromModelGetRequest(in *widget.GetRequest) (*pb.GetRequest, error) {"},
		{v1, "v1", "if in.Number != 0 {\n\t\treturn nil, errdefs.Errorf(errdefs.ErrInvalidArgument, \"GetRequest.Number is set, but the widget v1 API has no field for it"},
		{v1, "v1", "req, err := fromModelGetRequest(in)\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\tresp, err := c.c.Get(ctx, req)"},
		{v1, "v1", "return nil, errgrpc.FromGRPC(err)"},
		{v1, "v1", "out.Widget = toModelWidget(in.Widget)"},
		{v1, "v1", "out.Id = in.ID"},
		{v1, "v1", "if in == nil {\n\t\tin = &widget.GetRequest{}\n\t}"},
		// v2: the override handles the request; the auto part says which
		// model field it must carry or refuse.
		{v2, "v2", "func autoFromModelGetRequest(in *widget.GetRequest) *pb.GetRequest {"},
		{v2, "v2", "model field Number has no counterpart"},
		{v2, "v2", "resp, err := c.c.Get(ctx, fromModelGetRequest(in))"},
		// v3: a renamed RPC, a fallible response override, ignored fields.
		{v3, "v3", "// Get calls v3.Widget/Fetch (//convgen:rename)."},
		{v3, "v3", "resp, err := c.c.Fetch(ctx, fromModelFetchRequest(in))"},
		{v3, "v3", "\treturn toModelFetchResponse(resp)\n}"},
		{v3, "v3", "// out.Scope stays empty (//convgen:ignore)."},
		{v3, "v3", "// in.Error is dropped (//convgen:ignore)."},
		{v3, "v3", "func toModelPart(in *pb.Part) *widget.Part {"},
		{reg, "registry", `{group: "widget", version: "v3", service: widgetv3.ServiceName, bind: func(cc grpc.ClientConnInterface, s *groups.Set) { s.Widget = widgetv3.New(cc) }},`},
		{reg, "registry", "//\twidget:     v3, v2, v1\n"},
	} {
		if !strings.Contains(c.file, c.s) {
			t.Errorf("client %s lacks %q", c.name, c.s)
		}
	}
	if strings.Contains(v2, "Old") {
		t.Error("client widgetv2 calls Old, which //convgen:skip leaves out")
	}
	if i, j := strings.Index(reg, "widgetv3.New"), strings.Index(reg, "widgetv1.New"); i < 0 || j < i {
		t.Error("the registry does not list v3 before v1 (newest first)")
	}
}

// TestClientGeneratedCodeCompiles type-checks the client stubs and the
// registry with their hand-written overrides and the stand-in client
// package.
func TestClientGeneratedCodeCompiles(t *testing.T) {
	typeCheck(t, filepath.Join("testdata", "widget"), widgetClient(t), func(name string) bool {
		return strings.HasPrefix(name, "client/")
	})
}

// TestClientDirectiveErrors: in client mode an RPC without a model method
// must be renamed or skipped, and a skip must name a real, otherwise
// uncalled RPC; adapters refuse //convgen:skip.
func TestClientDirectiveErrors(t *testing.T) {
	// A copy of the widget tree whose v2 client package lacks the skip
	// and skips Get instead; and whose v1 adapter package has a skip. It
	// must sit inside the module for its packages to load.
	dir := copyTree(t, filepath.Join("testdata", "widget"))
	writeFile(t, dir, "client/internal/widgetv2/conversion.go", "package widgetv2\n\n//convgen:skip Get Nope\n")
	writeFile(t, dir, "internal/adapter/widgetv1/conversion.go", "package widgetv1\n\n//convgen:skip Get\n")
	_, err := Generate(Config{Dir: dir, ErrdefsPath: errdefsPath, ClientDir: "client"})
	checkFails(t, err, "generation succeeded with broken client directives",
		"internal/adapter/widgetv1: //convgen:skip is for client stubs only",
	)
	// The adapter error stops generation before the client side; fix it
	// and look at the client's.
	writeFile(t, dir, "internal/adapter/widgetv1/conversion.go", "package widgetv1\n")
	_, err = Generate(Config{Dir: dir, ErrdefsPath: errdefsPath, ClientDir: "client"})
	checkFails(t, err, "generation succeeded with broken client directives",
		"client widget/v2: RPC Old has no method in widget.Interface; add //convgen:rename Old=<Method> to a hand-written file of client/internal/widgetv2 if a method does the same under another name, or //convgen:skip Old if the client never calls it",
		"client widget/v2: //convgen:skip Get: widget.Interface has a method Get, which calls it",
		"client widget/v2: //convgen:skip Nope: v2.Widget has no RPC Nope",
	)
}
