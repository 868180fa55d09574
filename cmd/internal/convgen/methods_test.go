package convgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// factsConfig asks for every method fact, where the daemon's tree has
// them.
func factsConfig(dir string) Config {
	return Config{
		Dir: dir, ErrdefsPath: errdefsPath,
		GateDir: "internal/callgate", AuditDir: "internal/audit", HostMetricsDir: "internal/metrics/hostmetrics",
	}
}

// TestGoldenFacts generates the widget tree's method facts and compares
// them with golden files, checks what they must say whatever the golden
// files say, and type-checks the Host decorators with the hand-written
// half of their package.
func TestGoldenFacts(t *testing.T) {
	dir := filepath.Join("testdata", "widget")
	files := generate(t, factsConfig(dir))
	gate := "internal/callgate/" + MethodsFileName
	audit := "internal/audit/" + MethodsFileName
	wrappers := "internal/metrics/hostmetrics/" + HostMetricsFileName
	checkGolden(t, dir, files, map[string]string{
		gate:     "callgate-methods.go.golden",
		audit:    "audit-methods.go.golden",
		wrappers: "hostmetrics-wrappers.go.golden",
	})

	for name, want := range map[string][]string{
		// Every RPC of every version once, oldest version first.
		gate: {"package callgate", `"widget": {"Get", "Old", "Fetch"},`},
		audit: {
			"package audit",
			"\"widget\": {\n\t\t\"Get\": false,\n\t},", // //convgen:read
			`"Fetch": "Get",`,                          // //convgen:rename Fetch=Get (v3)
			`"Old":   "Get",`,                          // the hand-written handler of v2 calls s.group.Get
		},
		wrappers: {
			"package hostmetrics",
			`GroupWidget = "widget"`,
			"func Widget(h widget.Host, o Observer) widget.Host {\n\tif o == nil {\n\t\treturn h\n\t}\n\treturn widgetHost{h: h, o: o}\n}",
			"var _ widget.Host = widgetHost{}",
			// A parameter named like an imported package is renamed.
			"func (w widgetHost) Paint(ctx context.Context, a1 string, kind widget.Kind) error {\n\tt := begin(w.o, GroupWidget, \"Paint\")\n\terr := w.h.Paint(ctx, a1, kind)\n\tt.done(err)\n\treturn err\n}",
			"func (w widgetHost) Parts(a0 context.Context, a1 uint32) (map[uint32]*widget.Part, error) {",
			"r0, err := w.h.Parts(a0, a1)",
			// So are parameters named like the decorator's locals.
			"func (w widgetHost) Sizes(ctx context.Context, a1 string, a2 string) (int64, int64, error) {",
			"r0, r1, err := w.h.Sizes(ctx, a1, a2)\n\tt.done(err)\n\treturn r0, r1, err",
			"func (w widgetHost) Wait(ctx context.Context, d time.Duration, ids ...string) ([]string, error) {",
			"r0, err := w.h.Wait(ctx, d, ids...)",
			"\t\"time\"\n",
		},
	} {
		for _, s := range want {
			if !strings.Contains(string(files[name]), s) {
				t.Errorf("%s lacks %q:\n%s", name, s, files[name])
			}
		}
	}
	typeCheck(t, dir, files, func(name string) bool { return name == gate || name == audit || name == wrappers })
}

// TestFactsOnlyWhenAsked: without the facts' directories the generator
// writes none of them and needs no model directive.
func TestFactsOnlyWhenAsked(t *testing.T) {
	dir := copyTree(t, filepath.Join("testdata", "widget"))
	writeFile(t, dir, "groups/widget/widget.go", strings.Replace(readFile(t, dir, "groups/widget/widget.go"), "\t//convgen:read\n", "", 1))
	for name := range generate(t, Config{Dir: dir, ErrdefsPath: errdefsPath}) {
		if strings.HasSuffix(name, MethodsFileName) || strings.HasSuffix(name, HostMetricsFileName) {
			t.Errorf("generated %s unasked", name)
		}
	}
}

