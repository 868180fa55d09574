package files

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

const guid = "{11111111-2222-3333-4444-555555555555}"

// world builds the layout most tests start from:
//
//	C:\k                     working dir
//	C:\k\stage               volume mounted folder of guid, holding data.txt
//	C:\k\pub                 dir symlink -> C:\k\stage
//	C:\k\tgt\keep.txt        a directory a link points at
func world() *fakeFS {
	f := newFakeFS()
	f.mkdir(`C:\k`)
	f.mount(`C:\k\stage`, guid)
	f.file(volRoot(guid) + `\data.txt`)
	f.symlink(`C:\k\pub`, `C:\k\stage`, true)
	f.mkdir(`C:\k\tgt`)
	f.file(`C:\k\tgt\keep.txt`)
	return f
}

func ctx() context.Context { return context.Background() }

func wantKind(t *testing.T, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error %v, want one wrapping %v", err, kind)
	}
}

func noCall(t *testing.T, f *fakeFS, prefix string) {
	t.Helper()
	for _, c := range f.calls {
		if strings.HasPrefix(c, prefix) {
			t.Fatalf("unexpected call %q in %q", c, f.calls)
		}
	}
}

func TestPathExists(t *testing.T) {
	f := world()
	f.symlink(`C:\k\dangling`, `C:\k\gone`, true)
	h := newHost(f)
	for p, want := range map[string]bool{
		`C:\k`:              true,
		`C:\k\stage`:        true,
		`C:\k\dangling`:     true, // Lstat semantics
		`C:\k\missing`:      false,
		`C:\k\no\such`:      false, // missing parent
		`C:\k\pub\data.txt`: true,  // through link and mount point
	} {
		got, err := h.PathExists(ctx(), p)
		if err != nil || got != want {
			t.Errorf("PathExists(%s) = %v, %v; want %v", p, got, err, want)
		}
	}
	f.errs[`Lstat C:\k\offline`] = errNotReady
	_, err := h.PathExists(ctx(), `C:\k\offline`)
	wantKind(t, err, errdefs.ErrUnavailable)
}

func TestMkdir(t *testing.T) {
	f := world()
	h := newHost(f)
	if err := h.Mkdir(ctx(), `C:\k\a\b\c`); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{`C:\k\a`, `C:\k\a\b`, `C:\k\a\b\c`} {
		if !f.exists(p) {
			t.Errorf("%s not created", p)
		}
	}
	// Existing directory, mounted folder and link to a directory: success.
	for _, p := range []string{`C:\k`, `C:\k\stage`, `C:\k\pub`} {
		f.calls = nil
		if err := h.Mkdir(ctx(), p); err != nil {
			t.Errorf("Mkdir(%s): %v", p, err)
		}
		noCall(t, f, "CreateDirectory")
	}
	// Through a link, the directory is created in its target.
	if err := h.Mkdir(ctx(), `C:\k\pub\sub`); err != nil {
		t.Fatal(err)
	}
	if !f.exists(volRoot(guid) + `\sub`) {
		t.Error("directory not created behind the link")
	}
	// A mounted folder whose volume cannot be opened (unformatted) is
	// still a directory.
	f.mount(`C:\k\raw`, "{77777777-2222-3333-4444-555555555555}")
	f.errs[`Stat C:\k\raw`] = errUnrecognizedVol
	if err := h.Mkdir(ctx(), `C:\k\raw`); err != nil {
		t.Errorf("Mkdir on a mounted folder of a RAW volume: %v", err)
	}
	// A file or a dangling link is in the way.
	f.file(`C:\k\f`)
	wantKind(t, h.Mkdir(ctx(), `C:\k\f`), errdefs.ErrAlreadyExists)
	f.symlink(`C:\k\dl`, `C:\k\gone`, true)
	wantKind(t, h.Mkdir(ctx(), `C:\k\dl`), errdefs.ErrAlreadyExists)
	// A concurrent creator wins the race: still success.
	f.errs[`CreateDirectory C:\k\race`] = errAlreadyExists
	f.mkdir(`C:\k\race`)
	delete(f.nodes, key(`C:\k\race`))
	f.errs[`Lstat C:\k\race`] = nil
	g := &raceFS{fakeFS: f, path: `C:\k\race`}
	if err := newHost(g).Mkdir(ctx(), `C:\k\race`); err != nil {
		t.Errorf("Mkdir racing another creator: %v", err)
	}
}

