package manifests

import (
	"context"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/identity"
	"github.com/csi-node-proxy/csi-node-proxy/internal/policy"
)

// fakeObjects answers object confinement's questions from a table of
// where each volume is mounted.
type fakeObjects map[string][]string

func (f fakeObjects) VolumeMounts(_ context.Context, id string) ([]string, error) {
	m, ok := f[id]
	if !ok {
		return nil, errdefs.Errorf(errdefs.ErrNotFound, "no volume %s", id)
	}
	return m, nil
}

func (f fakeObjects) VolumeDisk(context.Context, string) (uint32, error) { return 1, nil }

func (f fakeObjects) DiskVolumes(context.Context, uint32) ([]string, error) { return nil, nil }

func (f fakeObjects) DiskFacts(context.Context, uint32) (policy.DiskFacts, error) {
	return policy.DiskFacts{}, nil
}

// TestShippedRulesConfineObjects: on both OSes, every driver preset that
// may call the disk or volume group confines the objects it names with
// onlyMountedBeneathPathRoots (issue 16: on Linux too, now that the Linux
// backend tells where a volume is mounted). With the examples uncommented,
// each disk driver may format a volume mounted nowhere or staged in its
// own plugin directory, and is refused one staged in another driver's
// plugin directory or mounted at the node's root.
func TestShippedRulesConfineObjects(t *testing.T) {
	eachShippedPolicy(t, func(t *testing.T, sp shippedPolicy, data []byte, methods map[string][]string) {
		uncommented := withDriverPresets(t, sp, data)
		confining := map[string]bool{}
		for _, name := range policy.PresetNames(sp.style) {
			pd, err := policy.PresetData(sp.style, name)
			if err != nil {
				t.Fatal(err)
			}
			var f policy.File
			if err := yaml.Unmarshal(pd, &f); err != nil {
				t.Fatal(err)
			}
			for _, r := range f.Rules {
				objects := false
				for _, a := range r.Allow {
					objects = objects || len(a.Groups) == 0 || slices.Contains(a.Groups, "disk") || slices.Contains(a.Groups, "volume")
				}
				// node-admin only reads; local-static-provisioner's
				// discovery directories are the operator's, so its
				// preset cannot name path roots (its header says so).
				if !objects || r.Name == policy.NodeAdminPreset || r.Name == "local-static-provisioner" {
					continue
				}
				if r.Objects == nil || !r.Objects.OnlyMountedBeneathPathRoots {
					t.Errorf("preset %s may call disk or volume methods but does not confine objects (objects: {onlyMountedBeneathPathRoots: true})", r.Name)
				}
				confining[r.Name] = true
			}
		}
		if len(confining) == 0 {
			t.Fatalf("%s: no preset for a disk driver", sp.os)
		}

		p, err := policy.Parse(uncommented, policy.Options{Style: sp.style, Methods: methods})
		if err != nil {
			t.Fatal(err)
		}
		sep := string(rune(sp.kubelet[len(sp.kubelet)-len("kubelet")-1]))
		nodeRoot := "/"
		if sep == `\` {
			nodeRoot = `C:\`
		}
		for name, d := range sp.drivers {
			if !confining[name] {
				continue
			}
			plugins := sp.kubelet + sep + "plugins" + sep
			objects := fakeObjects{
				"fresh": nil,
				"own":   {plugins + d[3] + sep + "pv1" + sep + "globalmount"},
				"other": {plugins + "other.csi.example.com" + sep + "pv2" + sep + "globalmount"},
				"node":  {nodeRoot},
			}
			for vol, allowed := range map[string]bool{"fresh": true, "own": true, "other": false, "node": false} {
				c := policy.Call{
					Caller:    identity.Caller{PID: 4242, HasUnixIDs: true, PodNamespace: d[0], PodName: d[1], ContainerName: d[2], ServiceAccount: d[4]},
					Group:     "volume",
					Version:   "v1",
					Method:    "FormatVolume",
					Inspected: true,
					Args:      []policy.Arg{{Field: "volume_id", Kind: policy.ArgVolume, Value: vol}},
					Objects:   objects,
				}
				dec := p.Decide(c)
				switch {
				case allowed && (!dec.Allowed || dec.Rule != name):
					t.Errorf("%s example %s: FormatVolume of a volume mounted at %v: %+v, want allowed by its rule", sp.file, name, objects[vol], dec)
				case !allowed && (dec.Allowed || !strings.Contains(dec.Reason, "outside the path roots")):
					t.Errorf("%s example %s: FormatVolume of a volume mounted at %v: %+v, want refused as outside its path roots", sp.file, name, objects[vol], dec)
				}
			}
		}
	})
}
