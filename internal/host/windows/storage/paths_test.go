package storage

import (
	"errors"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

func TestWin32Path(t *testing.T) {
	short := `C:\var\lib\kubelet\plugins\pd.csi.storage.gke.io\globalmount`
	if got := win32Path(short); got != short {
		t.Errorf("win32Path(short) = %q", got)
	}
	long := `C:\` + strings.Repeat(`d\`, 130) + "x" // 264 characters
	if got := win32Path(long); got != `\\?\`+long {
		t.Errorf("win32Path(long) = %q", got[:20])
	}
	edge := `C:\` + strings.Repeat("a", longPathThreshold-4)
	if len(edge) != longPathThreshold-1 || win32Path(edge) != edge {
		t.Errorf("a %d-character path was prefixed", len(edge))
	}
	if got := mountPointArg(short); got != short+`\` {
		t.Errorf("mountPointArg = %q", got)
	}
	if got := mountPointArg(`C:\`); got != `C:\` {
		t.Errorf("mountPointArg(root) = %q", got)
	}
	if got := mountPointArg(long); got != `\\?\`+long+`\` {
		t.Errorf("mountPointArg(long) = %q", got)
	}
	id := `\\?\Volume{0c8a1d6e-5b2a-4a8e-9c1e-1d2f3a4b5c6d}\`
	if got := volumeDevice(id); got != strings.TrimSuffix(id, `\`) {
		t.Errorf("volumeDevice = %q", got)
	}
	if volumeRoot(id) != id || volumeRoot(volumeDevice(id)) != id {
		t.Error("volumeRoot does not add exactly one backslash")
	}
	if diskDevice(12) != `\\.\PhysicalDrive12` {
		t.Errorf("diskDevice = %q", diskDevice(12))
	}
}

func TestResolveLink(t *testing.T) {
	const link = `C:\var\lib\kubelet\pods\p\volumes\v\mount`
	for _, tc := range []struct {
		name string
		r    reparsePoint
		want linkTarget
	}{
		{"NT path", reparsePoint{Substitute: `\??\C:\var\lib\kubelet\plugins\x\globalmount`},
			linkTarget{kind: targetLocal, path: `C:\var\lib\kubelet\plugins\x\globalmount`}},
		{"lowercase drive, trailing slash", reparsePoint{Substitute: `\??\d:\data\`},
			linkTarget{kind: targetLocal, path: `D:\data`}},
		{"Win32 long form", reparsePoint{Substitute: `\\?\C:\a\b`}, linkTarget{kind: targetLocal, path: `C:\a\b`}},
		{"dot-dot resolved", reparsePoint{Substitute: `\??\C:\a\b\..\c\.\d`}, linkTarget{kind: targetLocal, path: `C:\a\c\d`}},
		{"dot-dot above the root stays at the root", reparsePoint{Substitute: `\??\C:\..\..\x`}, linkTarget{kind: targetLocal, path: `C:\x`}},
		{"relative", reparsePoint{Substitute: `..\..\plugins\x`, Relative: true},
			linkTarget{kind: targetLocal, path: `C:\var\lib\kubelet\pods\p\plugins\x`}},
		{"relative bare name", reparsePoint{Substitute: `sibling`, Relative: true},
			linkTarget{kind: targetLocal, path: `C:\var\lib\kubelet\pods\p\volumes\v\sibling`}},
		{"root-relative", reparsePoint{Substitute: `\data\x`, Relative: true}, linkTarget{kind: targetLocal, path: `C:\data\x`}},
		{"print name when no substitute", reparsePoint{Print: `C:\p`}, linkTarget{kind: targetLocal, path: `C:\p`}},
		{"volume root", reparsePoint{Substitute: `\??\Volume{0c8a1d6e-5b2a-4a8e-9c1e-1d2f3a4b5c6d}\`},
			linkTarget{kind: targetVolume, path: `\\?\Volume{0c8a1d6e-5b2a-4a8e-9c1e-1d2f3a4b5c6d}\`}},
		{"inside a volume", reparsePoint{Substitute: `\??\Volume{0c8a1d6e-5b2a-4a8e-9c1e-1d2f3a4b5c6d}\dir\sub\`},
			linkTarget{kind: targetVolume, path: `\\?\Volume{0c8a1d6e-5b2a-4a8e-9c1e-1d2f3a4b5c6d}\`, inVolume: `dir\sub`}},
		{"UNC", reparsePoint{Substitute: `\??\UNC\server\share\dir`}, linkTarget{kind: targetUNC, path: `\\server\share\dir`}},
		{"upstream SMB link form", reparsePoint{Substitute: `\??\\\server\share\dir\`}, linkTarget{kind: targetUNC, path: `\\server\share\dir\`}},
		{"slashes", reparsePoint{Substitute: `\??\C:/a/b`}, linkTarget{kind: targetLocal, path: `C:\a\b`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveLink(link, tc.r)
			if err != nil || got != tc.want {
				t.Errorf("resolveLink = %+v, %v\nwant %+v", got, err, tc.want)
			}
		})
	}
	for _, bad := range []reparsePoint{
		{},
		{Substitute: `\??\Volume{broken`},
		{Substitute: `\Device\HarddiskVolume3\x`},
		{Substitute: `\??\GLOBALROOT\Device\x`},
		{Substitute: `\??\C:\a\b:stream`},
		{Substitute: `nul`, Relative: false},
	} {
		if got, err := resolveLink(link, bad); !errors.Is(err, errdefs.ErrFailedPrecondition) {
			t.Errorf("resolveLink(%+v) = %+v, %v; want a failed-precondition error", bad, got, err)
		}
	}
}
