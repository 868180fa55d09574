// Package policy decides which callers may call which methods, on which
// paths, from a YAML file of rules.
//
// Without a policy the daemon behaves as it always has: whoever can open an
// endpoint may call everything on it (the endpoint's ACL decides). Once a
// policy is loaded, every call is denied unless a rule allows it: a rule
// names callers (pod namespaces, pod names and container names, which the
// node's container runtime tells; ServiceAccounts, from the token kubelet
// mounts into the caller's container; Unix user or group IDs, container IDs,
// pod UIDs, Windows accounts or groups), the methods they may call, and optionally the path
// roots every path in their requests must lie under.
//
//	rules:
//	- name: azuredisk
//	  callers:
//	  - namespaces: [kube-system]
//	    podNames: ["csi-azuredisk-node-*"]
//	    containerNames: [azuredisk]
//	  - windowsAccounts: ['NT AUTHORITY\SYSTEM']
//	  allow:
//	  - groups: [disk, volume, filesystem]
//	    methods: ["*"]
//	  - methods: ["system.GetBIOSSerialNumber"]
//	  pathRoots: ['C:\var\lib\kubelet\plugins\disk.csi.azure.com', 'C:\var\lib\kubelet\pods']
//
// A Store holds the policy of a file and reloads it when the file changes.
// A file that cannot be read, parsed or validated never loosens anything:
// the daemon refuses to start with it, and a running daemon keeps the last
// good policy, logs the problem and counts it.
package policy

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/printable"
)

// File is the policy file's schema.
type File struct {
	// Mode is ModeEnforce (also when empty) or ModeAuditOnly, which
	// allows what the rules would deny and audits it as a would-deny
	// (mode.go).
	Mode string `json:"mode,omitempty"`
	// Presets name built-in rules (presets.go) to add before Rules: a
	// driver's rule as its own manifests deploy it, or node-admin.
	Presets []string `json:"presets,omitempty"`
	// Rules are the allow rules; a call is allowed when any rule allows
	// it, and denied when none does. An empty list ("rules: []") with
	// no presets denies every call (the daemon warns); a file without
	// the key (an empty file) is an error.
	Rules []Rule `json:"rules"`
}

// Rule allows some callers to call some methods.
type Rule struct {
	// Name identifies the rule in audit records and messages; unique.
	Name string `json:"name"`
	// Callers are the callers the rule is for: a caller matches when it
	// matches any one of them.
	Callers []CallerSelector `json:"callers"`
	// Allow lists the methods the callers may call.
	Allow []Allow `json:"allow"`
	// PathRoots, when set, confine every path in an allowed request
	// (fields named path, target_path, source_path, local_path, ...; not
	// remote_path, an SMB share) to these directories, compared with a
	// separator boundary in the host's path style. Empty leaves paths to
	// the daemon's working directories alone.
	PathRoots []string `json:"pathRoots,omitempty"`
	// Objects, when set, confine the disks and volumes an allowed
	// request names (volume_id, disk_number, disk_id), as PathRoots
	// confine paths. Nil leaves them unconfined.
	Objects *Objects `json:"objects,omitempty"`
	// SMBPermissions, when set, are the owner, group, modes and SELinux
	// context of the SMB mappings the rule's callers make on a Linux
	// node, in place of the daemon's (see SMBPermissions), for the calls
	// this rule allows: the rule that allows a call decides, and a rule
	// without them leaves the daemon's.
	SMBPermissions *SMBPermissions `json:"smbPermissions,omitempty"`
	// AllowReformat lets the rule's callers' volume.FormatVolume erase a
	// volume that already carries a file system, which is refused
	// otherwise (FailedPrecondition), when the volume is mounted and
	// every one of its mounts lies beneath the rule's PathRoots (see
	// CheckReformat). sig-storage-local-static-provisioner's Windows
	// deleter wipes a released volume that way. It needs PathRoots.
	AllowReformat bool `json:"allowReformat,omitempty"`
}

