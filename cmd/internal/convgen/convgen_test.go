package convgen

import (
	"flag"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const errdefsPath = "github.com/csi-node-proxy/csi-node-proxy/errdefs"

// TestGoldenWidget runs the generator over a small tree that exercises every
// conversion it knows (initialisms, enums, nested messages, lists and maps
// of messages, model-only fields), every kind of override (a renamed field,
// a hand-written RPC, a request conversion that can fail, a retyped map
// calling the generated element conversion) and both directives (rename,
// ignore), and compares the output with golden files.
func TestGoldenWidget(t *testing.T) {
	dir := filepath.Join("testdata", "widget")
	files := generate(t, Config{Dir: dir, ErrdefsPath: errdefsPath})
	want := map[string]string{
		"internal/adapter/widgetv1/" + GeneratedFileName: "widgetv1.go.golden",
		"internal/adapter/widgetv2/" + GeneratedFileName: "widgetv2.go.golden",
		"internal/adapter/widgetv3/" + GeneratedFileName: "widgetv3.go.golden",
		"internal/adapter/" + RegistryFileName:           "registry.go.golden",
	}
	if len(files) != len(want) {
		t.Errorf("generated %d files, want %d: %v", len(files), len(want), keys(files))
	}
	checkGolden(t, dir, files, want)
}

// TestGoldenOverridesAreUsed checks the behaviour the golden files encode,
// so a careless -update cannot bless a regression.
func TestGoldenOverridesAreUsed(t *testing.T) {
	files := generate(t, Config{Dir: filepath.Join("testdata", "widget"), ErrdefsPath: errdefsPath})
	v1 := string(files["internal/adapter/widgetv1/"+GeneratedFileName])
	v2 := string(files["internal/adapter/widgetv2/"+GeneratedFileName])
	for _, s := range []string{
		"out.ID = in.Id",                          // initialism matched ignoring case
		"out.Kind = widget.Kind(in.Kind)",         // enum converted by value
		"out.Widget = fromModelWidget(in.Widget)", // nested message
		"out.Parts = append(out.Parts, fromModelPart(v))",
		"out.ByNumber[k] = fromModelPart(v)",
		"out.PartIds = in.PartIDs",
		"out.Lunid = in.LUNID",
		"func (s *Server) Get(",
	} {
		if !strings.Contains(v1, s) {
			t.Errorf("widgetv1 lacks %q", s)
		}
	}
	if strings.Contains(v1, "Extra") {
		t.Error("widgetv1 converts the model-only field Extra")
	}
	if !strings.Contains(v2, "func autoToModelGetRequest(") || strings.Contains(v2, "func toModelGetRequest(") {
		t.Error("widgetv2 should generate autoToModelGetRequest and leave toModelGetRequest to the override")
	}
	if !strings.Contains(v2, "WidgetId has no counterpart") {
		t.Error("widgetv2's auto conversion should say which field the override handles")
	}
	if strings.Contains(v2, "func (s *Server) Old(") {
		t.Error("widgetv2 generated a handler for Old although conversion.go has one")
	}
	if strings.Contains(v2, "OldRequest") {
		t.Error("widgetv2 converts OldRequest although no generated code needs it")
	}

	// v3: a renamed RPC, a fallible request override, ignored fields and a
	// map whose key type changed.
	v3 := string(files["internal/adapter/widgetv3/"+GeneratedFileName])
	for _, s := range []string{
		"func (s *Server) Fetch(ctx context.Context, in *pb.FetchRequest) (*pb.FetchResponse, error) {",
		"out, err := s.group.Get(ctx, req)", // //convgen:rename Fetch=Get
		// The request override returns an error: the handler answers with
		// it before calling the group.
		"req, err := toModelFetchRequest(in)\n\tif err != nil {\n\t\treturn nil, errgrpc.ToGRPC(err)\n\t}",
		// Conversions pair the wire message with the renamed method's types.
		"func autoToModelFetchRequest(in *pb.FetchRequest) *widget.GetRequest {",
		"func autoFromModelFetchResponse(in *widget.GetResponse) *pb.FetchResponse {",
		"Number (string) and Number (uint32) differ in type",
		// //convgen:ignore scope Error, compared ignoring case.
		"// in.Scope is dropped (//convgen:ignore).",
		"// out.Error stays empty (//convgen:ignore).",
		// The override converts by_number but calls the element conversion.
		"func fromModelPart(in *widget.Part) *pb.Part {",
	} {
		if !strings.Contains(v3, s) {
			t.Errorf("widgetv3 lacks %q", s)
		}
	}
	for _, s := range []string{"out.Scope", "in.Error", "out.ByNumber", "func toModelFetchRequest(", "func fromModelFetchResponse("} {
		if strings.Contains(v3, s) {
			t.Errorf("widgetv3 has %q, which the directives or overrides take care of", s)
		}
	}
}

// TestMismatchNamesTheFunctionToWrite: a wire field with no model
// counterpart, or with an unconvertible type, fails generation with a
// message that tells the developer which override to write.
func TestMismatchNamesTheFunctionToWrite(t *testing.T) {
	_, err := Generate(Config{Dir: filepath.Join("testdata", "broken"), ErrdefsPath: errdefsPath})
	checkFails(t, err, "generation succeeded on mismatched types",
		"gadget/v1: Widget: SizeMib (int64) and SizeMiB (int32) differ in type",
		"write func fromModelWidget(in *gadget.Widget) *pb.Widget",
		"gadget/v1: Part: Lunid has no counterpart",
		"write func fromModelPart(in *gadget.Part) *pb.Part",
		"or, if Lunid carries nothing the model needs, add //convgen:ignore Lunid there",
	)
}

// TestDirectiveErrors: malformed or pointless directives and overrides
// (testdata/broken/internal/adapter/gadgetv2) fail generation, each with
// its own message.
func TestDirectiveErrors(t *testing.T) {
	_, err := Generate(Config{Dir: filepath.Join("testdata", "broken"), ErrdefsPath: errdefsPath})
	checkFails(t, err, "generation succeeded with broken directives",
		`gadgetv2/conversion.go:14:1: //convgen:rename: "Get" is not <RPC>=<Method>`,
		"gadgetv2/conversion.go:16:1: //convgen:frobnicate: unknown directive",
		"gadget/v2: //convgen:rename Old=Nope: gadget.Interface has no method Nope",
		"gadget/v2: //convgen:rename Missing=Get: v2.Widget has no RPC Missing",
		"gadget/v2: //convgen:rename Hand=Get: a hand-written (s *Server) Hand serves the RPC already",
		"gadget/v2: //convgen:ignore Nothing: no converted message has such a field",
		"gadget/v2: fromModelGetResponse returns an error, which only the conversion of an RPC's request may",
	)
}

func TestCompareVersions(t *testing.T) {
	ordered := []string{"v1alpha1", "v1alpha2", "v1beta1", "v1beta3", "v1", "v2alpha1", "v2beta1", "v2", "v10alpha1"}
	for i := range ordered {
		for j := range ordered {
			got := CompareVersions(ordered[i], ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("CompareVersions(%s, %s) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
