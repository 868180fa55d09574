package auditlog

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// fatalTB records a Fatalf and ends its goroutine as testing.T does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// TestParse: every field of a documented line is read; a line that is not
// JSON fails the test naming it.
func TestParse(t *testing.T) {
	const line = `{"schema":"csi-node-proxy.audit/v2","node":"n1","id":"9f86d081884c7d65","request_id":"r1","phase":"done",` +
		`"time":"2025-01-02T15:04:05.123456789Z","endpoint":"csi-proxy-disk-v1","group":"disk","version":"v1",` +
		`"method":"PartitionDisk","full_method":"/v1.Disk/PartitionDisk","kind":"mutate",` +
		`"caller":{"pid":4242,"executable":"/d","start_time":"2025-01-02T15:04:05Z","uid":0,"gid":0,"groups":[7],` +
		`"container_id":"c","pod_uid":"u","pod_namespace":"kube-system","pod_name":"p","container_name":"cn",` +
		`"service_account":"sa","runtime":"containerd","windows_sid":"S","windows_account":"A","windows_group_sids":["G"],"incomplete":"i"},` +
		`"decision":"allow","rule":"azuredisk","reason":"x","request":{"disk_number":1},"code":"OK","message":"m","duration_ms":3.2,"suppressed":2,"suppressed_kind":"deny"}`
	recs := Parse(t, []byte(line+"\n"+`{"id":"a","phase":"intent","caller":{"pid":1}}`+"\n"))
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	r, c := recs[0], recs[0].Caller
	if r.Schema != "csi-node-proxy.audit/v2" || r.Node != "n1" || r.ID != "9f86d081884c7d65" || r.RequestID != "r1" || r.Phase != PhaseDone ||
		r.Time != "2025-01-02T15:04:05.123456789Z" || r.Endpoint != "csi-proxy-disk-v1" || r.Group != "disk" || r.Version != "v1" ||
		r.Method != "PartitionDisk" || r.FullMethod != "/v1.Disk/PartitionDisk" || r.Kind != "mutate" || r.Decision != "allow" ||
		r.Rule != "azuredisk" || r.Reason != "x" || r.Request["disk_number"] != 1.0 || r.Code != "OK" || r.Message != "m" ||
		r.DurationMS == nil || *r.DurationMS != 3.2 || r.Suppressed != 2 || r.SuppressedKind != "deny" {
		t.Errorf("record %+v", r)
	}
	if c.PID != 4242 || c.Executable != "/d" || c.StartTime != "2025-01-02T15:04:05Z" || c.UID == nil || *c.UID != 0 || c.GID == nil || *c.GID != 0 ||
		len(c.Groups) != 1 || c.Groups[0] != 7 || c.ContainerID != "c" || c.PodUID != "u" || c.PodNamespace != "kube-system" ||
		c.PodName != "p" || c.ContainerName != "cn" || c.ServiceAccount != "sa" || c.Runtime != "containerd" || c.WindowsSID != "S" ||
		c.WindowsAccount != "A" || len(c.WindowsGroupSIDs) != 1 || c.Incomplete != "i" {
		t.Errorf("caller %+v", c)
	}
	if in := recs[1]; in.Caller.UID != nil || in.DurationMS != nil || in.Request != nil {
		t.Errorf("absent fields read as present: %+v", in)
	}
	if recs := Parse(t, nil); len(recs) != 0 {
		t.Errorf("empty log: %+v", recs)
	}

	for _, bad := range []string{"{\"id\":\"a\"}\n{\"id\":\n", "{\"id\":\"a\"}\n\n{\"id\":\"b\"}\n"} {
		tb := &fatalTB{TB: t}
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			Parse(tb, []byte(bad))
		}()
		<-ended
		if !strings.Contains(tb.msg, "audit line 2 is not a JSON record") {
			t.Errorf("Parse(%q) failed with %q", bad, tb.msg)
		}
	}
	if got := string(Torn([]byte("{}\n{\"id"))); got != `{"id` {
		t.Errorf("Torn = %q", got)
	}
	if got := Torn([]byte("{}\n")); len(got) != 0 {
		t.Errorf("Torn of a whole log = %q", got)
	}
}

