package simulated

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
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
	// Page83 is the SCSI VPD page 0x83 identifier ListDiskIDs reports.
	Page83 string `json:"page83,omitempty"`
	// Serial is the serial number ListDiskIDs reports.
	Serial string `json:"serial,omitempty"`
	// Offline attaches the disk offline, as Windows does with the SAN
	// policy OfflineShared.
	Offline bool `json:"offline,omitempty"`
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

// Validate checks the configuration and reports every problem it finds.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	letters := map[byte]string{}
	if !c.NoSystemDisk {
		letters['C'] = "the system disk"
		if c.SystemDiskSize != 0 && (c.SystemDiskSize < minSystemDiskSize || c.SystemDiskSize > MaxDiskSize) {
			bad("systemDiskSize %s is out of range (%s to %s)", c.SystemDiskSize, minSystemDiskSize, MaxDiskSize)
		}
	}
	numbers := map[uint32]string{}
	if !c.NoSystemDisk {
		numbers[0] = "the system disk"
	}
	for i, d := range c.Disks {
		where := fmt.Sprintf("disks[%d]", i)
		if err := d.validate(false); err != nil {
			bad("%s: %w", where, err)
			continue
		}
		if d.Number != nil {
			if other, dup := numbers[*d.Number]; dup {
				bad("%s: disk number %d is already used by %s", where, *d.Number, other)
			}
			numbers[*d.Number] = where
		}
		if l, _ := driveLetter(d.DriveLetter); l != 0 {
			if other, dup := letters[l]; dup {
				bad("%s: drive letter %c: is already used by %s", where, l, other)
			}
			letters[l] = where
		}
	}
	for i, wd := range c.WorkingDirs {
		p, err := hostpath.Windows.Clean(wd)
		if err != nil {
			bad("workingDirs[%d]: %w", i, err)
			continue
		}
		if _, ok := letters[p[0]]; !ok {
			bad("workingDirs[%d] %q is on drive %c:, which no volume provides", i, wd, p[0])
		}
	}

	shares := map[string]bool{}
	for i, s := range c.SMBShares {
		where := fmt.Sprintf("smbShares[%d]", i)
		root, full, err := smb.ParseRemotePath(s.Path)
		if err != nil {
			bad("%s: %w", where, err)
			continue
		}
		if !strings.EqualFold(root, full) {
			bad(`%s: path %q is not a share root \\server\share`, where, s.Path)
		}
		if shares[root] {
			bad("%s: share %s is listed twice", where, root)
		}
		shares[root] = true
		for j, d := range s.Dirs {
			if _, err := shareDir(d); err != nil {
				bad("%s.dirs[%d]: %w", where, j, err)
			}
		}
	}

	iqns := map[string]bool{}
	for i, t := range c.ISCSITargets {
		if err := t.validate(); err != nil {
			bad("iscsiTargets[%d]: %w", i, err)
			continue
		}
		k := strings.ToLower(t.IQN)
		if iqns[k] {
			bad("iscsiTargets[%d]: iqn %s is listed twice", i, t.IQN)
		}
		iqns[k] = true
	}

	if err := validateServices(c.Services); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid simulated host configuration: %w", err)
	}
	return nil
}

// validate checks one disk spec; lun reports a spec for an iSCSI LUN.
func (d DiskSpec) validate(lun bool) error {
	if d.Size < MinDiskSize || d.Size > MaxDiskSize {
		return fmt.Errorf("size %s is out of range (%s to %s)", d.Size, MinDiskSize, MaxDiskSize)
	}
	nvme, err := parseBusType(d.BusType)
	if err != nil {
		return err
	}
	if _, err := parseLocation(d.Location, nvme); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"page83", d.Page83}, {"serial", d.Serial}} {
		if len(f.v) > 256 {
			return fmt.Errorf("%s is %d bytes long, the limit is 256", f.name, len(f.v))
		}
		for _, r := range f.v {
			if r < 0x20 || r == 0x7f {
				return fmt.Errorf("%s %q contains a control character", f.name, f.v)
			}
		}
	}
	if _, err := fileSystemName(d.FileSystem); err != nil {
		return err
	}
	l, err := driveLetter(d.DriveLetter)
	if err != nil {
		return err
	}
	if l != 0 && d.FileSystem == "" {
		return fmt.Errorf("driveLetter %s needs fileSystem NTFS", d.DriveLetter)
	}
	if lun {
		if d.Number != nil {
			return errors.New("an iSCSI LUN cannot have a disk number; it gets one when a session attaches it")
		}
		if l != 0 {
			return errors.New("an iSCSI LUN cannot have a drive letter")
		}
		if nvme {
			return errors.New("an iSCSI LUN is not on the NVMe bus; leave busType empty")
		}
	}
	return nil
}

