package policy

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// presetFiles are the built-in rules, one file per preset and node OS:
// presets/<linux|windows>/<name>.yaml, each a policy file whose rules
// are the preset's. They are the rules the drivers' own manifests and
// Helm charts need (ServiceAccount, pod names, plugin container, the
// kubelet directories of the driver's CSI name), written once here and
// selected on every install path: the policy file's presets key (the
// systemd unit's /etc/csi-node-proxy/policy.yaml, the Helm chart's
// policy.presets) or the daemon's --policy-preset flag (the kustomize
// components, install-service).
//
//go:embed presets
var presetFiles embed.FS

// NodeAdminPreset is the preset every shipped policy starts with: root
// (Linux uid 0) or a member of BUILTIN\Administrators (Windows) may call
// the methods that only read, so the node's own operator can run
// csi-node-proxyctl's list and get commands without naming every driver
// first. It changes nothing on the node.
const NodeAdminPreset = "node-admin"

// presetDir is the directory of the presets for a path style.
func presetDir(style hostpath.Style) string {
	if style == hostpath.Windows {
		return "presets/windows"
	}
	return "presets/linux"
}

// PresetNames lists the presets there are for a path style (POSIX:
// Linux nodes; Windows), sorted.
func PresetNames(style hostpath.Style) []string {
	entries, err := presetFiles.ReadDir(presetDir(style))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".yaml"); ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// PresetData returns the policy file of one preset for a path style, as
// shipped (comments say where each value comes from).
func PresetData(style hostpath.Style, name string) ([]byte, error) {
	if !ruleNam.MatchString(name) {
		return nil, fmt.Errorf("preset %q: not a preset name", name)
	}
	b, err := presetFiles.ReadFile(presetDir(style) + "/" + name + ".yaml")
	if errors.Is(err, fs.ErrNotExist) {
		os := "Linux"
		if style == hostpath.Windows {
			os = "Windows"
		}
		return nil, fmt.Errorf("preset %q: no such preset for %s nodes (there are %s)", name, os, strings.Join(PresetNames(style), ", "))
	}
	return b, err
}

// kubeletVar stands for the node's kubelet directory in the presets'
// pathRoots: the daemon's --kubelet-path (Options.KubeletPath), so a
// preset confines a driver to the kubelet directory the node really has
// (k0s, MicroK8s and some distributions move it).
const kubeletVar = "${kubelet}"

// defaultKubelet is the kubelet directory a preset means when Options
// names none: kubelet's default on each OS.
func defaultKubelet(style hostpath.Style) string {
	if style == hostpath.Windows {
		return `C:\var\lib\kubelet`
	}
	return "/var/lib/kubelet"
}

// resolvePresets returns the rules of the presets named in the file and
// in Options, each once (file's first), with the kubelet directory in
// their path roots, and their names.
func resolvePresets(style hostpath.Style, kubelet string, fromFile, fromOptions []string) ([]Rule, []string, error) {
	if kubelet == "" {
		kubelet = defaultKubelet(style)
	}
	kubelet = strings.TrimRight(kubelet, `/\`)
	if kubelet == "" || kubelet[len(kubelet)-1] == ':' {
		return nil, nil, fmt.Errorf("presets: the kubelet directory %q is a root; presets confine drivers below it", kubelet)
	}
	var rules []Rule
	var names []string
	var errs []error
	for _, name := range slices.Concat(fromFile, fromOptions) {
		if slices.Contains(names, name) {
			continue
		}
		data, err := PresetData(style, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// Every use is inside a single-quoted YAML scalar, where a quote
		// is written twice.
		data = []byte(strings.ReplaceAll(string(data), kubeletVar, strings.ReplaceAll(kubelet, "'", "''")))
		f, err := decodeStrict(data)
		if err != nil { // the shipped presets are tested to parse
			errs = append(errs, fmt.Errorf("preset %q: %w", name, err))
			continue
		}
		names = append(names, name)
		rules = append(rules, f.Rules...)
	}
	return rules, names, errors.Join(errs...)
}
