package policy

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/klog/v2"

	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
)

// The seed corpus in testdata/fuzz/ holds policies built from the
// hostile-input suite's values (test/hostile, TestFuzzCorpus writes them)
// and the documented examples.

// FuzzParse checks the policy parser on any file: it never panics; a file
// it refuses yields no policy, and a Store that had a good policy keeps
// exactly that one (a broken file never opens anything up); a file it
// accepts yields rules, and a call it allows is allowed by a rule whose
// callers can match the caller: an unidentified caller only through
// "any: true", a caller known only by uid and gid only through any, uids or
// gids.
func FuzzParse(f *testing.F) {
	f.Add(false, []byte(example))
	f.Add(true, []byte(example))
	f.Add(false, []byte("rules:\n- {name: a, callers: [{uids: [0]}], allow: [{methods: ['*']}], pathRoots: [/var/lib/kubelet]}\n"))
	f.Add(false, []byte(""))
	f.Add(false, []byte(serviceAccountPolicy))
	f.Add(true, []byte("rules:\n- {name: a, callers: [{serviceAccounts: [kube-system/csi-sa, 'kube-system/csi-sa/x']}], allow: [{methods: ['*']}]}\n"))

	// The Store's file, one per fuzzing process. klog would log every
	// refused reload.
	dir := f.TempDir()
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	f.Cleanup(func() { klog.LogToStderr(true) })
	const good = "rules:\n- {name: only-root-reads, callers: [{uids: [0]}], allow: [{methods: ['Get*']}]}\n"
	unknown := identity.Caller{}
	user := identity.Caller{PID: 7, HasUnixIDs: true, UID: 12345, GID: 12345}

	f.Fuzz(func(t *testing.T, windows bool, data []byte) {
		o := Options{Style: hostpath.POSIX, Methods: knownMethods}
		if windows {
			o.Style = hostpath.Windows
		}
		p, err := Parse(data, o)

		// Through a Store, as the daemon reloads it.
		file := filepath.Join(dir, "policy.yaml")
		if err := os.WriteFile(file, []byte(good), 0o600); err != nil {
			t.Fatal(err)
		}
		s, lerr := Load(file, o)
		if lerr != nil {
			t.Fatal(lerr)
		}
		before := s.Policy()
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		_, rerr := s.Reload()
		if (rerr == nil) != (err == nil) {
			t.Fatalf("Parse says %v, Reload says %v", err, rerr)
		}

		if err != nil {
			if p != nil {
				t.Fatalf("Parse refused the file (%v) but returned a policy with rules %v", err, p.Rules())
			}
			if s.Policy() != before {
				t.Fatalf("a refused file replaced the Store's policy: %v", s.Policy().Rules())
			}
			for _, c := range []identity.Caller{unknown, user} {
				if d := s.Decide(Call{Caller: c, Group: "disk", Version: "v1", Method: "PartitionDisk"}); d.Allowed {
					t.Fatalf("after a refused file the Store allows %v PartitionDisk (rule %q)", c, d.Rule)
				}
			}
			return
		}
		if p == nil {
			t.Fatal("Parse accepted the file but returned no policy")
		}
		if got := s.Policy(); got == nil || !slices.Equal(got.Rules(), p.Rules()) {
			t.Fatalf("the Store holds %v after reloading a valid file with rules %v", got, p.Rules())
		}
		for group, methods := range knownMethods {
			for _, m := range methods {
				for _, c := range []identity.Caller{unknown, user} {
					d := p.Decide(Call{Caller: c, Group: group, Version: "v1", Method: m})
					if !d.Allowed {
						continue
					}
					if d.WouldDeny {
						// Audit-only: allowed with the rules' denial.
						if !p.AuditOnly() || d.Rule != "" || d.Reason == "" {
							t.Fatalf("%s.%s for %v: would-deny %+v from a policy that is not audit-only or without a reason", group, m, c, d)
						}
						continue
					}
					if !canMatch(p, d.Rule, c) {
						t.Fatalf("%s.%s is allowed for %v by rule %q, whose callers cannot match it", group, m, c, d.Rule)
					}
				}
			}
		}
	})
}

// canMatch tells, independently of the matching code, whether a selector
// of the named rule can match c, a caller known by at most uid and gid.
func canMatch(p *Policy, name string, c identity.Caller) bool {
	for _, r := range p.rules {
		if r.Name != name {
			continue
		}
		for _, s := range r.Callers {
			if s.Any {
				return true
			}
			if !c.HasUnixIDs || len(s.ContainerIDs)+len(s.PodUIDs)+len(s.WindowsAccounts)+len(s.WindowsGroups)+len(s.Namespaces)+len(s.PodNames)+len(s.ContainerNames)+len(s.ServiceAccounts) > 0 || len(s.UIDs)+len(s.GIDs) == 0 {
				continue
			}
			if (len(s.UIDs) == 0 || slices.Contains(s.UIDs, c.UID)) && (len(s.GIDs) == 0 || slices.Contains(s.GIDs, c.GID)) {
				return true
			}
		}
	}
	return false
}