func (t ISCSITarget) validate() error {
	addr := strings.Trim(t.Portal.Address, "[]")
	if addr == "" {
		return errors.New("portal.address is empty")
	}
	if _, err := iscsi.ParsePortal(&iscsi.TargetPortal{TargetAddress: addr, TargetPort: t.Portal.Port}); err != nil {
		return err
	}
	if err := iscsi.CheckIQN(t.IQN); err != nil {
		return err
	}
	if t.ChapUsername != "" && t.ChapSecret == "" {
		return errors.New("chapUsername is set but chapSecret is empty")
	}
	for _, s := range []struct{ name, v string }{{"chapSecret", t.ChapSecret}, {"mutualSecret", t.MutualSecret}} {
		if s.v != "" && (len(s.v) < 12 || len(s.v) > 16) {
			return fmt.Errorf("%s must be 12 to 16 bytes long, not %d", s.name, len(s.v))
		}
	}
	if t.MutualSecret != "" {
		if t.ChapSecret == "" {
			return errors.New("mutualSecret needs chapSecret: mutual CHAP is one-way CHAP plus the target's proof")
		}
		if t.MutualSecret == t.ChapSecret {
			return errors.New("mutualSecret must differ from chapSecret, as Windows requires")
		}
	}
	for i, l := range t.LUNs {
		if err := l.validate(true); err != nil {
			return fmt.Errorf("luns[%d]: %w", i, err)
		}
	}
	return nil
}

func validateServices(specs []ServiceSpec) error {
	var errs []error
	byName := map[string]ServiceSpec{}
	for i, s := range specs {
		if err := system.CheckServiceName(s.Name); err != nil {
			errs = append(errs, fmt.Errorf("services[%d]: %w", i, err))
			continue
		}
		k := strings.ToLower(s.Name)
		if _, dup := byName[k]; dup {
			errs = append(errs, fmt.Errorf("services[%d]: service %q is listed twice", i, s.Name))
			continue
		}
		st, err1 := parseStartType(s.StartType)
		status, err2 := parseStatus(s.Status)
		if err := errors.Join(err1, err2); err != nil {
			errs = append(errs, fmt.Errorf("services[%d] %q: %w", i, s.Name, err))
			continue
		}
		if st == system.StartDisabled && status == system.StatusRunning {
			errs = append(errs, fmt.Errorf("services[%d] %q: a disabled service cannot be running", i, s.Name))
		}
		byName[k] = s
	}
	for _, s := range byName {
		status, _ := parseStatus(s.Status)
		for _, d := range s.DependsOn {
			dep, ok := byName[strings.ToLower(d)]
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("service %q depends on %q, which is not listed", s.Name, d))
			case status == system.StatusRunning:
				if ds, _ := parseStatus(dep.Status); ds != system.StatusRunning {
					errs = append(errs, fmt.Errorf("service %q is running but its dependency %q is not", s.Name, d))
				}
			}
		}
	}
	// Cycles: depth-first search with colours.
	const (
		white = iota
		grey
		black
	)
	colour := map[string]int{}
	var visit func(k string) bool
	visit = func(k string) bool {
		switch colour[k] {
		case grey:
			return false
		case black:
			return true
		}
		colour[k] = grey
		for _, d := range byName[k].DependsOn {
			if _, ok := byName[strings.ToLower(d)]; ok && !visit(strings.ToLower(d)) {
				return false
			}
		}
		colour[k] = black
		return true
	}
	for k, s := range byName {
		if !visit(k) {
			errs = append(errs, fmt.Errorf("service %q is part of a dependency cycle", s.Name))
			break
		}
	}
	return errors.Join(errs...)
}

func parseStartType(s string) (system.StartType, error) {
	switch strings.ToLower(s) {
	case "boot":
		return system.StartBoot, nil
	case "system":
		return system.StartSystem, nil
	case "automatic", "auto":
		return system.StartAutomatic, nil
	case "manual", "":
		return system.StartManual, nil
	case "disabled":
		return system.StartDisabled, nil
	}
	return 0, fmt.Errorf("startType %q is not boot, system, automatic, manual or disabled", s)
}

