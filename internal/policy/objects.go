package policy

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"unicode/utf8"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// Objects confines the disks and volumes a rule's requests may name, as
// PathRoots confine paths. Every criterion given must hold for every disk
// and volume a request names (a volume is judged with its disk); at least
// one must be given.
//
// OnlyMountedBeneathPathRoots is the one a driver needs: what it mounted
// beneath its own roots is its own, with no rule line per disk. A volume
// passes when it is mounted nowhere or only beneath the rule's
// PathRoots; a disk when each of its volumes does. So a driver may
// partition, format and mount a fresh disk (mounted nowhere yet), and use
// it afterwards (mounted beneath its roots), but never touch a volume
// another driver, or the node, has mounted elsewhere (another plugin's
// staging directory, C:\, /). Ownership is not remembered: a disk that
// nobody has mounted yet belongs to whichever confined rule acts on it
// first, in the window between its attachment and its first mount; the
// disk criteria (numbers, locations, IDs) narrow that window to the disks
// a driver's cloud attaches.
type Objects struct {
	// OnlyMountedBeneathPathRoots: see Objects. It needs PathRoots.
	OnlyMountedBeneathPathRoots bool `json:"onlyMountedBeneathPathRoots,omitempty"`
	// DiskNumbers lists the disks the rule may name, by number. Disk
	// numbers are not stable across reboots: prefer DiskIDs.
	DiskNumbers []uint32 `json:"diskNumbers,omitempty"`
	// DiskLocations are path.Match patterns over a disk's location as
	// adapter:bus:target:lun ("1:0:0:*": every LUN of one target).
	DiskLocations []string `json:"diskLocations,omitempty"`
	// DiskIDs are path.Match patterns over a disk's SCSI page 0x83 ID or
	// its serial number ("60022480*": Azure's data disks).
	DiskIDs []string `json:"diskIDs,omitempty"`
}

// DiskFacts is what the node says about one disk.
type DiskFacts struct {
	// Location is adapter:bus:target:lun; "" when the disk has none.
	Location string
	// Page83 and Serial are the disk's IDs; "" when it has none.
	Page83, Serial string
}

// ObjectHost answers the questions object confinement asks of the node.
// Errors wrap errdefs sentinels; a volume or disk that does not exist is
// errdefs.ErrNotFound.
type ObjectHost interface {
	// VolumeMounts returns every path where the volume is mounted (a
	// Windows drive letter as C:\); none when it is mounted nowhere.
	VolumeMounts(ctx context.Context, volumeID string) ([]string, error)
	// VolumeDisk returns the disk the volume lives on.
	VolumeDisk(ctx context.Context, volumeID string) (uint32, error)
	// DiskVolumes returns the volumes on the disk.
	DiskVolumes(ctx context.Context, disk uint32) ([]string, error)
	// DiskFacts returns the disk's location and IDs.
	DiskFacts(ctx context.Context, disk uint32) (DiskFacts, error)
}

// location is a pattern of four colon-separated parts.
var location = regexp.MustCompile(`^[^:]+:[^:]+:[^:]+:[^:]+$`)

func validateObjects(o *Objects, roots int) []error {
	if o == nil {
		return nil
	}
	var errs []error
	if !o.OnlyMountedBeneathPathRoots && len(o.DiskNumbers)+len(o.DiskLocations)+len(o.DiskIDs) == 0 {
		errs = append(errs, errors.New("objects confines nothing: name onlyMountedBeneathPathRoots, diskNumbers, diskLocations or diskIDs"))
	}
	if o.OnlyMountedBeneathPathRoots && roots == 0 {
		errs = append(errs, errors.New("objects: onlyMountedBeneathPathRoots needs pathRoots"))
	}
	for _, l := range o.DiskLocations {
		if _, err := path.Match(l, ""); err != nil || !location.MatchString(l) {
			errs = append(errs, fmt.Errorf("objects: diskLocations: %q is not a pattern of adapter:bus:target:lun", l))
		}
	}
	for _, id := range o.DiskIDs {
		if _, err := path.Match(id, ""); err != nil || id == "" {
			errs = append(errs, fmt.Errorf("objects: diskIDs: %q is not a pattern", id))
		}
	}
	return errs
}

// checkObjects returns why the disks and volumes a request names are not
// all the rule's to touch, or "" when they are (or the rule does not
// confine them).
func (r *rule) checkObjects(ctx context.Context, p *Policy, c *Call) string {
	o := r.Objects
	if o == nil {
		return ""
	}
	if !c.Inspected {
		return fmt.Sprintf("rule %q confines disks and volumes, and the request cannot be inspected", r.Name)
	}
	for _, a := range c.Args {
		var reason string
		switch {
		case a.Kind == ArgVolume && a.Value != "":
			if c.Objects == nil {
				return fmt.Sprintf("rule %q confines disks and volumes, and the daemon cannot ask this host about them", r.Name)
			}
			reason = r.checkVolume(ctx, p, c.Objects, a.Value)
		case a.Kind == ArgDisk:
			if c.Objects == nil {
				return fmt.Sprintf("rule %q confines disks and volumes, and the daemon cannot ask this host about them", r.Name)
			}
			reason = r.checkDisk(ctx, p, c.Objects, a.Disk)
		default:
			continue
		}
		if reason != "" {
			return fmt.Sprintf("%s of rule %q", reason, r.Name)
		}
	}
	return ""
}

