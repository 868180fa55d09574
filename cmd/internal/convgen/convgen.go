// Package convgen generates the thin gRPC adapters that serve each API
// version of a group on top of the group's internal model.
//
// Inputs, found by convention under a module root:
//
//	api/<group>/<version>/   protoc-gen-go(-grpc) output: messages and <Svc>Server
//	groups/<group>/          the model: an Interface and plain request/response types
//	internal/adapter/<group><version>/   output, plus hand-written overrides
//
// For every RPC of the version's service the generator emits a handler on
// Server that converts the request to the model, calls the group Interface
// method of the same name, converts the response back and maps the error
// with errgrpc.ToGRPC. Conversions are generated field by field: a wire
// field matches the model field whose name is equal ignoring case (so the
// wire's VolumeIds matches the model's VolumeIDs); basic types are copied,
// enums are converted by value, nested messages, repeated messages and maps
// of messages are converted recursively.
//
// Where the wire and the model differ (a renamed or retyped field, a renamed
// RPC), hand-written files in the output package supply the difference and
// the generator steps aside:
//
//   - a function toModel<Msg>(*pb.Msg) *model.T or
//     fromModel<Msg>(*model.T) *pb.Msg replaces the generated conversion;
//     the generator then emits autoToModel<Msg> / autoFromModel<Msg> with the
//     fields it can match, for the override to call. The override for an
//     RPC's request may instead return (*model.T, error) when the conversion
//     can fail (a number sent as a string); the handler then answers with
//     errgrpc.ToGRPC of that error without calling the group. Conversions of
//     nested messages are generated even for a field the override converts
//     (a map whose key type changed), so it can call them;
//   - a method (s *Server) <RPC> replaces the generated handler;
//   - the directive //convgen:rename <RPC>=<Method> serves an RPC with the
//     model Interface method of another name (upstream renamed it in a later
//     version); the request and response convert to and from that method's
//     types, whatever the messages are called;
//   - the directive //convgen:ignore <Field>... leaves wire fields of that
//     name (in any message, compared ignoring case) out of every conversion:
//     a request's is dropped, a response's stays at its zero value;
//   - //convgen:field [<Msg>.]<Wire>=<Model>... pairs a wire field with a
//     model field of another name (upstream renamed it), in both
//     directions; <Msg>, the wire message, limits it to one message;
//   - //convgen:diskid [<Msg>.]<Wire>[=<Model>]... says the wire field
//     carries the model's uint32 disk number as upstream's versions before
//     v1beta3 did: a decimal string, an int64, or the decimal string keys
//     of a map. It converts with the diskid package (Config.DiskIDPath,
//     Config.ClientDiskIDPath), which keeps the error texts and codes in one
//     place; towards the model it parses, so only an RPC's request (or in a
//     client its response) may have such a field;
//   - //convgen:mapkeys [<Msg>.]<Wire> <key>=<Model>... spreads a wire
//     map[string]string over model string fields, one key each;
//   - //convgen:refuse [<Msg>.]<ModelField> <reason> (client stubs) gives the
//     reason a model field the version cannot carry is refused;
//   - //convgen:like <version> takes the directives of the same group's
//     <version> package, for a version that is another under a new package.
//
// A directive is the cheap override: a function is for what no directive
// says (a hand-written RPC, a check of its own).
//
// The group models carry directives too: the doc comment of every method
// of a group's Interface ends in exactly one of
//
//   - //convgen:read: the method only reports state;
//   - //convgen:mutates: it changes the node (disks, volumes, files,
//     mappings, sessions, services, secrets);
//
// from which, with Config.AuditDir set, the audit log learns which calls
// it must record before they run (methods.go in this package). A method
// with neither or both, or either directive anywhere else in the model
// package, fails generation.
//
// When a field or RPC has no counterpart and no override, generation fails
// with a message naming the function or directive to write. A directive
// that matches nothing fails too. Output is gofmt'ed and deterministic.
//
// With Config.ClientDir set, the generator also writes the other side of
// the wire, for package client: per group-version stubs that implement
// the model Interface by calling the version's RPCs, with their own
// hand-written overrides, and the registry of known versions; client.go
// in this package has the rules.
//
// With Config.GateDir, AuditDir and HostMetricsDir set, it writes the
// method facts the daemon's packages would otherwise list by hand: every
// RPC name per group for the call gate, the read/mutate tables for the
// audit log (methods.go), and the decorators that time each group's Host
// (hostmetrics.go).
package convgen

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Config says where the inputs and outputs are. Paths are relative to Dir.
type Config struct {
	// Dir is the tree to generate in (normally the module root).
	Dir string
	// APIRoot holds api/<group>/<version> packages. Default "api".
	APIRoot string
	// ModelRoot holds groups/<group> packages. Default "groups".
	ModelRoot string
	// OutRoot receives <group><version> adapter packages and the registry.
	// Default "internal/adapter".
	OutRoot string
	// ErrdefsPath is the import path of the errdefs package; its errgrpc
	// subpackage maps errors to and from gRPC statuses.
	ErrdefsPath string
	// Tool names the generator in the "Code generated" header.
	Tool string
	// ClientDir, when set, is the directory of package client: the client
	// stubs go to <ClientDir>/internal/<group><version> and the registry
	// of known versions to <ClientDir>/zz_generated.versions.go (see
	// client.go in this package). Empty generates no client side.
	ClientDir string
	// DiskIDPath is the import path of the package the adapters'
	// //convgen:diskid conversions call: Parse(string) (uint32, error),
	// Format(uint32) string and FormatKeys (see internal/adapter/diskid).
	// ClientDiskIDPath is the client stubs' (Format, Parse, ParseKeys,
	// FromInt64). Either is needed only where the directive is used.
	DiskIDPath, ClientDiskIDPath string
	// GateDir, AuditDir and HostMetricsDir, when set, receive the method
	// facts (methods.go and hostmetrics.go in this package): the gate's
	// method names per group, whether each method changes the node, and
	// the decorators that time each group's Host. Empty writes none.
	GateDir, AuditDir, HostMetricsDir string
	// LibraryDir, when set with GateDir, has the call gate's guards
	// (GuardFileName, see guards.go) written to GateDir: the guarded
	// groups.Set and the accessors of every model request's guarded
	// arguments, which name PolicyPath's Arg; and library mode's Node
	// accessors (NodeFileName) to LibraryDir.
	LibraryDir, PolicyPath string
}

