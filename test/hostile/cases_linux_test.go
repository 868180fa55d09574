package hostile

import (
	"context"
	"fmt"
	"math"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protowire"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	diskv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1alpha1"
	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	filesystemv2alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v2alpha1"
	iscsiv1alpha2 "github.com/csi-node-proxy/csi-node-proxy/api/iscsi/v1alpha2"
	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
	systemv1alpha1 "github.com/csi-node-proxy/csi-node-proxy/api/system/v1alpha1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
)

// hcase is one hostile call: an input sent in one field of one method of
// one endpoint, and the code it must be answered with.
type hcase struct {
	api, method, field string
	// variant tells calls with the same input apart (force, online).
	variant string
	in      input
	call    func(context.Context) error
}

// group is the API group of the case's endpoint.
func (c hcase) group() string {
	g := strings.TrimPrefix(c.api, "csi-proxy-")
	g, _, _ = strings.Cut(g, "-")
	return g
}

// key identifies the case among all others.
func (c hcase) key() string {
	return c.api + "/" + c.method + "/" + c.field + "/" + c.variant + "=" + fmt.Sprintf("%q", c.in.value)
}

// String names the case in failure messages, with the input quoted and
// shortened.
func (c hcase) String() string {
	v := c.in.value
	if len(v) > 120 {
		v = fmt.Sprintf("%s…(%d bytes)", v[:100], len(v))
	}
	s := fmt.Sprintf("%s %s %s=%q", c.api, c.method, c.field, v)
	if c.variant != "" {
		s += " [" + c.variant + "]"
	}
	return s + " (" + c.in.what + ")"
}

// env is what the table is built against.
type env struct {
	s sandbox
	// volA is the GUID of a formatted, unmounted volume on a loop disk of
	// the sandbox; volB one mounted at mntB, outside the working dirs (as
	// a host mount would be), with linkB a link to it inside them.
	volA, volB, mntB, linkB string
	// diskA is volA's disk number; rootDisk the number of the disk
	// holding "/"; filtered a disk the backend does not offer (zram), or
	// 0 if there is none.
	diskA, rootDisk, filtered uint32
	// emptyWD is a working directory with nothing in it.
	emptyWD string

	fs    []fsVersion
	vol   []volVersion
	disk  []diskVersion
	smb   []smbVersion
	iscsi []iscsiVersion
	sys   []systemVersion
	d     *daemon
	loops []*loopDisk
}

// missingVolume is a well-formed volume ID (a partition GUID) no disk holds.
const missingVolume = "00000000-0000-4000-8000-0000000000e1"

// builder collects the cases.
type builder struct {
	cases []hcase
	n     int // numbers unique names of things a wrongly accepted call would create
}

func (b *builder) add(api, method, field, variant string, in input, call func(context.Context) error) {
	b.cases = append(b.cases, hcase{api: api, method: method, field: field, variant: variant, in: in, call: call})
}

// fresh returns a name not used before, for the link or directory a
// wrongly accepted call would create.
func (b *builder) fresh(prefix string) string {
	b.n++
	return fmt.Sprintf("%s-%d", prefix, b.n)
}

