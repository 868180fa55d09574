package identity

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrPIDReused reports that the process behind a PID changed while the
// daemon read it: what was read may describe another process.
var ErrPIDReused = errors.New("the process exited and its PID was reused while it was being identified")

// Process is what /proc says about a caller's process.
type Process struct {
	// StartTime is the process start time in clock ticks after boot
	// (field 22 of /proc/<pid>/stat).
	StartTime uint64
	// Groups are the supplementary group IDs (Groups: in
	// /proc/<pid>/status).
	Groups []uint32
	// Container is what /proc/<pid>/cgroup says; see ParseCgroup.
	Container Container
}

// fileReader reads files of one process directory. *os.Root is one: it
// holds the directory open, so a PID reused after the open is not followed.
type fileReader interface {
	ReadFile(name string) ([]byte, error)
}

// ReadProcess reads the process pid under the procfs mounted at root and
// checks that it is the process the kernel reported for a connection whose
// effective user ID was euid. Its cgroup is read below the kubelet cgroup
// root cgroupRoot (see ParseCgroup).
//
// The reads go through one open handle on root/<pid>, and the start time
// is read before and after the rest: a process that exits and whose PID is
// taken by another while the daemon reads is detected (ErrPIDReused). A
// process whose effective UID is not euid is refused too: it is either
// another process or one that changed user since it connected.
func ReadProcess(root string, pid int, euid uint32, cgroupRoot string) (Process, error) {
	if pid <= 0 {
		return Process{}, fmt.Errorf("invalid PID %d", pid)
	}
	dir, err := os.OpenRoot(filepath.Join(root, strconv.Itoa(pid)))
	if err != nil {
		return Process{}, fmt.Errorf("open the process directory: %w", err)
	}
	defer dir.Close() //nolint:errcheck // a read-only directory handle; nothing to report
	return readProcess(dir, euid, cgroupRoot)
}

func readProcess(dir fileReader, euid uint32, cgroupRoot string) (Process, error) {
	start, err := readStartTime(dir)
	if err != nil {
		return Process{}, err
	}
	status, err := dir.ReadFile("status")
	if err != nil {
		return Process{}, fmt.Errorf("read status: %w", err)
	}
	uid, groups, err := ParseStatus(status)
	if err != nil {
		return Process{}, err
	}
	if uid != euid {
		return Process{}, fmt.Errorf("the process now runs as uid %d, not uid %d as when it connected: %w", uid, euid, ErrPIDReused)
	}
	cg, err := dir.ReadFile("cgroup")
	if err != nil {
		return Process{}, fmt.Errorf("read cgroup: %w", err)
	}
	again, err := readStartTime(dir)
	if err != nil {
		return Process{}, err
	}
	if again != start {
		return Process{}, ErrPIDReused
	}
	p := Process{StartTime: start, Groups: groups}
	// Read last, parsed last: a parse error still leaves the IDs above.
	p.Container, err = ParseCgroup(cg, cgroupRoot)
	return p, err
}

func readStartTime(dir fileReader) (uint64, error) {
	b, err := dir.ReadFile("stat")
	if err != nil {
		return 0, fmt.Errorf("read stat: %w", err)
	}
	return ParseStatStartTime(b)
}

// ParseStatStartTime returns the start time (field 22) of a
// /proc/<pid>/stat line. The command name (field 2) is in parentheses and
// may contain spaces and parentheses itself, so fields are counted from the
// last ")".
func ParseStatStartTime(b []byte) (uint64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	const startTimeField = 22 - 3 // fields after ")" begin with field 3
	if len(f) <= startTimeField {
		return 0, fmt.Errorf("malformed stat: %d fields after the command name", len(f))
	}
	t, err := strconv.ParseUint(f[startTimeField], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("malformed stat start time %q", f[startTimeField])
	}
	return t, nil
}

// ParseStatus returns the effective user ID (the second value of Uid:) and
// the supplementary groups (Groups:) of a /proc/<pid>/status file.
func ParseStatus(b []byte) (euid uint32, groups []uint32, err error) {
	haveUID := false
	for line := range strings.SplitSeq(string(b), "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch key {
		case "Uid":
			f := strings.Fields(val)
			if len(f) < 2 {
				return 0, nil, fmt.Errorf("malformed status Uid line %q", line)
			}
			u, err := strconv.ParseUint(f[1], 10, 32)
			if err != nil {
				return 0, nil, fmt.Errorf("malformed status Uid line %q", line)
			}
			euid, haveUID = uint32(u), true
		case "Groups":
			for _, g := range strings.Fields(val) {
				n, err := strconv.ParseUint(g, 10, 32)
				if err != nil {
					return 0, nil, fmt.Errorf("malformed status Groups line %q", line)
				}
				groups = append(groups, uint32(n))
			}
		}
	}
	if !haveUID {
		return 0, nil, errors.New("malformed status: no Uid line")
	}
	return euid, groups, nil
}
