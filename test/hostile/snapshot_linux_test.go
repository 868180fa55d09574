package hostile

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/csi-node-proxy/csi-node-proxy/internal/host/linux/mountinfo"
)

// snapshot is what the suite compares before and after the table: each
// section a sorted list of lines.
type snapshot map[string][]string

// The sections of a snapshot.
const (
	secFiles  = "files"  // the sandbox: every path, type, mode, size, link text
	secProbes = "probes" // the probe names outside the sandbox: must stay absent
	secSystem = "system" // state the backends keep outside the sandbox: /etc/iscsi, /var/lib/iscsi, /var/lib/csi-node-proxy
	secMounts = "mounts" // /proc/self/mountinfo
	secBlocks = "blocks" // /sys/block: disks and their partitions
	secLoops  = "loops"  // losetup -a
	secErrors = "errors" // what could not be read
)

// takeSnapshot records the host as far as the suite can change it.
func takeSnapshot(s sandbox) snapshot {
	snap := snapshot{}
	add := func(sec, format string, args ...any) { snap[sec] = append(snap[sec], fmt.Sprintf(format, args...)) }
	fail := func(format string, args ...any) { add(secErrors, format, args...) }

	listTree(s.Root, func(l string) { add(secFiles, "%s", l) }, fail)
	for _, p := range s.probes() {
		if fi, err := os.Lstat(p); err == nil {
			add(secProbes, "%s exists (%s)", p, fi.Mode())
		} else {
			add(secProbes, "%s absent", p)
		}
	}
	for _, dir := range []string{"/etc/iscsi", "/var/lib/iscsi", "/var/lib/csi-node-proxy"} {
		if _, err := os.Lstat(dir); err != nil {
			add(secSystem, "%s absent", dir)
			continue
		}
		listTree(dir, func(l string) { add(secSystem, "%s", l) }, fail)
	}

	mounts, err := mountinfo.Read()
	if err != nil {
		fail("mountinfo: %v", err)
	}
	for _, m := range mounts {
		add(secMounts, "%q %s %s %d:%d root=%s id=%d parent=%d opts=%s super=%s",
			m.MountPoint, m.Source, m.FSType, m.Major, m.Minor, m.Root, m.ID, m.ParentID, m.Options, m.SuperOptions)
	}

	disks, err := os.ReadDir("/sys/block")
	if err != nil {
		fail("/sys/block: %v", err)
	}
	for _, d := range disks {
		name := d.Name()
		add(secBlocks, "%s size=%s ro=%s", name, sysAttr(name, "size"), sysAttr(name, "ro"))
		parts, _ := filepath.Glob("/sys/block/" + name + "/" + name + "*/partition")
		for _, p := range parts {
			part := filepath.Base(filepath.Dir(p))
			add(secBlocks, "%s/%s partition=%s start=%s size=%s ro=%s", name, part,
				sysAttr(name, part+"/partition"), sysAttr(name, part+"/start"), sysAttr(name, part+"/size"), sysAttr(name, part+"/ro"))
		}
	}

	if _, err := exec.LookPath("losetup"); err == nil {
		out, err := exec.Command("losetup", "-a").Output()
		if err != nil {
			fail("losetup -a: %v", err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l != "" {
				add(secLoops, "%s", l)
			}
		}
	} else {
		files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
		for _, f := range files {
			b, _ := os.ReadFile(f)
			add(secLoops, "/dev/%s: (%s)", filepath.Base(filepath.Dir(filepath.Dir(f))), strings.TrimSpace(string(b)))
		}
	}
	for _, lines := range snap {
		sort.Strings(lines)
	}
	return snap
}

func sysAttr(disk, attr string) string {
	b, err := os.ReadFile("/sys/block/" + disk + "/" + attr)
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

// listTree lists root recursively: path, type and permissions, the size of
// regular files, the text of links, and the device of a mount point (the
// walk does not cross into other filesystems, so a mount in the sandbox is
// one line, not its contents). Times are left out: reads change them.
func listTree(root string, line func(string), fail func(string, ...any)) {
	rootDev := uint64(0)
	if fi, err := os.Lstat(root); err == nil {
		rootDev = fi.Sys().(*syscall.Stat_t).Dev
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			fail("%s: %v", p, err)
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			fail("%s: %v", p, err)
			return nil
		}
		st := fi.Sys().(*syscall.Stat_t)
		desc := fmt.Sprintf("%q %s uid=%d gid=%d", p, fi.Mode(), st.Uid, st.Gid)
		switch {
		case fi.Mode().IsRegular():
			desc += fmt.Sprintf(" size=%d", fi.Size())
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				target = "(" + err.Error() + ")"
			}
			desc += fmt.Sprintf(" -> %q", target)
		}
		if d.IsDir() && st.Dev != rootDev {
			line(desc + fmt.Sprintf(" MOUNT dev=%d:%d", unixMajor(st.Dev), unixMinor(st.Dev)))
			return fs.SkipDir
		}
		line(desc)
		return nil
	})
	if err != nil {
		fail("walk %s: %v", root, err)
	}
}

