package simulated

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
)

// Defaults New applies to zero Config fields.
const (
	// DefaultBIOSSerial is the BIOS serial number when Config.BIOSSerial is
	// empty.
	DefaultBIOSSerial = "SIMULATED-0001"
	// DefaultSystemDiskSize is the size of the system disk (disk 0, drive
	// C:) when Config.SystemDiskSize is 0.
	DefaultSystemDiskSize Size = 128 << 30
	// DefaultKubeletDir is the working directory DefaultConfig uses when it
	// is given none.
	DefaultKubeletDir = `C:\var\lib\kubelet`
)

// Limits on disk sizes.
const (
	// MinDiskSize is the smallest disk the simulated host accepts: room for
	// the GPT areas and a small data partition.
	MinDiskSize Size = 8 << 20
	// MaxDiskSize is the largest disk the simulated host accepts (256 TiB,
	// the NTFS limit with 64 KiB clusters).
	MaxDiskSize Size = 256 << 40
	// minSystemDiskSize leaves room for the EFI, MSR and C: partitions.
	minSystemDiskSize Size = 1 << 30
)

// Config describes the simulated host's world at start. The zero Config is
// valid: New gives it a system disk 0 holding C:, no data disks, shares or
// iSCSI targets, the default services and the default BIOS serial. JSON
// field names are those in the tags; see the package documentation for an
// example file.
type Config struct {
	// WorkingDirs are created as directories at start. A daemon passes the
	// same list it gives its path policy (the kubelet directory and every
	// --working-dir). Each must be on a drive some volume provides (C: by
	// default).
	WorkingDirs []string `json:"workingDirs,omitempty"`
	// NoSystemDisk leaves out the system disk 0 and drive C:. Working
	// directories then need a disk with a DriveLetter.
	NoSystemDisk bool `json:"noSystemDisk,omitempty"`
	// SystemDiskSize is the size of the system disk; 0 means
	// DefaultSystemDiskSize. At least 1 GiB.
	SystemDiskSize Size `json:"systemDiskSize,omitempty"`
	// Disks are the data disks attached at start.
	Disks []DiskSpec `json:"disks,omitempty"`
	// SMBShares are the SMB shares the simulated network offers.
	SMBShares []SMBShare `json:"smbShares,omitempty"`
	// ISCSITargets are the iSCSI targets the simulated network offers.
	ISCSITargets []ISCSITarget `json:"iscsiTargets,omitempty"`
	// BIOSSerial is the BIOS serial number; "" means DefaultBIOSSerial.
	BIOSSerial string `json:"biosSerial,omitempty"`
	// Services are the host's services. nil means DefaultServices(); an
	// empty, non-nil list (JSON []) means none.
	Services []ServiceSpec `json:"services,omitempty"`
	// Seed, when not 0, makes the generated volume GUIDs deterministic, for
	// golden tests. 0 draws them from crypto/rand.
	Seed uint64 `json:"seed,omitempty"`
}

