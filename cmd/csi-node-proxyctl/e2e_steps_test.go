package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// step is one CLI run and what it must print in each format.
type step struct {
	args  []string
	stdin string
	code  int
	// table is the table output, header first, cells as the columns
	// separate them; msg is the one line a change prints instead.
	table [][]string
	msg   string
	// preamble are prefixes of the lines before a table (version's).
	preamble []string
	// json is a JSON document the output must contain: every key given
	// must be there with that value; arrays must match in length.
	json string
	// stderr is part of the error line of a failing step.
	stderr string
}

// cells splits a table line into its columns (two or more spaces apart).
var cellSep = regexp.MustCompile(`\s{2,}`)

// check runs s in format and checks exit code and output.
func (s step) check(t *testing.T, d *daemon, format string, ran map[string]bool, outputs *strings.Builder) {
	t.Helper()
	args := append(append([]string(nil), s.args...), "-o", format)
	out, errOut, code := d.cli(t, s.stdin, args...)
	outputs.WriteString(out + errOut)
	ran[commandOf(s.args)] = true
	label := strings.Join(args, " ")
	if code != s.code {
		t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", label, code, s.code, out, errOut)
	}
	if s.code != exitOK {
		if s.stderr == "" || !strings.Contains(errOut, s.stderr) || !strings.HasPrefix(errOut, progName+": ") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s: stderr %q, want one line %s: ... containing %q", label, errOut, progName, s.stderr)
		}
		if s.table == nil && s.json == "" && out != "" {
			t.Errorf("%s: a failure printed %q", label, out)
		}
		if s.table == nil && s.json == "" {
			return
		}
	} else if errOut != "" {
		t.Errorf("%s: stderr %q on success", label, errOut)
	}
	if (s.table == nil && s.msg == "") || s.json == "" {
		t.Fatalf("%s: the step asserts nothing about its output", label)
	}
	if format == formatJSON {
		var got, want any
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%s: not one JSON document: %v\n%s", label, err, out)
		}
		if err := json.Unmarshal([]byte(s.json), &want); err != nil {
			t.Fatalf("%s: bad expectation %s: %v", label, s.json, err)
		}
		if where := jsonMismatch(want, got, ""); where != "" {
			t.Errorf("%s: JSON differs at %s\n got: %s\nwant: %s", label, where, out, s.json)
		}
		return
	}
	if s.msg != "" {
		if out != s.msg+"\n" {
			t.Errorf("%s: printed %q, want %q", label, out, s.msg)
		}
		return
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	for i, p := range s.preamble {
		if i >= len(lines) || !strings.HasPrefix(lines[i], p) {
			t.Fatalf("%s: line %d does not start with %q:\n%s", label, i+1, p, out)
		}
	}
	var got [][]string
	for _, line := range lines[len(s.preamble):] {
		got = append(got, cellSep.Split(strings.TrimSpace(line), -1))
	}
	if !reflect.DeepEqual(got, s.table) {
		t.Errorf("%s: table\n%s\nwant rows %q", label, out, s.table)
	}
}

// commandOf names the command an argument list runs: "disk list".
func commandOf(args []string) string {
	var words []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			break
		}
		words = append(words, a)
		if len(words) == 2 || (len(words) == 1 && !isGroup(a)) {
			break
		}
	}
	return strings.Join(words, " ")
}

// jsonMismatch returns where got does not contain want, or "".
func jsonMismatch(want, got any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path + " (not an object)"
		}
		for k, wv := range w {
			gv, present := g[k]
			if !present {
				return path + "." + k + " (missing)"
			}
			if where := jsonMismatch(wv, gv, path+"."+k); where != "" {
				return where
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path + " (array length)"
		}
		for i := range w {
			if where := jsonMismatch(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); where != "" {
				return where
			}
		}
		return ""
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Sprintf("%s (%v, want %v)", path, got, want)
	}
	return ""
}

