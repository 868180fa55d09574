package hostile

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	diskv1 "github.com/csi-node-proxy/csi-node-proxy/api/disk/v1"
	volumev1 "github.com/csi-node-proxy/csi-node-proxy/api/volume/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil"
	"github.com/csi-node-proxy/csi-node-proxy/internal/testutil/poll"
)

// minCases is the least number of distinct hostile calls, and of distinct
// hostile values, the table must hold.
const minCases = 200

// TestHostileInputs runs the whole table against the real daemon on the
// Linux backend and checks every code, that no call ended in Unknown or
// Internal, and that the host looks the same afterwards.
func TestHostileInputs(t *testing.T) {
	testutil.RequireRoot(t)
	if testing.Short() {
		t.Skip("builds and runs the daemon on loop disks; skipped with -short")
	}
	start := time.Now()
	e := setUp(t)
	cases := buildCases(e)

	// The table itself: enough distinct calls and values.
	keys, values := map[string]bool{}, map[string]bool{}
	for _, c := range cases {
		if keys[c.key()] {
			t.Errorf("the table holds %s twice", c)
		}
		keys[c.key()] = true
		values[c.in.value] = true
	}
	if len(keys) < minCases || len(values) < minCases {
		t.Fatalf("the table holds %d distinct calls with %d distinct values; want at least %d of each", len(keys), len(values), minCases)
	}

	before := takeSnapshot(e.s)
	if len(before[secErrors]) > 0 {
		t.Fatalf("cannot snapshot the host:\n  %s", strings.Join(before[secErrors], "\n  "))
	}
	for _, l := range before[secProbes] {
		if !strings.HasSuffix(l, " absent") {
			t.Fatalf("probe path exists before the suite ran: %s", l)
		}
	}

	results := make([]mismatch, 0, len(cases))
	run := time.Now()
	for _, c := range cases {
		ctx, cancel := callCtx(t)
		err := c.call(ctx)
		cancel()
		st := status.Convert(err)
		results = append(results, mismatch{c, st.Code(), st.Message()})
	}
	runTime := time.Since(run)

	// The daemon must still be serving: a crash would answer Unavailable
	// to everything after it.
	ctx, cancel := callCtx(t)
	defer cancel()
	if h, err := healthpb.NewHealthClient(e.d.conn(t, "csi-proxy-disk-v1")).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("the daemon is not serving after the table: %v, %v", h, err)
	}
	after := takeSnapshot(e.s)

	// Codes.
	var wrong []string
	var mismatches, broken []mismatch
	type tally struct{ total, ok int }
	perGroup := map[string]map[codes.Code]*tally{}
	perCode := map[codes.Code]*tally{}
	for _, r := range results {
		g := r.c.group()
		if perGroup[g] == nil {
			perGroup[g] = map[codes.Code]*tally{}
		}
		for _, m := range []map[codes.Code]*tally{perGroup[g], perCode} {
			if m[r.c.in.want] == nil {
				m[r.c.in.want] = &tally{}
			}
			m[r.c.in.want].total++
			if r.code == r.c.in.want {
				m[r.c.in.want].ok++
			}
		}
		if r.code == codes.Unknown || r.code == codes.Internal {
			broken = append(broken, r)
		}
		if r.code != r.c.in.want {
			mismatches = append(mismatches, r)
			wrong = append(wrong, fmt.Sprintf("%s\n      want %v, got %v: %s", r.c, r.c.in.want, r.code, shorten(r.msg)))
		}
	}

	// The summary, also when everything passes (go test -v shows it).
	var sum strings.Builder
	fmt.Fprintf(&sum, "%d hostile calls (%d distinct values) in %v (whole test %v)\n", len(results), len(values), runTime.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	groups := make([]string, 0, len(perGroup))
	for g := range perGroup {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		fmt.Fprintf(&sum, "  %-11s %s\n", g, tallyLine(perGroup[g], func(tl *tally) (int, int) { return tl.total, tl.ok }))
	}
	fmt.Fprintf(&sum, "  %-11s %s\n", "all", tallyLine(perCode, func(tl *tally) (int, int) { return tl.total, tl.ok }))
	t.Logf("expected code: calls (answered with it)\n%s", sum.String())

	if len(broken) > 0 {
		t.Errorf("%d calls ended in Unknown or Internal, by input:\n%s", len(broken), groupWrong(broken))
	}
	if len(wrong) > 0 {
		if *showAll {
			t.Errorf("%d of %d calls were not answered with the expected code:\n  %s", len(wrong), len(results), strings.Join(wrong, "\n  "))
		} else {
			t.Errorf("%d of %d calls were not answered with the expected code, by input and answer (-hostile.all lists every call):\n%s",
				len(wrong), len(results), groupWrong(mismatches))
		}
	}

	// The host.
	var changed, others []string
	for _, c := range diff(before, after) {
		if foreign(c, e.s, e.loops) {
			others = append(others, c.String())
		} else {
			changed = append(changed, c.String())
		}
	}
	if len(others) > 0 {
		t.Logf("changes made meanwhile by other processes (loop devices and mounts of other tests), not counted:\n  %s", strings.Join(others, "\n  "))
	}
	if len(changed) > 0 {
		t.Errorf("the host changed during the suite:\n  %s", strings.Join(changed, "\n  "))
	}
	if *showSnapshot {
		var b strings.Builder
		for _, sec := range []string{secFiles, secProbes, secSystem, secMounts, secBlocks, secLoops} {
			fmt.Fprintf(&b, "  [%s]\n", sec)
			for _, l := range before[sec] {
				fmt.Fprintf(&b, "    %s\n", l)
			}
		}
		t.Logf("the snapshot before the table:\n%s", b.String())
	}
	if testing.Verbose() {
		var secs []string
		for sec, lines := range before {
			secs = append(secs, fmt.Sprintf("%s: %d lines", sec, len(lines)))
		}
		sort.Strings(secs)
		t.Logf("snapshot compared: %s", strings.Join(secs, ", "))
	}
}