// raceFS creates path just before CreateDirectory reports it exists.
type raceFS struct {
	*fakeFS
	path string
}

func (r *raceFS) CreateDirectory(p string) error {
	if p == r.path {
		r.mkdir(p)
	}
	return r.fakeFS.CreateDirectory(p)
}

func TestRmdirMountPointDoesNotRecurse(t *testing.T) {
	for _, force := range []bool{true, false} {
		f := world()
		h := newHost(f)
		if err := h.Rmdir(ctx(), `C:\k\stage`, force); err != nil {
			t.Fatalf("force=%v: %v", force, err)
		}
		want := []string{
			`Lstat C:\k\stage`,
			`ReadReparsePoint C:\k\stage`,
			`DeleteVolumeMountPoint C:\k\stage`,
			`RemoveDirectory C:\k\stage`,
		}
		if !reflect.DeepEqual(f.calls, want) {
			t.Errorf("force=%v: calls\n%q\nwant\n%q", force, f.calls, want)
		}
		if f.exists(`C:\k\stage`) {
			t.Error("mount point still there")
		}
		if !f.exists(volRoot(guid) + `\data.txt`) {
			t.Error("data on the mounted volume was deleted")
		}
	}
}

func TestRmdirMountPointWhenDeleteVolumeMountPointFails(t *testing.T) {
	f := world()
	f.errs[`DeleteVolumeMountPoint C:\k\stage`] = errAccessDenied
	// RemoveDirectoryW removes the reparse point itself; the fake models
	// the mounted folder as a directory node it can delete.
	if err := newHost(f).Rmdir(ctx(), `C:\k\stage`, true); err != nil {
		t.Fatal(err)
	}
	if f.exists(`C:\k\stage`) || !f.exists(volRoot(guid)+`\data.txt`) {
		t.Error("mount point not removed, or the volume's data was")
	}
	noCall(t, f, "ReadDir")
}

func TestRmdirLinks(t *testing.T) {
	f := world()
	f.junction(`C:\k\junc`, `C:\k\tgt`)
	f.symlink(`C:\k\flink`, `C:\k\tgt\keep.txt`, false)
	h := newHost(f)
	for _, tc := range []struct {
		path string
		want []string
	}{
		{`C:\k\pub`, []string{`Lstat C:\k\pub`, `RemoveDirectory C:\k\pub`}},
		{`C:\k\junc`, []string{`Lstat C:\k\junc`, `ReadReparsePoint C:\k\junc`, `RemoveDirectory C:\k\junc`}},
		{`C:\k\flink`, []string{`Lstat C:\k\flink`, `DeleteFile C:\k\flink`}},
	} {
		f.calls = nil
		if err := h.Rmdir(ctx(), tc.path, true); err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if !reflect.DeepEqual(f.calls, tc.want) {
			t.Errorf("%s: calls %q, want %q", tc.path, f.calls, tc.want)
		}
	}
	if !f.exists(`C:\k\tgt\keep.txt`) || !f.exists(volRoot(guid)+`\data.txt`) {
		t.Error("a link target lost its contents")
	}
}

func TestRmdirTreeDoesNotEnterReparsePoints(t *testing.T) {
	f := world()
	f.mkdir(`C:\k\pod`)
	f.mkdir(`C:\k\pod\vol`)
	f.mount(`C:\k\pod\vol\mnt`, "{99999999-2222-3333-4444-555555555555}")
	f.file(volRoot("{99999999-2222-3333-4444-555555555555}") + `\precious`)
	f.symlink(`C:\k\pod\vol\link`, `C:\k\tgt`, true)
	f.junction(`C:\k\pod\junc`, `C:\k\tgt`)
	f.roFile(`C:\k\pod\ro.txt`)
	f.file(`C:\k\pod\vol\plain.txt`)
	h := newHost(f)
	if err := h.Rmdir(ctx(), `C:\k\pod`, true); err != nil {
		t.Fatal(err)
	}
	if f.exists(`C:\k\pod`) {
		t.Error("tree not removed")
	}
	if !f.exists(`C:\k\tgt\keep.txt`) || !f.exists(volRoot("{99999999-2222-3333-4444-555555555555}")+`\precious`) {
		t.Error("removal followed a link or entered a mount point")
	}
	for _, c := range f.calls {
		if strings.HasPrefix(c, "ReadDir ") && (strings.HasSuffix(c, `\mnt`) || strings.HasSuffix(c, `\link`) || strings.HasSuffix(c, `\junc`)) {
			t.Errorf("listed a reparse point: %s", c)
		}
	}
	// The read-only file was unlocked, then deleted.
	want := []string{`DeleteFile C:\k\pod\ro.txt`, `SetAttributes C:\k\pod\ro.txt 0x20`, `DeleteFile C:\k\pod\ro.txt`}
	if got := filterCalls(f.calls, `ro.txt`); !reflect.DeepEqual(got, want) {
		t.Errorf("read-only file: %q, want %q", got, want)
	}
	if !contains(f.calls, `DeleteVolumeMountPoint C:\k\pod\vol\mnt`) {
		t.Error("nested mount point not unmounted first")
	}
}