// buildCases returns the whole table, in the order it runs: inputs the
// Services must refuse lexically first, then the ones that reach the
// backends (escaping links, real volumes), and last the ones that, if
// wrongly accepted, change what later cases see (mounts).
func buildCases(e *env) []hcase {
	b := &builder{}
	s := e.s
	k := s.Kubelet
	pods := k + "/pods"

	// Paths, in every path field of every version.
	for _, p := range badPaths(s) {
		pathCases(b, e, p)
	}
	for _, in := range workingDirItself(s) {
		for _, v := range e.fs {
			b.add(v.api, "Rmdir", "path", "force", in, func(c context.Context) error { return v.rmdir(c, in.value, true) })
			b.add(v.api, "Rmdir", "path", "no force", in, func(c context.Context) error { return v.rmdir(c, in.value, false) })
			if v.rmdirContents != nil {
				b.add(v.api, "RmdirContents", "path", "", in, func(c context.Context) error { return v.rmdirContents(c, in.value) })
			}
			src := s.CSI + "/ok"
			if strings.HasPrefix(in.value, s.CSI) {
				src = pods + "/src"
			}
			b.add(v.api, v.linkName, "target_path", "source "+src, in, func(c context.Context) error { return v.link(c, src, in.value) })
		}
	}

	// Well-formed paths inside that name nothing: NotFound. Rmdir only
	// without force: with force a path already gone is the goal reached
	// (success, as upstream's os.RemoveAll; kubelet retries depend on it).
	missing := pods + "/missing"
	for _, v := range e.fs {
		in := nf(missing, "a path inside that does not exist")
		b.add(v.api, "Rmdir", "path", "no force", in, func(c context.Context) error { return v.rmdir(c, in.value, false) })
		b.add(v.api, v.isLinkName, "path", "", in, func(c context.Context) error { return v.isLink(c, in.value) })
		if v.rmdirContents != nil {
			b.add(v.api, "RmdirContents", "path", "", in, func(c context.Context) error { return v.rmdirContents(c, in.value) })
		}
		in2 := nf(missing+"/link", "a link in a directory that does not exist")
		b.add(v.api, v.linkName, "target_path", "", in2, func(c context.Context) error { return v.link(c, pods+"/src", in2.value) })
	}
	for _, v := range e.vol {
		in := nf(missing, "a path inside where nothing is mounted")
		if v.idFromPath != nil {
			b.add(v.api, v.idPathName, v.idPathField, "", in, func(c context.Context) error { return v.idFromPath(c, in.value) })
		}
		in2 := nf(missingVolume, "a well-formed volume ID no disk holds, mounted at a fresh path inside")
		target := pods + "/" + b.fresh("mnt")
		b.add(v.api, v.mountName, "volume_id", "target "+target, in2, func(c context.Context) error { return v.mount(c, in2.value, target) })
	}

	// Volume IDs, in every volume-ID field of every version.
	for _, in := range badVolumeIDs() {
		volumeIDCases(b, e, in)
	}
	// Negative and impossible sizes.
	for _, v := range e.vol {
		for _, c := range []struct {
			id   string
			size int64
			in   input
		}{
			{missingVolume, -1, ia("-1", "negative size")},
			{missingVolume, -4096, ia("-4096", "negative size")},
			{e.volA, -1, ia("-1", "negative size of a real volume")},
			{e.volA, math.MinInt64, ia(fmt.Sprint(int64(math.MinInt64)), "most negative size of a real volume")},
			{e.volA, math.MaxInt64, input{fmt.Sprint(int64(math.MaxInt64)), codes.OutOfRange, "a size no disk can grow to"}},
		} {
			field := "size_bytes"
			if v.pathField == "path" {
				field = "size"
			}
			b.add(v.api, "ResizeVolume", field, "volume "+c.id, c.in, func(ctx context.Context) error { return v.resize(ctx, c.id, c.size) })
		}
	}

	diskCases(b, e)
	smbCases(b, e)
	iscsiCases(b, e)
	systemCases(b, e)
	wireCases(b, e)

	// Links that lead out of the working dirs, as the parent of every
	// path operation, then as mount targets.
	for _, l := range escapeLinks(s) {
		linkCases(b, e, l)
	}
	for _, l := range escapeLinks(s) {
		if !l.decoy {
			continue // never mount a volume over a system directory
		}
		for _, v := range e.vol {
			target := l.at + "/" + b.fresh("mnt")
			in := pd(target, "mount target below a "+l.what)
			b.add(v.api, v.mountName, v.pathField, "volume A", in, func(c context.Context) error { return v.mount(c, e.volA, target) })
		}
	}
	// A volume mounted outside the working dirs (as a host mount is),
	// reached through a link inside them: neither its ID nor an unmount.
	for _, v := range e.vol {
		in := pd(e.linkB, "link to a mount outside the working dirs")
		if v.idFromPath != nil {
			b.add(v.api, v.idPathName, v.idPathField, "", in, func(c context.Context) error { return v.idFromPath(c, in.value) })
		}
		if v.closest != nil {
			b.add(v.api, "GetClosestVolumeIDFromTargetPath", "target_path", "", in, func(c context.Context) error { return v.closest(c, in.value) })
		}
	}
	for _, v := range e.vol {
		for _, p := range []input{
			pd(e.linkB, "unmount through a link to a mount outside the working dirs"),
			pd(pods+"/l-out/mnt-b", "unmount through a link that leads out, below it a mount outside"),
			pd(e.mntB, "unmount of a mount outside the working dirs, named directly"),
		} {
			b.add(v.api, v.unmountName, v.pathField, "volume B", p, func(c context.Context) error { return v.unmount(c, e.volB, p.value) })
		}
	}
	// Links to a working directory itself: followed (they stay inside),
	// but what they reach is a working directory, which no call may
	// empty, remove, link to, mount on or unmount; nested working dirs
	// are reached by their last name below a link to the kubelet one.
	for _, l := range rootLinks(s) {
		rootLinkCases(b, e, l)
	}
	// A working directory itself is no mount target: the Service mounts
	// strictly inside the working dirs (docs/linux-block.md relies on it).
	for _, v := range e.vol {
		in := pd(e.emptyWD, "an (empty) working directory itself as the mount target")
		b.add(v.api, v.mountName, v.pathField, "volume A", in, func(c context.Context) error { return v.mount(c, e.volA, in.value) })
	}
	return b.cases
}