var showSnapshot = flag.Bool("hostile.snapshot", false, "print the snapshot taken before the table")

var showAll = flag.Bool("hostile.all", false, "list every call answered with an unexpected code, not only one per kind")

// mismatch is a call and its answer (in the report: an unexpected one).
type mismatch struct {
	c    hcase
	code codes.Code
	msg  string
}

// groupWrong renders the mismatches by what the input tries, the expected
// and the received code: the endpoints and methods, the values, and one
// call's message.
func groupWrong(ms []mismatch) string {
	type group struct {
		what      string
		want, got codes.Code
		n         int
		calls     []string
		values    map[string]bool
		first     mismatch
	}
	var order []string
	groups := map[string]*group{}
	for _, m := range ms {
		k := fmt.Sprintf("%s|%v|%v", m.c.in.what, m.c.in.want, m.code)
		g := groups[k]
		if g == nil {
			g = &group{what: m.c.in.what, want: m.c.in.want, got: m.code, values: map[string]bool{}, first: m}
			groups[k] = g
			order = append(order, k)
		}
		call := strings.TrimPrefix(m.c.api, "csi-proxy-") + " " + m.c.method + "." + m.c.field
		if len(g.calls) == 0 || g.calls[len(g.calls)-1] != call {
			g.calls = append(g.calls, call)
		}
		g.values[m.c.in.value] = true
		g.n++
	}
	var b strings.Builder
	for _, k := range order {
		g := groups[k]
		fmt.Fprintf(&b, "  [%s] want %v, got %v in %d calls (%d values): %s\n", g.what, g.want, g.got, g.n, len(g.values), strings.Join(dedup(g.calls), ", "))
		fmt.Fprintf(&b, "      e.g. %s\n        -> %v: %s\n", g.first.c, g.first.code, shorten(g.first.msg))
	}
	return b.String()
}

