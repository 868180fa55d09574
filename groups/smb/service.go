package smb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/keylock"
	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/printable"
)

// Service is the SMB group on top of a Host: the one implementation of
// Interface that every transport uses.
type Service struct {
	host  Host
	paths *hostpath.Policy
	locks keylock.Locks
}

var _ Interface = (*Service)(nil)

// NewService returns the SMB group served by host; local links must lie
// inside paths' working directories.
func NewService(host Host, paths *hostpath.Policy) *Service {
	return &Service{host: host, paths: paths}
}

// ParseRemotePath normalises an SMB path (\\server\share[\dir...], with /
// accepted for \) and returns the lower-cased share root and the full path.
// Upstream keys global mappings by the lower-cased share root, so two PVs on
// one share use one mapping.
func ParseRemotePath(p string) (share, full string, err error) {
	if p == "" {
		return "", "", errdefs.Errorf(errdefs.ErrInvalidArgument, "remote_path is empty")
	}
	if len(p) > 32767 {
		return "", "", errdefs.Errorf(errdefs.ErrInvalidArgument, "remote_path is %d bytes long, the limit is 32767", len(p))
	}
	if err := printable.Check("remote_path", p); err != nil {
		return "", "", err
	}
	q := strings.ReplaceAll(p, "/", `\`)
	if !strings.HasPrefix(q, `\\`) {
		return "", "", errdefs.Errorf(errdefs.ErrInvalidArgument, `remote_path %s is not of the form \\server\share`, printable.Quote(p))
	}
	parts := strings.Split(strings.TrimRight(q[2:], `\`), `\`)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return "", "", errdefs.Errorf(errdefs.ErrInvalidArgument, `remote_path %s is not of the form \\server\share`, printable.Quote(p))
	}
	for _, e := range parts {
		switch {
		case e == "" || e == "." || e == "..":
			return "", "", errdefs.Errorf(errdefs.ErrInvalidArgument, "remote_path %s has an empty, \".\" or \"..\" element", printable.Quote(p))
		case strings.ContainsAny(e, "<>:\"|?*"):
			return "", "", errdefs.Errorf(errdefs.ErrInvalidArgument, "remote_path %s contains a character Windows does not allow", printable.Quote(p))
		}
	}
	if parts[0] == "?" || parts[0] == "." {
		return "", "", errdefs.Errorf(errdefs.ErrInvalidArgument, "remote_path %s is a device path, not a share", printable.Quote(p))
	}
	if err := checkNetName("server", parts[0]); err != nil {
		return "", "", errdefs.Errorf(errdefs.ErrInvalidArgument, "remote_path %s: %v", printable.Quote(p), err)
	}
	if err := checkNetName("share", parts[1]); err != nil {
		return "", "", errdefs.Errorf(errdefs.ErrInvalidArgument, "remote_path %s: %v", printable.Quote(p), err)
	}
	share = strings.ToLower(`\\` + parts[0] + `\` + parts[1])
	return share, `\\` + strings.Join(parts, `\`), nil
}

// netNameForbidden are the characters a share name cannot hold: [MS-FSCC]
// 2.1.6 "Share name" lists " \ / [ ] : | < > + = ; , * ? (and control
// characters, which printable.Check has refused already); [MS-SRVS]
// 2.2.2.8 gives the same set as the default invalid characters of
// NAMETYPE_SHARE and, with "*", of NAMETYPE_COMPUTER, so the server name
// is held to it too. Below the share, elements are file names, which may
// hold ; + = , [ and ].
const netNameForbidden = `"\/[]:|<>+=;,*?`

// maxShareNameChars is the longest share name, in UTF-16 code units
// (Windows counts WCHARs): [MS-FSCC] 2.1.6 "no more than 80 characters",
// [MS-SRVS] 2.2.2.8 NAMETYPE_SHARE 1/80.
const maxShareNameChars = 80

// checkNetName refuses a server or share name Windows could never serve,
// so that a name such as "share;touch x" is InvalidArgument before any
// network traffic instead of an Unavailable from the SMB client.
func checkNetName(kind, name string) error {
	if i := strings.IndexAny(name, netNameForbidden); i >= 0 {
		return fmt.Errorf("the %s name %s holds %q, which Windows does not allow in %s names", kind, printable.Quote(name), name[i], kind)
	}
	if kind == "share" {
		if n := len(utf16.Encode([]rune(name))); n > maxShareNameChars {
			return fmt.Errorf("the share name is %d characters long, the limit is %d", n, maxShareNameChars)
		}
	}
	return nil
}

// checkUsername refuses user names that could not be a Windows account
// name (DOMAIN\user or user@domain): text that is not printable (package
// printable) and the characters account names cannot hold.
func checkUsername(u string) error {
	if len(u) > 256 {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "username is %d bytes long, the limit is 256", len(u))
	}
	if err := printable.Check("username", u); err != nil {
		return err
	}
	for _, r := range u {
		if strings.ContainsRune(`"/[]:|<>+=;,?*`, r) {
			return errdefs.Errorf(errdefs.ErrInvalidArgument, "username %q contains %q, which an account name cannot", u, r)
		}
	}
	return nil
}

// CheckCredentials validates a user name and password as every request
// that maps a share does: the user name must be one an account could
// have; the password is opaque, and only its length is checked, so that
// no refusal tells anything about its content. A backend refuses what it
// cannot carry (the Linux one a NUL).
func CheckCredentials(username, password string) error {
	if err := checkUsername(username); err != nil {
		return err
	}
	if len(password) > 1024 {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "password is longer than 1024 bytes")
	}
	return nil
}