func (r *rule) checkVolume(ctx context.Context, p *Policy, h ObjectHost, id string) string {
	if r.Objects.OnlyMountedBeneathPathRoots {
		if reason := r.checkMounts(ctx, p, h, id); reason != "" {
			return reason
		}
	}
	if !r.Objects.pinsDisks() {
		return ""
	}
	d, err := h.VolumeDisk(ctx, id)
	if err != nil {
		return fmt.Sprintf("cannot tell the disk of volume %s (%v), so it is outside the objects", shortID(id), err)
	}
	if reason := r.checkDiskFacts(ctx, h, d); reason != "" {
		return "volume " + shortID(id) + " is on " + reason
	}
	return ""
}

func (r *rule) checkDisk(ctx context.Context, p *Policy, h ObjectHost, d uint32) string {
	if reason := r.checkDiskFacts(ctx, h, d); reason != "" {
		return reason
	}
	if !r.Objects.OnlyMountedBeneathPathRoots {
		return ""
	}
	vols, err := h.DiskVolumes(ctx, d)
	switch {
	case errors.Is(err, errdefs.ErrNotFound):
		return "" // no such disk: the call fails with NotFound
	case err != nil:
		return fmt.Sprintf("cannot tell the volumes of disk %d (%v), so it is outside the objects", d, err)
	}
	for _, v := range vols {
		if reason := r.checkMounts(ctx, p, h, v); reason != "" {
			return fmt.Sprintf("disk %d holds %s", d, reason)
		}
	}
	return ""
}

// checkMounts requires volume id to be mounted nowhere or only beneath
// the rule's roots.
func (r *rule) checkMounts(ctx context.Context, p *Policy, h ObjectHost, id string) string {
	mounts, err := h.VolumeMounts(ctx, id)
	switch {
	case errors.Is(err, errdefs.ErrNotFound):
		return "" // no such volume: the call fails with NotFound
	case err != nil:
		return fmt.Sprintf("cannot tell where volume %s is mounted (%v), so it is outside the objects", shortID(id), err)
	}
	for _, m := range mounts {
		cleaned, err := p.style.Clean(m)
		if err != nil || !slices.ContainsFunc(r.roots, func(root string) bool { return p.style.Within(cleaned, root) }) {
			return fmt.Sprintf("volume %s, mounted at %s, outside the path roots %v", shortID(id), m, r.roots)
		}
	}
	return ""
}

func (o *Objects) pinsDisks() bool {
	return len(o.DiskNumbers)+len(o.DiskLocations)+len(o.DiskIDs) > 0
}

// checkDiskFacts applies the disk criteria (numbers, locations, IDs).
func (r *rule) checkDiskFacts(ctx context.Context, h ObjectHost, d uint32) string {
	o := r.Objects
	if !o.pinsDisks() {
		return ""
	}
	if len(o.DiskNumbers) > 0 && !slices.Contains(o.DiskNumbers, d) {
		return fmt.Sprintf("disk %d, not one of the diskNumbers %v", d, o.DiskNumbers)
	}
	if len(o.DiskLocations) == 0 && len(o.DiskIDs) == 0 {
		return ""
	}
	f, err := h.DiskFacts(ctx, d)
	if err != nil {
		return fmt.Sprintf("disk %d, whose location and IDs cannot be told (%v)", d, err)
	}
	if len(o.DiskLocations) > 0 && !matchAny(o.DiskLocations, f.Location) {
		return fmt.Sprintf("disk %d at location %q, not matching the diskLocations %v", d, f.Location, o.DiskLocations)
	}
	if len(o.DiskIDs) > 0 && !matchAny(o.DiskIDs, f.Page83, f.Serial) {
		return fmt.Sprintf("disk %d with IDs %q/%q, not matching the diskIDs %v", d, f.Page83, f.Serial, o.DiskIDs)
	}
	return ""
}

// matchAny tells whether a pattern matches any non-empty value.
func matchAny(patterns []string, values ...string) bool {
	for _, v := range values {
		if v == "" {
			continue
		}
		for _, p := range patterns {
			if ok, err := path.Match(p, v); err == nil && ok {
				return true
			}
		}
	}
	return false
}

// maxReasonID bounds how much of a volume ID a reason quotes: the caller
// sends the ID, and the gate asks the policy before the group's Service
// validates it, so its length is the caller's choice.
const maxReasonID = 256

// shortID returns a caller's volume ID for a reason: whole when at most
// maxReasonID bytes, else its beginning and its length.
func shortID(id string) string {
	if len(id) <= maxReasonID {
		return id
	}
	cut := maxReasonID
	for cut > 0 && !utf8.RuneStart(id[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…(%d bytes)", id[:cut], len(id))
}
