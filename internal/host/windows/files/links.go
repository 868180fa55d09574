package files

import (
	"context"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// FoundLink is a symbolic link or junction ListLinks found.
type FoundLink struct {
	// Path is the link's own path.
	Path string
	// Target is where it leads, as a Win32 path (a UNC target reads
	// \\server\share\...).
	Target string
}

// MaxListedEntries bounds ListLinks' walk: a kubelet directory holds a
// few entries per volume, so a million is far beyond any node and only
// stops a runaway walk.
const MaxListedEntries = 1_000_000

// ListLinks returns the symbolic links and junctions under each of roots,
// with their targets. It never follows a reparse point (links, junctions
// and volume mounted folders are not entered; mounted folders are not
// reported), so it lists the node's own directories, never a share or a
// mounted volume's files. A missing root has no links; an entry that
// vanishes during the walk is skipped. More than MaxListedEntries entries
// is errdefs.ErrOutOfRange.
func (h *Host) ListLinks(ctx context.Context, roots []string) ([]FoundLink, error) {
	var out []FoundLink
	seen := 0
	var walk func(dir string) error
	walk = func(dir string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		entries, err := h.api.ReadDir(dir)
		if err != nil {
			if isNotExist(err) {
				return nil
			}
			return fail(err, "list %q", dir)
		}
		for _, e := range entries {
			if seen++; seen > MaxListedEntries {
				return errdefs.Errorf(errdefs.ErrOutOfRange, "more than %d entries under the working directories", MaxListedEntries)
			}
			p := joinPath(dir, e.name)
			switch {
			case e.info.isReparse() && (e.info.tag == tagSymlink || e.info.tag == tagMountPoint):
				b, err := h.api.ReadReparsePoint(p)
				if err != nil {
					if isNotExist(err) {
						continue
					}
					return fail(err, "read link %q", p)
				}
				rp, err := parseReparsePoint(b)
				if err != nil {
					return fail(err, "read link %q", p)
				}
				if !rp.isVolume() {
					out = append(out, FoundLink{Path: p, Target: rp.target(p)})
				}
			case e.info.isReparse():
				// Another kind of reparse point (dedup, cloud files): not
				// a link, and not entered.
			case e.info.isDir():
				if err := walk(p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, r := range roots {
		fi, err := h.api.Lstat(r)
		switch {
		case err != nil && isNotExist(err):
			continue
		case err != nil:
			return nil, fail(err, "stat %q", r)
		case fi.isReparse() || !fi.isDir():
			continue // a root that is itself a link is not walked through
		}
		if err := walk(r); err != nil {
			return nil, err
		}
	}
	return out, nil
}
