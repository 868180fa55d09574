// Package layers holds the test that keeps the tree to the package charter
// in CONTRIBUTING.md ("Where things go"): every package of the root module
// belongs to one layer, and its imports point down the table, never up.
// A charter only a reader checks drifts; this one fails the build instead.
package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

// module is the root module's path; packages outside it are not ours.
const module = "github.com/csi-node-proxy/csi-node-proxy"

// layer is one row of the charter's table. Rows are listed top to bottom:
// a package may import its own layer and any layer below it, unless the
// row narrows that with mayImport, which then holds within the row too
// (a leaf imports errdefs only, not another leaf).
type layer struct {
	name string
	// has tells whether a package (path relative to the module) is in
	// the layer.
	has func(rel string) bool
	// mayImport, when set, replaces "any layer below" with the rows'
	// own rule (for example: the wire contract imports nothing of
	// ours). It is asked about every import of our module that is not
	// in the same layer.
	mayImport func(from, to string) bool
	// anything marks rows whose packages may import anything: test
	// helpers and tests, which serve the layers rather than sit in them.
	anything bool
}

// under tells whether rel is dir or a package below it.
func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

// anyOf returns a membership test for the listed directories.
func anyOf(dirs ...string) func(string) bool {
	return func(rel string) bool {
		for _, d := range dirs {
			if under(rel, d) {
				return true
			}
		}
		return false
	}
}

// isLeaf tells whether rel is a leaf helper (internal/leaf/<name>).
func isLeaf(rel string) bool { return under(rel, "internal/leaf") }

// modelMayImport is the rule of the public packages below the call gate
// (host/simulated, groups, hostpath): the model, the path rules and the
// error kinds, and of internal/ only the leaves, which have no layer, so
// the import does not run back up.
func modelMayImport(_, to string) bool {
	return under(to, "groups") || to == "hostpath" || to == "errdefs" || isLeaf(to)
}

// backendOS returns the OS a backend package is for.
func backendOS(rel string) string {
	rest := strings.TrimPrefix(rel, "internal/host/")
	os, _, _ := strings.Cut(rest, "/")
	return os
}

// charter is CONTRIBUTING.md's table, top to bottom.
var charter = []layer{
	// upstreamv2 is upstream csi-proxy v2's library layout on library
	// mode (inprocess), for drivers that switch by import prefix.
	{name: "driver-facing", has: anyOf("client", "inprocess", "upstreamv2")},
	{name: "wire", has: anyOf("internal/server", "internal/adapter", "internal/transport")},
	{name: "wire contract", has: anyOf("api"), mayImport: func(_, _ string) bool { return false }},
	{name: "operations", has: anyOf("internal/metrics", "internal/winsvc", "internal/version")},
	// The wiring assembles a node (host, Services, policy, audit log,
	// call gate), so it sits above the call gate it builds.
	{name: "wiring", has: anyOf("internal/hostset")},
	{name: "call gate", has: anyOf("internal/callgate", "internal/objecthost")},
	{name: "security", has: anyOf("internal/policy", "internal/audit", "internal/identity")},
	{name: "backend", has: anyOf("internal/host"), mayImport: func(from, to string) bool {
		if under(to, "internal/host") {
			return backendOS(from) == backendOS(to) // each other within one OS
		}
		return under(to, "groups") || under(to, "errdefs") || to == "hostpath" || isLeaf(to)
	}},
	{name: "backend, public", has: anyOf("host/simulated"), mayImport: modelMayImport},
	{name: "group", has: anyOf("groups"), mayImport: modelMayImport},
	{name: "path rules", has: anyOf("hostpath"), mayImport: modelMayImport},
	{name: "gRPC error mapping", has: anyOf("errdefs/errgrpc"), mayImport: func(_, to string) bool { return to == "errdefs" }},
	{name: "leaves", has: isLeaf, mayImport: func(_, to string) bool { return to == "errdefs" }},
	{name: "errors", has: func(rel string) bool { return rel == "errdefs" }, mayImport: func(_, _ string) bool { return false }},
	// convgen's engine is a tool too, but of the cmd module
	// (cmd/internal/convgen), which this test does not list.
	{name: "test helpers", has: anyOf("internal/testutil"), anything: true},
	{name: "tests and examples", has: anyOf("test", "examples", "hack"), anything: true},
}

// rowOf returns the index of rel's row in charter, or -1. A package
// inside a layer's directory is in that layer, a test helper too: one
// that imports what the layer may not belongs with the test helpers
// (internal/testutil), not under the layer it serves.
func rowOf(rel string) int {
	for i, l := range charter {
		if l.has(rel) {
			return i
		}
	}
	return -1
}