// GeneratedFileName is the name of the generated file in each adapter
// package; RegistryFileName the registry's in OutRoot.
const (
	GeneratedFileName = "zz_generated.adapter.go"
	RegistryFileName  = "zz_generated.registry.go"
)

// groupVersion is one api/<group>/<version> directory.
type groupVersion struct {
	group, version string
	apiDir         string // relative to Dir
	apiPkg         *packages.Package
	modelPkg       *packages.Package
	outDir         string // relative to Dir
	outImport      string
	clientImport   string // import path of the client stub, with Config.ClientDir
}

// Generate computes every generated file. It returns file contents keyed by
// path relative to cfg.Dir; it writes nothing.
func Generate(cfg Config) (map[string][]byte, error) {
	if cfg.APIRoot == "" {
		cfg.APIRoot = "api"
	}
	if cfg.ModelRoot == "" {
		cfg.ModelRoot = "groups"
	}
	if cfg.OutRoot == "" {
		cfg.OutRoot = "internal/adapter"
	}
	if cfg.Tool == "" {
		cfg.Tool = "convgen"
	}
	gvs, err := discover(cfg)
	if err != nil {
		return nil, err
	}
	if len(gvs) == 0 {
		return nil, fmt.Errorf("convgen: no api/<group>/<version> packages with a gRPC service under %s", filepath.Join(cfg.Dir, cfg.APIRoot))
	}
	if err := load(cfg, gvs); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	var errs []string
	for _, gv := range gvs {
		src, err := generateAdapter(cfg, gv)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		files[filepath.ToSlash(filepath.Join(gv.outDir, GeneratedFileName))] = src
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("convgen:\n  %s", strings.Join(errs, "\n  "))
	}
	reg, err := generateRegistry(cfg, gvs)
	if err != nil {
		return nil, err
	}
	files[filepath.ToSlash(filepath.Join(cfg.OutRoot, RegistryFileName))] = reg
	if err := generateFacts(cfg, gvs, files); err != nil {
		return nil, err
	}
	if cfg.GateDir != "" && cfg.LibraryDir != "" {
		guards, err := generateGuards(cfg, gvs)
		if err != nil {
			return nil, err
		}
		maps.Copy(files, guards)
	}
	if cfg.ClientDir == "" {
		return files, nil
	}
	for _, gv := range gvs {
		src, err := generateClient(cfg, gv)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		files[filepath.ToSlash(filepath.Join(clientOutDir(cfg, gv), ClientFileName))] = src
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("convgen:\n  %s", strings.Join(errs, "\n  "))
	}
	creg, err := generateClientRegistry(cfg, gvs)
	if err != nil {
		return nil, err
	}
	files[filepath.ToSlash(filepath.Join(cfg.ClientDir, ClientRegistryFileName))] = creg
	return files, nil
}

// Write writes files under dir, creating directories as needed.
func Write(dir string, files map[string][]byte) error {
	for name, src := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, src, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// CompareVersions orders Kubernetes-style API versions: v1alpha1 < v1alpha2
// < v1beta1 < v1 < v2alpha1 < v2. It returns -1, 0 or 1.
func CompareVersions(a, b string) int {
	ka, kb := versionKey(a), versionKey(b)
	for i := range ka {
		if ka[i] != kb[i] {
			if ka[i] < kb[i] {
				return -1
			}
			return 1
		}
	}
	return strings.Compare(a, b)
}

var versionRE = regexp.MustCompile(`^v(\d+)(?:(alpha|beta)(\d+))?$`)

// versionKey maps a version to (major, stability, minor); unparseable
// versions sort first.
func versionKey(v string) [3]int {
	m := versionRE.FindStringSubmatch(v)
	if m == nil {
		return [3]int{-1, 0, 0}
	}
	major, _ := strconv.Atoi(m[1])
	stability := 2
	switch m[2] {
	case "alpha":
		stability = 0
	case "beta":
		stability = 1
	}
	minor, _ := strconv.Atoi(m[3])
	return [3]int{major, stability, minor}
}
