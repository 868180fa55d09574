package policy

import (
	"fmt"
	"slices"
)

// The policy modes (File.Mode).
const (
	// ModeEnforce refuses every call no rule allows: the default.
	ModeEnforce = "enforce"
	// ModeAuditOnly decides every call as ModeEnforce would, and lets
	// through the calls it would refuse, marked Decision.WouldDeny: the
	// audit log records them as "would-deny" with the reason, so a new
	// policy can run on nodes that serve drivers and show what it would
	// break before it does.
	ModeAuditOnly = "audit-only"
)

// parseMode tells whether mode is ModeAuditOnly; any value but the two
// modes (and "" for enforce) is an error.
func parseMode(mode string) (auditOnly bool, err error) {
	switch mode {
	case "", ModeEnforce:
		return false, nil
	case ModeAuditOnly:
		return true, nil
	}
	return false, fmt.Errorf("mode %q: want %q or %q", mode, ModeEnforce, ModeAuditOnly)
}

// AuditOnly tells whether the policy only records what it would deny
// (ModeAuditOnly); false for a nil Policy.
func (p *Policy) AuditOnly() bool { return p != nil && p.auditOnly }

// Presets returns the names of the presets in force (the file's and
// Options.Presets), in order.
func (p *Policy) Presets() []string {
	if p == nil {
		return nil
	}
	return slices.Clone(p.presets)
}

// AllowsMethod tells whether some rule lets some caller call group's
// method (any version), whoever the caller and whatever the paths: the
// policy's reach, for the daemon's check that its policy lets any
// caller change the node at all. A nil Policy allows everything.
func (p *Policy) AllowsMethod(group, method string) bool {
	if p == nil {
		return true
	}
	c := Call{Group: group, Method: method}
	for _, r := range p.rules {
		for _, a := range r.Allow {
			a.Versions = nil
			if a.matches(&c) {
				return true
			}
		}
	}
	return false
}