// pathCases sends one hostile path to every path field of every version.
func pathCases(b *builder, e *env, p pathInput) {
	s := e.s
	pods := s.Kubelet + "/pods"
	in := p.input
	for _, v := range e.fs {
		b.add(v.api, "PathExists", "path", "", in, func(c context.Context) error { return v.pathExists(c, in.value) })
		b.add(v.api, "Mkdir", "path", "", in, func(c context.Context) error { return v.mkdir(c, in.value) })
		b.add(v.api, v.isLinkName, "path", "", in, func(c context.Context) error { return v.isLink(c, in.value) })
		if !p.real {
			b.add(v.api, "Rmdir", "path", "force", in, func(c context.Context) error { return v.rmdir(c, in.value, true) })
			b.add(v.api, "Rmdir", "path", "no force", in, func(c context.Context) error { return v.rmdir(c, in.value, false) })
			if v.rmdirContents != nil {
				b.add(v.api, "RmdirContents", "path", "", in, func(c context.Context) error { return v.rmdirContents(c, in.value) })
			}
		}
		link := pods + "/" + b.fresh("nl")
		b.add(v.api, v.linkName, "source_path", "target "+link, in, func(c context.Context) error { return v.link(c, in.value, link) })
		b.add(v.api, v.linkName, "target_path", "", in, func(c context.Context) error { return v.link(c, pods+"/src", in.value) })
	}
	for _, v := range e.vol {
		// A well-formed volume that does not exist: if a path got
		// through, the call would still touch nothing.
		b.add(v.api, v.mountName, v.pathField, "", in, func(c context.Context) error { return v.mount(c, missingVolume, in.value) })
		b.add(v.api, v.unmountName, v.pathField, "", in, func(c context.Context) error { return v.unmount(c, missingVolume, in.value) })
		if v.idFromPath != nil {
			b.add(v.api, v.idPathName, v.idPathField, "", in, func(c context.Context) error { return v.idFromPath(c, in.value) })
		}
		if v.closest != nil {
			b.add(v.api, "GetClosestVolumeIDFromTargetPath", "target_path", "", in, func(c context.Context) error { return v.closest(c, in.value) })
		}
	}
	if in.value == "" {
		return // an empty local_path means "no link": not an error
	}
	for _, v := range e.smb {
		b.add(v.api, "NewSmbGlobalMapping", "local_path", "", in, func(c context.Context) error {
			return v.newMapping(c, goodRemote, in.value, goodUser, goodPass)
		})
	}
}

