package simulated

import (
	"fmt"
	"strconv"
	"strings"
)

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
		case "offline", "partitioned", "readonly":
			b := true
			if hasVal {
				b, err = strconv.ParseBool(val)
			}
			switch key {
			case "offline":
				d.Offline = b
			case "readonly":
				d.ReadOnly = b
			default:
				d.Partitioned = b
			}
		default:
			return DiskSpec{}, fmt.Errorf("disk %q: unknown key %q (want size, number, bus, location, page83, serial, fs, letter, offline, partitioned, readonly)", s, key)
		}
		if err != nil {
			return DiskSpec{}, fmt.Errorf("disk %q: %s: %w", s, key, err)
		}
		if !hasVal && key != "offline" && key != "partitioned" && key != "readonly" {
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