// violation says why the import from → to breaks the charter, or "".
func violation(from, to string) string {
	fi, ti := rowOf(from), rowOf(to)
	switch {
	case fi < 0:
		return fmt.Sprintf("%s is in no layer of the charter: add it to CONTRIBUTING.md's table and to this test", from)
	case ti < 0:
		return fmt.Sprintf("%s imports %s, which is in no layer of the charter", from, to)
	case charter[fi].anything:
		return ""
	case charter[ti].anything:
		// Below every layer in the table, but not under them: test
		// helpers and tests import the layers, and no layer links them.
		return fmt.Sprintf("%s (%s) imports %s (%s): test helpers and tests serve the layers, which never import them", from, charter[fi].name, to, charter[ti].name)
	case fi == ti && charter[fi].name == "backend":
		if backendOS(from) != backendOS(to) {
			return fmt.Sprintf("%s (backend for %s) imports %s, a backend for another OS", from, backendOS(from), to)
		}
		return ""
	case fi == ti && charter[fi].mayImport == nil:
		return "" // sideways within a layer
	case ti < fi:
		return fmt.Sprintf("%s (%s) imports %s (%s), a layer above it: imports point down only", from, charter[fi].name, to, charter[ti].name)
	case charter[fi].mayImport != nil && !charter[fi].mayImport(from, to):
		return fmt.Sprintf("%s (%s) may not import %s (%s)", from, charter[fi].name, to, charter[ti].name)
	}
	return ""
}

// pkg is what go list says of one package.
type pkg struct {
	ImportPath string
	Name       string
	Imports    []string
	Deps       []string
}

// list returns every package of the root module as built for goos.
func list(t *testing.T, goos string) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Name,Imports,Deps", module+"/...")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOFLAGS=-mod=mod", "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list (GOOS=%s): %v\n%s", goos, err, stderr.Bytes())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 50 {
		t.Fatalf("go list (GOOS=%s) found %d packages; the module has more than 100", goos, len(pkgs))
	}
	return pkgs
}

// ours returns rel and true for a package of the root module.
func ours(path string) (string, bool) {
	return strings.CutPrefix(path, module+"/")
}

// TestImportsFollowTheCharter checks every direct import of every package
// of the root module, as built for Linux and for Windows, against the
// charter's table.
func TestImportsFollowTheCharter(t *testing.T) {
	for _, goos := range []string{"linux", "windows"} {
		t.Run(goos, func(t *testing.T) {
			var bad []string
			for _, p := range list(t, goos) {
				from, ok := ours(p.ImportPath)
				if !ok {
					continue
				}
				if rowOf(from) < 0 {
					bad = append(bad, violation(from, ""))
					continue
				}
				for _, imp := range p.Imports {
					if to, ok := ours(imp); ok {
						if v := violation(from, to); v != "" {
							bad = append(bad, v)
						}
					}
				}
			}
			sort.Strings(bad)
			for _, v := range bad {
				t.Error(v)
			}
		})
	}
}

// TestCallGateLinksNoGRPC keeps the call gate transport-neutral: library
// mode runs it without gRPC (CONTRIBUTING.md: "no gRPC").
func TestCallGateLinksNoGRPC(t *testing.T) {
	for _, goos := range []string{"linux", "windows"} {
		for _, p := range list(t, goos) {
			rel, ok := ours(p.ImportPath)
			if !ok || !under(rel, "internal/callgate") && !under(rel, "internal/objecthost") {
				continue
			}
			for _, d := range p.Deps {
				if under(d, "google.golang.org/grpc") {
					t.Errorf("GOOS=%s: %s links %s", goos, rel, d)
				}
			}
		}
	}
}

// TestViolationsAreSeen keeps the check honest: imports that break the
// charter in each way it names are reported, and allowed ones are not.
func TestViolationsAreSeen(t *testing.T) {
	for _, c := range []struct {
		from, to string
		bad      bool
	}{
		{"groups/disk", "internal/server", true},          // up, and public into internal
		{"groups/disk", "internal/leaf/keylock", false},   // a leaf has no layer
		{"hostpath", "internal/callgate", true},           // public into internal
		{"internal/policy", "internal/callgate", true},    // security up into the call gate
		{"internal/callgate", "internal/policy", false},   // down
		{"internal/hostset", "internal/callgate", false},  // the wiring builds the gate
		{"internal/objecthost", "internal/hostset", true}, // the gate does not reach up into the wiring
		{"api/disk/v1", "errdefs", true},                  // the wire contract imports nothing of ours
		{"internal/host/linux/blockdev", "internal/host/windows/wmi", true},
		{"internal/host/linux/blockdev", "internal/host/linux/mountinfo", false},
		{"internal/host/linux/blockdev", "internal/policy", true}, // backend above its row's list
		{"internal/leaf/keylock", "hostpath", true},
		{"internal/leaf/keylock", "errdefs", false},
		{"internal/server", "internal/adapter/diskv1", false}, // sideways within the wire layer
		{"internal/newthing", "errdefs", true},                // in no layer
		{"test/e2e", "internal/server", false},
		{"groups/disk", "host/simulated", true},                // a group up into a backend
		{"internal/testutil/simtest", "host/simulated", false}, // a test helper
		{"groups/internal/simtest", "host/simulated", true},    // but not one inside the group layer
		{"host/simulated", "groups/disk", false},
		{"internal/server", "internal/newthing", true},                    // imports a package in no layer
		{"api/disk/v1", "api/disk/v1beta1", true},                         // nothing of ours, not even another wire package
		{"internal/leaf/keylock", "internal/leaf/printable", true},        // errdefs only, not another leaf
		{"groups", "groups/disk", false},                                  // the group row's own rule admits groups/
		{"internal/host/linux/blockdev", "host/simulated", true},          // a backend into the public one
		{"errdefs/errgrpc", "groups/disk", true},                          // the error mapping up into the model
		{"errdefs/errgrpc", "internal/leaf/keylock", true},                // or into internal/, even a leaf
		{"errdefs/errgrpc", "errdefs", false},                             // the kinds and codes it maps
		{"internal/server", "internal/testutil/poll", true},               // a layer linking a test helper
		{"groups/disk", "internal/testutil/simtest", true},                // even one for its own tests
		{"host/simulated", "test/linuxe2e/linuxnode", true},               // or a suite's package
		{"internal/testutil/daemonserver", "internal/server", false},      // a tool imports what it tests
		{"test/linuxe2e/linuxnode", "internal/testutil/daemonbin", false}, // a suite imports the harness
	} {
		if got := violation(c.from, c.to) != ""; got != c.bad {
			t.Errorf("violation(%s → %s) = %q; want a violation: %v", c.from, c.to, violation(c.from, c.to), c.bad)
		}
	}
}

