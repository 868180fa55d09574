// Command convgen regenerates the gRPC adapters under internal/adapter, the
// client's per-version stubs under client/internal with its registry of
// known versions, the method facts (the call gate's method names, the
// audit log's read/mutate tables, the Host decorators of
// internal/metrics/hostmetrics), the call gate's guards and library mode's
// Node accessors, from the api/ packages and the group models under
// groups/. -dir names the root module's directory: make generate runs
// go run -C cmd ./convgen -dir .. (the engine and golang.org/x/tools live
// in this module, so that a driver requiring the root module never sees
// them). See package cmd/internal/convgen for the rules and how to write
// overrides.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/cmd/internal/convgen"
)

func main() {
	dir := flag.String("dir", ".", "module root to generate in")
	flag.Parse()
	files, err := convgen.Generate(convgen.Config{
		Dir:         *dir,
		ErrdefsPath: "github.com/csi-node-proxy/csi-node-proxy/errdefs",
		ClientDir:   "client",
		// The two sides keep their own copy: the client imports api/,
		// groups/, errdefs and hostpath only (CONTRIBUTING.md), so a
		// driver that dials the daemon links none of the daemon's
		// packages.
		DiskIDPath:       "github.com/csi-node-proxy/csi-node-proxy/internal/adapter/diskid",
		ClientDiskIDPath: "github.com/csi-node-proxy/csi-node-proxy/client/internal/diskid",
		// The method facts and the gate's guards, for the packages that
		// must not link the wire.
		GateDir:        "internal/callgate",
		AuditDir:       "internal/audit",
		HostMetricsDir: "internal/metrics/hostmetrics",
		LibraryDir:     "inprocess",
		PolicyPath:     "github.com/csi-node-proxy/csi-node-proxy/internal/policy",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The v2compat module's packages forward to the root module's
	// upstreamv2 tree, name for name (docs/driver-migration.md).
	forwards, err := convgen.Forwarders(convgen.ForwardConfig{
		Dir:      *dir,
		From:     "github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg",
		ToDir:    "v2compat/pkg",
		Describe: describeV2Compat,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "convgen: v2compat:", err)
		os.Exit(1)
	}
	for name, src := range forwards {
		files[name] = src
	}
	if err := convgen.Write(*dir, files); err != nil {
		fmt.Fprintln(os.Stderr, "convgen:", err)
		os.Exit(1)
	}
}

// describeV2Compat is the doc comment of the v2compat twin of
// upstreamv2/pkg/<rel>.
func describeV2Compat(rel, name string) string {
	group, sub, _ := strings.Cut(rel, "/")
	upstream := "pkg/" + rel
	if sub != "" {
		upstream += ", whose package clause is " + name + " too"
	}
	return fmt.Sprintf(`Package %s forwards every exported name of
github.com/csi-node-proxy/csi-node-proxy/upstreamv2/pkg/%s: it is upstream
csi-proxy v2's %s when the v2compat module stands in for
github.com/kubernetes-csi/csi-proxy/v2 by a replace line (the %s group).
It imports the root module only, never its own module, so it compiles
under either module path (see the module's doc.go).`, name, rel, upstream, group)
}
