package policy

// ArgKind says what an argument of a request names, of the things a rule
// can confine.
type ArgKind uint8

// The kinds of argument a rule confines.
const (
	// ArgPath is a host path, confined by a rule's pathRoots.
	ArgPath ArgKind = iota + 1
	// ArgDisk is a disk number, confined by a rule's objects.
	ArgDisk
	// ArgVolume is a volume ID, confined by a rule's objects.
	ArgVolume
)

// Arg is one argument of a request that rules confine: a path, a disk or
// a volume. The call gate reads them from the group model request by the
// declarations on its type (the `guard` struct tags, which convgen turns
// into the gate's accessors), so every API version that converts to the
// model is confined alike, whatever its wire spells the field.
type Arg struct {
	// Field is the model field's name in snake_case (target_path,
	// disk_number), for messages.
	Field string
	// Kind is what the argument names.
	Kind ArgKind
	// Value is the path or volume ID as sent; "" for a disk.
	Value string
	// Disk is the disk number of an ArgDisk.
	Disk uint32
}