func unixMajor(dev uint64) uint64 { return (dev >> 8) & 0xfff }
func unixMinor(dev uint64) uint64 { return (dev & 0xff) | ((dev >> 12) & 0xfff00) }

// change is one line that differs between two snapshots.
type change struct {
	section string
	line    string
	before  bool // the line was there before and is gone; else it is new
}

func (c change) String() string {
	if c.before {
		return fmt.Sprintf("%s: gone: %s", c.section, c.line)
	}
	return fmt.Sprintf("%s: new:  %s", c.section, c.line)
}

// diff returns the lines that differ, section by section.
func diff(before, after snapshot) []change {
	var out []change
	secs := map[string]bool{}
	for s := range before {
		secs[s] = true
	}
	for s := range after {
		secs[s] = true
	}
	var names []string
	for s := range secs {
		names = append(names, s)
	}
	sort.Strings(names)
	for _, sec := range names {
		count := map[string]int{}
		for _, l := range before[sec] {
			count[l]++
		}
		for _, l := range after[sec] {
			count[l]--
		}
		var lines []string
		for l := range count {
			lines = append(lines, l)
		}
		sort.Strings(lines)
		for _, l := range lines {
			for n := count[l]; n > 0; n-- {
				out = append(out, change{sec, l, true})
			}
			for n := count[l]; n < 0; n++ {
				out = append(out, change{sec, l, false})
			}
		}
	}
	return out
}

// foreign tells whether a change in the host-wide sections belongs to
// another test running at the same time (go test runs packages in
// parallel): a loop device the suite did not attach, its partitions, and
// mounts of such a device or in another test's temporary directory.
// Everything else, and every change in the sandbox, the probes and the
// backends' state, counts against the daemon.
func foreign(c change, s sandbox, mine []*loopDisk) bool {
	tmp := filepath.Clean(os.TempDir())
	underRoot := func(p string) bool { return p == s.Root || strings.HasPrefix(p, s.Root+"/") }
	myDev := func(dev string) bool {
		for _, l := range mine {
			if l.source(dev) {
				return true
			}
		}
		return false
	}
	myName := func(name string) bool {
		for _, l := range mine {
			if name == l.name {
				return true
			}
		}
		return false
	}
	fields := strings.Fields(c.line)
	if len(fields) == 0 {
		return false
	}
	switch c.section {
	case secMounts:
		q, err := strconv.QuotedPrefix(c.line)
		if err != nil {
			return false
		}
		mp, _ := strconv.Unquote(q)
		src := ""
		if rest := strings.Fields(c.line[len(q):]); len(rest) > 0 {
			src = rest[0]
		}
		if underRoot(mp) || myDev(src) {
			return false
		}
		otherTemp := strings.HasPrefix(mp, tmp+"/")
		foreignLoop := strings.HasPrefix(src, "/dev/loop")
		return otherTemp || foreignLoop
	case secBlocks:
		disk, _, _ := strings.Cut(fields[0], "/")
		return strings.HasPrefix(disk, "loop") && !myName(disk)
	case secLoops:
		dev := strings.TrimSuffix(fields[0], ":")
		return !myDev(dev) && !strings.Contains(c.line, s.Root+"/")
	}
	return false
}