func dedup(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// tallyLine renders code: total (ok) for each code of m, in code order.
func tallyLine[T any](m map[codes.Code]T, get func(T) (int, int)) string {
	cs := make([]codes.Code, 0, len(m))
	for c := range m {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i] < cs[j] })
	var parts []string
	total := 0
	for _, c := range cs {
		n, ok := get(m[c])
		total += n
		parts = append(parts, fmt.Sprintf("%v %d (%d)", c, n, ok))
	}
	return fmt.Sprintf("%5d: %s", total, strings.Join(parts, ", "))
}

func shorten(s string) string {
	if len(s) > 300 {
		return s[:280] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}

// setUp builds the sandbox, attaches two loop disks, starts the daemon and
// prepares volume A (formatted, unmounted) and volume B (formatted,
// mounted beside the working dirs), all before the first snapshot.
func setUp(t *testing.T) *env {
	t.Helper()
	root, err := os.MkdirTemp("", "hostile")
	if err != nil {
		t.Fatal(err)
	}
	rootName, rootDev, err := rootDisk()
	if err != nil {
		t.Fatal(err)
	}
	s := sandbox{
		Root: root, Kubelet: root + "/kubelet", CSI: root + "/csi", RootDev: rootDev,
		Probe: "csi-hostile-" + strings.TrimPrefix(filepath.Base(root), "hostile"),
	}
	e := &env{s: s, emptyWD: root + "/empty"}
	t.Cleanup(func() { tearDown(t, e) })

	for _, p := range s.probes() {
		if _, err := os.Lstat(p); err == nil {
			t.Fatalf("%s exists: the suite cannot tell whether it created it", p)
		}
	}
	mkdir := func(dirs ...string) {
		for _, d := range dirs {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	write := func(p, content string) {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mkdir(s.Kubelet+"/pods/ok", s.Kubelet+"/pods/src", s.CSI+"/ok", s.CSI+"/data", e.emptyWD,
		s.Plugins()+"/drv", s.Registry(),
		s.Outside()+"/victim/sub", s.Outside()+"/mnt-b", s.Sibling()+"/data", root+"/files")
	write(s.Outside()+"/victim/file", "must survive\n")
	write(s.Outside()+"/victim/sub/file", "must survive too\n")
	write(s.Sibling()+"/data/file", "sibling data\n")
	// Data in every working dir, so emptying one shows in the snapshot.
	write(s.CSI+"/data/file", "working dir data\n")
	write(s.Plugins()+"/drv/data", "nested working dir data\n")
	for _, l := range escapeLinks(s) {
		if err := os.Symlink(l.to, l.at); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range rootLinks(s) {
		if err := os.Symlink(l.to, l.at); err != nil {
			t.Fatal(err)
		}
	}
	e.mntB = s.Outside() + "/mnt-b"
	e.linkB = s.Kubelet + "/pods/l-mnt-b"
	if err := os.Symlink(e.mntB, e.linkB); err != nil {
		t.Fatal(err)
	}
	path := toolsDir(t, root+"/bin")

	for _, name := range []string{"a.img", "b.img"} {
		l, err := attachLoop(root+"/files/"+name, 64<<20)
		if err != nil {
			t.Fatalf("attach a loop device: %v", err)
		}
		e.loops = append(e.loops, l)
	}

	bin := buildDaemon(t)
	e.d = startDaemon(t, bin, s, []string{s.CSI, e.emptyWD, s.Plugins(), s.Registry()}, root+"/s", path)
	e.fs, e.vol, e.disk = fsVersions(t, e.d), volVersions(t, e.d), diskVersions(t, e.d)
	e.smb, e.iscsi, e.sys = smbVersions(t, e.d), iscsiVersions(t, e.d), systemVersions(t, e.d)

	if e.rootDisk, err = diskseq(rootName); err != nil {
		t.Fatalf("diskseq of the root disk %s: %v", rootName, err)
	}
	if zram, _ := filepath.Glob("/sys/block/zram*"); len(zram) > 0 {
		e.filtered, _ = diskseq(filepath.Base(zram[0]))
	}

	// Through the daemon, as a driver stages: find the disks, partition,
	// format. B is then mounted beside the working dirs by the test, as
	// the host's own mounts are.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	dv1 := diskv1.NewDiskClient(e.d.conn(t, "csi-proxy-disk-v1"))
	vv1 := volumev1.NewVolumeClient(e.d.conn(t, "csi-proxy-volume-v1"))
	ids, err := dv1.ListDiskIDs(ctx, &diskv1.ListDiskIDsRequest{})
	if err != nil {
		t.Fatalf("ListDiskIDs: %v", err)
	}
	var vols []string
	for i, l := range e.loops {
		var n uint32
		for num, id := range ids.GetDiskIDs() {
			if id.GetSerialNumber() == l.file {
				n = num
			}
		}
		if n == 0 {
			t.Fatalf("ListDiskIDs does not list %s (%s): %v", l.dev, l.file, ids.GetDiskIDs())
		}
		if i == 0 {
			e.diskA = n
		}
		if _, err := dv1.PartitionDisk(ctx, &diskv1.PartitionDiskRequest{DiskNumber: n}); err != nil {
			t.Fatalf("PartitionDisk %d (%s): %v", n, l.dev, err)
		}
		r, err := vv1.ListVolumesOnDisk(ctx, &volumev1.ListVolumesOnDiskRequest{DiskNumber: n})
		if err != nil || len(r.GetVolumeIds()) != 1 {
			t.Fatalf("ListVolumesOnDisk %d: %v, %v", n, r, err)
		}
		id := r.GetVolumeIds()[0]
		if _, err := vv1.FormatVolume(ctx, &volumev1.FormatVolumeRequest{VolumeId: id}); err != nil {
			t.Fatalf("FormatVolume %s: %v", id, err)
		}
		vols = append(vols, id)
	}
	e.volA, e.volB = vols[0], vols[1]
	part := e.loops[1].dev + "p1"
	if !poll.Until(5*time.Second, 10*time.Millisecond, func() bool { _, err := os.Stat(part); return err == nil }) {
		t.Fatalf("%s did not appear", part)
	}
	for _, mp := range []string{e.mntB, s.Registry()} {
		if err := unix.Mount(part, mp, "ext4", unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
			t.Fatalf("mount %s at %s: %v", part, mp, err)
		}
	}
	return e
}

// tearDown stops nothing the test did not start: the daemon stops in its
// own cleanup (registered later, so it runs first); this unmounts what is
// below the sandbox or of its loop disks, detaches them, removes anything
// a wrongly accepted call created at the probe names, and then the
// sandbox.
func tearDown(t *testing.T, e *env) {
	if e.d != nil {
		e.d.stop(t)
	}
	if mps, err := unmountBelow(e.s.Root, e.loops); err != nil {
		t.Errorf("cleanup: %v", err)
	} else if len(mps) > 2 {
		// Only B's mounts at mntB and on Registry are the test's own.
		t.Logf("cleanup unmounted %v", mps)
	}
	for _, l := range e.loops {
		if err := l.detach(); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}
	for _, l := range e.loops {
		if !poll.Until(5*time.Second, 10*time.Millisecond, func() bool { return !l.attachedTo() }) {
			t.Errorf("cleanup: %s is still attached to %s", l.dev, l.file)
		}
	}
	for _, p := range e.s.probes() {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("cleanup: %s was created by the suite; removing it", p)
			if err := os.RemoveAll(p); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	}
	if mps := mountedBelow(e.s.Root); len(mps) > 0 {
		t.Errorf("cleanup: still mounted below %s: %v; keeping it", e.s.Root, mps)
		return
	}
	if err := os.RemoveAll(e.s.Root); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cleanup: %v", err)
	}
}
