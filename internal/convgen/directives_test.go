package convgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// legacyDir is the tree that exercises the directives which describe the
// differences of upstream's older versions: field, diskid, mapkeys,
// refuse and like.
var legacyDir = filepath.Join("testdata", "legacy")

// legacyConfig generates the legacy tree with its client side. The adapters
// use the daemon's own diskid package; the client stubs a stand-in, as the
// client module's is in another module.
func legacyConfig(dir string) Config {
	return Config{
		Dir:              dir,
		ErrdefsPath:      errdefsPath,
		ClientDir:        "client",
		DiskIDPath:       "github.com/csi-node-proxy/csi-node-proxy/internal/adapter/diskid",
		ClientDiskIDPath: "github.com/csi-node-proxy/csi-node-proxy/internal/convgen/testdata/legacy/client/internal/diskid",
	}
}

// TestGoldenLegacy compares what the generator writes for the legacy tree
// with golden files.
func TestGoldenLegacy(t *testing.T) {
	files, err := Generate(legacyConfig(legacyDir))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"internal/adapter/gizmov1alpha1/" + GeneratedFileName: "gizmov1alpha1.go.golden",
		"internal/adapter/gizmov1alpha2/" + GeneratedFileName: "gizmov1alpha2.go.golden",
		"client/internal/gizmov1alpha1/" + ClientFileName:     "client-gizmov1alpha1.go.golden",
		"client/internal/gizmov1alpha2/" + ClientFileName:     "client-gizmov1alpha2.go.golden",
	}
	for name, golden := range want {
		got, ok := files[name]
		if !ok {
			t.Errorf("no %s generated", name)
			continue
		}
		path := filepath.Join(legacyDir, "golden", golden)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		exp, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(exp) != string(got) {
			t.Errorf("%s differs from %s (run go test ./internal/convgen -update to accept):\n%s", name, path, got)
		}
	}
}

// TestGoldenLegacyBehaviour checks what the legacy golden files encode, so
// a careless -update cannot bless a regression.
func TestGoldenLegacyBehaviour(t *testing.T) {
	files, err := Generate(legacyConfig(legacyDir))
	if err != nil {
		t.Fatal(err)
	}
	a1 := string(files["internal/adapter/gizmov1alpha1/"+GeneratedFileName])
	a2 := string(files["internal/adapter/gizmov1alpha2/"+GeneratedFileName])
	c1 := string(files["client/internal/gizmov1alpha1/"+ClientFileName])
	c2 := string(files["client/internal/gizmov1alpha2/"+ClientFileName])
	for _, c := range []struct{ file, name, s string }{
		// //convgen:field, both directions and both modes.
		{a1, "adapter v1alpha1", "out.TargetPath = in.Path"},
		{a1, "adapter v1alpha1", "out.Size = in.TotalBytes"},
		{c1, "client v1alpha1", "out.Path = in.TargetPath"},
		{c1, "client v1alpha1", "out.TotalBytes = in.Size"},
		// //convgen:diskid: a string parsed into the request, which makes
		// the generated request conversion fallible and the handler answer
		// its error before calling the group.
		{a1, "adapter v1alpha1", `"github.com/csi-node-proxy/csi-node-proxy/internal/adapter/diskid"`},
		{a1, "adapter v1alpha1", "func toModelStatRequest(in *pb.StatRequest) (*gizmo.StatRequest, error) {"},
		{a1, "adapter v1alpha1", "if out.DiskNumber, err = diskid.Parse(in.DiskId); err != nil {\n\t\treturn nil, err\n\t}"},
		{a1, "adapter v1alpha1", "req, err := toModelStatRequest(in)\n\tif err != nil {\n\t\treturn nil, errgrpc.ToGRPC(err)\n\t}"},
		// ... an int64 widened, map keys formatted with the element
		// conversion.
		{a1, "adapter v1alpha1", "out.DiskNumber = int64(in.DiskNumber)"},
		{a1, "adapter v1alpha1", "out.Disks = diskid.FormatKeys(in.Disks, fromModelDisk)"},
		// ... and the other way in the client: formatted into the request,
		// parsed (fallibly) out of the response.
		{c1, "client v1alpha1", "out.DiskId = diskid.Format(in.DiskNumber)"},
		{c1, "client v1alpha1", "if out.DiskNumber, err = diskid.FromInt64(in.DiskNumber); err != nil {"},
		{c1, "client v1alpha1", "if out.Disks, err = diskid.ParseKeys(in.Disks, toModelDisk); err != nil {"},
		{c1, "client v1alpha1", "func toModelListResponse(in *pb.ListResponse) (*gizmo.ListResponse, error) {"},
		{c1, "client v1alpha1", "\treturn toModelListResponse(resp)\n}"},
		// //convgen:mapkeys.
		{a1, "adapter v1alpha1", `out.Identifiers = map[string]string{"page83": in.Page83, "serialNumber": in.SerialNumber}`},
		{c1, "client v1alpha1", `out.Page83 = in.Identifiers["page83"]`},
		{c1, "client v1alpha1", `out.SerialNumber = in.Identifiers["serialNumber"]`},
		// //convgen:refuse: the version's own reason, with the value.
		{c1, "client v1alpha1", `if in.PartitionNumber != 0 {` + "\n\t\t" + `return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "StatRequest.PartitionNumber is %v, but the gizmo v1alpha1 API stats the whole disk and cannot select a partition: leave it 0", in.PartitionNumber)`},
		// //convgen:like: v1alpha1's directives, v1alpha2's own override
		// calling the fallible auto conversion.
		{a2, "adapter v1alpha2", "func autoToModelStatRequest(in *pb.StatRequest) (*gizmo.StatRequest, error) {"},
		{a2, "adapter v1alpha2", "req, err := toModelStatRequest(in)"},
		{a2, "adapter v1alpha2", "out.Disks = diskid.FormatKeys(in.Disks, fromModelDisk)"},
		{c2, "client v1alpha2", "the gizmo v1alpha2 API stats the whole disk"},
		{c2, "client v1alpha2", "out.DiskId = diskid.Format(in.DiskNumber)"},
	} {
		if !strings.Contains(c.file, c.s) {
			t.Errorf("%s lacks %q", c.name, c.s)
		}
	}
	for _, c := range []struct{ file, name, s string }{
		{a1, "adapter v1alpha1", "func auto"},
		{c1, "client v1alpha1", "func auto"},
		{a2, "adapter v1alpha2", "func toModelStatRequest("},
		{c1, "client v1alpha1", "has no field for it"},
	} {
		if strings.Contains(c.file, c.s) {
			t.Errorf("%s has %q", c.name, c.s)
		}
	}
}