// linkCases uses an escaping link as the parent of every path operation.
func linkCases(b *builder, e *env, l link) {
	pods := e.s.Kubelet + "/pods"
	child := l.at + "/" + l.child
	what := "below a " + l.what
	newDir, newLink := l.at+"/"+e.s.Probe+"-dir", l.at+"/"+e.s.Probe+"-link"
	if l.decoy {
		newDir, newLink = l.at+"/"+b.fresh("new-dir"), l.at+"/"+b.fresh("new-link")
	}
	for _, v := range e.fs {
		b.add(v.api, "PathExists", "path", "", pd(child, what), func(c context.Context) error { return v.pathExists(c, child) })
		b.add(v.api, v.isLinkName, "path", "", pd(child, what), func(c context.Context) error { return v.isLink(c, child) })
		b.add(v.api, "Mkdir", "path", "", pd(newDir, what), func(c context.Context) error { return v.mkdir(c, newDir) })
		sub := newDir + "/sub"
		b.add(v.api, "Mkdir", "path", "", pd(sub, what), func(c context.Context) error { return v.mkdir(c, sub) })
		b.add(v.api, "Rmdir", "path", "force", pd(child, what), func(c context.Context) error { return v.rmdir(c, child, true) })
		b.add(v.api, "Rmdir", "path", "no force", pd(child, what), func(c context.Context) error { return v.rmdir(c, child, false) })
		if v.rmdirContents != nil {
			b.add(v.api, "RmdirContents", "path", "", pd(child, what), func(c context.Context) error { return v.rmdirContents(c, child) })
			if l.decoy && l.to != ".." {
				in := pd(l.at, "the "+l.what+" itself (RmdirContents follows it)")
				b.add(v.api, "RmdirContents", "path", "", in, func(c context.Context) error { return v.rmdirContents(c, l.at) })
			}
		}
		b.add(v.api, v.linkName, "target_path", "source "+pods+"/src", pd(newLink, what), func(c context.Context) error {
			return v.link(c, pods+"/src", newLink)
		})
		nl := pods + "/" + b.fresh("nl")
		b.add(v.api, v.linkName, "source_path", "target "+nl, pd(child, what), func(c context.Context) error { return v.link(c, child, nl) })
	}
	for _, v := range e.vol {
		if v.idFromPath != nil {
			b.add(v.api, v.idPathName, v.idPathField, "", pd(child, what), func(c context.Context) error { return v.idFromPath(c, child) })
		}
	}
	for _, v := range e.smb {
		local := l.at + "/" + b.fresh("smb-link")
		if !l.decoy {
			local = newLink
		}
		b.add(v.api, "NewSmbGlobalMapping", "local_path", "", pd(local, what), func(c context.Context) error {
			return v.newMapping(c, goodRemote, local, goodUser, goodPass)
		})
	}
}