// DiskSpec describes a disk: a data disk in Config.Disks or AddDisk, or an
// iSCSI LUN in ISCSITarget.LUNs. Only Size is required; a disk is RAW
// (uninitialised), online and without a location unless the spec says
// otherwise.
type DiskSpec struct {
	// Number is the disk number to use; nil picks the lowest free one, as
	// Windows does. Not allowed for iSCSI LUNs (they get numbers when a
	// session attaches them).
	Number *uint32 `json:"number,omitempty"`
	// Size is the disk's size, MinDiskSize to MaxDiskSize.
	Size Size `json:"size"`
	// BusType is the bus the disk is on, without case: "SCSI" (or "", the
	// default; also what iSCSI LUNs are) or "NVMe". It decides what
	// Location means and how ListDiskLocations reports it, as on Windows.
	BusType string `json:"busType,omitempty"`
	// Location is where the disk sits on its bus, or "" for a disk
	// ListDiskLocations does not report.
	//
	// On the SCSI bus it is "adapter:bus:target:lun" in decimal, e.g.
	// "1:0:0:3". ListDiskLocations reports Adapter, Target and LUNID from
	// it and Bus "", as Windows does for SCSI disks (upstream's parse of
	// MSFT_Disk.Location drops its "Port N" part); ListDisks shows all four.
	//
	// On the NVMe bus it is the PCI bus number of the disk's controller,
	// 0 to 255, e.g. "2". ListDiskLocations reports Adapter "0", Bus that
	// number and Target and LUNID "", which is what upstream parses out of
	// an NVMe disk's MSFT_Disk.Location ("Integrated : Bus 2 : Device 0 :
	// Function 0 : Adapter 0") and what the Windows backend reports for a
	// disk on the NVMe bus. In particular LUNID is never "0", so a driver
	// looking for LUN 0 does not pick an NVMe disk.
	Location string `json:"location,omitempty"`
	// NamespaceID is an NVMe disk's namespace ID as Windows numbers it
	// (the number ending its device instance ID), 1 or more, or 0 for
	// none; NVMe bus only. ListDiskLocations reports it with Product in
	// the model (groups/disk.DiskLocation.NVMeNamespaceID), never on the
	// wire, so that library mode's mounter can find Azure's NVMe data
	// disks by LUN (docs/compatibility.md, "Azure NVMe LUNs").
	NamespaceID uint32 `json:"namespaceID,omitempty"`
	// Product is an NVMe disk's product as its device instance ID spells
	// it, e.g. "msft_nvme_accele" for Azure's; NVMe bus only, at most 16
	// printable characters (the SCSI product ID's length).
	Product string `json:"product,omitempty"`
	// Page83 is the SCSI VPD page 0x83 identifier ListDiskIDs reports.
	Page83 string `json:"page83,omitempty"`
	// Serial is the serial number ListDiskIDs reports.
	Serial string `json:"serial,omitempty"`
	// Offline attaches the disk offline, as Windows does with the SAN
	// policy OfflineShared.
	Offline bool `json:"offline,omitempty"`
	// ReadOnly attaches the disk with its read-only attribute set
	// (MSFT_Disk.IsReadOnly), as a vSphere PVSCSI disk can come back
	// after re-attach (kubernetes-csi/csi-proxy#437).
	ReadOnly bool `json:"readOnly,omitempty"`
	// Partitioned initialises the disk with GPT and one data partition
	// holding a RAW volume, as PartitionDisk would.
	Partitioned bool `json:"partitioned,omitempty"`
	// FileSystem "NTFS" also formats that volume (implies Partitioned);
	// "" leaves it RAW.
	FileSystem string `json:"fileSystem,omitempty"`
	// DriveLetter ("D" or "D:") gives the formatted volume a drive letter,
	// so working directories can live on it. Needs FileSystem; not allowed
	// for iSCSI LUNs.
	DriveLetter string `json:"driveLetter,omitempty"`
}

// SMBShare is a share the simulated network offers.
type SMBShare struct {
	// Path is the share root, \\server\share.
	Path string `json:"path"`
	// Username is the account allowed to map the share, compared without
	// case (DOMAIN\user or user@domain, as the caller spells it). "" lets
	// anyone map it with any credentials (guest access).
	Username string `json:"username,omitempty"`
	// Password is the account's password. It never appears in errors.
	Password string `json:"password,omitempty"`
	// Dirs are directories that exist on the share at start, relative to
	// its root ("pvc-1", "a\b").
	Dirs []string `json:"dirs,omitempty"`
}

// ISCSITarget is an iSCSI target the simulated network offers.
type ISCSITarget struct {
	// Portal is where the target answers; port 0 means 3260. In JSON:
	// {"address": "10.0.0.5", "port": 3260}.
	Portal iscsi.Portal `json:"portal"`
	// IQN is the target's name; unique across targets.
	IQN string `json:"iqn"`
	// ChapUsername and ChapSecret, when ChapSecret is set, make the target
	// require CHAP: logins must give this user (when set) and secret.
	// Secrets are 12 to 16 bytes, as Windows requires.
	ChapUsername string `json:"chapUsername,omitempty"`
	ChapSecret   string `json:"chapSecret,omitempty"`
	// MutualSecret, when set, lets initiators ask for mutual CHAP: the
	// target proves itself with this secret, which must equal the
	// initiator's secret from SetMutualChapSecret. Needs ChapSecret and
	// must differ from it.
	MutualSecret string `json:"mutualSecret,omitempty"`
	// LUNs become disks, in this order, while a session is connected.
	// Their contents persist across sessions.
	LUNs []DiskSpec `json:"luns,omitempty"`
}

