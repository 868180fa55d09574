// Package auditlog reads the daemon's audit log (the JSON lines
// internal/audit writes, one record per line) the way tests need it: the
// one test-side spelling of the record format, and the one check of the
// intent records every test that reads an audit log used to write for
// itself.
//
// The format is a contract with operators (docs/security.md, "Audit
// log"), so Record spells it here independently of internal/audit's
// own type: a test decoding with the production struct would pass
// whatever that struct says, and a renamed or dropped field would go
// unnoticed. Record has every field of the format as docs/security.md
// documents it; nothing here imports internal/audit.
package auditlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// Phases as records spell them.
const (
	// PhaseIntent is the record of a change written before it runs.
	PhaseIntent = "intent"
	// PhaseDone is the outcome of a call, and the only record of a read
	// or a denial.
	PhaseDone = "done"
	// PhaseSummary is a record of no call: how many records of a caller
	// were left out by the rate limit (Suppressed, of SuppressedKind)
	// when no later record of the caller's said it.
	PhaseSummary = "summary"
)

// AuditUnavailablePrefix begins the message of a change refused because
// its intent record could not be written (code Unavailable): such a
// change has an outcome record and no intent.
const AuditUnavailablePrefix = "the audit log cannot be written"

// Record is one line of an audit log, field by field as docs/security.md
// documents it.
type Record struct {
	Schema     string `json:"schema"`
	Node       string `json:"node"`
	ID         string `json:"id"`
	RequestID  string `json:"request_id"`
	Phase      string `json:"phase"`
	Time       string `json:"time"`
	Endpoint   string `json:"endpoint"`
	Group      string `json:"group"`
	Version    string `json:"version"`
	Method     string `json:"method"`
	FullMethod string `json:"full_method"`
	Kind       string `json:"kind"`
	Caller     Caller `json:"caller"`
	Decision   string `json:"decision"`
	Rule       string `json:"rule"`
	Reason     string `json:"reason"`
	// Request is the redacted request as JSON, nil when the record has
	// none (no redactor, or an intent of a call without a request).
	Request map[string]any `json:"request"`
	// Code, Message and DurationMS are the outcome: absent in an intent,
	// so DurationMS is nil there (and only there).
	Code       string   `json:"code"`
	Message    string   `json:"message"`
	DurationMS *float64 `json:"duration_ms"`
	// Suppressed is how many of the caller's records of this kind were
	// left out since its previous one (rate-limited); in a summary,
	// those of SuppressedKind ("deny", "would-deny" or "read"; "low-space"
	// for records of every caller left out below the space reserve).
	Suppressed     uint64 `json:"suppressed"`
	SuppressedKind string `json:"suppressed_kind"`
}

// Caller is a record's "caller": who called, as far as it is known. Its
// fields are omitted when empty, as in the format, so a Caller a test
// logs (json.Marshal) reads as the record had it.
type Caller struct {
	PID        int    `json:"pid,omitempty"`
	Executable string `json:"executable,omitempty"`
	StartTime  string `json:"start_time,omitempty"`
	// UID and GID are nil when unknown (a Windows caller): 0 is root.
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

// Parse returns the records of an audit log's contents, one per line,
// failing tb (Fatalf, naming the line) on a line that is not a JSON
// record. A blank line fails too: the logger never writes one. The last
// line may lack its newline; Torn tells whether it does.
func Parse(tb testing.TB, data []byte) []Record {
	tb.Helper()
	if len(data) == 0 {
		return nil
	}
	var out []Record
	n := 0
	for line := range bytes.SplitSeq(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		n++
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			tb.Fatalf("audit line %d is not a JSON record: %q: %v", n, line, err)
		}
		out = append(out, r)
	}
	return out
}

// Read returns the records of the audit log at path (see Parse), failing
// tb when it cannot be read.
func Read(tb testing.TB, path string) []Record {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return Parse(tb, b)
}

// Suppressed sums what recs say the audit log's per-caller rate limit
// left out, by kind ("deny", "would-deny", "read"): the count a record
// carries is of its own kind (a denial's of denials, an allowed read's of
// reads), a summary record's of its SuppressedKind. keep, when not nil,
// picks the records counted (one caller's, say); summaries is how many
// summary records were among them.
func Suppressed(recs []Record, keep func(Record) bool) (byKind map[string]uint64, summaries int) {
	byKind = map[string]uint64{}
	for _, r := range recs {
		if r.Suppressed == 0 || (keep != nil && !keep(r)) {
			continue
		}
		kind := r.SuppressedKind
		switch {
		case r.Phase == PhaseSummary:
			summaries++
		case r.Decision == "deny" || r.Decision == "would-deny":
			kind = r.Decision
		default:
			kind = "read"
		}
		byKind[kind] += r.Suppressed
	}
	return byKind, summaries
}

