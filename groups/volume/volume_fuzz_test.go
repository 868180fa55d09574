package volume_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// The seed corpus in testdata/fuzz/ holds the hostile-input suite's volume
// IDs (test/hostile, TestFuzzCorpus writes them); the f.Add seeds are good
// ones.

// idHost records the volume IDs the Service hands over.
type idHost struct{ ids []string }

func (h *idHost) seen(id string) { h.ids = append(h.ids, id) }

func (h *idHost) ListVolumesOnDisk(context.Context, uint32, uint32) ([]string, error) {
	return nil, nil
}
func (h *idHost) MountVolume(_ context.Context, id, _ string) error   { h.seen(id); return nil }
func (h *idHost) UnmountVolume(_ context.Context, id, _ string) error { h.seen(id); return nil }
func (h *idHost) IsVolumeFormatted(_ context.Context, id string) (bool, error) {
	h.seen(id)
	return false, nil
}
func (h *idHost) FormatVolume(_ context.Context, id string) error { h.seen(id); return nil }
func (h *idHost) VolumeSizes(_ context.Context, id string) (int64, int64, error) {
	h.seen(id)
	return 1 << 30, 1 << 30, nil
}
func (h *idHost) ResizeVolume(_ context.Context, id string, _ int64) error { h.seen(id); return nil }
func (h *idHost) VolumeStats(_ context.Context, id string) (int64, int64, error) {
	h.seen(id)
	return 0, 0, nil
}
func (h *idHost) DiskNumber(_ context.Context, id string) (uint32, error) { h.seen(id); return 0, nil }
func (h *idHost) VolumeAt(context.Context, string) (string, error) {
	return "", errdefs.Errorf(errdefs.ErrNotFound, "nothing mounted")
}
func (h *idHost) ClosestVolume(context.Context, string) (string, error) { return "", nil }
func (h *idHost) FlushVolume(_ context.Context, id string) error        { h.seen(id); return nil }

// FuzzVolumeID checks the volume ID rules through the Service, as every
// volume-ID method applies them: every such method accepts or refuses an ID
// alike, a refusal is InvalidArgument and reaches no host, and an ID is
// accepted iff it has the documented form: on Windows \\?\Volume{GUID}\
// (any case), on Linux 1 to 256 bytes of printable UTF-8 without spaces,
// '/' or '\'.
func FuzzVolumeID(f *testing.F) {
	f.Add(true, `\\?\Volume{5ab1d0a6-3c1f-4f1e-9d59-0d5c7b8c3e21}\`)
	f.Add(true, `\\?\VOLUME{5AB1D0A6-3C1F-4F1E-9D59-0D5C7B8C3E21}\`)
	f.Add(false, "5ab1d0a6-3c1f-4f1e-9d59-0d5c7b8c3e21")
	f.Fuzz(func(t *testing.T, windows bool, id string) {
		style, root := hostpath.POSIX, "/var/lib/kubelet"
		if windows {
			style, root = hostpath.Windows, `C:\var\lib\kubelet`
		}
		paths, err := hostpath.NewPolicy(style, []string{root})
		if err != nil {
			t.Fatal(err)
		}
		h := &idHost{}
		s := volume.NewService(h, paths)
		ctx := context.Background()
		target := paths.Style().Join(root, "mnt")
		errs := map[string]error{}
		_, errs["IsVolumeFormatted"] = s.IsVolumeFormatted(ctx, &volume.IsVolumeFormattedRequest{VolumeID: id})
		_, errs["GetVolumeStats"] = s.GetVolumeStats(ctx, &volume.GetVolumeStatsRequest{VolumeID: id})
		_, errs["GetDiskNumberFromVolumeID"] = s.GetDiskNumberFromVolumeID(ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: id})
		_, errs["WriteVolumeCache"] = s.WriteVolumeCache(ctx, &volume.WriteVolumeCacheRequest{VolumeID: id})
		_, errs["ResizeVolume"] = s.ResizeVolume(ctx, &volume.ResizeVolumeRequest{VolumeID: id})
		_, errs["MountVolume"] = s.MountVolume(ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: target})
		want := wellFormed(windows, id)
		for m, err := range errs {
			switch {
			case want && err != nil:
				t.Fatalf("%s(%q) = %v; the ID has the documented form", m, id, err)
			case !want && err == nil:
				t.Fatalf("%s(%q) accepted an ID without the documented form", m, id)
			case err != nil && !errors.Is(err, errdefs.ErrInvalidArgument):
				t.Fatalf("%s(%q) = %v: want InvalidArgument", m, id, err)
			}
		}
		for _, got := range h.ids {
			if !want || got != id {
				t.Fatalf("the host got volume ID %q for %q (well-formed %v)", got, id, want)
			}
		}
		if want && len(h.ids) != len(errs) {
			t.Fatalf("the host got %d calls for %d accepted ones", len(h.ids), len(errs))
		}
	})
}

// wellFormed is the documented volume ID form, written independently of
// the Service's rules.
func wellFormed(windows bool, id string) bool {
	if windows {
		const prefix, suffix = `\\?\volume{`, `}\`
		if len(id) != len(prefix)+36+len(suffix) || !strings.EqualFold(id[:len(prefix)], prefix) || id[len(id)-2:] != suffix {
			return false
		}
		for i, c := range id[len(prefix) : len(prefix)+36] {
			dash := i == 8 || i == 13 || i == 18 || i == 23
			hex := c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
			if dash != (c == '-') || !dash && !hex {
				return false
			}
		}
		return true
	}
	if id == "" || len(id) > 256 || !utf8.ValidString(id) {
		return false
	}
	for _, r := range id {
		if !unicode.IsPrint(r) || r == ' ' || r == '/' || r == '\\' {
			return false
		}
	}
	return true
}