// TestKindDirectiveErrors: a model Interface method with no read/mutates
// directive, or with two, a directive anywhere but in a method's doc
// comment or with arguments, and a hand-written handler that does not call
// exactly one group method each fail generation with their own message.
func TestKindDirectiveErrors(t *testing.T) {
	dir := copyTree(t, filepath.Join("testdata", "widget"))
	model := readFile(t, dir, "groups/widget/widget.go")
	model = strings.Replace(model, `// Interface is the group.
type Interface interface {
	// Get only reads.
	//convgen:read
	Get(context.Context, *GetRequest) (*GetResponse, error)
}`, `// Interface is the group.
//
//convgen:mutates
type Interface interface {
	// Get has no directive.
	Get(context.Context, *GetRequest) (*GetResponse, error)
	// Put has two.
	//convgen:read
	//convgen:mutates
	Put(context.Context, *GetRequest) (*GetResponse, error)
	// Drop gives a reason on the directive's line.
	//convgen:mutates it deletes
	Drop(context.Context, *GetRequest) (*GetResponse, error) //convgen:read
}`, 1)
	writeFile(t, dir, "groups/widget/widget.go", model)
	handler := readFile(t, dir, "internal/adapter/widgetv2/conversion.go")
	handler = strings.Replace(handler, "_, err := s.group.Get(ctx, &widget.GetRequest{ID: in.Id})",
		"_, err := s.group.Get(ctx, &widget.GetRequest{ID: in.Id})\n\tif err == nil {\n\t\t_, err = s.group.Put(ctx, &widget.GetRequest{ID: in.Id})\n\t}", 1)
	writeFile(t, dir, "internal/adapter/widgetv2/conversion.go", handler)

	_, err := Generate(factsConfig(dir))
	checkFails(t, err, "generation succeeded with broken read/mutates directives",
		"groups/widget/widget.go:11:2: widget.Interface.Get: its doc comment needs //convgen:read or //convgen:mutates",
		"groups/widget/widget.go:15:2: widget.Interface.Put: its doc comment has 2 read/mutates directives (read, mutates); want exactly one",
		"groups/widget/widget.go:17:2: //convgen:mutates takes no arguments",
		"groups/widget/widget.go:18:59: //convgen:read belongs in the doc comment of a method of widget.Interface",
		"groups/widget/widget.go:8:1: //convgen:mutates belongs in the doc comment of a method of widget.Interface",
		"widget/v2: the hand-written (s *Server) Old calls Get, Put of the group; it must call exactly one",
	)
}

// TestFactsConflicts: a name read in one place and mutating in another
// fails, since the audit log classifies by name alone, and so does an RPC
// that calls one model method in one version and another in the next;
// so does a Host method the decorators cannot report on.
func TestFactsConflicts(t *testing.T) {
	dir := copyTree(t, filepath.Join("testdata", "widget"))
	model := readFile(t, dir, "groups/widget/widget.go")
	// v3 serves its RPC Fetch with Get, which reads; the model's own
	// Fetch mutates.
	model = strings.Replace(model, "\tGet(context.Context, *GetRequest) (*GetResponse, error)\n",
		"\tGet(context.Context, *GetRequest) (*GetResponse, error)\n\t// Fetch changes things.\n\t//convgen:mutates\n\tFetch(context.Context, *GetRequest) (*GetResponse, error)\n", 1)
	writeFile(t, dir, "groups/widget/widget.go", model)
	// v2 serves its RPC Get with Fetch, where v1 serves it with Get.
	v2 := readFile(t, dir, "internal/adapter/widgetv2/conversion.go")
	v2 = strings.Replace(v2, "// toModelGetRequest overrides", "//convgen:rename Get=Fetch\n\n// toModelGetRequest overrides", 1)
	writeFile(t, dir, "internal/adapter/widgetv2/conversion.go", v2)
	_, err := Generate(factsConfig(dir))
	checkFails(t, err, "generation succeeded with Fetch both read and mutate",
		"Fetch is mutates as widget.Interface.Fetch but read as widget's RPC Fetch (calling Get): the audit log classifies a method by its name alone",
		"widget/v2: //convgen:rename Get=Fetch calls Fetch where an older version calls Get: an RPC name must mean one model method in every version")

	host := readFile(t, dir, "groups/widget/host.go")
	host = strings.Replace(host, "\tWait(", "\tCount(ctx context.Context) int\n\tWait(", 1)
	writeFile(t, dir, "groups/widget/host.go", host)
	_, err = Generate(Config{Dir: dir, ErrdefsPath: errdefsPath, HostMetricsDir: "internal/metrics/hostmetrics"})
	checkFails(t, err, "generation succeeded with a Host method that returns no error",
		"internal/metrics/hostmetrics:",
		"/groups/widget: Host.Count: does not return an error last")
}

// readFile returns the text of rel (slash-separated) under dir.
func readFile(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
