package files

import "strings"

// longPathThreshold is the length from which a path gets the \\?\ prefix.
// Windows refuses longer non-prefixed paths in some calls (CreateDirectoryW
// needs room for an 8.3 name: MAX_PATH - 12 = 248); Go's os package uses the
// same limit (os/path_windows.go fixLongPath).
const longPathThreshold = 248

// ExtendedPath returns the form of an absolute path to hand to Win32: the
// path itself when it is short, and the \\?\ form (\\?\C:\... or
// \\?\UNC\server\share\...) from 248 characters on. It is the one place
// that adds the prefix.
//
// Short paths keep their plain form on purpose: \\?\ also switches off
// Win32 path normalisation (a trailing dot or space would then become part
// of a name that other tools cannot open), and a symbolic link stores its
// target text as given, so kubelet and drivers that read links back see
// C:\... as they do for links os.Symlink makes. Paths reaching this package
// are cleaned (no "." or "..", no "/"), so the prefix never changes their
// meaning.
func ExtendedPath(p string) string {
	if len(p) < longPathThreshold || strings.HasPrefix(p, `\\?\`) || strings.HasPrefix(p, `\??\`) {
		return p
	}
	if strings.HasPrefix(p, `\\.\`) {
		return p // a device path has no long form
	}
	if strings.HasPrefix(p, `\\`) {
		return `\\?\UNC\` + p[2:]
	}
	return `\\?\` + p
}

// ntToWin32 turns the NT path a reparse point stores as its substitute name
// into the Win32 form: \??\C:\x → C:\x, \??\UNC\s\sh → \\s\sh,
// \??\\\s\sh → \\s\sh, \??\Volume{GUID}\ → \\?\Volume{GUID}\. Anything else (a
// relative symlink target) is returned as stored.
//
// \??\\\s\sh is what CreateSymbolicLinkW stores for the target \\?\\\s\sh\,
// the form upstream csi-proxy gives its SMB links (pkg/os/smb/api.go
// NewSmbLink puts utils.EnsureLongPath, a blind \\?\ prefix, before
// \\server\share\..., kubernetes-csi/csi-proxy commit eeba4706).
func ntToWin32(s string) string {
	if !strings.HasPrefix(s, `\??\`) {
		return s
	}
	if unc, ok := uncAfterPrefix(s[4:]); ok {
		return unc
	}
	rest := s[4:]
	if len(rest) >= 2 && rest[1] == ':' {
		return rest
	}
	return `\\?\` + rest
}

// uncAfterPrefix reads what follows a \??\ or \\?\ prefix as a UNC path:
// UNC\s\sh (the documented long form) and \\s\sh (a \\?\ put before a plain
// UNC path, as upstream does) both give \\s\sh.
func uncAfterPrefix(rest string) (string, bool) {
	switch {
	case len(rest) >= 4 && strings.EqualFold(rest[:4], `UNC\`):
		return `\\` + rest[4:], true
	case strings.HasPrefix(rest, `\\`):
		return rest, true
	}
	return "", false
}

// normalizeTarget prepares a link target for comparison: the long-path
// and NT prefixes are dropped (\\?\C:\x and \??\C:\x → C:\x; \\?\UNC\s\sh,
// \??\UNC\s\sh, \\?\\\s\sh and \??\\\s\sh → \\s\sh), "/" becomes "\" and
// trailing separators go, except the one of a drive root.
func normalizeTarget(t string) string {
	t = strings.ReplaceAll(t, "/", `\`)
	if strings.HasPrefix(t, `\\?\`) || strings.HasPrefix(t, `\??\`) {
		rest := t[4:]
		if unc, ok := uncAfterPrefix(rest); ok {
			t = unc
		} else if len(rest) >= 2 && rest[1] == ':' {
			t = rest
		}
	}
	for len(t) > 0 && t[len(t)-1] == '\\' && (len(t) != 3 || t[1] != ':') {
		t = t[:len(t)-1]
	}
	return t
}

// SameTarget tells whether two link targets name the same place, as
// Windows compares paths: without case, whatever the long-path prefix and
// trailing separators.
func SameTarget(a, b string) bool {
	return strings.EqualFold(normalizeTarget(a), normalizeTarget(b))
}

// resolveRelative resolves a relative symlink target against the directory
// holding the link, lexically ("." and ".." are processed), which is what
// Windows does when it follows the link.
func resolveRelative(linkDir, rel string) string {
	rel = strings.ReplaceAll(rel, "/", `\`)
	var base string
	switch {
	case strings.HasPrefix(rel, `\`):
		// Root-relative: the drive of the link.
		if len(linkDir) >= 2 && linkDir[1] == ':' {
			base = linkDir[:2]
		}
	default:
		base = strings.TrimRight(linkDir, `\`)
	}
	parts := strings.Split(base, `\`)
	root := 1 // never climb above the drive (C:) or share (\\s\sh) root
	if strings.HasPrefix(base, `\\`) {
		root = 4
	}
	for _, e := range strings.Split(rel, `\`) {
		switch e {
		case "", ".":
		case "..":
			if len(parts) > root {
				parts = parts[:len(parts)-1]
			}
		default:
			parts = append(parts, e)
		}
	}
	out := strings.Join(parts, `\`)
	if len(out) == 2 && out[1] == ':' {
		out += `\`
	}
	return out
}

// isDriveRoot tells whether p is X:\ (which no Rmdir may remove).
func isDriveRoot(p string) bool {
	return len(p) == 3 && p[1] == ':' && p[2] == '\\'
}

// parentDir returns the directory holding p: C:\a\b → C:\a, C:\a → C:\,
// \\s\sh\a → \\s\sh; a root is its own parent.
func parentDir(p string) string {
	i := strings.LastIndexByte(p, '\\')
	switch {
	case i < 0:
		return p
	case i == 2 && p[1] == ':':
		return p[:3]
	case strings.HasPrefix(p, `\\`) && strings.Count(p, `\`) <= 3:
		return p // \\server\share is a root
	}
	return p[:i]
}

// joinPath appends name to the directory dir.
func joinPath(dir, name string) string {
	if strings.HasSuffix(dir, `\`) {
		return dir + name
	}
	return dir + `\` + name
}
