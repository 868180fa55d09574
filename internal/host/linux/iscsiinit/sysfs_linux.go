//go:build linux

package iscsiinit

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
)

// DiskNumberFunc returns the disk number the proxy reports for a block
// device, by kernel name ("sdb"). The daemon wires the disk group's scheme
// (internal/host/linux/blockdev) so that GetTargetDisks and the disk group agree.
type DiskNumberFunc func(blockDeviceName string) (uint32, error)

// DiskSeqNumber is the default DiskNumberFunc: the device's diskseq
// (/sys/block/<name>/diskseq, Linux 5.15+), a number the kernel never
// reuses within one boot, as internal/host/linux/blockdev numbers disks. blockdev
// numbers disks without a diskseq (kernels before 5.15, which reuse sdX
// names and device numbers when a LUN comes back), or with one of 2^31 or
// more, itself, from a table only it holds; DiskSeqNumber cannot know
// those numbers and refuses such disks (errdefs.ErrFailedPrecondition
// without diskseq, errdefs.ErrOutOfRange above 2^31), rather than
// inventing numbers the disk group would not answer to. The daemon passes
// blockdev's mapping to New, which numbers every disk. sysfsRoot is
// normally "/sys".
func DiskSeqNumber(sysfsRoot string) DiskNumberFunc {
	return func(name string) (uint32, error) {
		if err := checkPathName("block device name", name); err != nil {
			return 0, err
		}
		b, err := os.ReadFile(filepath.Join(sysfsRoot, "block", name, "diskseq"))
		if errors.Is(err, fs.ErrNotExist) {
			if _, derr := os.Stat(filepath.Join(sysfsRoot, "block", name)); derr == nil {
				return 0, errdefs.Errorf(errdefs.ErrFailedPrecondition, "disk %s has no diskseq (a kernel before 5.15): only the disk group can number it, and the iSCSI backend was built without its numbering (iscsiinit.New with a nil DiskNumberFunc)", name)
			}
			return 0, errdefs.Errorf(errdefs.ErrNotFound, "disk %s is gone", name)
		}
		if err != nil {
			return 0, fmt.Errorf("diskseq of %s: %w", name, err)
		}
		n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("diskseq of %s: %w", name, err)
		}
		if n > math.MaxInt32 {
			return 0, errdefs.Errorf(errdefs.ErrOutOfRange, "diskseq %d of %s is 2^31 or more; the disk group numbers such disks itself", n, name)
		}
		return uint32(n), nil
	}
}

// sessionBlockDevices returns the kernel names of the SCSI disks of every
// iSCSI session to iqn through portal p, from sysfs:
//
//	class/iscsi_session/sessionN/targetname              the target's IQN
//	class/iscsi_connection/connectionN:C/persistent_address and
//	  persistent_port                                      the portal
//	class/iscsi_session/sessionN/device/target*/H:C:T:L/block/sdX
//
// No session, like a session without disks (LUNs not yet scanned, or only
// a controller LUN), gives none.
func sessionBlockDevices(sysfsRoot, iqn string, p iscsi.Portal) ([]string, error) {
	sessions, err := filepath.Glob(filepath.Join(sysfsRoot, "class", "iscsi_session", "session*"))
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var names []string
	for _, s := range sessions {
		sid := strings.TrimPrefix(filepath.Base(s), "session")
		if _, err := strconv.Atoi(sid); err != nil {
			continue
		}
		if name, err := readAttr(filepath.Join(s, "targetname")); err != nil || name != iqn {
			continue
		}
		if !sessionUsesPortal(sysfsRoot, sid, p) {
			continue
		}
		blocks, err := filepath.Glob(filepath.Join(s, "device", "target*", "*:*:*:*", "block", "*"))
		if err != nil {
			return nil, err
		}
		for _, b := range blocks {
			if n := filepath.Base(b); !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

// sessionUsesPortal reports whether a connection of session sid goes to p.
// Addresses compare as IPs when both parse, else without case (a host name
// given at login stays a host name in sysfs).
func sessionUsesPortal(sysfsRoot, sid string, p iscsi.Portal) bool {
	conns, _ := filepath.Glob(filepath.Join(sysfsRoot, "class", "iscsi_connection", "connection"+sid+":*"))
	for _, c := range conns {
		addr, err := readAttr(filepath.Join(c, "persistent_address"))
		if err != nil || addr == "" {
			addr, err = readAttr(filepath.Join(c, "address"))
		}
		if err != nil {
			continue
		}
		port, err := readAttr(filepath.Join(c, "persistent_port"))
		if err != nil || port == "" {
			port, _ = readAttr(filepath.Join(c, "port"))
		}
		if port != strconv.Itoa(int(p.Port)) {
			continue
		}
		if sameAddress(addr, p.Address) {
			return true
		}
	}
	return false
}

func sameAddress(a, b string) bool {
	ia, ib := net.ParseIP(strings.Trim(a, "[]")), net.ParseIP(strings.Trim(b, "[]"))
	if ia != nil && ib != nil {
		return ia.Equal(ib)
	}
	return strings.EqualFold(a, b)
}

// readAttr reads a sysfs attribute without its trailing newline.
func readAttr(p string) (string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