// Torn returns what follows the last newline of an audit log's contents:
// nothing when the file ends at a record's end, as the logger keeps it,
// and otherwise the fragment of a record that was torn.
func Torn(data []byte) []byte {
	return data[bytes.LastIndexByte(data, '\n')+1:]
}

// Done returns the outcome ("done") records of recs: one per call.
func Done(recs []Record) []Record {
	var out []Record
	for _, r := range recs {
		if r.Phase == PhaseDone {
			out = append(out, r)
		}
	}
	return out
}

// IntentOptions says what else than complete calls a test's audit log
// may hold.
type IntentOptions struct {
	// Refused tells whether the outcome of an allowed change is a
	// refusal that needs no intent record: the change was refused
	// because its intent could not be written. Nil: no outcome is
	// excused. AuditUnavailable is the daemon's refusal.
	Refused func(Record) bool
	// LostOutcomes lets an intent go without its outcome: the log
	// failed, or the daemon was killed, while changes ran, so a change
	// may have begun (or been made) with only its intent on file.
	LostOutcomes bool
}

// AuditUnavailable tells whether r is a change refused because its
// intent record could not be written: code Unavailable with the call
// gate's message. For IntentOptions.Refused.
func AuditUnavailable(r Record) bool {
	return r.Code == "Unavailable" && strings.HasPrefix(r.Message, AuditUnavailablePrefix)
}

// CheckIntents checks the intent records of recs, an audit log's records
// in the order of the file, and returns the problems it found, each a
// sentence naming the records; none when the log holds what the format
// promises (docs/security.md):
//
//   - every record has an id;
//   - an intent is of a change let through (allowed, or would-deny under
//     an audit-only policy), without an outcome (code, message or
//     duration), and its id is not already in use;
//   - every call let through that is not a read has its intent before its
//     outcome, under the same id and of the same method, unless
//     o.Refused excuses it; an outcome without an intent is a change that
//     was not recorded before it ran;
//   - no id has two outcomes;
//   - every intent has its outcome, unless o.LostOutcomes;
//   - every phase is intent, done or summary, and a summary is of no
//     call (decision "suppressed", no method, no outcome) and counts
//     something.
func CheckIntents(recs []Record, o IntentOptions) []string {
	var problems []string
	pending := map[string]Record{} // intents waiting for their outcome
	done := map[string]bool{}      // ids that have an outcome
	var order []string             // pending's ids, in the file's order
	for _, r := range recs {
		if r.ID == "" {
			problems = append(problems, fmt.Sprintf("audit record without an id: %+v", r))
		}
		switch r.Phase {
		case PhaseIntent:
			_, dup := pending[r.ID]
			if dup || done[r.ID] || r.Kind == "read" || !letThrough(r) || r.Code != "" || r.Message != "" || r.DurationMS != nil {
				problems = append(problems, fmt.Sprintf("intent %+v: a duplicate, a read, a denial or with an outcome", r))
			}
			if !dup {
				order = append(order, r.ID)
			}
			pending[r.ID] = r
		case PhaseDone:
			if done[r.ID] {
				problems = append(problems, fmt.Sprintf("audit record with a repeated id: %+v", r))
			}
			done[r.ID] = true
			in, ok := pending[r.ID]
			delete(pending, r.ID)
			refused := o.Refused != nil && o.Refused(r)
			switch {
			case ok && (in.Method != r.Method || in.Kind == "read"):
				problems = append(problems, fmt.Sprintf("intent %+v paired with outcome %+v", in, r))
			case !ok && letThrough(r) && r.Kind != "read" && !refused:
				problems = append(problems, fmt.Sprintf("a change without its intent record: %+v", r))
			}
		case PhaseSummary:
			if r.Decision != "suppressed" || r.Method != "" || r.Code != "" || r.DurationMS != nil || r.Suppressed == 0 || r.SuppressedKind == "" {
				problems = append(problems, fmt.Sprintf("summary %+v: not of suppressed records, or of a call", r))
			}
		default:
			problems = append(problems, fmt.Sprintf("audit record with phase %q: %+v", r.Phase, r))
		}
	}
	if !o.LostOutcomes {
		for _, id := range order {
			if in, ok := pending[id]; ok {
				problems = append(problems, fmt.Sprintf("intent without its outcome: %+v", in))
				delete(pending, id) // an id reused after its outcome is in order twice
			}
		}
	}
	return problems
}

// letThrough tells whether r's call was let through: allowed, or denied
// by the rules of an audit-only policy, which lets it run ("would-deny").
func letThrough(r Record) bool { return r.Decision == "allow" || r.Decision == "would-deny" }