// rootLinkCases uses a link to a working directory itself (see rootLinks).
func rootLinkCases(b *builder, e *env, l rootLink) {
	pods := e.s.Kubelet + "/pods"
	what := "through a " + l.what
	for _, v := range e.fs {
		if v.rmdirContents != nil {
			in := pd(l.at, "RmdirContents "+what)
			b.add(v.api, "RmdirContents", "path", "", in, func(c context.Context) error { return v.rmdirContents(c, l.at) })
		}
		nl := pods + "/" + b.fresh("nl")
		b.add(v.api, v.linkName, "source_path", "target "+nl, pd(l.at, "link source "+what), func(c context.Context) error { return v.link(c, l.at, nl) })
	}
	if !l.kubelet {
		return
	}
	nested, reg := l.at+"/plugins", l.at+"/plugins_registry"
	what = "the nested working dir " + what
	for _, v := range e.fs {
		b.add(v.api, "Rmdir", "path", "force", pd(nested, what), func(c context.Context) error { return v.rmdir(c, nested, true) })
		b.add(v.api, "Rmdir", "path", "no force", pd(nested, what), func(c context.Context) error { return v.rmdir(c, nested, false) })
		if v.rmdirContents != nil {
			b.add(v.api, "RmdirContents", "path", "", pd(nested, what), func(c context.Context) error { return v.rmdirContents(c, nested) })
		}
		b.add(v.api, v.linkName, "target_path", "source "+pods+"/src", pd(nested, what), func(c context.Context) error {
			return v.link(c, pods+"/src", nested)
		})
	}
	for _, v := range e.vol {
		b.add(v.api, v.mountName, v.pathField, "volume A", pd(nested, what), func(c context.Context) error { return v.mount(c, e.volA, nested) })
		b.add(v.api, v.unmountName, v.pathField, "volume B", pd(reg, what+" (volume B mounted on it)"), func(c context.Context) error { return v.unmount(c, e.volB, reg) })
	}
	for _, v := range e.smb {
		b.add(v.api, "NewSmbGlobalMapping", "local_path", "", pd(nested, what), func(c context.Context) error {
			return v.newMapping(c, goodRemote, nested, goodUser, goodPass)
		})
	}
}

// volumeIDCases sends one volume ID to every volume-ID field of every
// version. A well-formed ID that names nothing is not tried with
// UnmountVolume, which succeeds when nothing is mounted at the target
// (kubelet retries unstage).
func volumeIDCases(b *builder, e *env, in input) {
	target := e.s.Kubelet + "/pods/mnt-id"
	for _, v := range e.vol {
		b.add(v.api, v.mountName, "volume_id", "", in, func(c context.Context) error { return v.mount(c, in.value, target) })
		if in.want != codes.NotFound {
			b.add(v.api, v.unmountName, "volume_id", "", in, func(c context.Context) error { return v.unmount(c, in.value, target) })
		}
		b.add(v.api, "IsVolumeFormatted", "volume_id", "", in, func(c context.Context) error { return v.isFormatted(c, in.value) })
		b.add(v.api, "FormatVolume", "volume_id", "", in, func(c context.Context) error { return v.format(c, in.value) })
		b.add(v.api, "ResizeVolume", "volume_id", "", in, func(c context.Context) error { return v.resize(c, in.value, 0) })
		if v.stats != nil {
			b.add(v.api, v.statsName, "volume_id", "", in, func(c context.Context) error { return v.stats(c, in.value) })
		}
		if v.diskNum != nil {
			b.add(v.api, v.diskNumName, "volume_id", "", in, func(c context.Context) error { return v.diskNum(c, in.value) })
		}
		if v.flush != nil {
			b.add(v.api, "WriteVolumeCache", "volume_id", "", in, func(c context.Context) error { return v.flush(c, in.value) })
		}
	}
}

