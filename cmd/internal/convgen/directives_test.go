package convgen

import (
	"path/filepath"
	"strings"
	"testing"
)

// legacyDir is the tree that exercises the directives which describe the
// differences of upstream's older versions: field, diskid, mapkeys,
// refuse and like.
var legacyDir = filepath.Join("testdata", "legacy")

// legacyConfig generates the legacy tree with its client side. The adapters
// use the daemon's own diskid package; the client stubs a stand-in, as the
// client's is under client/internal, which only package client may import.
func legacyConfig(dir string) Config {
	return Config{
		Dir:              dir,
		ErrdefsPath:      errdefsPath,
		ClientDir:        "client",
		DiskIDPath:       "github.com/csi-node-proxy/csi-node-proxy/internal/adapter/diskid",
		ClientDiskIDPath: "github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/legacy/client/internal/diskid",
	}
}

// TestGoldenLegacy compares what the generator writes for the legacy tree
// with golden files.
func TestGoldenLegacy(t *testing.T) {
	files := generate(t, legacyConfig(legacyDir))
	want := map[string]string{
		"internal/adapter/gizmov1alpha1/" + GeneratedFileName: "gizmov1alpha1.go.golden",
		"internal/adapter/gizmov1alpha2/" + GeneratedFileName: "gizmov1alpha2.go.golden",
		"client/internal/gizmov1alpha1/" + ClientFileName:     "client-gizmov1alpha1.go.golden",
		"client/internal/gizmov1alpha2/" + ClientFileName:     "client-gizmov1alpha2.go.golden",
	}
	checkGolden(t, legacyDir, files, want)
}

// TestGoldenLegacyBehaviour checks what the legacy golden files encode, so
// a careless -update cannot bless a regression.
func TestGoldenLegacyBehaviour(t *testing.T) {
	files := generate(t, legacyConfig(legacyDir))
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
	typeCheck(t, legacyDir, generate(t, legacyConfig(legacyDir)), notRegistry)
}

// TestNewDirectiveErrors: each way of misusing field, diskid, mapkeys,
// refuse and like fails generation with its own message.
func TestNewDirectiveErrors(t *testing.T) {
	dir := copyTree(t, legacyDir)
	writeFile(t, dir, "internal/adapter/gizmov1alpha1/conversion.go", `package gizmov1alpha1

//convgen:field Path=TargetPath StatResponse.Size=TotalBytes Nope=TargetPath StatResponse.DiskNumber=Nope
//convgen:field Path
//convgen:diskid DiskId=DiskNumber DiskNumber Disks StatRequest.Path=TargetPath
//convgen:mapkeys Identifiers page83=Page83 serialNumber=SerialNumber
//convgen:mapkeys Disk.Name page83=Page83
//convgen:mapkeys Identifiers
//convgen:refuse StatRequest.PartitionNumber cannot
`)
	writeFile(t, dir, "internal/adapter/gizmov1alpha2/conversion.go", "package gizmov1alpha2\n\n//convgen:like v9\n")
	_, err := Generate(legacyConfig(dir))
	checkFails(t, err, "generation succeeded with broken directives",
		"gizmov1alpha1/conversion.go:4:1: //convgen:field: \"Path\" is not [<Message>.]<WireField>=<ModelField>",
		"gizmov1alpha1/conversion.go:8:1: //convgen:mapkeys: want //convgen:mapkeys [<Message>.]<WireField> <key>=<ModelField> ...",
		"gizmo/v1alpha1: //convgen:field Nope=TargetPath: no converted message has such a field",
		"gizmo/v1alpha1: StatResponse: //convgen:field StatResponse.DiskNumber=Nope: gizmo.StatResponse has no field Nope",
		"gizmo/v1alpha1: StatRequest: //convgen:diskid StatRequest.Path=TargetPath: Path (string) and TargetPath (string) are not a disk ID and a disk number",
		"gizmo/v1alpha1: Disk: //convgen:mapkeys Disk.Name: Name is a string, not a map[string]string",
		"internal/adapter/gizmov1alpha1: //convgen:refuse is for client stubs only",
		"internal/adapter/gizmov1alpha2: //convgen:like v9: no hand-written files in internal/adapter/gizmov9",
	)

	// A like of a like, a refuse that refuses nothing (an override does
	// the conversion), and a diskid without the package's import path.
	dir = copyTree(t, legacyDir)
	writeFile(t, dir, "client/internal/gizmov1alpha2/conversion.go", `package gizmov1alpha2

import (
	pb "github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/legacy/api/gizmo/v1alpha2"
	"github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen/testdata/legacy/groups/gizmo"
)

//convgen:field Path=TargetPath StatResponse.Size=TotalBytes
//convgen:diskid DiskId=DiskNumber DiskNumber Disks
//convgen:mapkeys Identifiers page83=Page83 serialNumber=SerialNumber
//convgen:refuse StatRequest.PartitionNumber cannot

func fromModelStatRequest(in *gizmo.StatRequest) *pb.StatRequest { return autoFromModelStatRequest(in) }
`)
	writeFile(t, dir, "client/internal/gizmov1alpha3/conversion.go", "package gizmov1alpha3\n\n//convgen:like v1alpha1\n")
	writeFile(t, dir, "client/internal/gizmov1alpha1/conversion.go", "package gizmov1alpha1\n\n//convgen:like v1alpha3\n")
	cfg := legacyConfig(dir)
	cfg.DiskIDPath = ""
	_, err = Generate(cfg)
	checkFails(t, err, "generation succeeded without Config.DiskIDPath",
		"gizmo/v1alpha1: //convgen:diskid needs Config.DiskIDPath")
	_, err = Generate(legacyConfig(dir))
	checkFails(t, err, "generation succeeded with broken client directives",
		"client/internal/gizmov1alpha1: //convgen:like v1alpha3: that package is //convgen:like v1alpha1 itself; name v1alpha1",
		"client gizmo/v1alpha2: //convgen:refuse StatRequest.PartitionNumber: no generated conversion refuses such a field",
	)
}
