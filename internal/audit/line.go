package audit

// The line format: a Record as it is written, one JSON object a line,
// every string bounded (bound.go) and nothing HTML-escaped.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// line is a record as written.
type line struct {
	Schema     string   `json:"schema"`
	Node       string   `json:"node,omitempty"`
	ID         string   `json:"id"`
	RequestID  string   `json:"request_id,omitempty"`
	Phase      string   `json:"phase"`
	Time       string   `json:"time"`
	Endpoint   string   `json:"endpoint"`
	Group      string   `json:"group"`
	Version    string   `json:"version"`
	Method     string   `json:"method"`
	FullMethod string   `json:"full_method"`
	Kind       string   `json:"kind"`
	Caller     caller   `json:"caller"`
	Decision   string   `json:"decision"`
	Rule       string   `json:"rule,omitempty"`
	Reason     string   `json:"reason,omitempty"`
	Request    any      `json:"request,omitempty"`
	Code       string   `json:"code,omitempty"` // "" only in an intent
	Message    string   `json:"message,omitempty"`
	DurationMS *float64 `json:"duration_ms,omitempty"` // nil only in an intent
	// Suppressed counts the caller's records of this kind left out since
	// its previous one (rate-limited, Options.DenialBurst); in a summary,
	// those of SuppressedKind.
	Suppressed     uint64 `json:"suppressed,omitempty"`
	SuppressedKind string `json:"suppressed_kind,omitempty"` // only in a summary
}

// caller is identity.Caller as written: unknown fields are left out, and
// the Unix IDs only appear when known, so uid 0 always means root.
type caller struct {
	PID              int      `json:"pid,omitempty"`
	Executable       string   `json:"executable,omitempty"`
	StartTime        string   `json:"start_time,omitempty"`
	UID              *uint32  `json:"uid,omitempty"`
	GID              *uint32  `json:"gid,omitempty"`
	Groups           []uint32 `json:"groups,omitempty"`
	ContainerID      string   `json:"container_id,omitempty"`
	PodUID           string   `json:"pod_uid,omitempty"`
	PodNamespace     string   `json:"pod_namespace,omitempty"`
	PodName          string   `json:"pod_name,omitempty"`
	ContainerName    string   `json:"container_name,omitempty"`
	ServiceAccount   string   `json:"service_account,omitempty"`
	Runtime          string   `json:"runtime,omitempty"`
	WindowsSID       string   `json:"windows_sid,omitempty"`
	WindowsAccount   string   `json:"windows_account,omitempty"`
	WindowsGroupSIDs []string `json:"windows_group_sids,omitempty"`
	Incomplete       string   `json:"incomplete,omitempty"`
}

// encode renders r as one line of JSON in phase, newline included. An
// intent has no outcome yet: no code, message or duration. Every string
// is bounded (Truncate) and nothing is HTML-escaped.
func (l *Logger) encode(r Record, phase string, suppressed uint64) ([]byte, error) {
	c := r.Caller
	cs := func(s string) string { return Truncate(s, MaxCallerString) }
	out := line{
		Schema:         SchemaVersion,
		Node:           cs(l.opts.Node),
		RequestID:      cs(r.RequestID),
		ID:             cs(r.ID),
		Phase:          phase,
		Time:           r.Time.UTC().Format(time.RFC3339Nano),
		Endpoint:       cs(r.Endpoint),
		Group:          cs(r.Group),
		Version:        cs(r.Version),
		Method:         cs(r.Method),
		FullMethod:     cs(r.FullMethod),
		Kind:           Classify(r.Method).String(),
		SuppressedKind: r.suppressedKind,
		Caller: caller{
			PID: c.PID, Executable: cs(c.Executable), Groups: boundIDs(c.Groups), ContainerID: cs(c.ContainerID),
			PodUID: cs(c.PodUID), Runtime: cs(c.Runtime), PodNamespace: cs(c.PodNamespace), PodName: cs(c.PodName),
			ContainerName: cs(c.ContainerName), ServiceAccount: cs(c.ServiceAccount), WindowsSID: cs(c.WindowsSID),
			WindowsAccount: cs(c.WindowsAccount), WindowsGroupSIDs: boundStrings(c.WindowsGroupSIDs), Incomplete: cs(c.Incomplete),
		},
		Decision:   cs(r.Decision),
		Rule:       cs(r.Rule),
		Reason:     Truncate(r.Reason, MaxText),
		Suppressed: suppressed,
	}
	if phase == PhaseSummary {
		out.Kind = "" // a record of no call
	}
	if phase == PhaseDone {
		ms := float64(r.Duration.Microseconds()) / 1000
		out.Code, out.Message, out.DurationMS = r.Code.String(), Truncate(r.Message, MaxText), &ms
	}
	if !c.StartTime.IsZero() {
		out.Caller.StartTime = c.StartTime.UTC().Format(time.RFC3339Nano)
	}
	if c.HasUnixIDs {
		uid, gid := c.UID, c.GID
		out.Caller.UID, out.Caller.GID = &uid, &gid
	}
	if r.Model != nil {
		out.Request = RedactModel(r.Model)
	}
	b, err := marshalLine(&out)
	if err != nil && out.Request != nil {
		// A value JSON cannot write (a NaN): say what failed instead of the request.
		out.Request = Truncate(fmt.Sprintf("<%T: %v>", r.Model, err), MaxText)
		b, err = marshalLine(&out)
	}
	return b, err
}

// marshalLine writes out as JSON with its newline, without HTML escaping:
// json.Marshal writes '<', '>' and '&' as six bytes each (\u003c), which
// let a caller's request grow six-fold in the record, and records are
// read by tools, not browsers.
func marshalLine(out *line) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil // Encode ends the line with '\n'
}

// maxCallerGroups bounds the caller's supplementary groups and group SIDs
// a record lists: Linux allows 65536 groups, a record needs far fewer.
const maxCallerGroups = 64

func boundIDs(ids []uint32) []uint32 { return ids[:min(len(ids), maxCallerGroups)] }

func boundStrings(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	out := make([]string, 0, min(len(ss), maxCallerGroups))
	for _, s := range ss[:min(len(ss), maxCallerGroups)] {
		out = append(out, Truncate(s, MaxCallerString))
	}
	return out
}