// diskCases: disk numbers no disk has, the root disk, old string IDs.
func diskCases(b *builder, e *env) {
	numbers := append([]uint32(nil), missingDiskNumbers...)
	if e.filtered != 0 {
		numbers = append(numbers, e.filtered)
	}
	for _, n := range numbers {
		in := nf(fmt.Sprint(n), "a disk number no offered disk has")
		for _, v := range e.disk {
			if v.partition == nil {
				continue
			}
			b.add(v.api, "PartitionDisk", "disk_number", "", in, func(c context.Context) error { return v.partition(c, n) })
			b.add(v.api, v.statsName, "disk_number", "", in, func(c context.Context) error { return v.stats(c, n) })
			b.add(v.api, v.getStateName, "disk_number", "", in, func(c context.Context) error { return v.getState(c, n) })
			b.add(v.api, v.setStateName, "disk_number", "offline", in, func(c context.Context) error { return v.setState(c, n, false) })
			b.add(v.api, v.setStateName, "disk_number", "online", in, func(c context.Context) error { return v.setState(c, n, true) })
		}
		for _, v := range e.vol {
			if v.listByNumber != nil {
				b.add(v.api, "ListVolumesOnDisk", "disk_number", "partition 0", in, func(c context.Context) error { return v.listByNumber(c, n, 0) })
			}
		}
	}
	root := input{fmt.Sprint(e.rootDisk), codes.FailedPrecondition, "the root disk (it belongs to the host)"}
	for _, v := range e.disk {
		switch {
		case v.partition != nil:
			b.add(v.api, "PartitionDisk", "disk_number", "", root, func(c context.Context) error { return v.partition(c, e.rootDisk) })
			b.add(v.api, v.setStateName, "disk_number", "offline", root, func(c context.Context) error { return v.setState(c, e.rootDisk, false) })
		default:
			b.add(v.api, "PartitionDisk", "diskID", "", root, func(c context.Context) error { return v.partitionID(c, root.value) })
			if v.setStateID != nil {
				b.add(v.api, v.setStateName, "diskID", "offline", root, func(c context.Context) error { return v.setStateID(c, root.value, false) })
			}
		}
	}
	for _, v := range e.vol {
		if v.listByNumber == nil {
			continue
		}
		for _, c := range []struct {
			n, part uint32
			in      input
		}{
			{e.diskA, 7, nf(fmt.Sprint(e.diskA)+" partition 7", "a partition the test disk lacks")},
			{e.diskA, 99, nf(fmt.Sprint(e.diskA)+" partition 99", "a partition the test disk lacks")},
			{e.diskA, math.MaxUint32, nf(fmt.Sprint(e.diskA)+" partition 4294967295", "the largest partition number")},
		} {
			b.add(v.api, "ListVolumesOnDisk", "partition_number", "", c.in, func(ctx context.Context) error { return v.listByNumber(ctx, c.n, c.part) })
		}
	}
	for _, in := range badDiskIDs() {
		for _, v := range e.disk {
			if v.partitionID == nil {
				continue
			}
			b.add(v.api, "PartitionDisk", "diskID", "", in, func(c context.Context) error { return v.partitionID(c, in.value) })
			if v.statsID != nil {
				b.add(v.api, v.statsName, "diskID", "", in, func(c context.Context) error { return v.statsID(c, in.value) })
			}
			if v.getStateID != nil {
				b.add(v.api, v.getStateName, "diskID", "", in, func(c context.Context) error { return v.getStateID(c, in.value) })
				b.add(v.api, v.setStateName, "diskID", "offline", in, func(c context.Context) error { return v.setStateID(c, in.value, false) })
			}
		}
		for _, v := range e.vol {
			if v.listByID != nil {
				b.add(v.api, "ListVolumesOnDisk", "disk_id", "", in, func(c context.Context) error { return v.listByID(c, in.value) })
			}
		}
	}
	for _, v := range e.disk {
		if v.byName == nil {
			continue
		}
		for _, in := range []input{
			ia("", "empty disk name"),
			nf("'; DROP TABLE disks; --", "SQL injection"),
			nf("$(id)", "command substitution"),
			nf("../../etc/passwd", "traversal"),
			nf("\x00", "NUL"),
			nf(strings.Repeat("6", 10000), "10000 bytes"),
			nf("*", "glob"),
			nf("%", "LIKE wildcard"),
		} {
			b.add(v.api, "GetDiskNumberByName", "disk_name", "", in, func(c context.Context) error { return v.byName(c, in.value) })
		}
	}
}

// smbCases: remote paths, user names and passwords.
func smbCases(b *builder, e *env) {
	for _, v := range e.smb {
		for _, in := range badRemotePaths() {
			b.add(v.api, "NewSmbGlobalMapping", "remote_path", "", in, func(c context.Context) error {
				return v.newMapping(c, in.value, "", goodUser, goodPass)
			})
			b.add(v.api, "RemoveSmbGlobalMapping", "remote_path", "", in, func(c context.Context) error { return v.remove(c, in.value) })
		}
		for _, in := range []input{
			nf(`\\csi-hostile.invalid\share`, "a share that is not mapped"),
			nf(`\\127.0.0.1\not-mapped\sub\dir`, "a share that is not mapped, with a sub-path"),
		} {
			b.add(v.api, "RemoveSmbGlobalMapping", "remote_path", "", in, func(c context.Context) error { return v.remove(c, in.value) })
		}
		for _, in := range badUsernames() {
			b.add(v.api, "NewSmbGlobalMapping", "username", "", in, func(c context.Context) error {
				return v.newMapping(c, goodRemote, "", in.value, goodPass)
			})
		}
		for _, in := range badPasswords() {
			b.add(v.api, "NewSmbGlobalMapping", "password", "", in, func(c context.Context) error {
				return v.newMapping(c, goodRemote, "", goodUser, in.value)
			})
		}
	}
}