func filterCalls(calls []string, sub string) []string {
	var out []string
	for _, c := range calls {
		if strings.Contains(c, sub) {
			out = append(out, c)
		}
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestRmdirErrors(t *testing.T) {
	f := world()
	f.mkdir(`C:\k\full`)
	f.file(`C:\k\full\x`)
	h := newHost(f)
	wantKind(t, h.Rmdir(ctx(), `C:\k\full`, false), errdefs.ErrFailedPrecondition)
	if !f.exists(`C:\k\full\x`) {
		t.Error("non-force Rmdir removed contents")
	}
	wantKind(t, h.Rmdir(ctx(), `C:\k\missing`, true), errdefs.ErrNotFound)
	wantKind(t, h.Rmdir(ctx(), `C:\`, true), errdefs.ErrFailedPrecondition)
	// A file is removed, as os.Remove does.
	if err := h.Rmdir(ctx(), `C:\k\full\x`, false); err != nil {
		t.Error(err)
	}
	// Empty directory without force.
	if err := h.Rmdir(ctx(), `C:\k\full`, false); err != nil {
		t.Error(err)
	}
	// Host errors keep their Win32 error and map their kind.
	f.mkdir(`C:\k\busy`)
	f.errs[`RemoveDirectory C:\k\busy`] = errSharingViolation
	err := h.Rmdir(ctx(), `C:\k\busy`, false)
	wantKind(t, err, errdefs.ErrUnavailable)
	wantKind(t, err, errSharingViolation)
}

func TestRmdirContents(t *testing.T) {
	f := world()
	f.mkdir(`C:\k\d`)
	f.file(`C:\k\d\a`)
	f.mkdir(`C:\k\d\sub`)
	f.file(`C:\k\d\sub\b`)
	f.symlink(`C:\k\d\l`, `C:\k\tgt`, true)
	h := newHost(f)
	if err := h.RmdirContents(ctx(), `C:\k\d`); err != nil {
		t.Fatal(err)
	}
	if !f.exists(`C:\k\d`) || len(f.children(`C:\k\d`)) != 0 {
		t.Errorf("contents left: %v", f.children(`C:\k\d`))
	}
	if !f.exists(`C:\k\tgt\keep.txt`) {
		t.Error("followed a link inside")
	}
	// The path itself is followed (as upstream's Readdirnames does).
	if err := h.RmdirContents(ctx(), `C:\k\pub`); err != nil {
		t.Fatal(err)
	}
	if f.exists(volRoot(guid)+`\data.txt`) || !f.exists(`C:\k\pub`) {
		t.Error("contents behind the link not removed, or the link was")
	}
	wantKind(t, h.RmdirContents(ctx(), `C:\k\tgt\keep.txt`), errdefs.ErrFailedPrecondition)
	wantKind(t, h.RmdirContents(ctx(), `C:\k\missing`), errdefs.ErrNotFound)
}

func TestCreateSymlink(t *testing.T) {
	f := world()
	h := newHost(f)
	if err := h.CreateSymlink(ctx(), `C:\k\tgt`, `C:\k\new`); err != nil {
		t.Fatal(err)
	}
	if got := filterCalls(f.calls, "CreateSymlink"); !reflect.DeepEqual(got, []string{`CreateSymlink C:\k\new -> C:\k\tgt 0x3`}) {
		t.Errorf("calls %q", got)
	}
	// Again, and with another spelling of the same source: no new call.
	f.calls = nil
	for _, src := range []string{`C:\k\tgt`, `c:\K\TGT\`} {
		if err := h.CreateSymlink(ctx(), src, `C:\k\new`); err != nil {
			t.Errorf("existing link to %s: %v", src, err)
		}
	}
	noCall(t, f, "CreateSymlink")
	// A link elsewhere, a directory or a file is in the way.
	wantKind(t, h.CreateSymlink(ctx(), `C:\k\stage`, `C:\k\new`), errdefs.ErrAlreadyExists)
	wantKind(t, h.CreateSymlink(ctx(), `C:\k\tgt`, `C:\k\stage`), errdefs.ErrAlreadyExists)
	// A source that does not exist yet still gets a directory link.
	f.calls = nil
	if err := h.CreateSymlink(ctx(), `C:\k\later`, `C:\k\l2`); err != nil {
		t.Fatal(err)
	}
	if !contains(f.calls, `CreateSymlink C:\k\l2 -> C:\k\later 0x3`) {
		t.Errorf("calls %q", f.calls)
	}
	// A file source gets a file link.
	f.calls = nil
	if err := h.CreateSymlink(ctx(), `C:\k\tgt\keep.txt`, `C:\k\l3`); err != nil {
		t.Fatal(err)
	}
	if !contains(f.calls, `CreateSymlink C:\k\l3 -> C:\k\tgt\keep.txt 0x2`) {
		t.Errorf("calls %q", f.calls)
	}
	// The parent must exist.
	wantKind(t, h.CreateSymlink(ctx(), `C:\k\tgt`, `C:\k\none\l`), errdefs.ErrNotFound)
}

func TestCreateSymlinkRetriesWithoutUnprivilegedFlag(t *testing.T) {
	f := world()
	f.noUnprivilegedFlag = true
	if err := newHost(f).CreateSymlink(ctx(), `C:\k\tgt`, `C:\k\new`); err != nil {
		t.Fatal(err)
	}
	want := []string{`CreateSymlink C:\k\new -> C:\k\tgt 0x3`, `CreateSymlink C:\k\new -> C:\k\tgt 0x1`}
	if got := filterCalls(f.calls, "CreateSymlink"); !reflect.DeepEqual(got, want) {
		t.Errorf("calls %q, want %q", got, want)
	}
}

func TestCreateSymlinkWithoutPrivilege(t *testing.T) {
	f := world()
	f.noPrivilege = true
	err := newHost(f).CreateSymlink(ctx(), `C:\k\tgt`, `C:\k\new`)
	wantKind(t, err, errdefs.ErrPermissionDenied)
	if !strings.Contains(err.Error(), "SeCreateSymbolicLinkPrivilege") {
		t.Errorf("message %q does not name the privilege", err)
	}
}

func TestCreateDirLinkToShare(t *testing.T) {
	f := world()
	f.shares[key(`\\srv\share`)] = true
	f.mkdir(`\\srv\share\dir`)
	h := newHost(f)
	if err := h.CreateDirLink(ctx(), `\\srv\share\dir\`, `C:\k\smb`); err != nil {
		t.Fatal(err)
	}
	if !contains(f.calls, `CreateSymlink C:\k\smb -> \\srv\share\dir\ 0x3`) {
		t.Errorf("calls %q", f.calls)
	}
	noCall(t, f, `Stat \\srv`)
	ok, err := h.IsSymlink(ctx(), `C:\k\smb`)
	if err != nil || !ok {
		t.Errorf("IsSymlink on the share link = %v, %v", ok, err)
	}
	// Idempotent, whatever the case and trailing separator.
	f.calls = nil
	if err := h.CreateDirLink(ctx(), `\\SRV\share\dir`, `C:\k\smb`); err != nil {
		t.Fatal(err)
	}
	noCall(t, f, "CreateSymlink")
	st, err := h.CheckLink(ctx(), `C:\k\smb`, `\\srv\share\elsewhere`)
	if err != nil || st != LinkOther {
		t.Errorf("CheckLink to another dir = %v, %v", st, err)
	}
	// Once the share is unreachable, the link no longer resolves.
	f.shares[key(`\\srv\share`)] = false
	if ok, _ := h.IsSymlink(ctx(), `C:\k\smb`); ok {
		t.Error("IsSymlink true for an unreachable share")
	}
}

func TestIsSymlink(t *testing.T) {
	f := world()
	f.symlink(`C:\k\dangling`, `C:\k\gone`, true)
	f.junction(`C:\k\junc`, `C:\k\tgt`)
	f.junction(`C:\k\deadjunc`, `C:\k\gone`)
	f.symlink(`C:\k\rel`, `..\k\tgt`, true)
	f.mount(`C:\k\lost`, "{00000000-0000-0000-0000-00000000dead}")
	f.volumes["{00000000-0000-0000-0000-00000000dead}"] = false
	h := newHost(f)
	for p, want := range map[string]bool{
		`C:\k\pub`:          true,  // symlink to a mount point
		`C:\k\stage`:        true,  // volume mounted folder
		`C:\k\dangling`:     false, // target gone
		`C:\k\junc`:         true,
		`C:\k\deadjunc`:     false,
		`C:\k\rel`:          true,  // relative symlink
		`C:\k\lost`:         false, // volume gone
		`C:\k\tgt`:          false, // plain directory
		`C:\k\tgt\keep.txt`: false,
	} {
		got, err := h.IsSymlink(ctx(), p)
		if err != nil || got != want {
			t.Errorf("IsSymlink(%s) = %v, %v; want %v", p, got, err, want)
		}
	}
	_, err := h.IsSymlink(ctx(), `C:\k\missing`)
	wantKind(t, err, errdefs.ErrNotFound)
	// A volume mounted folder is judged by the mount manager, not by
	// opening it.
	f.calls = nil
	if ok, _ := h.IsSymlink(ctx(), `C:\k\stage`); !ok {
		t.Error("mount point")
	}
	want := []string{`Lstat C:\k\stage`, `ReadReparsePoint C:\k\stage`, `VolumeNameForMountPoint C:\k\stage`}
	if !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls %q, want %q", f.calls, want)
	}
}

// TestLinksMadeByUpstreamAreTheSameUNCTarget: upstream csi-proxy links an
// SMB volume with CreateSymbolicLinkW(EnsureLongPath(local),
// EnsureLongPath(remote + `\`)) (kubernetes-csi/csi-proxy pkg/os/smb/api.go
// NewSmbLink and pkg/utils/utils.go EnsureLongPath, commit eeba4706), which
// prefixes \\?\ blindly: the target is \\?\\\srv\share\dir\, stored with
// the substitute name \??\\\srv\share\dir\. The documented long form
// \\?\UNC\srv\share\dir\ is stored as \??\UNC\srv\share\dir\. Both are the
// same place as \\srv\share\dir\: re-staging over such a link is success
// and makes no new link.
func TestLinksMadeByUpstreamAreTheSameUNCTarget(t *testing.T) {
	for _, made := range []string{
		`\\?\\\srv\share\dir\`,
		`\\?\UNC\srv\share\dir\`,
		`\\?\unc\SRV\share\dir`,
	} {
		t.Run(made, func(t *testing.T) {
			f := world()
			f.shares[key(`\\srv\share`)] = true
			f.mkdir(`\\srv\share\dir`)
			f.symlink(`C:\k\smb`, made, true)
			h := newHost(f)
			st, err := h.CheckLink(ctx(), `C:\k\smb`, `\\srv\share\dir\`)
			if err != nil || st != LinkToTarget {
				t.Fatalf("CheckLink of a link to %s = %v, %v; want LinkToTarget", made, st, err)
			}
			if err := h.CreateDirLink(ctx(), `\\srv\share\dir\`, `C:\k\smb`); err != nil {
				t.Fatalf("CreateDirLink over a link to %s: %v", made, err)
			}
			if err := h.CreateSymlink(ctx(), `\\srv\share\dir`, `C:\k\smb`); err != nil {
				t.Fatalf("CreateSymlink over a link to %s: %v", made, err)
			}
			noCall(t, f, "CreateSymlink")
			if st, err := h.CheckLink(ctx(), `C:\k\smb`, `\\srv\share\elsewhere\`); err != nil || st != LinkOther {
				t.Errorf("CheckLink against another directory = %v, %v; want LinkOther", st, err)
			}
			if ok, err := h.IsSymlink(ctx(), `C:\k\smb`); err != nil || !ok {
				t.Errorf("IsSymlink = %v, %v; want true", ok, err)
			}
		})
	}
}