// TestCheckIntents: each way a log can break the intent invariant is
// reported, and what the options excuse is not.
func TestCheckIntents(t *testing.T) {
	ms := 1.0
	intent := func(id, m string) Record {
		return Record{ID: id, Phase: PhaseIntent, Method: m, Kind: "mutate", Decision: "allow"}
	}
	done := func(id, m, code string) Record {
		return Record{ID: id, Phase: PhaseDone, Method: m, Kind: "mutate", Decision: "allow", Code: code, DurationMS: &ms}
	}
	read := Record{ID: "r", Phase: PhaseDone, Method: "PathExists", Kind: "read", Decision: "allow", Code: "OK"}
	denial := Record{ID: "d", Phase: PhaseDone, Method: "Mkdir", Kind: "mutate", Decision: "deny", Code: "PermissionDenied"}
	refusal := done("u", "Mkdir", "Unavailable")
	refusal.Message = AuditUnavailablePrefix + ", so calls that change the node are refused until it can; retry later"
	otherUnavailable := done("v", "Mkdir", "Unavailable")
	wouldDeny := func(r Record) Record { r.Decision = "would-deny"; return r }
	withCode := intent("c", "Mkdir")
	withCode.Code = "OK"
	for _, tc := range []struct {
		name string
		recs []Record
		o    IntentOptions
		want []string // one substring per problem, in order
	}{
		{"complete", []Record{intent("a", "Mkdir"), read, denial, done("a", "Mkdir", "OK")}, IntentOptions{}, nil},
		{"no intent", []Record{done("a", "Mkdir", "OK")}, IntentOptions{}, []string{"a change without its intent record"}},
		{"intent after its outcome", []Record{done("a", "Mkdir", "OK"), intent("a", "Mkdir")}, IntentOptions{},
			[]string{"a change without its intent record", "a duplicate", "intent without its outcome"}},
		{"no outcome", []Record{intent("a", "Mkdir"), intent("b", "Rmdir")}, IntentOptions{},
			[]string{"intent without its outcome: {Schema: Node: ID:a", "intent without its outcome: {Schema: Node: ID:b"}},
		{"lost outcome", []Record{intent("a", "Mkdir")}, IntentOptions{LostOutcomes: true}, nil},
		{"refusal, not excused", []Record{refusal}, IntentOptions{}, []string{"a change without its intent record"}},
		{"refusal", []Record{refusal}, IntentOptions{Refused: AuditUnavailable}, nil},
		{"another Unavailable", []Record{otherUnavailable}, IntentOptions{Refused: AuditUnavailable}, []string{"a change without its intent record"}},
		{"without an id", []Record{intent("", "Mkdir"), done("", "Mkdir", "OK")}, IntentOptions{},
			[]string{"audit record without an id", "audit record without an id"}},
		{"intent with an outcome", []Record{withCode, done("c", "Mkdir", "OK")}, IntentOptions{}, []string{"with an outcome"}},
		{"intent of a denial", []Record{{ID: "x", Phase: PhaseIntent, Method: "Mkdir", Kind: "mutate", Decision: "deny"}, done("x", "Mkdir", "OK")},
			IntentOptions{}, []string{"a denial"}},
		{"other method", []Record{intent("a", "Mkdir"), done("a", "Rmdir", "OK")}, IntentOptions{}, []string{"paired with outcome"}},
		{"two outcomes", []Record{intent("a", "Mkdir"), done("a", "Mkdir", "OK"), done("a", "Mkdir", "OK")}, IntentOptions{},
			[]string{"repeated id", "a change without its intent record"}},
		{"unknown phase", []Record{{ID: "a", Phase: "begun"}}, IntentOptions{}, []string{`phase "begun"`}},
		{"would-deny change", []Record{wouldDeny(intent("w", "Mkdir")), wouldDeny(done("w", "Mkdir", "OK"))}, IntentOptions{}, nil},
		{"would-deny change without intent", []Record{wouldDeny(done("w", "Mkdir", "OK"))}, IntentOptions{},
			[]string{"a change without its intent record"}},
		{"summary", []Record{{ID: "s", Phase: PhaseSummary, Decision: "suppressed", Suppressed: 3, SuppressedKind: "deny"}}, IntentOptions{}, nil},
		{"summary of a call", []Record{{ID: "s", Phase: PhaseSummary, Decision: "suppressed", Method: "Mkdir", Suppressed: 3, SuppressedKind: "deny"}},
			IntentOptions{}, []string{"not of suppressed records"}},
		{"summary of nothing", []Record{{ID: "s", Phase: PhaseSummary, Decision: "suppressed", SuppressedKind: "deny"}},
			IntentOptions{}, []string{"not of suppressed records"}},
	} {
		got := CheckIntents(tc.recs, tc.o)
		ok := len(got) == len(tc.want)
		for i := range got {
			ok = ok && strings.Contains(got[i], tc.want[i])
		}
		if !ok {
			t.Errorf("%s: problems %q, want %q", tc.name, got, tc.want)
		}
	}
}