// iscsiCases: portals, IQNs, CHAP settings and mutual secrets.
func iscsiCases(b *builder, e *env) {
	for _, v := range e.iscsi {
		for _, pi := range badPortals() {
			in := input{"<nil>", pi.want, pi.what}
			if pi.p != nil {
				in.value = fmt.Sprintf("%s port %d", pi.p.addr, pi.p.port)
			}
			p := pi.p
			b.add(v.api, "AddTargetPortal", "target_portal", "", in, func(c context.Context) error { return v.add(c, p) })
			b.add(v.api, "DiscoverTargetPortal", "target_portal", "", in, func(c context.Context) error { return v.discover(c, p) })
			b.add(v.api, "RemoveTargetPortal", "target_portal", "", in, func(c context.Context) error { return v.removePortal(c, p) })
			b.add(v.api, "ConnectTarget", "target_portal", "", in, func(c context.Context) error { return v.connect(c, p, goodIQN, 0, "", "") })
			b.add(v.api, "DisconnectTarget", "target_portal", "", in, func(c context.Context) error { return v.disconnect(c, p, goodIQN) })
			b.add(v.api, "GetTargetDisks", "target_portal", "", in, func(c context.Context) error { return v.disks(c, p, goodIQN) })
		}
		for _, in := range badIQNs() {
			b.add(v.api, "ConnectTarget", "iqn", "", in, func(c context.Context) error { return v.connect(c, goodPortal, in.value, 0, "", "") })
			b.add(v.api, "DisconnectTarget", "iqn", "", in, func(c context.Context) error { return v.disconnect(c, goodPortal, in.value) })
			b.add(v.api, "GetTargetDisks", "iqn", "", in, func(c context.Context) error { return v.disks(c, goodPortal, in.value) })
		}
		for _, ch := range badChap() {
			in := ia(fmt.Sprintf("auth %d user %q secret %q", ch.auth, ch.user, ch.secret), ch.what)
			b.add(v.api, "ConnectTarget", "auth", "", in, func(c context.Context) error {
				return v.connect(c, goodPortal, goodIQN, ch.auth, ch.user, ch.secret)
			})
		}
		if v.setMutual != nil {
			for _, in := range badMutualSecrets() {
				b.add(v.api, "SetMutualChapSecret", "MutualChapSecret", "", in, func(c context.Context) error { return v.setMutual(c, in.value) })
			}
		}
	}
}

// systemCases: service names.
func systemCases(b *builder, e *env) {
	for _, v := range e.sys {
		for _, si := range badServiceNames() {
			in := si.input
			b.add(v.api, "StartService", "name", "", in, func(c context.Context) error { return v.start(c, in.value) })
			b.add(v.api, "StopService", "name", "no force", in, func(c context.Context) error { return v.stop(c, in.value, false) })
			b.add(v.api, "StopService", "name", "force", in, func(c context.Context) error { return v.stop(c, in.value, true) })
			get := input{in.value, si.getWant, in.what}
			b.add(v.api, "GetService", "name", "", get, func(c context.Context) error { return v.get(c, in.value) })
		}
		for _, name := range notAllowedServices {
			in := pd(name, "not on the allow-list")
			b.add(v.api, "StartService", "name", "", in, func(c context.Context) error { return v.start(c, name) })
			b.add(v.api, "StopService", "name", "force", in, func(c context.Context) error { return v.stop(c, name, true) })
		}
	}
}

