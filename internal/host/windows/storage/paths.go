package storage

import (
	"fmt"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// longPathThreshold is the length from which paths get the \\?\ prefix.
// It is the threshold Go's os package uses (fixLongPath: MAX_PATH minus
// the 12 characters CreateDirectory reserves for an 8.3 name). Shorter
// paths are passed unprefixed, the form every Win32 volume function is
// documented and field-tested with; longer ones would fail unprefixed
// anyway.
const longPathThreshold = 248

// win32Path returns a cleaned drive-letter path (hostpath.Windows.Clean)
// as Win32 path functions should receive it.
func win32Path(p string) string {
	if len(p) < longPathThreshold {
		return p
	}
	return `\\?\` + p
}

// mountPointArg returns p with the trailing backslash that
// GetVolumeNameForVolumeMountPoint, SetVolumeMountPoint and
// DeleteVolumeMountPoint require (Learn: "the string must end with a
// trailing backslash").
func mountPointArg(p string) string {
	q := win32Path(p)
	if !strings.HasSuffix(q, `\`) {
		q += `\`
	}
	return q
}

// volumeDevice returns the name that opens the volume itself:
// \\?\Volume{GUID} without the trailing backslash, which would open the
// volume's root directory instead (Learn "CreateFileW").
func volumeDevice(id string) string { return strings.TrimSuffix(id, `\`) }

// volumeRoot returns the volume GUID path with its trailing backslash, the
// form GetVolumeInformation and GetDiskFreeSpaceEx take.
func volumeRoot(id string) string {
	if strings.HasSuffix(id, `\`) {
		return id
	}
	return id + `\`
}

// diskDevice names disk n for CreateFile.
func diskDevice(n uint32) string { return fmt.Sprintf(`\\.\PhysicalDrive%d`, n) }

// targetKind says where a link leads.
type targetKind int

const (
	targetLocal  targetKind = iota + 1 // a drive-letter path
	targetVolume                       // a volume GUID path, possibly with a path inside it
	targetUNC                          // an SMB path: on no local volume
)

// linkTarget is where a symbolic link, junction or mounted folder leads.
type linkTarget struct {
	kind targetKind
	// path is the cleaned drive-letter path (targetLocal), the volume GUID
	// path \\?\Volume{GUID}\ (targetVolume) or the UNC path (targetUNC).
	path string
	// inVolume is the path inside the volume for targetVolume, "" for its
	// root.
	inVolume string
}

// resolveLink turns the reparse data of the link at linkPath (a cleaned
// path) into where it leads. Absolute targets are stored as NT paths
// (\??\C:\x, \??\Volume{GUID}\, \??\UNC\server\share); other NT paths
// (\Device\…, GLOBALROOT) are not followed. A relative symlink's target
// (..\x, a bare name, or root-relative \x) is resolved against the link's
// directory or drive; ".." and "." are resolved lexically, as Windows
// resolves them in link targets.
func resolveLink(linkPath string, r reparsePoint) (linkTarget, error) {
	t := r.Substitute
	if t == "" {
		t = r.Print
	}
	t = strings.ReplaceAll(t, "/", `\`)
	if t == "" {
		return linkTarget{}, errdefs.Errorf(errdefs.ErrFailedPrecondition, "the link %q has an empty target", linkPath)
	}
	if r.Relative {
		base := hostpath.Windows.Dir(linkPath) + `\`
		if strings.HasPrefix(t, `\`) {
			base = linkPath[:2] // root-relative (\dir): on the link's own drive
		}
		p, err := normalize(base + t)
		if err != nil {
			return linkTarget{}, fmt.Errorf("target %q of link %q: %w", t, linkPath, err)
		}
		return linkTarget{kind: targetLocal, path: p}, nil
	}
	rest := t
	for _, prefix := range []string{`\??\`, `\\?\`, `\\.\`} {
		if strings.HasPrefix(rest, prefix) {
			rest = rest[len(prefix):]
			break
		}
	}
	switch {
	case hasPrefixFold(rest, `UNC\`):
		return linkTarget{kind: targetUNC, path: `\\` + rest[4:]}, nil
	case strings.HasPrefix(rest, `\\`): // \??\\\server\share, what upstream's SMB links store
		return linkTarget{kind: targetUNC, path: rest}, nil
	case hasPrefixFold(rest, `Volume{`):
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			return linkTarget{}, errdefs.Errorf(errdefs.ErrFailedPrecondition, "the link %q has a malformed volume target %q", linkPath, t)
		}
		inside := strings.Trim(rest[end+1:], `\`)
		return linkTarget{kind: targetVolume, path: `\\?\` + rest[:end+1] + `\`, inVolume: inside}, nil
	case len(rest) >= 2 && rest[1] == ':':
		p, err := normalize(rest)
		if err != nil {
			return linkTarget{}, fmt.Errorf("target %q of link %q: %w", t, linkPath, err)
		}
		return linkTarget{kind: targetLocal, path: p}, nil
	}
	return linkTarget{}, errdefs.Errorf(errdefs.ErrFailedPrecondition, "the link %q leads to %q, a kind of target this backend does not follow", linkPath, t)
}

// normalize resolves "." and ".." in a drive-letter path lexically (".."
// at the root stays at the root, as Windows does) and cleans the result.
func normalize(p string) (string, error) {
	if len(p) < 2 || p[1] != ':' {
		return "", errdefs.Errorf(errdefs.ErrFailedPrecondition, "%q is not a drive-letter path", p)
	}
	var out []string
	for _, e := range strings.Split(p[2:], `\`) {
		switch e {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, e)
		}
	}
	c, err := hostpath.Windows.Clean(p[:2] + `\` + strings.Join(out, `\`))
	if err != nil {
		return "", errdefs.Errorf(errdefs.ErrFailedPrecondition, "link target %q cannot be followed: %v", p, err)
	}
	return c, nil
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
