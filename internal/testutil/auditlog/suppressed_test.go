package auditlog

import (
	"maps"
	"testing"
)

// TestSuppressed: each count is summed under its record's own kind (a
// denial's under deny, an allowed read's under read, a summary's under
// its SuppressedKind), keep picks the records, and summaries are counted.
func TestSuppressed(t *testing.T) {
	recs := Parse(t, []byte(`{"phase":"done","decision":"deny","method":"Mkdir","code":"PermissionDenied","duration_ms":1,"caller":{"uid":7},"suppressed":3}
{"phase":"done","decision":"allow","method":"PathExists","code":"OK","duration_ms":1,"caller":{"uid":7},"suppressed":2}
{"phase":"summary","decision":"suppressed","caller":{"uid":7},"suppressed":4,"suppressed_kind":"read"}
{"phase":"done","decision":"would-deny","method":"PathExists","code":"OK","duration_ms":1,"caller":{"uid":8},"suppressed":5}
`))
	got, summaries := Suppressed(recs, nil)
	if want := map[string]uint64{"deny": 3, "read": 6, "would-deny": 5}; !maps.Equal(got, want) || summaries != 1 {
		t.Errorf("Suppressed = %v, %d summaries; want %v, 1", got, summaries, want)
	}
	got, summaries = Suppressed(recs, func(r Record) bool { return r.Caller.UID != nil && *r.Caller.UID == 7 })
	if want := map[string]uint64{"deny": 3, "read": 6}; !maps.Equal(got, want) || summaries != 1 {
		t.Errorf("Suppressed of uid 7 = %v, %d summaries; want %v, 1", got, summaries, want)
	}
}
