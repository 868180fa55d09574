package hostile

import (
	"bytes"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

var writeCorpus = flag.Bool("hostile.write-corpus", false, "write the validators' fuzz seed corpora (testdata/fuzz) from the hostile table")

// moduleRoot is the repository root, seen from this package.
const moduleRoot = "../.."

// fuzzTarget is one Fuzz function and the seeds the hostile table gives it.
type fuzzTarget struct {
	pkg, name string
	seeds     [][]any
}

// corpusTargets derives every validator's seeds from the hostile table.
func corpusTargets() []fuzzTarget {
	s := defaultSandbox
	posix := hostilePOSIXPaths(s)
	windows := values(windowsBadPaths())
	one := func(vs []string) [][]any {
		var out [][]any
		for _, v := range vs {
			out = append(out, []any{v})
		}
		return out
	}
	var policyCheck, volumeIDs, portals, chap, disks, smbMapping, policies [][]any
	for _, v := range posix {
		policyCheck = append(policyCheck, []any{false, v})
	}
	for _, v := range windows {
		policyCheck = append(policyCheck, []any{true, v})
	}
	for _, in := range badVolumeIDs() {
		volumeIDs = append(volumeIDs, []any{false, in.value})
	}
	for _, in := range append(badVolumeIDs(), windowsBadVolumeIDs()...) {
		volumeIDs = append(volumeIDs, []any{true, in.value})
	}
	for _, p := range badPortals() {
		if p.p != nil {
			portals = append(portals, []any{p.p.addr, p.p.port})
		}
	}
	for _, c := range badChap() {
		chap = append(chap, []any{c.auth, c.user, c.secret})
	}
	for _, in := range badDiskIDs() {
		disks = append(disks, []any{in.value, uint32(0)})
	}
	for _, in := range badRemotePaths() {
		smbMapping = append(smbMapping, []any{in.value, "", goodUser, goodPass})
	}
	for _, in := range badUsernames() {
		smbMapping = append(smbMapping, []any{goodRemote, "", in.value, goodPass})
	}
	for _, in := range badPasswords() {
		smbMapping = append(smbMapping, []any{goodRemote, "", goodUser, in.value})
	}
	for _, v := range posix {
		if v != "" {
			smbMapping = append(smbMapping, []any{goodRemote, v, goodUser, goodPass})
		}
	}
	for _, p := range hostilePolicies(posix, windows) {
		policies = append(policies, []any{p.windows, []byte(p.yaml)})
	}
	var services []string
	for _, in := range badServiceNames() {
		services = append(services, in.value)
	}
	return []fuzzTarget{
		{"hostpath", "FuzzPOSIXClean", one(posix)},
		{"hostpath", "FuzzWindowsClean", one(append(append([]string(nil), windows...), posix...))},
		{"hostpath", "FuzzPolicyCheck", policyCheck},
		{"groups/smb", "FuzzParseRemotePath", one(values(badRemotePaths()))},
		{"groups/smb", "FuzzNewSmbGlobalMapping", smbMapping},
		{"groups/iscsi", "FuzzParsePortal", portals},
		{"groups/iscsi", "FuzzCheckIQN", one(values(badIQNs()))},
		{"groups/iscsi", "FuzzConnectTarget", chap},
		{"groups/system", "FuzzCheckServiceName", one(append(services, notAllowedServices...))},
		{"groups/volume", "FuzzVolumeID", volumeIDs},
		{"internal/adapter/diskid", "FuzzParse", disks},
		{"internal/policy", "FuzzParse", policies},
	}
}

func values(ins []input) []string {
	out := make([]string, 0, len(ins))
	for _, in := range ins {
		out = append(out, in.value)
	}
	return out
}

// hostilePOSIXPaths are every path the Linux suite sends: the bad paths,
// the working directories' own spellings, and the paths through the
// escaping links.
func hostilePOSIXPaths(s sandbox) []string {
	var out []string
	for _, p := range badPaths(s) {
		out = append(out, p.value)
	}
	out = append(out, values(workingDirItself(s))...)
	for _, l := range escapeLinks(s) {
		out = append(out, l.at+"/"+l.child, l.at+"/"+s.Probe+"-dir/sub", l.at+"/"+s.Probe+"-link")
	}
	for _, l := range rootLinks(s) {
		out = append(out, l.at)
		if l.kubelet {
			out = append(out, l.at+"/plugins", l.at+"/plugins_registry")
		}
	}
	return out
}

// hostilePolicy is a policy file built around a hostile value.
type hostilePolicy struct {
	windows bool
	yaml    string
}

// hostilePolicies put the table's values where a policy file takes
// strings, and add the file-level attacks (duplicate and unknown keys, an
// alias bomb, JSON, wrong types).
func hostilePolicies(posix, windows []string) []hostilePolicy {
	rule := func(field string) string {
		return "rules:\n- name: r\n  callers: [{uids: [0]}]\n  allow: [{methods: ['*']}]\n" + field
	}
	var out []hostilePolicy
	for _, v := range posix {
		if len(v) < 512 {
			out = append(out, hostilePolicy{false, rule("  pathRoots: [" + yamlQuote(v) + "]\n")})
		}
	}
	for _, v := range windows {
		if len(v) < 512 {
			out = append(out, hostilePolicy{true, rule("  pathRoots: [" + yamlQuote(v) + "]\n")})
		}
	}
	for _, in := range badVolumeIDs() {
		v := yamlQuote(in.value)
		out = append(out,
			hostilePolicy{false, "rules:\n- name: " + v + "\n  callers: [{uids: [0]}]\n  allow: [{methods: ['*']}]\n"},
			hostilePolicy{false, "rules:\n- name: r\n  callers: [{containerIDs: [" + v + "]}]\n  allow: [{methods: ['*']}]\n"},
			hostilePolicy{false, "rules:\n- name: r\n  callers: [{podUIDs: [" + v + "]}]\n  allow: [{methods: ['*']}]\n"},
			hostilePolicy{true, "rules:\n- name: r\n  callers: [{windowsAccounts: [" + v + "]}]\n  allow: [{methods: ['*']}]\n"},
			hostilePolicy{true, "rules:\n- name: r\n  callers: [{windowsGroups: [" + v + "]}]\n  allow: [{methods: ['*']}]\n"},
			hostilePolicy{false, "rules:\n- name: r\n  callers: [{uids: [0]}]\n  allow: [{methods: [" + v + "]}]\n"},
			hostilePolicy{false, "rules:\n- name: r\n  callers: [{uids: [0]}]\n  allow: [{groups: [" + v + "], methods: ['*']}]\n"},
		)
	}
	for _, y := range []string{
		"rules: []\n",
		"",
		"rules:\n",
		"rules: null\n",
		"rules:\n- name: r\n  callers: [{any: true}]\n  allow: [{methods: ['*']}]\n",
		"rules:\n- name: r\n  callers: [{any: true, uids: [0]}]\n  allow: [{methods: ['*']}]\n",
		"rules:\n- name: r\n  callers: [{}]\n  allow: [{methods: ['*']}]\n",
		"rules:\n- name: r\n  callers: [{any: false}]\n  allow: [{methods: ['*']}]\n",
		"rules:\n- name: r\n  callers: [{uids: []}]\n  allow: [{methods: ['*']}]\n",
		"rules:\n- name: r\n  callers: [{uids: [-1]}]\n  allow: [{methods: ['*']}]\n",
		"rules:\n- name: r\n  callers: [{uids: [4294967296]}]\n  allow: [{methods: ['*']}]\n",
		"rules:\n- name: r\n  callers: [{uids: [0x0]}]\n  allow: [{methods: ['*']}]\n",
		"rules:\n- name: r\n  callers: [{uids: ['0']}]\n  allow: [{methods: ['*']}]\n",
		"rules:\n- name: r\n  callers: [{uids: [1e3]}]\n  allow: [{methods: ['*']}]\n",
		"rules:\n- name: r\n  callers: [{uids: [.nan]}]\n  allow: [{methods: ['*']}]\n",
		"rules:\n- name: r\n  callers: [{uids: [0], uids: [1]}]\n  allow: [{methods: ['*']}]\n",
		"rules:\n- name: r\n  callers: [{uid: [0]}]\n  allow: [{methods: ['*']}]\n",
		"rules:\n- name: r\n  callers: [{uids: [0]}]\n  allow: [{methods: []}]\n",
		"rules:\n- name: r\n  callers: [{uids: [0]}]\n  allow: [{methods: ['[']}]\n",
		"rules:\n- name: r\n  callers: [{uids: [0]}]\n  allow: [{methods: ['disk.']}]\n",
		"rules:\n- name: r\n  callers: [{uids: [0]}]\n  allow: [{methods: ['.x']}]\n",
		"rules:\n- name: r\n  callers: [{uids: [0]}]\n  allow: [{methods: ['*.*']}]\n",
		"rules:\n- name: r\n  callers: [{uids: [0]}]\n  allow: [{groups: [disk], methods: [volume.MountVolume]}]\n",
		"rules:\n- name: r\n  callers: [{uids: [0]}]\n  allow: [{versions: [''], methods: ['*']}]\n",
		"rules:\n- name: r\n  callers: [{uids: [0]}]\n  allow: [{methods: ['*']}]\n  pathRoots: []\n",
		"rules:\n- name: r\n  callers: [{uids: [0]}]\n  allow: [{methods: ['*']}]\n- name: r\n  callers: [{uids: [1]}]\n  allow: [{methods: ['*']}]\n",
		"rules:\n- name: r\n  callers: [{uids: [0]}]\n  allow: [{methods: ['*']}]\nrules: []\n",
		"rules:\n- name: r\n  callers: [{uids: [0]}]\n  allow: [{methods: ['*']}]\n  extra: true\n",
		"rules:\n- name: r\n  callers: {uids: [0]}\n  allow: [{methods: ['*']}]\n",
		"rules: {name: r}\n",
		"rules: 'everything'\n",
		"- rules\n",
		"{\"rules\":[{\"name\":\"r\",\"callers\":[{\"any\":true}],\"allow\":[{\"methods\":[\"Get*\"]}]}]}",
		"{\"rules\":[{\"name\":\"r\",\"callers\":[{\"any\":true}],\"allow\":[{\"methods\":[\"*\"]}],\"rules\":[]}]}",
		"rules: &r\n- name: r\n  callers: [{uids: [0]}]\n  allow: [{methods: ['*']}]\nx: *r\n",
		"a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\nrules: *h\n",
		"rules:\n- name: r\n  callers: [{uids: [0]}]\n  allow: [{methods: ['*']}]\n---\nrules: []\n",
		"--- !!binary\nrules: []\n",
		"rules:\n- !!map {name: r, callers: [{any: true}], allow: [{methods: ['*']}]}\n",
		"\xef\xbb\xbfrules:\n- name: r\n  callers: [{uids: [0]}]\n  allow: [{methods: ['*']}]\n",
		"rules:\n\t- name: r\n",
		"rules:\n- name: r\x00\n  callers: [{uids: [0]}]\n  allow: [{methods: ['*']}]\n",
	} {
		out = append(out, hostilePolicy{false, y}, hostilePolicy{true, y})
	}
	return out
}

// yamlQuote writes s as a YAML double-quoted scalar, escaping what YAML
// cannot hold literally.
func yamlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
		i += n
	}
	b.WriteByte('"')
	return b.String()
}