// jsonQuote quotes s for a JSON expectation.
func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestEveryCommandAgainstTheDaemon runs every command of the CLI, in both
// output formats, against the daemon on the simulated host over its
// sockets: the reads against the world's known values, each change
// followed by a read that shows it, and the failures with their exit
// codes. Each format gets a fresh daemon, so both see the same world.
func TestEveryCommandAgainstTheDaemon(t *testing.T) {
	secretDir := t.TempDir()
	pwFile := filepath.Join(secretDir, "smb-password")
	chapFile := filepath.Join(secretDir, "chap")
	mutualFile := filepath.Join(secretDir, "mutual")
	for f, s := range map[string]string{pwFile: smbPassword + "\n", chapFile: chapSecret + "\n", mutualFile: "mutual-Sec-0987\n"} {
		if err := os.WriteFile(f, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ranIn := map[string]map[string]bool{}
	for _, format := range []string{formatTable, formatJSON} {
		t.Run(format, func(t *testing.T) {
			d := startDaemon(t)
			ran := map[string]bool{}
			ranIn[format] = ran
			var outputs strings.Builder
			ntfs, ntfsSize := d.volumeOf(t, "2")
			raw, _ := d.volumeOf(t, "3")
			// The 20 GiB NTFS disk's volume: the disk less the GPT areas.
			if ntfsSize <= 19<<30 || ntfsSize > 20<<30 {
				t.Fatalf("disk 2's volume is %d bytes; want a little under 20 GiB", ntfsSize)
			}
			sz := fmt.Sprint(ntfsSize)
			for _, s := range everyStep(ntfs, raw, sz, pwFile, chapFile, mutualFile, d.metricsAddr) {
				s.check(t, d, format, ran, &outputs)
			}
			// Nothing the CLI printed and nothing the daemon logged, at
			// -v=5 where requests are logged, holds a secret.
			log, err := os.ReadFile(d.logPath)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(log), "NewSmbGlobalMapping") || !strings.Contains(string(log), "ConnectTarget") {
				t.Fatalf("the daemon log does not show the secret-carrying calls, so it proves nothing:\n%s", log)
			}
			for _, secret := range []string{smbPassword, chapSecret, "mutual-Sec-0987"} {
				if strings.Contains(outputs.String(), secret) {
					t.Errorf("the CLI printed the secret %q", secret)
				}
				if strings.Contains(string(log), secret) {
					t.Errorf("the daemon logged the secret %q", secret)
				}
			}
		})
	}
	for _, format := range []string{formatTable, formatJSON} {
		for _, cmd := range commands {
			if !ranIn[format][cmd.path()] {
				t.Errorf("%s was not run with -o %s", cmd.path(), format)
			}
		}
	}
}

// everyStep is the scenario: the world's reads, then each change with the
// read that shows it, and the failures along the way.
func everyStep(ntfs, raw, ntfsSize, pwFile, chapFile, mutualFile, metricsAddr string) []step {
	served := [][]string{
		{"disk", "v1,v1beta3,v1beta2,v1beta1,v1alpha1"},
		{"filesystem", "v2alpha1,v1,v1beta2,v1beta1,v1alpha1"},
		{"iscsi", "v1alpha2,v1alpha1"},
		{"smb", "v1,v1beta2,v1beta1,v1alpha1"},
		{"smbmappings", "v1alpha1"},
		{"system", "v1alpha1"},
		{"volume", "v2alpha1,v1,v1beta3,v1beta2,v1beta1,v1alpha1"},
	}
	versionTable := [][]string{{"GROUP", "SERVED", "NEGOTIATED"}}
	healthTable := [][]string{{"GROUP", "STATUS", "SERVED"}}
	for _, s := range served {
		versionTable = append(versionTable, []string{s[0], s[1], strings.Split(s[1], ",")[0]})
		healthTable = append(healthTable, []string{s[0], "ok", s[1]})
	}
	const (
		share   = `\\fileserver\share`
		portal  = "10.0.0.10"
		openIQN = "iqn.2003-01.org.example:open"
		chapIQN = "iqn.2003-01.org.example:target1"
	)
	q := jsonQuote
	return []step{
		// version and health.
		{args: []string{"version"}, preamble: []string{progName + " " + e2eVersion + " (commit ", "daemon: sockets in ", "daemon build: csi-node-proxy ", ""},
			table: versionTable, json: `{"cli": {"version": "` + e2eVersion + `"}, "mode": "daemon",
			"groups": [{"group": "disk", "served": ["v1","v1beta3","v1beta2","v1beta1","v1alpha1"], "negotiated": "v1"},
			{"group": "filesystem", "negotiated": "v2alpha1"}, {"group": "iscsi", "negotiated": "v1alpha2"},
			{"group": "smb", "negotiated": "v1"}, {"group": "smbmappings", "served": ["v1alpha1"], "negotiated": "v1alpha1"},
			{"group": "system", "served": ["v1alpha1"], "negotiated": "v1alpha1"},
			{"group": "volume", "negotiated": "v2alpha1"}]}`},
		// The CLI negotiates v1 and newer, so no deprecated version has
		// been called (TestDeprecations makes a beta call).
		{args: []string{"deprecations", "--metrics-address", metricsAddr}, table: [][]string{{"GROUP", "VERSION", "RULE", "CALLER", "CALLS", "LAST_METHOD", "LAST_SEEN"}},
			json: `{"address": ` + jsonQuote(metricsAddr) + `, "uses": [], "untracked": 0}`},
		{args: []string{"completion", "bash"}, msg: strings.TrimSuffix(mustScript("bash"), "\n"), json: `{"shell": "bash", "script": ` + jsonQuote(mustScript("bash")) + `}`},
		{args: []string{"health"}, table: healthTable, json: `{"healthy": true, "mode": "daemon", "missing": [],
			"groups": [{"group": "disk"}, {"group": "filesystem"}, {"group": "iscsi"}, {"group": "smb"}, {"group": "smbmappings"}, {"group": "system"}, {"group": "volume"}]}`},

		// disk reads.
		{args: []string{"disk", "list"}, table: [][]string{
			{"DISK", "LOCATION", "PAGE83", "SERIAL", "SIZE", "BYTES", "ONLINE"},
			{"0", "0::0:0", "60022480000000000000000000000000", "SIM-SYSTEM-0000", "128 GiB", "137438953472", "yes"},
			{"1", "1::0:0", "60022480000000000000000000000001", "SIM-DATA-0001", "1 GiB", "1073741824", "yes"},
			{"2", "-", "-", "NTFS-D", "20 GiB", "21474836480", "yes"},
			{"3", "2::0:5", "-", "FLAG-DISK", "4 GiB", "4294967296", "yes"},
			{"7", "1::0:1", "-", "-", "2 GiB", "2147483648", "no"},
		}, json: `{"disks": [
			{"disk_number": 0, "location": {"adapter": "0", "bus": "", "target": "0", "lun_id": "0"}, "serial_number": "SIM-SYSTEM-0000", "size_bytes": 137438953472, "online": true},
			{"disk_number": 1, "location": {"adapter": "1", "bus": "", "target": "0", "lun_id": "0"}, "page83": "60022480000000000000000000000001", "serial_number": "SIM-DATA-0001", "size_bytes": 1073741824, "online": true},
			{"disk_number": 2, "location": null, "page83": "", "serial_number": "NTFS-D", "size_bytes": 21474836480, "online": true},
			{"disk_number": 3, "location": {"adapter": "2", "bus": "", "target": "0", "lun_id": "5"}, "serial_number": "FLAG-DISK", "size_bytes": 4294967296, "online": true},
			{"disk_number": 7, "location": {"adapter": "1", "bus": "", "target": "0", "lun_id": "1"}, "serial_number": "", "size_bytes": 2147483648, "online": false}]}`},
		{args: []string{"disk", "ids"}, table: [][]string{
			{"DISK", "PAGE83", "SERIAL"},
			{"0", "60022480000000000000000000000000", "SIM-SYSTEM-0000"},
			{"1", "60022480000000000000000000000001", "SIM-DATA-0001"},
			{"2", "-", "NTFS-D"},
			{"3", "-", "FLAG-DISK"},
			{"7", "-", "-"},
		}, json: `{"disks": [{"disk_number": 0}, {"disk_number": 1, "page83": "60022480000000000000000000000001", "serial_number": "SIM-DATA-0001"},
			{"disk_number": 2, "serial_number": "NTFS-D"}, {"disk_number": 3, "serial_number": "FLAG-DISK"}, {"disk_number": 7, "page83": "", "serial_number": ""}]}`},
		{args: []string{"disk", "stats", "7"}, table: [][]string{{"DISK", "SIZE", "BYTES", "ONLINE"}, {"7", "2 GiB", "2147483648", "no"}},
			json: `{"disk_number": 7, "size_bytes": 2147483648, "online": false}`},
		{args: []string{"disk", "stats", "99"}, code: exitNotFound, stderr: "disk stats: "},
		{args: []string{"disk", "stats", "x"}, code: exitUsage, stderr: `disk number "x"`},

		// disk changes: refused without --yes (nothing changes), then made.
		{args: []string{"disk", "offline", "1"}, code: exitDeclined, stderr: "pass --yes"},
		{args: []string{"disk", "stats", "1"}, table: [][]string{{"DISK", "SIZE", "BYTES", "ONLINE"}, {"1", "1 GiB", "1073741824", "yes"}},
			json: `{"disk_number": 1, "online": true}`},
		{args: []string{"disk", "offline", "1", "--yes"}, msg: "disk 1 is offline", json: `{"disk_number": 1, "online": false}`},
		{args: []string{"disk", "stats", "1"}, table: [][]string{{"DISK", "SIZE", "BYTES", "ONLINE"}, {"1", "1 GiB", "1073741824", "no"}},
			json: `{"disk_number": 1, "online": false}`},
		{args: []string{"disk", "offline", "0", "--yes"}, code: exitFailure, stderr: "system disk"},
		{args: []string{"disk", "online", "1", "--yes"}, msg: "disk 1 is online", json: `{"disk_number": 1, "online": true}`},
		{args: []string{"disk", "online", "99", "--yes"}, code: exitNotFound, stderr: "disk online: "},
		{args: []string{"disk", "partition", "1", "--yes"}, msg: "disk 1 is partitioned", json: `{"disk_number": 1, "partitioned": true, "online": null}`},
		{args: []string{"disk", "rescan"}, msg: "rescanned the host's disks", json: `{"rescanned": true}`},

		// volume reads.
		{args: []string{"volume", "list", "--disk", "2"}, table: [][]string{
			{"VOLUME", "FORMATTED", "SIZE", "SIZE_BYTES", "USED", "USED_BYTES"},
			{ntfs, "yes", "20 GiB", ntfsSize, "88 MiB", "92266496"},
		}, json: `{"disk_number": 2, "volumes": [{"volume_id": ` + q(ntfs) + `, "formatted": true, "size_bytes": ` + ntfsSize + `, "used_bytes": 92266496}]}`},
		{args: []string{"volume", "list", "--disk", "3"}, table: [][]string{
			{"VOLUME", "FORMATTED", "SIZE", "SIZE_BYTES", "USED", "USED_BYTES"},
			{raw, "no", "-", "-", "-", "-"},
		}, json: `{"disk_number": 3, "volumes": [{"volume_id": ` + q(raw) + `, "formatted": false, "size_bytes": null, "used_bytes": null}]}`},
		{args: []string{"volume", "list", "--disk", "7"}, code: exitFailure, stderr: "offline"},
		{args: []string{"volume", "list", "--disk", "99"}, code: exitNotFound, stderr: "volume list: "},
		{args: []string{"volume", "stats", ntfs}, table: [][]string{
			{"VOLUME", "SIZE", "SIZE_BYTES", "USED", "USED_BYTES", "FREE", "FREE_BYTES"},
			{ntfs, "20 GiB", ntfsSize, "88 MiB", "92266496", "19.9 GiB", fmt.Sprint(mustInt(ntfsSize) - 92266496)},
		}, json: `{"volume_id": ` + q(ntfs) + `, "size_bytes": ` + ntfsSize + `, "used_bytes": 92266496}`},
		{args: []string{"volume", "stats", raw}, code: exitFailure, stderr: "not formatted"},
		{args: []string{"volume", "stats", "not-a-volume"}, code: exitInvalid, stderr: "volume stats: "},
		{args: []string{"volume", "disk-of", ntfs}, table: [][]string{{"VOLUME", "DISK"}, {ntfs, "2"}},
			json: `{"volume_id": ` + q(ntfs) + `, "disk_number": 2}`},
		{args: []string{"volume", "disk-of", `\\?\Volume{00000000-0000-0000-0000-000000000000}\`}, code: exitNotFound, stderr: "volume disk-of: "},
		{args: []string{"volume", "is-formatted", raw}, table: [][]string{{"VOLUME", "FORMATTED"}, {raw, "no"}},
			json: `{"volume_id": ` + q(raw) + `, "formatted": false}`},

		// volume changes.
		{args: []string{"volume", "format", raw}, code: exitDeclined, stderr: "pass --yes"},
		{args: []string{"volume", "is-formatted", raw}, table: [][]string{{"VOLUME", "FORMATTED"}, {raw, "no"}},
			json: `{"formatted": false}`},
		{args: []string{"volume", "format", raw, "--yes"}, msg: "volume " + raw + " is formatted", json: `{"volume_id": ` + q(raw) + `, "action": "formatted"}`},
		{args: []string{"volume", "format", raw, "--yes"}, code: exitFailure, stderr: "volume format: "},
		{args: []string{"fs", "mkdir", `C:\csi\m1`, "--yes"}, msg: `C:\csi\m1 is created`, json: `{"path": "C:\\csi\\m1", "action": "created"}`},
		{args: []string{"volume", "mount", raw, `C:\csi\m1\mnt`, "--yes"}, msg: "volume " + raw + ` is mounted at C:\csi\m1\mnt`,
			json: `{"volume_id": ` + q(raw) + `, "action": "mounted", "path": "C:\\csi\\m1\\mnt"}`},
		{args: []string{"volume", "mount", ntfs, `C:\csi\m1\mnt`, "--yes"}, code: exitFailure, stderr: "volume mount: "},
		{args: []string{"volume", "mount", raw, `C:\Windows\x`, "--yes"}, code: exitPermission, stderr: "outside the working directories"},
		{args: []string{"volume", "id-of", `C:\csi\m1\mnt`}, table: [][]string{{"PATH", "VOLUME"}, {`C:\csi\m1\mnt`, raw}},
			json: `{"path": "C:\\csi\\m1\\mnt", "volume_id": ` + q(raw) + `}`},
		{args: []string{"volume", "id-of", "--closest", `C:\csi\m1\mnt`}, table: [][]string{{"PATH", "VOLUME"}, {`C:\csi\m1\mnt`, raw}},
			json: `{"volume_id": ` + q(raw) + `}`},
		{args: []string{"volume", "id-of", `C:\csi\m1`}, code: exitNotFound, stderr: "volume id-of: "},
		{args: []string{"fs", "is-symlink", `C:\csi\m1\mnt`}, table: [][]string{{"PATH", "SYMLINK"}, {`C:\csi\m1\mnt`, "yes"}},
			json: `{"path": "C:\\csi\\m1\\mnt", "is_symlink": true}`},
		{args: []string{"volume", "stats", raw}, table: [][]string{
			{"VOLUME", "SIZE", "SIZE_BYTES", "USED", "USED_BYTES", "FREE", "FREE_BYTES"},
			{raw, "4 GiB", "4292870144", "24 MiB", "25157632", "4 GiB", "4267712512"},
		}, json: `{"volume_id": ` + q(raw) + `, "size_bytes": 4292870144, "used_bytes": 25157632, "free_bytes": 4267712512}`},
		{args: []string{"volume", "flush", raw}, msg: "volume " + raw + " is flushed", json: `{"action": "flushed"}`},
		{args: []string{"volume", "resize", raw, "--size", "1TiB", "--yes"}, code: exitFailure, stderr: "volume resize: "},
		{args: []string{"volume", "resize", raw, "--yes"}, msg: "volume " + raw + " is resized", json: `{"action": "resized", "size_bytes": 0}`},
		{args: []string{"volume", "unmount", raw, `C:\csi\m1\mnt`, "--yes"}, msg: "volume " + raw + ` is unmounted from C:\csi\m1\mnt`,
			json: `{"action": "unmounted", "path": "C:\\csi\\m1\\mnt"}`},
		{args: []string{"volume", "id-of", `C:\csi\m1\mnt`}, code: exitNotFound, stderr: "volume id-of: "},

		// fs.
		{args: []string{"fs", "exists", `C:\csi\m1`}, table: [][]string{{"PATH", "EXISTS"}, {`C:\csi\m1`, "yes"}},
			json: `{"path": "C:\\csi\\m1", "exists": true}`},
		{args: []string{"fs", "exists", `C:\csi\nothing`}, code: exitNotFound, stderr: "does not exist",
			table: [][]string{{"PATH", "EXISTS"}, {`C:\csi\nothing`, "no"}}, json: `{"exists": false}`},
		{args: []string{"fs", "exists", `C:\Windows`}, code: exitPermission, stderr: "outside the working directories"},
		{args: []string{"fs", "exists", "relative"}, code: exitInvalid, stderr: "fs exists: "},
		{args: []string{"fs", "symlink", `C:\csi\m1`, `C:\csi\link`, "--yes"}, msg: `C:\csi\link is linked to C:\csi\m1`,
			json: `{"path": "C:\\csi\\link", "action": "linked", "target": "C:\\csi\\m1"}`},
		{args: []string{"fs", "is-symlink", `C:\csi\link`}, table: [][]string{{"PATH", "SYMLINK"}, {`C:\csi\link`, "yes"}}, json: `{"is_symlink": true}`},
		{args: []string{"fs", "is-symlink", `C:\csi\m1`}, table: [][]string{{"PATH", "SYMLINK"}, {`C:\csi\m1`, "no"}}, json: `{"is_symlink": false}`},
		{args: []string{"fs", "mkdir", `C:\csi\m1\a\b`, "--yes"}, msg: `C:\csi\m1\a\b is created`, json: `{"action": "created"}`},
		{args: []string{"fs", "rmdir", `C:\csi\m1`, "--yes"}, code: exitFailure, stderr: "fs rmdir: "},
		{args: []string{"fs", "rmdir-contents", `C:\csi\m1`}, code: exitDeclined, stderr: "pass --yes"},
		{args: []string{"fs", "exists", `C:\csi\m1\a`}, table: [][]string{{"PATH", "EXISTS"}, {`C:\csi\m1\a`, "yes"}}, json: `{"exists": true}`},
		{args: []string{"fs", "rmdir-contents", `C:\csi\m1`, "--yes"}, msg: `C:\csi\m1 is emptied`, json: `{"path": "C:\\csi\\m1", "action": "emptied"}`},
		{args: []string{"fs", "exists", `C:\csi\m1\a`}, code: exitNotFound, stderr: "does not exist",
			table: [][]string{{"PATH", "EXISTS"}, {`C:\csi\m1\a`, "no"}}, json: `{"exists": false}`},
		{args: []string{"fs", "rmdir", `C:\csi\link`, "--yes"}, msg: `C:\csi\link is removed`, json: `{"action": "removed"}`},
		{args: []string{"fs", "rmdir", `C:\csi\m1`, "--yes"}, msg: `C:\csi\m1 is removed`, json: `{"path": "C:\\csi\\m1", "action": "removed"}`},
		{args: []string{"fs", "rmdir", `C:\csi\m1`, "--yes"}, code: exitNotFound, stderr: "fs rmdir: "},
		{args: []string{"fs", "rmdir", `C:\csi\m1`, "--force", "--yes"}, msg: `C:\csi\m1 is removed`, json: `{"action": "removed"}`},

		// smb: the password from a file and from stdin; a wrong one.
		{args: []string{"smb", "map", share + `\pvc-1`, `C:\csi\smb1`, "--user", `CONTOSO\csi`, "--password-file", pwFile}, code: exitDeclined, stderr: "pass --yes"},
		{args: []string{"fs", "exists", `C:\csi\smb1`}, code: exitNotFound, stderr: "does not exist",
			table: [][]string{{"PATH", "EXISTS"}, {`C:\csi\smb1`, "no"}}, json: `{"exists": false}`},
		{args: []string{"smb", "map", share + `\pvc-1`, `C:\csi\smb1`, "--user", `CONTOSO\csi`, "--password-file", pwFile, "--yes"},
			msg:  share + `\pvc-1 is mapped; C:\csi\smb1 links to it`,
			json: `{"remote_path": ` + q(share+`\pvc-1`) + `, "local_path": "C:\\csi\\smb1", "username": "CONTOSO\\csi", "action": "mapped"}`},
		{args: []string{"fs", "is-symlink", `C:\csi\smb1`}, table: [][]string{{"PATH", "SYMLINK"}, {`C:\csi\smb1`, "yes"}}, json: `{"is_symlink": true}`},
		{args: []string{"smb", "unmap", share, "--yes"}, msg: share + " is unmapped", json: `{"remote_path": ` + q(share) + `, "action": "unmapped"}`},
		// The link stays: the share is Missing, referenced, so gc keeps
		// nothing to remove and reconcile maps it again.
		{args: []string{"smb", "ls"}, table: [][]string{{"REMOTE", "STATUS", "AGE", "LINKS", "LINK"}, {share, "Missing", "-", "1", `C:\csi\smb1`}},
			json: `{"mappings": [{"remote_path": ` + q(share) + `, "status": "Missing", "links": ["C:\\csi\\smb1"], "age_seconds": 0}]}`},
		{args: []string{"smb", "gc"}, msg: "would remove (dry run; --apply removes) 0 unreferenced mapping(s)", json: `{"dry_run": true, "removed": [], "kept_young": []}`},
		{args: []string{"smb", "reconcile", share, "--user", `CONTOSO\csi`, "--password-file", pwFile}, code: exitDeclined, stderr: "pass --yes"},
		{args: []string{"smb", "reconcile", share, "--user", `CONTOSO\csi`, "--password-file", pwFile, "--yes"},
			msg:  share + ": created (was Missing, 1 link(s))",
			json: `{"remote_path": ` + q(share) + `, "action": "Created", "previous_status": "Missing", "links": ["C:\\csi\\smb1"]}`},
		{args: []string{"smb", "gc", "--apply", "--grace", "1s", "--yes"}, msg: "removed 0 unreferenced mapping(s)", json: `{"dry_run": false, "removed": [], "kept_young": []}`},
		{args: []string{"smb", "unmap", share, "--yes"}, msg: share + " is unmapped", json: `{"action": "unmapped"}`},
		{args: []string{"smb", "map", share, "--user", `CONTOSO\csi`, "--password-file", "-", "--yes"}, stdin: "wrong-" + smbPassword + "\n",
			code: exitPermission, stderr: "smb map: "},
		{args: []string{"smb", "map", share, "--user", `CONTOSO\csi`, "--password-file", "-", "--yes"}, stdin: smbPassword + "\n",
			msg: share + " is mapped", json: `{"remote_path": ` + q(share) + `, "local_path": "", "action": "mapped"}`},
		{args: []string{"smb", "unmap", share, "--yes"}, msg: share + " is unmapped", json: `{"action": "unmapped"}`},

		// iscsi.
		{args: []string{"iscsi", "portals"}, table: [][]string{{"PORTAL", "ADDRESS", "PORT"}}, json: `{"portals": []}`},
		{args: []string{"iscsi", "add-portal", portal, "--yes"}, msg: "portal 10.0.0.10:3260 is added",
			json: `{"action": "portal-added", "portal": {"address": "10.0.0.10", "port": 0}}`},
		{args: []string{"iscsi", "portals"}, table: [][]string{{"PORTAL", "ADDRESS", "PORT"}, {"10.0.0.10:3260", "10.0.0.10", "3260"}},
			json: `{"portals": [{"address": "10.0.0.10", "port": 3260}]}`},
		{args: []string{"iscsi", "targets", "--portal", portal + ":3260"}, table: [][]string{{"PORTAL", "IQN"}, {"10.0.0.10:3260", openIQN}, {"10.0.0.10:3260", chapIQN}},
			json: `{"portal": {"address": "10.0.0.10", "port": 3260}, "iqns": [` + q(openIQN) + `, ` + q(chapIQN) + `]}`},
		{args: []string{"iscsi", "targets", "--portal", "0x7f.1"}, code: exitInvalid, stderr: "iscsi targets: "},
		{args: []string{"iscsi", "connect", openIQN, "--portal", portal, "--yes"}, msg: openIQN + " at 10.0.0.10:3260 is connected",
			json: `{"action": "connected", "iqn": ` + q(openIQN) + `, "auth_type": "NONE"}`},
		{args: []string{"iscsi", "disks", openIQN, "--portal", portal}, table: [][]string{{"PORTAL", "IQN", "DISK"}, {"10.0.0.10:3260", openIQN, "4"}, {"10.0.0.10:3260", openIQN, "5"}},
			json: `{"iqn": ` + q(openIQN) + `, "disk_numbers": [4, 5]}`},
		{args: []string{"disk", "stats", "5"}, table: [][]string{{"DISK", "SIZE", "BYTES", "ONLINE"}, {"5", "256 MiB", "268435456", "yes"}},
			json: `{"disk_number": 5, "size_bytes": 268435456}`},
		{args: []string{"iscsi", "connect", chapIQN, "--portal", portal, "--auth", "one-way-chap", "--chap-user", "initiator", "--chap-secret-file", "-", "--yes"},
			stdin: "wrongSecret0\n", code: exitPermission, stderr: "iscsi connect: "},
		{args: []string{"iscsi", "connect", chapIQN, "--portal", portal, "--auth", "one-way-chap", "--chap-user", "initiator", "--chap-secret-file", "-", "--yes"},
			stdin: "short\n", code: exitInvalid, stderr: "12 to 16 bytes"},
		{args: []string{"iscsi", "connect", chapIQN, "--portal", portal, "--auth", "one-way-chap", "--chap-user", "initiator", "--chap-secret-file", chapFile, "--yes"},
			msg: chapIQN + " at 10.0.0.10:3260 is connected", json: `{"action": "connected", "auth_type": "ONE_WAY_CHAP"}`},
		{args: []string{"iscsi", "disks", chapIQN, "--portal", portal}, table: [][]string{{"PORTAL", "IQN", "DISK"}, {"10.0.0.10:3260", chapIQN, "6"}},
			json: `{"disk_numbers": [6]}`},
		{args: []string{"iscsi", "set-mutual-secret", "--secret-file", mutualFile, "--yes"}, msg: "the mutual CHAP secret is set",
			json: `{"action": "mutual-secret-set", "portal": null}`},
		{args: []string{"iscsi", "disconnect", openIQN, "--portal", portal, "--yes"}, msg: openIQN + " at 10.0.0.10:3260 is disconnected",
			json: `{"action": "disconnected", "iqn": ` + q(openIQN) + `}`},
		{args: []string{"disk", "stats", "5"}, code: exitNotFound, stderr: "disk stats: "},
		{args: []string{"iscsi", "remove-portal", portal + ":3260", "--yes"}, msg: "portal 10.0.0.10:3260 is removed",
			json: `{"action": "portal-removed", "portal": {"address": "10.0.0.10", "port": 3260}}`},
		{args: []string{"iscsi", "portals"}, table: [][]string{{"PORTAL", "ADDRESS", "PORT"}}, json: `{"portals": []}`},

		// system.
		{args: []string{"system", "bios-serial"}, table: [][]string{{"SERIAL"}, {"CLI-E2E-SERIAL-42"}}, json: `{"serial_number": "CLI-E2E-SERIAL-42"}`},
		{args: []string{"system", "service", "W32Time"}, table: [][]string{{"NAME", "DISPLAY NAME", "START TYPE", "STATUS"}, {"W32Time", "Windows Time", "MANUAL", "RUNNING"}},
			json: `{"name": "W32Time", "display_name": "Windows Time", "start_type": "MANUAL", "status": "RUNNING"}`},
		{args: []string{"system", "service", "NoSuchService"}, code: exitNotFound, stderr: "system service: "},
		{args: []string{"system", "stop-service", "W32Time", "--yes"}, code: exitPermission, stderr: "allow-list"},
		{args: []string{"system", "start-service", "MSiSCSI", "--yes"}, msg: "service MSiSCSI is running", json: `{"name": "MSiSCSI", "status": "RUNNING"}`},
		{args: []string{"system", "service", "MSiSCSI"}, table: [][]string{{"NAME", "DISPLAY NAME", "START TYPE", "STATUS"}, {"MSiSCSI", "Microsoft iSCSI Initiator Service", "MANUAL", "RUNNING"}},
			json: `{"status": "RUNNING"}`},
		{args: []string{"system", "stop-service", "MSiSCSI", "--force", "--yes"}, msg: "service MSiSCSI is stopped", json: `{"name": "MSiSCSI", "status": "STOPPED"}`},
		{args: []string{"system", "service", "MSiSCSI"}, table: [][]string{{"NAME", "DISPLAY NAME", "START TYPE", "STATUS"}, {"MSiSCSI", "Microsoft iSCSI Initiator Service", "MANUAL", "STOPPED"}},
			json: `{"status": "STOPPED"}`},
	}
}

// mustInt parses a decimal the test itself produced.
func mustInt(s string) int64 {
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		panic(err)
	}
	return n
}

// mustScript is the completion script for shell, as the CLI prints it.
func mustScript(shell string) string {
	s, err := completionScript(shell)
	if err != nil {
		panic(err)
	}
	return s
}
