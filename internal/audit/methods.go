package audit

// Kind says whether a method changes the node.
type Kind int

const (
	// Unclassified is a method this table does not know. It is audited
	// like a mutating call: a new method is audited until someone decides
	// otherwise.
	Unclassified Kind = iota
	// Read methods only report state.
	Read
	// Mutate methods change the node: disks, volumes, files, mappings,
	// sessions, services, secrets.
	Mutate
)

// String names the kind as audit records do.
func (k Kind) String() string {
	switch k {
	case Read:
		return "read"
	case Mutate:
		return "mutate"
	}
	return "unclassified"
}

// methods classifies every method of every API version, current and
// upstream's older ones, by name: a name means the same thing in every
// version. TestEveryMethodClassified checks that every method the daemon
// serves is here.
var methods = map[string]Kind{
	// disk
	"ListDiskLocations":   Read,
	"ListDiskIDs":         Read,
	"GetDiskNumberByName": Read,
	"GetDiskStats":        Read,
	"DiskStats":           Read,
	"GetDiskState":        Read,
	"GetAttachState":      Read,
	"PartitionDisk":       Mutate,
	"Rescan":              Mutate, // rescans the storage buses: new devices appear
	"SetDiskState":        Mutate,
	"SetAttachState":      Mutate,

	// volume
	"ListVolumesOnDisk":                Read,
	"IsVolumeFormatted":                Read,
	"GetVolumeStats":                   Read,
	"VolumeStats":                      Read,
	"GetDiskNumberFromVolumeID":        Read,
	"GetVolumeDiskNumber":              Read,
	"GetVolumeIDFromTargetPath":        Read,
	"GetVolumeIDFromMountPoint":        Read,
	"GetVolumeIDFromMount":             Read,
	"GetClosestVolumeIDFromTargetPath": Read,
	"MountVolume":                      Mutate,
	"UnmountVolume":                    Mutate,
	"DismountVolume":                   Mutate,
	"FormatVolume":                     Mutate,
	"ResizeVolume":                     Mutate,
	"WriteVolumeCache":                 Mutate, // flushes to disk

	// filesystem
	"PathExists":    Read,
	"PathValid":     Read,
	"IsSymlink":     Read,
	"IsMountPoint":  Read,
	"Mkdir":         Mutate,
	"Rmdir":         Mutate,
	"RmdirContents": Mutate,
	"CreateSymlink": Mutate,
	"LinkPath":      Mutate,

	// smb
	"NewSmbGlobalMapping":    Mutate,
	"RemoveSmbGlobalMapping": Mutate,

	// iscsi
	"ListTargetPortals":    Read,
	"DiscoverTargetPortal": Read, // asks the portal which targets it offers; keeps nothing
	"GetTargetDisks":       Read,
	"AddTargetPortal":      Mutate,
	"RemoveTargetPortal":   Mutate,
	"ConnectTarget":        Mutate,
	"DisconnectTarget":     Mutate,
	"SetMutualChapSecret":  Mutate,

	// system
	"GetBIOSSerialNumber": Read,
	"GetService":          Read,
	"StartService":        Mutate,
	"StopService":         Mutate,
}

// Classify returns the kind of a method, by its name (PartitionDisk).
func Classify(method string) Kind { return methods[method] }