// WithShares runs f with the SMB backend while holding the per-share
// locks of shares (lower-cased \\server\share roots, as ParseRemotePath
// returns them), taken in sorted order so that two callers never wait for
// each other. NewSmbGlobalMapping and RemoveSmbGlobalMapping take the
// same locks, so f sees no mapping of these shares change under it: the
// SMB mappings group repairs and collects mappings through it.
func (s *Service) WithShares(ctx context.Context, shares []string, f func(Host) error) error {
	keys := append([]string(nil), shares...)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var unlocks []func()
	defer func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}()
	for _, k := range keys {
		unlock, err := s.locks.Lock(ctx, k)
		if err != nil {
			return err
		}
		unlocks = append(unlocks, unlock)
	}
	return f(s.host)
}

// NewSmbGlobalMapping implements Interface.
func (s *Service) NewSmbGlobalMapping(ctx context.Context, req *NewSmbGlobalMappingRequest) (*NewSmbGlobalMappingResponse, error) {
	share, full, err := ParseRemotePath(req.RemotePath)
	if err != nil {
		return nil, err
	}
	if err := CheckCredentials(req.Username, req.Password); err != nil {
		return nil, err
	}
	m := Mapping{Share: share, RemotePath: full, Username: req.Username, Password: req.Password}
	if req.LocalPath != "" {
		// The link must not replace a working directory itself.
		if m.LocalPath, err = s.paths.CheckBelow("local_path", req.LocalPath); err != nil {
			return nil, err
		}
	}
	unlock, err := s.locks.Lock(ctx, share)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.host.NewSmbGlobalMapping(ctx, m); err != nil {
		return nil, fmt.Errorf("map %s: %w", full, err)
	}
	return &NewSmbGlobalMappingResponse{}, nil
}

// RemoveSmbGlobalMapping implements Interface.
func (s *Service) RemoveSmbGlobalMapping(ctx context.Context, req *RemoveSmbGlobalMappingRequest) (*RemoveSmbGlobalMappingResponse, error) {
	share, _, err := ParseRemotePath(req.RemotePath)
	if err != nil {
		return nil, err
	}
	unlock, err := s.locks.Lock(ctx, share)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.host.RemoveSmbGlobalMapping(ctx, share); err != nil {
		return nil, fmt.Errorf("unmap %s: %w", share, err)
	}
	return &RemoveSmbGlobalMappingResponse{}, nil
}