func parseStatus(s string) (system.ServiceStatus, error) {
	switch strings.ToLower(s) {
	case "running":
		return system.StatusRunning, nil
	case "stopped", "":
		return system.StatusStopped, nil
	}
	return 0, fmt.Errorf("status %q is not running or stopped", s)
}

// fileSystemName canonicalises a DiskSpec.FileSystem.
func fileSystemName(fs string) (string, error) {
	switch strings.ToUpper(fs) {
	case "":
		return "", nil
	case "NTFS":
		return "NTFS", nil
	}
	return "", fmt.Errorf("fileSystem %q is not supported (only NTFS)", fs)
}

// driveLetter parses "D" or "D:" into 'D'; "" gives 0.
func driveLetter(s string) (byte, error) {
	t := strings.TrimSuffix(s, ":")
	if t == "" {
		if s != "" {
			return 0, fmt.Errorf("driveLetter %q is not a letter", s)
		}
		return 0, nil
	}
	if c := t[0] | 0x20; len(t) != 1 || c < 'a' || c > 'z' {
		return 0, fmt.Errorf("driveLetter %q is not a single letter A to Z", s)
	}
	return strings.ToUpper(t)[0], nil
}

// parseBusType reads a DiskSpec.BusType: whether the disk is on the NVMe
// bus.
func parseBusType(s string) (nvme bool, err error) {
	switch strings.ToUpper(s) {
	case "", "SCSI":
		return false, nil
	case "NVME":
		return true, nil
	}
	return false, fmt.Errorf("busType %q is not SCSI or NVMe", s)
}

// location is a parsed DiskSpec.Location: "adapter:bus:target:lun" on the
// SCSI bus; on the NVMe bus only the bus element, the PCI bus number, is
// set.
type location [4]string

// parseLocation parses a DiskSpec.Location of a disk on the SCSI or, with
// nvme, the NVMe bus; "" gives nil.
func parseLocation(s string, nvme bool) (*location, error) {
	if s == "" {
		return nil, nil
	}
	if nvme {
		n, err := strconv.ParseUint(s, 10, 8)
		if err != nil {
			return nil, fmt.Errorf("location %q of an NVMe disk is not a PCI bus number (0 to 255)", s)
		}
		return &location{1: strconv.FormatUint(n, 10)}, nil
	}
	parts := strings.Split(s, ":")
	if len(parts) != 4 {
		return nil, fmt.Errorf("location %q is not adapter:bus:target:lun", s)
	}
	var l location
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("location %q: %q is not a decimal number", s, p)
		}
		l[i] = strconv.FormatUint(n, 10)
	}
	return &l, nil
}

