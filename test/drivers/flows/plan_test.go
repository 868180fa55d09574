package flows

import (
	"fmt"
	"testing"
)

// TestMounterPlanWorldApart: a host may hold a Plan's world and a
// MounterPlan's of the same environments (the Linux backend's runner
// does), so no disk number, disk ID or share may be in both, and each
// plan's LUNs are unique within it.
func TestMounterPlanWorldApart(t *testing.T) {
	var envs []Env
	for i := range 9 {
		envs = append(envs, Env{Name: fmt.Sprintf("env%d", i), KubeletDir: "/k"})
	}
	raw, mnt := NewPlan(envs...).Fixture(), NewMounterPlan(envs...).Fixture()
	seen := map[string]string{}
	claim := func(what, key, owner string) {
		t.Helper()
		if key == "" {
			return
		}
		k := what + " " + key
		if prev, ok := seen[k]; ok {
			t.Errorf("%s is %s's and %s's", k, prev, owner)
		}
		seen[k] = owner
	}
	for name, f := range map[string]Fixture{"plan": raw, "mounter plan": mnt} {
		luns := map[string]string{}
		for _, d := range f.Disks {
			owner := name + " " + d.Flow.String()
			claim("disk", fmt.Sprint(d.Number), owner)
			claim("page83", d.Page83, owner)
			claim("serial", d.Serial, owner)
			if prev, ok := luns[d.Location]; ok {
				t.Errorf("location %s is %s's and %s's", d.Location, prev, owner)
			}
			luns[d.Location] = owner
		}
		for _, s := range f.Shares {
			claim("share", s.Path, name+" "+s.Flow.String())
		}
	}
	if len(mnt.Disks) != len(raw.Disks) || len(mnt.Shares) != len(raw.Shares) {
		t.Errorf("the mounter plan has %d disks and %d shares, the plan %d and %d: the same flows need the same world", len(mnt.Disks), len(mnt.Shares), len(raw.Disks), len(raw.Shares))
	}
}
