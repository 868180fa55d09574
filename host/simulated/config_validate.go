package simulated

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

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
	if !nvme && (d.NamespaceID != 0 || d.Product != "") {
		return errors.New("namespaceID and product are for disks on the NVMe bus (busType NVMe)")
	}
	if len(d.Product) > 16 {
		return fmt.Errorf("product %q is longer than a SCSI product ID (16 characters)", d.Product)
	}
	for _, r := range d.Product {
		if r <= 0x20 || r >= 0x7f {
			return fmt.Errorf("product %q has a character a device instance ID cannot hold (%q)", d.Product, r)
		}
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