// CallerSelector matches a caller. Every field that is set must match; at
// least one must be set. A field the caller's identity lacks (a container
// ID of a process outside any container, a Windows account on Linux) never
// matches.
type CallerSelector struct {
	// Any matches every caller, identified or not. It cannot be combined
	// with the other fields.
	Any bool `json:"any,omitempty"`
	// UIDs match the caller's effective user ID (Linux).
	UIDs []uint32 `json:"uids,omitempty"`
	// GIDs match the caller's effective group ID or any of its
	// supplementary groups (Linux).
	GIDs []uint32 `json:"gids,omitempty"`
	// ContainerIDs match the caller's container, by full ID.
	ContainerIDs []string `json:"containerIDs,omitempty"`
	// PodUIDs match the caller's pod (Linux).
	PodUIDs []string `json:"podUIDs,omitempty"`
	// Namespaces match the namespace of the caller's pod, as the node's
	// container runtime names it for the caller's container (see
	// package cri). Unlike pod UIDs and container IDs, namespaces, pod
	// names and container names survive restarts and rollouts.
	Namespaces []string `json:"namespaces,omitempty"`
	// PodNames match the caller's pod name by path.Match pattern, e.g.
	// "csi-azuredisk-node-*" for a DaemonSet's pods.
	PodNames []string `json:"podNames,omitempty"`
	// ContainerNames match the name of the caller's container in its
	// pod spec, so a driver's sidecars do not share its rights.
	ContainerNames []string `json:"containerNames,omitempty"`
	// ServiceAccounts match the ServiceAccount of the caller's pod, as
	// "namespace/name" (kube-system/csi-azuredisk-node-sa), exactly. The
	// daemon reads it from the ServiceAccount token kubelet mounted into
	// the caller's container (see package cri); a pod without a mounted
	// token (automountServiceAccountToken: false) never matches.
	ServiceAccounts []string `json:"serviceAccounts,omitempty"`
	// WindowsAccounts match the user of the caller's token, as
	// DOMAIN\name or as a SID, without case.
	WindowsAccounts []string `json:"windowsAccounts,omitempty"`
	// WindowsGroups match the enabled groups of the caller's token, by
	// SID (S-1-5-32-544 is BUILTIN\Administrators).
	WindowsGroups []string `json:"windowsGroups,omitempty"`
	// NodeProcess matches a process of the node itself: one the daemon
	// identified completely (its PID known, nothing Incomplete) and
	// found in no container and no pod. Root's shell on the node is
	// one; a root pod is not, although uids: [0] matches it too. A
	// daemon that cannot see its callers' processes (no host PID
	// namespace) matches nobody by it.
	NodeProcess bool `json:"nodeProcess,omitempty"`
}

// Allow names methods. A method is allowed when its group is in Groups (or
// Groups is empty), its version in Versions (or Versions is empty), and one
// of Methods matches it.
type Allow struct {
	// Groups are API groups: disk, volume, filesystem, smb, iscsi, system.
	Groups []string `json:"groups,omitempty"`
	// Versions are API versions such as v1 or v2alpha1.
	Versions []string `json:"versions,omitempty"`
	// Methods are method names or patterns: "*", "PartitionDisk",
	// "Get*", or qualified by group, "disk.PartitionDisk", "disk.*".
	// Patterns use path.Match syntax.
	Methods []string `json:"methods"`
}

// Options says how a policy file is read.
type Options struct {
	// Style is the host's path style, for PathRoots and request paths.
	Style hostpath.Style
	// Methods, when set, lists the methods of each API group the daemon
	// serves (group → method names): a rule naming a group or an exact
	// method not in it is an error instead of a rule that silently never
	// matches.
	Methods map[string][]string
	// Presets are built-in rules to add to every file's own (the
	// daemon's --policy-preset), merged with the file's presets.
	Presets []string
	// KubeletPath is the node's kubelet directory (--kubelet-path), in
	// the presets' path roots; "" is kubelet's default for Style.
	KubeletPath string
	// Paths is the services' path confinement (their working
	// directories). A drive-less rooted Windows path in a request
	// (\var\lib\kubelet\..., as EKS kubelets send) gets the drive the
	// services give it (hostpath.Policy.WithDrive) before a rule's
	// pathRoots judge it, so the rule judges the path the services act
	// on. nil leaves such paths as they are, and every rule with
	// pathRoots refuses them as not absolute.
	Paths *hostpath.Policy
}

