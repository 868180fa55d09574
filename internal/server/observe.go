package server

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/internal/adapter"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/metrics"
)

// VersionHeader is the gRPC response header in which every health check's
// answer carries the daemon's build (version.String()), so that a client
// such as csi-node-proxyctl can tell which daemon it talks to without
// another endpoint. Upstream's clients ignore headers they do not know.
const VersionHeader = "csi-node-proxy-version"

// Deprecated tells whether upstream deprecated a group-version: a v1alpha*
// or v1beta* of a group that has a v1, which callers can move to. The only
// versions of iscsi (v1alpha2) and system (v1alpha1), and the v2alpha1
// versions that extend v1, are not deprecated: nothing newer replaces them.
func Deprecated(api adapter.API) bool {
	if !strings.HasPrefix(api.Version, "v1alpha") && !strings.HasPrefix(api.Version, "v1beta") {
		return false
	}
	return slices.ContainsFunc(adapter.All(), func(a adapter.API) bool { return a.Group == api.Group && a.Version == "v1" })
}

// observer does what follows authorisation on one endpoint: it knows
// which rule allowed a call (the gate's decision, "" without a policy),
// and answers health checks with the daemon's build.
type observer struct {
	endpoint   string
	api        adapter.API
	deprecated bool
	metrics    *metrics.Metrics
	seen       *Deprecations
	build      metadata.MD // nil: no version header
}

// newObserver returns the observer of one endpoint, or nil when it would
// do nothing (no metrics, no deprecation notes, no build to announce).
func newObserver(endpoint string, api adapter.API, cfg Config) *observer {
	if cfg.Metrics == nil && cfg.Deprecations == nil && cfg.Build == "" {
		return nil
	}
	o := &observer{endpoint: endpoint, api: api, deprecated: Deprecated(api), metrics: cfg.Metrics, seen: cfg.Deprecations}
	if cfg.Build != "" {
		o.build = metadata.Pairs(VersionHeader, cfg.Build)
	}
	return o
}

// announceBuild sends the daemon's build in the response header of a
// health check, so a client learns what it talks to; o may be nil.
func (o *observer) announceBuild(ctx context.Context) {
	if o != nil && o.build != nil {
		_ = grpc.SetHeader(ctx, o.build) // only fails once the header is sent; it is not yet
	}
}

// allowed labels an allowed call with its rule, and counts and notes a
// deprecated version's call (the gate's Allowed hook).
func (o *observer) allowed(ctx context.Context, c identity.Caller, method, rule string) {
	metrics.SetRule(ctx, rule)
	if o.deprecated {
		o.metrics.DeprecatedCall(o.api.Group, o.api.Version, rule)
		if o.seen != nil {
			o.seen.note(o.endpoint, o.api, rule, c, method)
		}
	}
}

// DefaultMaxDeprecatedCallers bounds the callers Deprecations remembers.
const DefaultMaxDeprecatedCallers = 256

// DeprecatedUse is one caller's use of one deprecated group-version, as
// the daemon's /deprecated endpoint lists it and csi-node-proxyctl
// deprecations shows it.
type DeprecatedUse struct {
	// Group and Version are the deprecated group-version called.
	Group   string `json:"group"`
	Version string `json:"version"`
	// Rule is the policy rule that allowed the calls; "none" without a
	// policy.
	Rule string `json:"rule"`
	// Caller describes the caller without its process ID (a driver's
	// restarts are one caller): user and group, container, pod, or
	// Windows account, as far as they are known.
	Caller string `json:"caller"`
	// LastPID is the process ID of the latest call; 0 when unknown.
	LastPID int `json:"last_pid"`
	// LastMethod is the method of the latest call.
	LastMethod string `json:"last_method"`
	// Calls counts the caller's calls on the version.
	Calls uint64 `json:"calls"`
	// FirstSeen and LastSeen bound them, UTC.
	FirstSeen time.Time `json:"first_seen"`
	LastSeen  time.Time `json:"last_seen"`
}

// DeprecatedReport is what Deprecations.Report returns.
type DeprecatedReport struct {
	// Uses lists each caller and deprecated version, sorted by group,
	// version, rule and caller.
	Uses []DeprecatedUse `json:"uses"`
	// Untracked counts calls of callers beyond the bound, counted in the
	// metric but not listed.
	Untracked uint64 `json:"untracked"`
}

// useKey identifies one caller of one deprecated group-version.
type useKey struct{ group, version, rule, caller string }

// Deprecations remembers which callers use which deprecated versions,
// logs each such caller once, and reports them. It is bounded: past Max
// callers, further ones are counted as untracked, and logged no more. The
// zero value is not usable; call NewDeprecations.
type Deprecations struct {
	max int
	now func() time.Time

	mu        sync.Mutex
	uses      map[useKey]*DeprecatedUse
	untracked uint64
	warned    bool // the bound was reached and said so
}

// NewDeprecations returns an empty record of at most max callers (0 is
// DefaultMaxDeprecatedCallers).
func NewDeprecations(max int) *Deprecations {
	if max <= 0 {
		max = DefaultMaxDeprecatedCallers
	}
	return &Deprecations{max: max, now: time.Now, uses: map[useKey]*DeprecatedUse{}}
}

// stableCaller describes a caller without what changes between the
// connections of one driver (process ID, supplementary groups).
func stableCaller(c identity.Caller) string {
	c.PID, c.Groups, c.WindowsGroupSIDs, c.Incomplete = 0, nil, nil, ""
	return c.String()
}

// note records a call and logs the caller's first one.
func (d *Deprecations) note(endpoint string, api adapter.API, rule string, c identity.Caller, method string) {
	k := useKey{api.Group, api.Version, metrics.RuleLabel(rule), stableCaller(c)}
	now := d.now().UTC()
	d.mu.Lock()
	u, ok := d.uses[k]
	if !ok && len(d.uses) >= d.max {
		d.untracked++
		warn := !d.warned
		d.warned = true
		d.mu.Unlock()
		if warn {
			klog.InfoS("Too many callers of deprecated API versions to track; further ones are only counted",
				"limit", d.max)
		}
		return
	}
	if !ok {
		u = &DeprecatedUse{Group: k.group, Version: k.version, Rule: k.rule, Caller: k.caller, FirstSeen: now}
		d.uses[k] = u
	}
	u.Calls++
	u.LastSeen, u.LastPID, u.LastMethod = now, c.PID, method
	d.mu.Unlock()
	if !ok {
		// Once per caller and version: enough to act on, never a flood.
		klog.InfoS("Caller uses a deprecated API version; it must move to v1 before an upgrade removes this version",
			"endpoint", endpoint, "group", api.Group, "version", api.Version, "method", method,
			"caller", c.String(), "rule", k.rule)
	}
}

// Report returns what was recorded so far.
func (d *Deprecations) Report() DeprecatedReport {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := DeprecatedReport{Uses: make([]DeprecatedUse, 0, len(d.uses)), Untracked: d.untracked}
	for _, u := range d.uses {
		r.Uses = append(r.Uses, *u)
	}
	sort.Slice(r.Uses, func(i, j int) bool {
		a, b := r.Uses[i], r.Uses[j]
		return strings.Join([]string{a.Group, a.Version, a.Rule, a.Caller}, "\x00") <
			strings.Join([]string{b.Group, b.Version, b.Rule, b.Caller}, "\x00")
	})
	return r
}
