package policy

import (
	"context"
	"errors"
	"fmt"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/fieldname"
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

// objectRef is one disk or volume a request names.
type objectRef struct {
	field  string
	volume string // "" for a disk
	disk   uint32
	bad    string // a disk field that is no disk number, as sent
}

// volumeFields and diskFields are the request fields naming objects, in
// every API version: volume_id; disk_number (a number since v1beta3, a
// string before), disk_id (v1alpha1 to v1beta2).
var (
	volumeFields = map[string]bool{"volume_id": true}
	diskFields   = map[string]bool{"disk_number": true, "disk_id": true}
)

func diskRef(field, s string) objectRef {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return objectRef{field: field, bad: s}
	}
	return objectRef{field: field, disk: uint32(n)}
}

// requestObjects returns the disks and volumes a wire message names, in
// it and its nested messages.
func requestObjects(m proto.Message) []objectRef {
	var out []objectRef
	if m != nil && m.ProtoReflect().IsValid() {
		collectObjects(m.ProtoReflect(), &out)
	}
	return out
}

func collectObjects(m protoreflect.Message, out *[]objectRef) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		name := string(fd.Name())
		// A disk field is read even when unset: proto3 does not send
		// zero, and disk 0 is the system disk.
		if fd.IsMap() || (!m.Has(fd) && !diskFields[name]) {
			continue
		}
		v := m.Get(fd)
		switch {
		case fd.IsList():
			if fd.Kind() == protoreflect.MessageKind {
				for j := range v.List().Len() {
					collectObjects(v.List().Get(j).Message(), out)
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			collectObjects(v.Message(), out)
		case volumeFields[name] && fd.Kind() == protoreflect.StringKind && v.String() != "":
			*out = append(*out, objectRef{field: name, volume: v.String()})
		case diskFields[name] && fd.Kind() == protoreflect.StringKind:
			*out = append(*out, diskRef(name, v.String()))
		case diskFields[name] && fd.Kind() == protoreflect.Uint32Kind:
			*out = append(*out, objectRef{field: name, disk: uint32(v.Uint())})
		}
	}
}

// modelObjects is requestObjects for a group model struct (library mode),
// by the snake_case form of its field names, as ModelPaths finds paths.
func modelObjects(model any) []objectRef {
	var out []objectRef
	collectModelObjects(reflect.ValueOf(model), &out, 0)
	return out
}

func collectModelObjects(v reflect.Value, out *[]objectRef, depth int) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct || depth > maxModelDepth {
		return
	}
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		fv, name := v.Field(i), fieldname.Snake(f.Name)
		switch {
		case volumeFields[name] && fv.Kind() == reflect.String && fv.String() != "":
			*out = append(*out, objectRef{field: name, volume: fv.String()})
		case diskFields[name] && fv.Kind() == reflect.String:
			*out = append(*out, diskRef(name, fv.String()))
		case diskFields[name] && fv.Kind() == reflect.Uint32:
			*out = append(*out, objectRef{field: name, disk: uint32(fv.Uint())})
		default:
			collectModelObjects(fv, out, depth+1)
		}
	}
}

// checkObjects returns why the disks and volumes a request names are not
// all the rule's to touch, or "" when they are (or the rule does not
// confine them).
func (r *rule) checkObjects(ctx context.Context, p *Policy, c Call) string {
	o := r.Objects
	if o == nil {
		return ""
	}
	var refs []objectRef
	switch {
	case c.Request != nil:
		refs = requestObjects(c.Request)
	case c.Model != nil:
		refs = modelObjects(c.Model)
	default:
		return fmt.Sprintf("rule %q confines disks and volumes, and the request cannot be inspected", r.Name)
	}
	if len(refs) == 0 {
		return ""
	}
	if c.Objects == nil {
		return fmt.Sprintf("rule %q confines disks and volumes, and the daemon cannot ask this host about them", r.Name)
	}
	for _, ref := range refs {
		var reason string
		switch {
		case ref.bad != "":
			reason = fmt.Sprintf("%s %q is not a disk number", ref.field, ref.bad)
		case ref.volume != "":
			reason = r.checkVolume(ctx, p, c.Objects, ref.volume)
		default:
			reason = r.checkDisk(ctx, p, c.Objects, ref.disk)
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
		return fmt.Sprintf("cannot tell the disk of volume %s (%v), so it is outside the objects", id, err)
	}
	if reason := r.checkDiskFacts(ctx, h, d); reason != "" {
		return "volume " + id + " is on " + reason
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
		return fmt.Sprintf("cannot tell where volume %s is mounted (%v), so it is outside the objects", id, err)
	}
	for _, m := range mounts {
		cleaned, err := p.style.Clean(m)
		if err != nil || !slices.ContainsFunc(r.roots, func(root string) bool { return p.style.Within(cleaned, root) }) {
			return fmt.Sprintf("volume %s, mounted at %s, outside the path roots %v", id, m, r.roots)
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