// Policy is a parsed, validated policy. The zero Policy denies everything;
// a nil *Policy allows everything (no policy configured).
type Policy struct {
	rules     []*rule
	style     hostpath.Style
	paths     *hostpath.Policy // Options.Paths
	auditOnly bool             // File.Mode is ModeAuditOnly
	presets   []string         // the presets in force, file's and Options'
}

type rule struct {
	Rule
	roots []string // cleaned PathRoots
}

var (
	hex64   = regexp.MustCompile(`^[0-9a-f]{64}$`)
	sidForm = regexp.MustCompile(`^(?i)S-1-[0-9]+(-[0-9]+)*$`)
	ruleNam = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
	// podNamePattern is what a pattern over RFC 1123 subdomains (pod
	// names) may contain.
	podNamePattern = regexp.MustCompile(`^[-a-z0-9.*?\[\]^]{1,253}$`)
)

// Parse reads and validates a policy file. Unknown or duplicate keys are
// errors, and keys match their field case-sensitively, so a misspelt or
// case-variant field cannot silently widen or narrow a rule: encoding/json
// (behind sigs.k8s.io/yaml's UnmarshalStrict) matches keys without case,
// so "pathRoots: [/a]" then "pathroots: [/]" used to widen the rule to
// "/". The YAML is converted to JSON refusing duplicate YAML keys, then
// decoded with sigs.k8s.io/json's strict, case-sensitive decoder, as the
// Kubernetes API server decodes objects. Rules that could never match and
// every other mistake Compile finds are errors too. Every problem is
// reported at once.
func Parse(data []byte, o Options) (*Policy, error) {
	f, err := decodeStrict(data)
	if err != nil {
		return nil, fmt.Errorf("parse policy: %w", err)
	}
	return Compile(f, o)
}

// decodeStrict decodes a policy file, refusing duplicate, unknown and
// case-variant keys.
func decodeStrict(data []byte) (File, error) {
	var f File
	if err := checkScalars(data); err != nil {
		return f, err
	}
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return f, err
	}
	strict, err := kjson.UnmarshalStrict(j, &f)
	if err != nil {
		return File{}, err
	}
	if len(strict) > 0 {
		return File{}, errors.Join(strict...)
	}
	return f, nil
}