// marshalCorpus writes values as go test's corpus file format (what
// internal/fuzz's marshalCorpusFile writes).
func marshalCorpus(vals ...any) []byte {
	b := bytes.NewBufferString("go test fuzz v1\n")
	for _, v := range vals {
		switch t := v.(type) {
		case string:
			fmt.Fprintf(b, "string(%q)\n", t)
		case []byte:
			fmt.Fprintf(b, "[]byte(%q)\n", t)
		case bool, uint32:
			fmt.Fprintf(b, "%T(%v)\n", t, t)
		case int32: // written as a rune when it is one, as go test does
			if utf8.ValidRune(t) {
				fmt.Fprintf(b, "rune(%q)\n", t)
			} else {
				fmt.Fprintf(b, "int32(%v)\n", t)
			}
		default:
			panic(fmt.Sprintf("marshalCorpus: unsupported %T", v))
		}
	}
	return b.Bytes()
}

// TestFuzzCorpus checks that every validator's seed corpus holds the
// hostile table's values, and writes them with -hostile.write-corpus. The
// files are named as go test names them (the first 16 hex digits of the
// content's SHA-256), so a value is stored once; files that fuzzing added
// stay.
func TestFuzzCorpus(t *testing.T) {
	total := 0
	for _, ft := range corpusTargets() {
		src, err := os.ReadFile(filepath.Join(moduleRoot, ft.pkg, fuzzFile(ft.pkg)))
		if err != nil || !bytes.Contains(src, []byte("func "+ft.name+"(f *testing.F)")) {
			t.Errorf("%s has no %s in %s (%v)", ft.pkg, ft.name, fuzzFile(ft.pkg), err)
			continue
		}
		dir := filepath.Join(moduleRoot, ft.pkg, "testdata", "fuzz", ft.name)
		var missing []string
		seen := map[string]bool{}
		for _, seed := range ft.seeds {
			data := marshalCorpus(seed...)
			name := fmt.Sprintf("%x", sha256.Sum256(data))[:16]
			if seen[name] {
				continue
			}
			seen[name] = true
			file := filepath.Join(dir, name)
			old, err := os.ReadFile(file)
			switch {
			case err == nil && bytes.Equal(old, data):
			case *writeCorpus:
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, data, 0o644); err != nil {
					t.Fatal(err)
				}
			default:
				missing = append(missing, name)
			}
		}
		total += len(seen)
		if len(missing) > 0 {
			sort.Strings(missing)
			t.Errorf("%s/%s lacks %d of its %d hostile seeds (%s …): run go test ./test/hostile/ -run FuzzCorpus -hostile.write-corpus",
				ft.pkg, ft.name, len(missing), len(seen), missing[0])
		}
	}
	t.Logf("%d fuzz targets, %d hostile seeds", len(corpusTargets()), total)
}

// fuzzFile is the file holding a package's Fuzz functions.
func fuzzFile(pkg string) string {
	switch pkg {
	case "internal/adapter/diskid":
		return "diskid_fuzz_test.go"
	case "internal/policy":
		return "policy_fuzz_test.go"
	}
	return filepath.Base(pkg) + "_fuzz_test.go"
}
