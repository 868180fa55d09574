package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/internal/hostset"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/genfile"
)

// updateDocs makes TestConfigurationDoc rewrite docs/configuration.md
// (make docs).
var updateDocs = flag.Bool("update-docs", false, "rewrite docs/configuration.md from the flag definitions")

// configDoc is the generated reference, from this package.
var configDoc = genfile.File{
	Path:    filepath.Join("..", "..", "docs", "configuration.md"),
	Missing: "run make docs to generate it",
	Stale:   "docs/configuration.md is stale (a flag was added or changed): run make docs and commit it.",
}

// upstreamFlags are kubernetes-csi/csi-proxy's own flags (besides klog's),
// which csi-node-proxy keeps with their meanings and defaults.
var upstreamFlags = []string{"kubelet-path", "working-dir", "windows-service", "require-privacy", "metrics-bind-address"}

// osDependentDefaults are defaults that differ by the OS the daemon runs
// on, described instead of shown, so the reference is the same wherever it
// is generated.
var osDependentDefaults = map[string]string{
	"host":         "`windows` on Windows, `linux` on Linux (elsewhere none: give `--host=simulated`)",
	"kubelet-path": "`" + hostset.WindowsKubeletPath + "`; `" + hostset.LinuxKubeletPath + "` with `--host=linux`",
	"cri-endpoint": "containerd's: `unix:///run/containerd/containerd.sock`; on Windows `npipe:////./pipe/containerd-containerd`",
}

// klogDefaults are klog's flag defaults, read before any test changes
// klog's settings (a flag's DefValue is its value when it is defined).
var klogDefaults = func() map[string]string {
	set := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(set)
	d := map[string]string{}
	set.VisitAll(func(f *flag.Flag) { d[f.Name] = f.DefValue })
	return d
}()

// mdCell makes text safe inside a Markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "\n", " ").Replace(s)
}

// flagTable renders flags as a Markdown table: flag, type, default,
// description.
func flagTable(b *strings.Builder, flags []*flag.Flag, defaults map[string]string) {
	b.WriteString("| flag | type | default | description |\n|---|---|---|---|\n")
	for _, f := range flags {
		typ, usage := flag.UnquoteUsage(f)
		if typ == "" {
			typ = "bool"
		}
		switch {
		case f.Name == "v":
			typ = "int"
		case typ == "value" && strings.Contains(usage, "repeatable"):
			typ = "string, repeatable"
		case typ == "value":
			typ = "string"
		}
		def, ok := defaults[f.Name]
		if !ok {
			def = f.DefValue
		}
		switch {
		case osDependentDefaults[f.Name] != "":
			def = osDependentDefaults[f.Name]
		case def == "" || def == "[]":
			def = "—"
		default:
			def = "`" + def + "`"
		}
		fmt.Fprintf(b, "| `-%s` | %s | %s | %s |\n", f.Name, typ, mdCell(def), mdCell(usage))
	}
}

// flagsOf returns a set's flags sorted by name, split by keep.
func flagsOf(set *flag.FlagSet, keep func(*flag.Flag) bool) []*flag.Flag {
	var out []*flag.Flag
	set.VisitAll(func(f *flag.Flag) {
		if keep(f) {
			out = append(out, f)
		}
	})
	return out
}

// renderConfigDoc renders docs/configuration.md from the flag definitions:
// newFlagSet's (upstream's, csi-node-proxy's own, klog's) and the service
// subcommands'.
func renderConfigDoc() string {
	var cfg Config
	var apis string
	daemon := newFlagSet(&cfg, &apis)
	klogSet := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogSet)
	isKlog := func(f *flag.Flag) bool { return klogSet.Lookup(f.Name) != nil }
	isUpstream := func(f *flag.Flag) bool { return slices.Contains(upstreamFlags, f.Name) }

	var b strings.Builder
	b.WriteString(`<!-- Generated from the flag definitions in cmd/csi-node-proxy by "make docs"; do not edit.
     TestConfigurationDoc fails when this file is stale. -->

# Configuration reference

Every flag of ` + "`csi-node-proxy`" + ` and of its ` + "`install-service`" + ` and
` + "`uninstall-service`" + ` subcommands, generated from their definitions. Flags use
Go's flag package, as upstream csi-proxy's do: ` + "`-flag=value`" + `, ` + "`--flag=value`" + ` and
` + "`-flag value`" + ` are the same, and a boolean is ` + "`-flag`" + ` or ` + "`-flag=false`" + `.
A repeatable flag is given once per value. ` + "`csi-node-proxy -help`" + ` prints the same list,
` + "`-version`" + ` the version. How to use them: [operations.md](operations.md); what changed from
upstream: [migration.md](migration.md).

## Upstream csi-proxy's flags

Same names, meanings and defaults as kubernetes-csi/csi-proxy, so an existing command
line or service definition keeps working.

`)
	flagTable(&b, flagsOf(daemon, isUpstream), nil)
	b.WriteString(`
## csi-node-proxy's own flags

New in csi-node-proxy; all optional. The security flags are explained in
[security.md](security.md), the simulated host in [simulated-host.md](simulated-host.md).

`)
	flagTable(&b, flagsOf(daemon, func(f *flag.Flag) bool { return !isUpstream(f) && !isKlog(f) }), nil)
	b.WriteString(`
## Logging flags (klog)

klog's flags, as upstream registers them. By default logs go to stderr only
(` + "`-logtostderr=true`" + `, under which klog ignores ` + "`-log_file`" + ` and ` + "`-log_dir`" + `). A Windows
service has no stderr: ` + "`install-service`" + ` adds ` + "`-logtostderr=false`" + ` and, without
` + "`-log_file`" + ` or ` + "`-log_dir`" + `, ` + "`-log_file=%ProgramData%\\csi-node-proxy\\<service>.log`" + `; a
service installed by hand gets the same at start. Calls are logged at ` + "`-v=2`" + `,
payloads (secrets redacted) at ` + "`-v=5`" + `.

`)
	flagTable(&b, flagsOf(daemon, isKlog), klogDefaults)

	var io installOptions
	b.WriteString(`
## ` + "`csi-node-proxy install-service [options] [--] [daemon flags]`" + `

Registers the program it is run from as a Windows service (see
[operations.md](operations.md#windows-service)). The options below are recognised
anywhere; every other argument, and everything after ` + "`--`" + `, is a daemon flag, checked
by the daemon's own parser before anything changes.

`)
	flagTable(&b, flagsOf(newInstallFlags(&io), func(*flag.Flag) bool { return true }), nil)
	var uo uninstallOptions
	b.WriteString(`
## ` + "`csi-node-proxy uninstall-service [options]`" + `

Stops (draining calls in flight), deletes and waits for the removal of a Windows
service.

`)
	flagTable(&b, flagsOf(newUninstallFlags(&uo), func(*flag.Flag) bool { return true }), nil)
	return b.String()
}

// TestConfigurationDoc fails when docs/configuration.md differs from what
// the flag definitions render; make docs rewrites it.
func TestConfigurationDoc(t *testing.T) {
	configDoc.Check(t, renderConfigDoc(), *updateDocs)
}