// TestLegacyGeneratedCodeCompiles type-checks the legacy tree's generated
// adapters and client stubs with its hand-written files.
func TestLegacyGeneratedCodeCompiles(t *testing.T) {
	files, err := Generate(legacyConfig(legacyDir))
	if err != nil {
		t.Fatal(err)
	}
	overlay := map[string][]byte{}
	var patterns []string
	for name, src := range files {
		if filepath.Base(name) == RegistryFileName {
			continue // refers to the daemon's adapter.API, which testdata lacks
		}
		abs, err := filepath.Abs(filepath.Join(legacyDir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		overlay[abs] = src
		patterns = append(patterns, "./"+filepath.ToSlash(filepath.Dir(name)))
	}
	pkgs, err := packages.Load(&packages.Config{
		Mode:    packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo,
		Dir:     legacyDir,
		Overlay: overlay,
	}, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != len(patterns) {
		t.Fatalf("loaded %d packages, want %d", len(pkgs), len(patterns))
	}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.PkgPath, e)
		}
	}
}

// TestNewDirectiveErrors: each way of misusing field, diskid, mapkeys,
// refuse and like fails generation with its own message.
func TestNewDirectiveErrors(t *testing.T) {
	dir, err := os.MkdirTemp("testdata", "tmp-")
	if err != nil {
		t.Fatal(err)
	}
	dir1 := dir
	t.Cleanup(func() { os.RemoveAll(dir1) })
	if err := os.CopyFS(dir, os.DirFS(legacyDir)); err != nil {
		t.Fatal(err)
	}
	write := func(rel, src string) {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("internal/adapter/gizmov1alpha1/conversion.go", `package gizmov1alpha1

//convgen:field Path=TargetPath StatResponse.Size=TotalBytes Nope=TargetPath StatResponse.DiskNumber=Nope
//convgen:field Path
//convgen:diskid DiskId=DiskNumber DiskNumber Disks StatRequest.Path=TargetPath
//convgen:mapkeys Identifiers page83=Page83 serialNumber=SerialNumber
//convgen:mapkeys Disk.Name page83=Page83
//convgen:mapkeys Identifiers
//convgen:refuse StatRequest.PartitionNumber cannot
`)
	write("internal/adapter/gizmov1alpha2/conversion.go", "package gizmov1alpha2\n\n//convgen:like v9\n")
	_, err = Generate(legacyConfig(dir))
	if err == nil {
		t.Fatal("generation succeeded with broken directives")
	}
	msg := err.Error()
	for _, s := range []string{
		"gizmov1alpha1/conversion.go:4:1: //convgen:field: \"Path\" is not [<Message>.]<WireField>=<ModelField>",
		"gizmov1alpha1/conversion.go:8:1: //convgen:mapkeys: want //convgen:mapkeys [<Message>.]<WireField> <key>=<ModelField> ...",
		"gizmo/v1alpha1: //convgen:field Nope=TargetPath: no converted message has such a field",
		"gizmo/v1alpha1: StatResponse: //convgen:field StatResponse.DiskNumber=Nope: gizmo.StatResponse has no field Nope",
		"gizmo/v1alpha1: StatRequest: //convgen:diskid StatRequest.Path=TargetPath: Path (string) and TargetPath (string) are not a disk ID and a disk number",
		"gizmo/v1alpha1: Disk: //convgen:mapkeys Disk.Name: Name is a string, not a map[string]string",
		"internal/adapter/gizmov1alpha1: //convgen:refuse is for client stubs only",
		"internal/adapter/gizmov1alpha2: //convgen:like v9: no hand-written files in internal/adapter/gizmov9",
	} {
		if !strings.Contains(msg, s) {
			t.Errorf("error lacks %q:\n%s", s, msg)
		}
	}

	// A like of a like, a refuse that refuses nothing (an override does
	// the conversion), and a diskid without the package's import path.
	dir2, err := os.MkdirTemp("testdata", "tmp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir2) })
	if err := os.CopyFS(dir2, os.DirFS(legacyDir)); err != nil {
		t.Fatal(err)
	}
	dir = dir2 // write writes into dir
	write("client/internal/gizmov1alpha2/conversion.go", `package gizmov1alpha2

import (
	pb "github.com/csi-node-proxy/csi-node-proxy/internal/convgen/testdata/legacy/api/gizmo/v1alpha2"
	"github.com/csi-node-proxy/csi-node-proxy/internal/convgen/testdata/legacy/groups/gizmo"
)

//convgen:field Path=TargetPath StatResponse.Size=TotalBytes
//convgen:diskid DiskId=DiskNumber DiskNumber Disks
//convgen:mapkeys Identifiers page83=Page83 serialNumber=SerialNumber
//convgen:refuse StatRequest.PartitionNumber cannot

func fromModelStatRequest(in *gizmo.StatRequest) *pb.StatRequest { return autoFromModelStatRequest(in) }
`)
	if err := os.MkdirAll(filepath.Join(dir, "client/internal/gizmov1alpha3"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("client/internal/gizmov1alpha3/conversion.go", "package gizmov1alpha3\n\n//convgen:like v1alpha1\n")
	write("client/internal/gizmov1alpha1/conversion.go", "package gizmov1alpha1\n\n//convgen:like v1alpha3\n")
	cfg := legacyConfig(dir)
	cfg.DiskIDPath = ""
	_, err = Generate(cfg)
	if err == nil {
		t.Fatal("generation succeeded without Config.DiskIDPath")
	}
	if s := "gizmo/v1alpha1: //convgen:diskid needs Config.DiskIDPath"; !strings.Contains(err.Error(), s) {
		t.Errorf("error lacks %q:\n%s", s, err)
	}
	_, err = Generate(legacyConfig(dir))
	if err == nil {
		t.Fatal("generation succeeded with broken client directives")
	}
	msg = err.Error()
	for _, s := range []string{
		"client/internal/gizmov1alpha1: //convgen:like v1alpha3: that package is //convgen:like v1alpha1 itself; name v1alpha1",
		"client gizmo/v1alpha2: //convgen:refuse StatRequest.PartitionNumber: no generated conversion refuses such a field",
	} {
		if !strings.Contains(msg, s) {
			t.Errorf("error lacks %q:\n%s", s, msg)
		}
	}
}