// rawCodec sends and receives protobuf bytes as they are, so a request can
// carry what the generated types cannot marshal: invalid UTF-8 in a
// string, truncated or malformed fields.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *v.(*[]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*[]byte) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// wireCases are requests no generated client can send: a proto3 string
// that is not UTF-8 and messages that do not parse. They are malformed
// input (InvalidArgument), not a failure of the daemon.
func wireCases(b *builder, e *env) {
	str := func(field protowire.Number, v string) []byte {
		return protowire.AppendString(protowire.AppendTag(nil, field, protowire.BytesType), v)
	}
	k := e.s.Kubelet
	for _, w := range []struct {
		api, method, full, field string
		msg                      []byte
		what                     string
	}{
		{"csi-proxy-filesystem-v1", "PathExists", filesystemv1.Filesystem_PathExists_FullMethodName, "path",
			str(1, k+"/pods/\xff"), "path that is not UTF-8"},
		{"csi-proxy-filesystem-v1", "Mkdir", filesystemv1.Filesystem_Mkdir_FullMethodName, "path",
			str(1, k+"/pods/\xc0\xae\xc0\xae/x"), `overlong UTF-8 spelling of ".."`},
		{"csi-proxy-volume-v1", "GetVolumeStats", volumev1.Volume_GetVolumeStats_FullMethodName, "volume_id",
			str(1, "\xed\xa0\x80"), "volume ID with a UTF-16 surrogate"},
		{"csi-proxy-smb-v1", "RemoveSmbGlobalMapping", smbv1.Smb_RemoveSmbGlobalMapping_FullMethodName, "remote_path",
			str(1, `\\srv\`+"\xff"), "remote path that is not UTF-8"},
		{"csi-proxy-system-v1alpha1", "StartService", systemv1alpha1.System_StartService_FullMethodName, "name",
			str(1, "ssh\xffd"), "service name that is not UTF-8"},
		{"csi-proxy-iscsi-v1alpha2", "SetMutualChapSecret", iscsiv1alpha2.Iscsi_SetMutualChapSecret_FullMethodName, "MutualChapSecret",
			str(1, "secret\xff123456"), "secret that is not UTF-8"},
		{"csi-proxy-disk-v1alpha1", "PartitionDisk", diskv1alpha1.Disk_PartitionDisk_FullMethodName, "diskID",
			str(1, "\xff"), "disk ID that is not UTF-8"},
		{"csi-proxy-filesystem-v1", "PathExists", filesystemv1.Filesystem_PathExists_FullMethodName, "(message)",
			[]byte{0x0a, 0x40, '/'}, "truncated length-delimited field"},
		{"csi-proxy-volume-v1", "MountVolume", volumev1.Volume_MountVolume_FullMethodName, "(message)",
			[]byte{0x00, 0x01}, "field number 0"},
		{"csi-proxy-disk-v1", "GetDiskStats", diskv1.Disk_GetDiskStats_FullMethodName, "(message)",
			[]byte{0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "varint over 10 bytes"},
		{"csi-proxy-filesystem-v2alpha1", "RmdirContents", filesystemv2alpha1.Filesystem_RmdirContents_FullMethodName, "(message)",
			[]byte{0x0c}, "end-group tag without a group"},
		{"csi-proxy-filesystem-v2alpha1", "RmdirContents", filesystemv2alpha1.Filesystem_RmdirContents_FullMethodName, "path",
			protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 47), "path sent as a varint (an unknown field: the path is empty)"},
	} {
		in := ia(fmt.Sprintf("% x", w.msg), w.what)
		cc := e.d.conns[w.api]
		full, msg := w.full, w.msg
		b.add(w.api, w.method, w.field, "raw wire bytes", in, func(c context.Context) error {
			req, resp := msg, []byte(nil)
			return cc.Invoke(c, full, &req, &resp, grpc.ForceCodec(rawCodec{}))
		})
	}
}