// shareDir validates a directory relative to a share root and returns its
// elements.
func shareDir(d string) ([]string, error) {
	c, err := hostpath.Windows.Clean(`C:\` + strings.TrimLeft(strings.ReplaceAll(d, "/", `\`), `\`))
	if err != nil {
		return nil, fmt.Errorf("dir %q: %w", d, err)
	}
	if len(c) == 3 {
		return nil, fmt.Errorf("dir %q is empty", d)
	}
	return strings.Split(c[3:], `\`), nil
}

// Size is a byte count. In JSON and flags it is a number of bytes or a
// string with a binary suffix: "512KiB", "100MiB", "10GiB", "1TiB" (K, M,
// G and T alone mean the same; decimal KB, MB, GB are refused as
// ambiguous).
type Size int64

var sizeUnits = []struct {
	suffixes []string
	shift    uint
}{
	{[]string{"tib", "t"}, 40},
	{[]string{"gib", "g"}, 30},
	{[]string{"mib", "m"}, 20},
	{[]string{"kib", "k"}, 10},
	{[]string{"b", ""}, 0},
}

// ParseSize parses a size such as "1073741824", "1024MiB" or "1GiB".
func ParseSize(s string) (Size, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("size %q does not start with a number of bytes", s)
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: %w", s, err)
	}
	for _, u := range sizeUnits {
		for _, suf := range u.suffixes {
			if unit != suf {
				continue
			}
			if n > math.MaxInt64>>u.shift {
				return 0, fmt.Errorf("size %q is too large", s)
			}
			return Size(n << u.shift), nil
		}
	}
	switch unit {
	case "kb", "mb", "gb", "tb":
		return 0, fmt.Errorf("size %q: decimal units are ambiguous; use KiB, MiB, GiB or TiB", s)
	}
	return 0, fmt.Errorf("size %q has an unknown unit %q (want B, KiB, MiB, GiB or TiB)", s, unit)
}

// String renders the size with the largest binary unit that divides it
// exactly: "10GiB", "1536MiB", "123B".
func (s Size) String() string {
	for _, u := range sizeUnits[:4] {
		if s != 0 && s%(1<<u.shift) == 0 {
			return strconv.FormatInt(int64(s>>u.shift), 10) + strings.ToUpper(u.suffixes[0][:1]) + "iB"
		}
	}
	return strconv.FormatInt(int64(s), 10) + "B"
}

// MarshalJSON writes the size as a string such as "10GiB".
func (s Size) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON accepts a number of bytes or a size string.
func (s *Size) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		v, err := ParseSize(str)
		if err != nil {
			return err
		}
		*s = v
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("size %s is neither a whole number of bytes nor a string such as \"10GiB\"", b)
	}
	*s = Size(n)
	return nil
}

// ParseDiskFlag parses a disk description from a command-line flag such as
//
//	--sim-disk=size=10GiB,page83=600224801234abcd,serial=SN1,location=0:0:1:0
//
// The value is a comma-separated list of key=value items; size is
// required. Keys:
//
//	size=SIZE        bytes or a binary suffix (KiB, MiB, GiB, TiB)
//	number=N         disk number (default: the lowest free one)
//	bus=NVMe         the bus: SCSI (the default) or NVMe
//	location=A:B:T:L adapter:bus:target:lun, decimal; on the NVMe bus the
//	                 PCI bus number (location=2)
//	page83=ID        SCSI page 0x83 identifier
//	serial=SN        serial number
//	fs=NTFS          partition and format the disk
//	letter=D         drive letter of the formatted volume (needs fs)
//	offline          attach the disk offline (also offline=true|false)
//	partitioned      give it GPT and a RAW data volume (also =true|false)
//
// Values cannot contain commas.
func ParseDiskFlag(s string) (DiskSpec, error) {
	var d DiskSpec
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return DiskSpec{}, fmt.Errorf("disk %q: empty item", s)
		}
		key, val, hasVal := strings.Cut(item, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if seen[key] {
			return DiskSpec{}, fmt.Errorf("disk %q: %s is given twice", s, key)
		}
		seen[key] = true
		var err error
		switch key {
		case "size":
			d.Size, err = ParseSize(val)
		case "number":
			var n uint64
			if n, err = strconv.ParseUint(val, 10, 32); err == nil {
				v := uint32(n)
				d.Number = &v
			}
		case "bus":
			d.BusType = val
		case "location":
			d.Location = val
		case "page83":
			d.Page83 = val
		case "serial":
			d.Serial = val
		case "fs":
			d.FileSystem = val
		case "letter":
			d.DriveLetter = val
		case "offline", "partitioned":
			b := true
			if hasVal {
				b, err = strconv.ParseBool(val)
			}
			if key == "offline" {
				d.Offline = b
			} else {
				d.Partitioned = b
			}
		default:
			return DiskSpec{}, fmt.Errorf("disk %q: unknown key %q (want size, number, bus, location, page83, serial, fs, letter, offline, partitioned)", s, key)
		}
		if err != nil {
			return DiskSpec{}, fmt.Errorf("disk %q: %s: %w", s, key, err)
		}
		if !hasVal && key != "offline" && key != "partitioned" {
			return DiskSpec{}, fmt.Errorf("disk %q: %s needs a value (%s=...)", s, key, key)
		}
	}
	if !seen["size"] {
		return DiskSpec{}, fmt.Errorf("disk %q: size is required (size=10GiB)", s)
	}
	if err := d.validate(false); err != nil {
		return DiskSpec{}, fmt.Errorf("disk %q: %w", s, err)
	}
	return d, nil
}

// DiskFlags collects repeated disk flags; it implements flag.Value, so a
// daemon can write flag.Var(&disks, "sim-disk", "...").
type DiskFlags []DiskSpec

// String lists the disks' sizes.
func (f *DiskFlags) String() string {
	if f == nil {
		return ""
	}
	var parts []string
	for _, d := range *f {
		parts = append(parts, "size="+d.Size.String())
	}
	return strings.Join(parts, " ")
}

// Set parses one flag value with ParseDiskFlag and appends it.
func (f *DiskFlags) Set(s string) error {
	d, err := ParseDiskFlag(s)
	if err != nil {
		return err
	}
	*f = append(*f, d)
	return nil
}
