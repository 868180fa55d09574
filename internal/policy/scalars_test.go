package policy

import (
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// YAML 1.1 reads 01000 as octal 512 and yes as true: a policy that says
// either is refused, naming the field and the value, instead of selecting
// uid 512 or admitting every caller.
func TestParseRefusesNonDecimalAndYAML11Scalars(t *testing.T) {
	rule := func(callers, extra string) string {
		return "rules:\n- name: a\n  callers: [" + callers + "]\n  allow: [{methods: ['*']}]\n" + extra
	}
	for name, tc := range map[string]struct{ yaml, want string }{
		"octal uid":       {rule("{uids: [01000]}", ""), `rules[0].callers[0].uids[0]: "01000" is not a plain decimal integer`},
		"hex gid":         {rule("{gids: [0x3e8]}", ""), `rules[0].callers[0].gids[0]: "0x3e8"`},
		"0o uid":          {rule("{uids: [0o17]}", ""), `"0o17" is not a plain decimal`},
		"binary uid":      {rule("{uids: [0b11]}", ""), `"0b11" is not a plain decimal`},
		"underscored uid": {rule("{uids: [1_000]}", ""), `"1_000" is not a plain decimal`},
		"plus uid":        {rule("{uids: [+5]}", ""), `"+5" is not a plain decimal`},
		"float uid":       {rule("{uids: [1e3]}", ""), `"1e3" is not a plain decimal`},
		"octal disk":      {rule("{uids: [0]}", "  pathRoots: [/a]\n  objects: {diskNumbers: [010]}\n"), `rules[0].objects.diskNumbers[0]: "010"`},
		"any yes":         {rule("{any: yes}", ""), `rules[0].callers[0].any: "yes" is read by YAML as the boolean true`},
		"any on":          {rule("{any: on}", ""), `"on" is read by YAML as the boolean true`},
		"any Y":           {rule("{any: Y}", ""), `"Y" is read by YAML as the boolean true`},
		"any True":        {rule("{any: True}", ""), `"True" is read by YAML as the boolean true`},
		"mounted off":     {rule("{uids: [0]}", "  pathRoots: [/a]\n  objects: {onlyMountedBeneathPathRoots: off}\n"), `rules[0].objects.onlyMountedBeneathPathRoots: "off"`},
		"decimal mode":    {rule("{uids: [0]}", "  smbPermissions: {fileMode: 511}\n"), `rules[0].smbPermissions.fileMode: "511" is not a mode in octal`},
		"hex mode":        {rule("{uids: [0]}", "  smbPermissions: {dirMode: 0x1ff}\n"), `rules[0].smbPermissions.dirMode: "0x1ff"`},
		"octal smb gid":   {rule("{uids: [0]}", "  smbPermissions: {gid: 02000}\n"), `rules[0].smbPermissions.gid: "02000"`},
	} {
		_, err := Parse([]byte(tc.yaml), Options{Style: hostpath.POSIX, Methods: knownMethods})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tc.want)
		}
	}
}

// Plain decimal integers, true and false, octal modes and quoted text
// that looks like a YAML 1.1 boolean stay as they were.
func TestParseAcceptsPlainScalars(t *testing.T) {
	p, err := Parse([]byte(`rules:
- name: a
  callers: [{uids: [0, 1000], gids: [-0]}, {any: false, podNames: ["yes"]}]
  allow: [{methods: ['*']}]
  pathRoots: [/a]
  objects: {diskNumbers: [10], onlyMountedBeneathPathRoots: true}
  smbPermissions: {gid: 2000, fileMode: 0770, dirMode: 0}
`), Options{Style: hostpath.POSIX, Methods: knownMethods})
	if err != nil {
		t.Fatal(err)
	}
	r := p.rules[0].Rule
	if s := r.SMBPermissions; s == nil || s.FileMode != 0o770 || *s.GID != 2000 {
		t.Errorf("smbPermissions %+v", r.SMBPermissions)
	}
	if u := r.Callers[0].UIDs; len(u) != 2 || u[1] != 1000 {
		t.Errorf("uids %v", u)
	}
}
