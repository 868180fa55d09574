package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
)

// TestOutputWideAndJSONPath: -o wide adds the command's extra columns to
// its table, -o jsonpath prints fields of the same JSON document, and the
// disk may be given as argument or --disk (issue #25).
func TestOutputWideAndJSONPath(t *testing.T) {
	n := newSimNode(t, simulated.DefaultConfig(nil))
	run := func(args ...string) string {
		t.Helper()
		out, errOut, code := runApp(t, n.opener(), "", false, args...)
		if code != exitOK {
			t.Fatalf("%q: exit %d, stderr %q", args, code, errOut)
		}
		return out
	}
	table := run("volume", "list", "0")
	if table != run("volume", "list", "--disk", "0") || table != run("volume", "list", "0", "--disk", "0") {
		t.Errorf("volume list 2 and --disk 2 differ")
	}
	wide := run("volume", "list", "0", "-o", "wide")
	head := strings.Fields(strings.SplitN(wide, "\n", 2)[0])
	if strings.Join(head, " ") != "VOLUME FORMATTED SIZE SIZE_BYTES USED USED_BYTES FREE FREE_BYTES USE%" {
		t.Errorf("wide header = %q", head)
	}
	row := strings.Fields(strings.Split(wide, "\n")[1])
	// The simulated host's system disk holds one formatted volume.
	// Sizes print as "100 MiB", two fields: check the ends of the row.
	if _, err := strconv.ParseInt(row[len(row)-2], 10, 64); row[1] != "yes" || !strings.HasSuffix(row[len(row)-1], "%") || err != nil {
		t.Errorf("wide row = %q", row)
	}
	if !strings.HasPrefix(wide, strings.TrimRight(strings.SplitN(table, "\n", 2)[0], " ")[:len("VOLUME")]) {
		t.Errorf("wide does not start with the table's columns:\n%s", wide)
	}
	// A command without wide columns prints its table.
	if run("disk", "list", "-o", "wide") != run("disk", "list") {
		t.Errorf("disk list -o wide differs from its table")
	}

	ids := run("volume", "list", "0", "-o", "jsonpath={.volumes[*].volume_id}")
	if !strings.HasPrefix(ids, `\\?\Volume{`) || strings.Contains(ids, "\n") {
		t.Errorf("jsonpath ids = %q", ids)
	}
	lines := run("disk", "list", "-o", `jsonpath={range .disks[*]}{.disk_number}{"\t"}{.size_bytes}{"\n"}{end}`)
	if got := strings.Count(lines, "\n"); got < 2 || !strings.HasPrefix(lines, "0\t") {
		t.Errorf("jsonpath range = %q", lines)
	}
	if got := run("volume", "list", "0", "-o", "jsonpath='{.disk_number}'"); got != "0" {
		t.Errorf("quoted jsonpath = %q", got)
	}
	if _, errOut, code := runApp(t, n.opener(), "", false, "volume", "list", "0", "-o", "jsonpath={.nosuch}"); code != exitFailure || !strings.Contains(errOut, "nosuch is not found") {
		t.Errorf("missing field: exit %d, %q", code, errOut)
	}
}

// TestParseJSONPath covers the subset's parts and what it refuses.
func TestParseJSONPath(t *testing.T) {
	doc := map[string]any{"a": []any{map[string]any{"b": 1.0}, map[string]any{"b": "x"}}, "c": nil}
	for tmpl, want := range map[string]string{
		"{.a[0].b}":                        "1",
		"{.a[-1].b}":                       "x",
		"{.a[*].b}":                        "1 x",
		"n={.c}.":                          "n=.",
		`{range .a[*]}[{.b}]{end}`:         "[1][x]",
		`{range .a[*]}{range .}{end}{end}`: "",
		"plain":                            "plain",
	} {
		nodes, err := parseJSONPath(tmpl)
		if err != nil {
			t.Errorf("%s: %v", tmpl, err)
			continue
		}
		var b strings.Builder
		if err := execJSONPath(&b, nodes, doc); err != nil {
			t.Errorf("%s: %v", tmpl, err)
		} else if b.String() != want {
			t.Errorf("%s = %q, want %q", tmpl, b.String(), want)
		}
	}
	for _, bad := range []string{"{.a", "{end}", "{range .a[*]}", "{..a}", "{.a[1:2]}", "{a}", `{"unterminated}`} {
		if _, err := parseJSONPath(bad); err == nil {
			t.Errorf("%s parsed", bad)
		}
	}
}