// wantName is the package name the charter gives the directory rel: its
// last element without hyphens, and <group><version> for a wire package
// (api/disk/v1 is diskv1).
func wantName(rel string) string {
	elems := strings.Split(rel, "/")
	if len(elems) == 3 && elems[0] == "api" {
		return elems[1] + elems[2]
	}
	// Upstream csi-proxy v2's pkg/<group>/hostapi declare package api,
	// and drivers' code names them so: the mirror keeps upstream's name.
	if under(rel, "upstreamv2/pkg") && elems[len(elems)-1] == "hostapi" {
		return "api"
	}
	return strings.ReplaceAll(elems[len(elems)-1], "-", "")
}

// forbiddenNames are the package names the charter rules out: they say
// nothing of what the package holds.
var forbiddenNames = []string{"util", "common", "types", "shared"}

// nameProblem says how a package named name in directory rel (relative
// to the module's root, "" for the root itself) breaks the charter's
// naming rules, or "".
func nameProblem(rel, name string) string {
	switch {
	case rel == "":
		return fmt.Sprintf("the module's root holds Go files (package %s): the charter allows none there", name)
	case name == "main":
		return "" // a command: its directory names it
	case slices.Contains(forbiddenNames, name):
		return fmt.Sprintf("%s declares package %s, a name the charter rules out (%s): name it for what it holds", rel, name, strings.Join(forbiddenNames, ", "))
	case name != wantName(rel):
		return fmt.Sprintf("%s declares package %s; the charter names it %s", rel, name, wantName(rel))
	}
	return ""
}

// TestPackageNamesMatchDirectories checks the charter's naming rules: no
// Go files at the root, no package named util, common, types or shared,
// and a directory and its package have the same name, but for the three
// exceptions it names; commands are package main.
func TestPackageNamesMatchDirectories(t *testing.T) {
	for _, p := range list(t, "linux") {
		rel, ok := ours(p.ImportPath)
		if p.ImportPath == module {
			rel, ok = "", true
		}
		if !ok {
			continue
		}
		if problem := nameProblem(rel, p.Name); problem != "" {
			t.Error(problem)
		}
	}
}

// TestNameProblemsAreSeen keeps the naming check honest: each rule it
// names is reported when broken, and the exceptions are not.
func TestNameProblemsAreSeen(t *testing.T) {
	for _, c := range []struct {
		rel, name string
		bad       bool
	}{
		{"", "csinodeproxy", true},                  // Go files at the root
		{"internal/util", "util", true},             // a forbidden name, though it matches
		{"groups/shared", "shared", true},           // another
		{"internal/leaf/keylock", "keylock", false}, // the directory's name
		{"internal/leaf/keylock", "locks", true},    // another name
		{"api/disk/v1", "diskv1", false},            // <group><version>
		{"api/disk/v1", "v1", true},                 // the bare version
		{"examples/node-plugin", "nodeplugin", false},
		{"examples/node-plugin", "node_plugin", true},
		{"cmd/anything", "main", false},
		{"upstreamv2/pkg/disk/hostapi", "api", false},    // upstream's package clause
		{"upstreamv2/pkg/disk/hostapi", "hostapi", true}, // not upstream's
	} {
		if got := nameProblem(c.rel, c.name); (got != "") != c.bad {
			t.Errorf("nameProblem(%q, %q) = %q; want a problem: %v", c.rel, c.name, got, c.bad)
		}
	}
}