// Compile validates f and returns the policy it describes.
func Compile(f File, o Options) (*Policy, error) {
	if o.Style != hostpath.Windows && o.Style != hostpath.POSIX {
		return nil, errors.New("policy: no path style given")
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	p := &Policy{style: o.Style, paths: o.Paths}
	auditOnly, err := parseMode(f.Mode)
	if err != nil {
		bad("%w", err)
	}
	p.auditOnly = auditOnly
	presetRules, presets, err := resolvePresets(o.Style, o.KubeletPath, f.Presets, o.Presets)
	if err != nil {
		bad("%w", err)
	}
	p.presets = presets
	if f.Rules == nil && len(presets) == 0 {
		bad("no rules: write \"rules: []\" to deny every call (or name presets); to allow every call, run without a policy")
	}
	names := map[string]bool{}
	for i, r := range append(presetRules, f.Rules...) {
		where := fmt.Sprintf("rules[%d]", i)
		if r.Name != "" {
			where = fmt.Sprintf("rule %q", r.Name)
		}
		switch {
		case !ruleNam.MatchString(r.Name):
			bad("%s: name must be 1 to 63 letters, digits, '.', '_' or '-'", where)
		case names[r.Name]:
			bad("%s: name is used twice", where)
		}
		names[r.Name] = true
		if len(r.Callers) == 0 {
			bad("%s: no callers", where)
		}
		for j, c := range r.Callers {
			for _, err := range validateSelector(c) {
				bad("%s: callers[%d]: %w", where, j, err)
			}
		}
		if len(r.Allow) == 0 {
			bad("%s: allows nothing", where)
		}
		for j, a := range r.Allow {
			for _, err := range validateAllow(a, o.Methods) {
				bad("%s: allow[%d]: %w", where, j, err)
			}
		}
		cr := &rule{Rule: r}
		for _, root := range r.PathRoots {
			c, err := o.Style.Clean(root)
			if err != nil {
				bad("%s: pathRoots: %w", where, err)
				continue
			}
			cr.roots = append(cr.roots, c)
		}
		for _, err := range validateObjects(r.Objects, len(r.PathRoots)) {
			bad("%s: %w", where, err)
		}
		for _, err := range validateSMBPermissions(r.SMBPermissions) {
			bad("%s: %w", where, err)
		}
		if r.AllowReformat && len(r.PathRoots) == 0 {
			bad("%s: allowReformat needs pathRoots: it lets callers erase volumes mounted only beneath them", where)
		}
		p.rules = append(p.rules, cr)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

func validateAllow(a Allow, known map[string][]string) []error {
	var errs []error
	if len(a.Methods) == 0 {
		errs = append(errs, errors.New("no methods: use \"*\" for all"))
	}
	for _, g := range a.Groups {
		if g == "" || (known != nil && known[g] == nil) {
			errs = append(errs, fmt.Errorf("groups: unknown group %q", g))
		}
	}
	for _, v := range a.Versions {
		if v == "" {
			errs = append(errs, errors.New("versions: empty version"))
		}
	}
	for _, m := range a.Methods {
		group, name := splitMethod(m)
		if name == "" {
			errs = append(errs, fmt.Errorf("methods: %q names no method", m))
			continue
		}
		if _, err := path.Match(name, ""); err != nil {
			errs = append(errs, fmt.Errorf("methods: %q: %w", m, err))
			continue
		}
		if group != "" && len(a.Groups) > 0 && !slices.Contains(a.Groups, group) {
			errs = append(errs, fmt.Errorf("methods: %q names a group that groups %v leaves out, so it never matches", m, a.Groups))
		}
		if known == nil {
			continue
		}
		if group != "" && known[group] == nil {
			errs = append(errs, fmt.Errorf("methods: %q: unknown group %q", m, group))
			continue
		}
		if strings.ContainsAny(name, `*?[\`) {
			continue
		}
		groups := a.Groups
		if group != "" {
			groups = []string{group}
		}
		if len(groups) == 0 {
			for g := range known {
				groups = append(groups, g)
			}
		}
		found := false
		for _, g := range groups {
			found = found || slices.Contains(known[g], name)
		}
		if !found {
			errs = append(errs, fmt.Errorf("methods: no method %q in groups %v", name, groups))
		}
	}
	return errs
}

// splitMethod splits "group.Method" into its parts; an unqualified method
// has no group.
func splitMethod(m string) (group, name string) {
	if g, n, ok := strings.Cut(m, "."); ok {
		return g, n
	}
	return "", m
}

// Call is what the policy decides on.
type Call struct {
	// Caller is who calls.
	Caller identity.Caller
	// Group and Version are the endpoint's API group-version.
	Group, Version string
	// Method is the method's name, e.g. PartitionDisk.
	Method string
	// Args are the request's paths, disks and volumes, read from its
	// group model by the declarations on the model's type (see Arg).
	Args []Arg
	// Inspected tells whether Args were read from a request: false when
	// there was none to read (a stream), which fails every rule that
	// confines paths or objects.
	Inspected bool
	// Objects answers where the disks and volumes the request names are
	// mounted, for rules with Objects; nil fails such rules for a
	// request that names any.
	Objects ObjectHost
}

// Decision is the policy's answer.
type Decision struct {
	// Allowed tells whether the call may proceed.
	Allowed bool
	// Rule names the rule that allowed the call; "" when allowed for want
	// of a policy, or denied.
	Rule string
	// Reason says why the call is denied, for the caller and the audit
	// log; "" when allowed.
	Reason string
	// SMBPermissions are the allowing rule's smbPermissions: how the SMB
	// mapping the call makes shows its files on a Linux node. Nil when
	// the call is denied, allowed for want of a policy, or allowed by a
	// rule that sets none (the daemon's --smb-* values apply). The call
	// gate puts the Decision in the call's context (NewDecisionContext),
	// where the Linux SMB backend reads it. Read only: it is the rule's
	// own, shared by every call the rule allows.
	SMBPermissions *SMBPermissions
	// reformat is set when the allowing rule has allowReformat and the
	// call is volume.FormatVolume: what CheckReformat needs to judge the
	// volume when the Service finds it formatted. Nil otherwise.
	reformat *reformatGrant
	// WouldDeny, with Allowed, marks a call an audit-only policy lets
	// through although its rules deny it; Reason then says why they
	// would, and the audit record's decision is "would-deny".
	WouldDeny bool
}

// NoRuleReason is the Reason of a denial because no rule lets the caller
// call the method; any other denial's Reason is about the request's
// paths or objects (and quotes them).
const NoRuleReason = "no rule allows it"

// Message is the denial as the caller sees it (codes.PermissionDenied).
func (d Decision) Message(c Call) string {
	return fmt.Sprintf("caller %s may not call %s.%s: %s", c.Caller, c.Group, c.Method, d.Reason)
}

// Decide is DecideContext without a deadline for the questions it asks
// the node.
func (p *Policy) Decide(c Call) Decision { return p.DecideContext(context.Background(), &c) }

// DecideContext allows the call when some rule matches its caller and
// method, every path of its request lies under that rule's path roots,
// and every disk and volume it names is within the rule's objects (asked
// of c.Objects under ctx). A nil Policy allows everything.
func (p *Policy) DecideContext(ctx context.Context, c *Call) Decision {
	if p == nil {
		return Decision{Allowed: true}
	}
	d := p.decide(ctx, c)
	if !d.Allowed && p.auditOnly {
		return Decision{Allowed: true, WouldDeny: true, Reason: d.Reason}
	}
	return d
}

// decide is DecideContext's answer by the rules alone, whatever the mode.
func (p *Policy) decide(ctx context.Context, c *Call) Decision {
	var pathReason string
	for _, r := range p.rules {
		if !r.matchesCaller(&c.Caller) || !r.allows(c) {
			continue
		}
		reason := r.checkPaths(p, c)
		if reason == "" {
			reason = r.checkObjects(ctx, p, c)
		}
		if reason == "" {
			return Decision{Allowed: true, Rule: r.Name, SMBPermissions: r.SMBPermissions, reformat: r.reformatGrant(p, c)}
		}
		if pathReason == "" {
			pathReason = reason
		}
	}
	if pathReason != "" {
		return Decision{Reason: pathReason}
	}
	return Decision{Reason: NoRuleReason}
}

// Rules returns the names of the policy's rules, in file order.
func (p *Policy) Rules() []string {
	if p == nil {
		return nil
	}
	out := make([]string, len(p.rules))
	for i, r := range p.rules {
		out[i] = r.Name
	}
	return out
}

func (r *rule) matchesCaller(c *identity.Caller) bool {
	for i := range r.Callers {
		if r.Callers[i].matches(c) {
			return true
		}
	}
	return false
}

func (s *CallerSelector) matches(c *identity.Caller) bool {
	if s.Any {
		return true
	}
	if s.NodeProcess && (c.PID <= 0 || c.Incomplete != "" || c.ContainerID != "" || c.PodUID != "" || c.Runtime != "") {
		return false
	}
	if len(s.UIDs) > 0 && (!c.HasUnixIDs || !slices.Contains(s.UIDs, c.UID)) {
		return false
	}
	if len(s.GIDs) > 0 {
		if !c.HasUnixIDs {
			return false
		}
		in := slices.Contains(s.GIDs, c.GID)
		for _, g := range c.Groups {
			in = in || slices.Contains(s.GIDs, g)
		}
		if !in {
			return false
		}
	}
	if len(s.ContainerIDs) > 0 && (c.ContainerID == "" || !slices.Contains(s.ContainerIDs, strings.ToLower(c.ContainerID))) {
		return false
	}
	if len(s.PodUIDs) > 0 && (c.PodUID == "" || !slices.Contains(s.PodUIDs, strings.ToLower(c.PodUID))) {
		return false
	}
	if len(s.Namespaces) > 0 && (c.PodNamespace == "" || !slices.Contains(s.Namespaces, c.PodNamespace)) {
		return false
	}
	if len(s.PodNames) > 0 && (c.PodName == "" || !slices.ContainsFunc(s.PodNames, func(p string) bool {
		ok, err := path.Match(p, c.PodName)
		return err == nil && ok
	})) {
		return false
	}
	if len(s.ContainerNames) > 0 && (c.ContainerName == "" || !slices.Contains(s.ContainerNames, c.ContainerName)) {
		return false
	}
	if len(s.ServiceAccounts) > 0 && (c.PodNamespace == "" || c.ServiceAccount == "" || !slices.Contains(s.ServiceAccounts, c.PodNamespace+"/"+c.ServiceAccount)) {
		return false
	}
	if len(s.WindowsAccounts) > 0 && !containsFold(s.WindowsAccounts, c.WindowsAccount, c.WindowsSID) {
		return false
	}
	if len(s.WindowsGroups) > 0 && !containsFold(s.WindowsGroups, c.WindowsGroupSIDs...) {
		return false
	}
	return true
}

// containsFold tells whether any non-empty value is in list, without case.
func containsFold(list []string, values ...string) bool {
	for _, v := range values {
		if v == "" {
			continue
		}
		for _, l := range list {
			if strings.EqualFold(l, v) {
				return true
			}
		}
	}
	return false
}

func (r *rule) allows(c *Call) bool {
	for i := range r.Allow {
		if r.Allow[i].matches(c) {
			return true
		}
	}
	return false
}

func (a *Allow) matches(c *Call) bool {
	if len(a.Groups) > 0 && !slices.Contains(a.Groups, c.Group) {
		return false
	}
	if len(a.Versions) > 0 && !slices.Contains(a.Versions, c.Version) {
		return false
	}
	for _, m := range a.Methods {
		group, name := splitMethod(m)
		if group != "" && group != c.Group {
			continue
		}
		if ok, err := path.Match(name, c.Method); err == nil && ok {
			return true
		}
	}
	return false
}

// checkPaths returns why a request's paths are not all under the rule's
// roots, or "" when they are (or the rule has no roots).
func (r *rule) checkPaths(p *Policy, c *Call) string {
	style := p.style
	if len(r.roots) == 0 {
		return ""
	}
	if !c.Inspected {
		return fmt.Sprintf("rule %q confines paths, and the request cannot be inspected", r.Name)
	}
next:
	for _, f := range c.Args {
		if f.Kind != ArgPath || f.Value == "" {
			continue
		}
		v := f.Value
		if p.paths != nil {
			v = p.paths.WithDrive(v)
		}
		cleaned, err := style.Clean(v)
		if err != nil {
			return fmt.Sprintf("%s %s is not a valid path", f.Field, printable.Quote(f.Value))
		}
		for _, root := range r.roots {
			if style.Within(cleaned, root) {
				continue next
			}
		}
		// Quoted shortened: the reason is logged, audited and sent back,
		// and a caller chooses the path's length (a 4 MB path made a
		// 4 MB reason, written three times per denied call).
		return fmt.Sprintf("%s %s is outside the path roots %v of rule %q", f.Field, printable.Quote(f.Value), r.roots, r.Name)
	}
	return ""
}