// ServiceSpec describes a host service.
type ServiceSpec struct {
	// Name is the service's key name, unique without case.
	Name string `json:"name"`
	// DisplayName is what GetService reports; "" means Name.
	DisplayName string `json:"displayName,omitempty"`
	// StartType is "boot", "system", "automatic" (or "auto"), "manual" or
	// "disabled", without case; "" means "manual".
	StartType string `json:"startType,omitempty"`
	// Status is "running" or "stopped", without case; "" means "stopped".
	Status string `json:"status,omitempty"`
	// DependsOn names the services this one needs running. They must
	// exist, must not form a cycle, and a running service's dependencies
	// must be running.
	DependsOn []string `json:"dependsOn,omitempty"`
}

// DefaultServices returns the services New uses when Config.Services is
// nil: a small, realistic set with a dependency chain (LanmanServer needs
// SamSS; Netlogon needs LanmanWorkstation, which needs NSI) and a disabled
// service.
func DefaultServices() []ServiceSpec {
	return []ServiceSpec{
		{Name: "NSI", DisplayName: "Network Store Interface Service", StartType: "automatic", Status: "running"},
		{Name: "LanmanWorkstation", DisplayName: "Workstation", StartType: "automatic", Status: "running", DependsOn: []string{"NSI"}},
		{Name: "SamSS", DisplayName: "Security Accounts Manager", StartType: "automatic", Status: "running"},
		{Name: "LanmanServer", DisplayName: "Server", StartType: "automatic", Status: "running", DependsOn: []string{"SamSS"}},
		{Name: "Netlogon", DisplayName: "Netlogon", StartType: "manual", Status: "stopped", DependsOn: []string{"LanmanWorkstation"}},
		{Name: "MSiSCSI", DisplayName: "Microsoft iSCSI Initiator Service", StartType: "manual", Status: "stopped"},
		{Name: "W32Time", DisplayName: "Windows Time", StartType: "manual", Status: "running"},
		{Name: "defragsvc", DisplayName: "Optimize drives", StartType: "manual", Status: "stopped"},
		{Name: "vds", DisplayName: "Virtual Disk", StartType: "manual", Status: "stopped"},
		{Name: "RemoteRegistry", DisplayName: "Remote Registry", StartType: "disabled", Status: "stopped"},
	}
}

// DefaultConfig returns a ready-made world: the system disk 0 (C:, 128
// GiB), the given working directories (DefaultKubeletDir when none), two
// RAW data disks of 1 GiB and 2 GiB with locations 1:0:0:0 and 1:0:0:1,
// page 0x83 IDs and serial numbers, the default services and the default
// BIOS serial.
func DefaultConfig(workingDirs []string) Config {
	if len(workingDirs) == 0 {
		workingDirs = []string{DefaultKubeletDir}
	}
	return Config{
		WorkingDirs:    append([]string(nil), workingDirs...),
		SystemDiskSize: DefaultSystemDiskSize,
		Disks: []DiskSpec{
			{Size: 1 << 30, Location: "1:0:0:0", Page83: "60022480000000000000000000000001", Serial: "SIM-DATA-0001"},
			{Size: 2 << 30, Location: "1:0:0:1", Page83: "60022480000000000000000000000002", Serial: "SIM-DATA-0002"},
		},
		BIOSSerial: DefaultBIOSSerial,
		Services:   DefaultServices(),
	}
}

// LoadConfig reads a JSON Config from path and validates it. Unknown
// fields are errors, so a misspelt key does not silently do nothing.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("simulated host config: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return Config{}, fmt.Errorf("simulated host config %s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig decodes a JSON Config (the format LoadConfig reads) and
// validates it.
func ParseConfig(data []byte) (Config, error) {
	var cfg Config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return Config{}, fmt.Errorf("decode JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Config{}, errors.New("decode JSON: unexpected data after the configuration object")
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}
