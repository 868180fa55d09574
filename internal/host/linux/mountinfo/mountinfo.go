// Package mountinfo reads the Linux mount table (/proc/self/mountinfo, see
// proc(5)) so the Linux backends can tell what is mounted where without
// running mount(8) or findmnt(8).
//
// Parse takes an io.Reader so tests feed it captured tables; Read reads the
// live table of the calling process, ReadFile that of another process's
// mount namespace.
package mountinfo

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Mount is one line of mountinfo.
type Mount struct {
	// ID and ParentID identify the mount and its parent.
	ID, ParentID int
	// Major and Minor are the device numbers of the mounted filesystem
	// (st_dev of files on it).
	Major, Minor uint32
	// Root is the path inside the filesystem that is mounted (not "/" for
	// bind mounts of a subdirectory).
	Root string
	// MountPoint is where it is mounted, unescaped.
	MountPoint string
	// Options are the per-mount options (rw, noatime, ...).
	Options string
	// FSType is the filesystem type (ext4, xfs, fuse.smbnetfs, ...).
	FSType string
	// Source is the mount source (/dev/loop0p1, //server/share, ...).
	Source string
	// SuperOptions are the per-superblock options.
	SuperOptions string
}

// Read parses /proc/self/mountinfo.
func Read() ([]Mount, error) { return ReadFile("/proc/self/mountinfo") }

// ReadFile parses a mountinfo file: /proc/<pid>/mountinfo shows the mount
// namespace of that process (another container's, or the host's as
// /proc/1/mountinfo with hostPID), not the caller's.
func ReadFile(path string) ([]Mount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read-only file: a close error changes nothing
	return Parse(f)
}

// Parse parses a mountinfo table.
func Parse(r io.Reader) ([]Mount, error) {
	var out []Mount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if text == "" {
			continue
		}
		m, err := parseLine(text)
		if err != nil {
			return nil, fmt.Errorf("mountinfo line %d: %w", line, err)
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

func parseLine(s string) (Mount, error) {
	var m Mount
	f := strings.Fields(s)
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if len(f) < 7 || sep < 0 || len(f) < sep+3 {
		return m, fmt.Errorf("malformed: %q", s)
	}
	var err error
	if m.ID, err = strconv.Atoi(f[0]); err != nil {
		return m, fmt.Errorf("mount ID %q: %w", f[0], err)
	}
	if m.ParentID, err = strconv.Atoi(f[1]); err != nil {
		return m, fmt.Errorf("parent ID %q: %w", f[1], err)
	}
	maj, min, ok := strings.Cut(f[2], ":")
	if !ok {
		return m, fmt.Errorf("device %q is not major:minor", f[2])
	}
	ma, err1 := strconv.ParseUint(maj, 10, 32)
	mi, err2 := strconv.ParseUint(min, 10, 32)
	if err1 != nil || err2 != nil {
		return m, fmt.Errorf("device %q is not major:minor", f[2])
	}
	m.Major, m.Minor = uint32(ma), uint32(mi)
	m.Root = unescape(f[3])
	m.MountPoint = unescape(f[4])
	m.Options = f[5]
	m.FSType = f[sep+1]
	m.Source = unescape(f[sep+2])
	if len(f) > sep+3 {
		m.SuperOptions = f[sep+3]
	}
	return m, nil
}

// unescape undoes the kernel's octal escapes (\040 for a space, \011, \012,
// \134) in mountinfo paths.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) && isOctal(s[i+1:i+4]) {
			v, _ := strconv.ParseUint(s[i+1:i+4], 8, 8)
			b.WriteByte(byte(v))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(s string) bool {
	if len(s) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if s[i] < '0' || s[i] > '7' {
			return false
		}
	}
	return true
}

// At returns the mounts whose mount point is exactly path, the last
// (topmost) one last.
func At(mounts []Mount, path string) []Mount {
	var out []Mount
	for _, m := range mounts {
		if m.MountPoint == path {
			out = append(out, m)
		}
	}
	return out
}
