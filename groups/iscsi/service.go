package iscsi

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/keylock"
	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/printable"
)

// DefaultPort is the iSCSI port used when a request says 0.
const DefaultPort = 3260

// Service is the iSCSI group on top of a Host: the one implementation of
// Interface that every transport uses.
type Service struct {
	host  Host
	locks keylock.Locks
}

var _ Interface = (*Service)(nil)

// NewService returns the iSCSI group served by host.
func NewService(host Host) *Service { return &Service{host: host} }

// ParsePortal validates a wire portal and applies the default port. The
// address is one of
//
//   - an IPv4 address in dotted-quad form: four decimal numbers from 0 to
//     255 without leading zeros. The short, octal and hexadecimal forms
//     inet_aton(3) also reads (0, 2130706433, 127.1, 0x7f.1, 010.0.0.1)
//     are refused: iscsiadm and the resolver would read them as an address
//     other than the one the caller appears to name;
//   - an IPv6 address, bare or in one pair of brackets, without a zone
//     (fe80::1%eth0 names an interface of this node) and not an
//     IPv4-mapped one (::ffff:10.0.0.1, which is an IPv4 address);
//   - an RFC 1123 host name: dot-separated labels of ASCII letters, digits
//     and inner hyphens, 1 to 63 bytes each and 253 in all, whose last
//     label is not all digits (RFC 1123 2.1: a host name never has the
//     dotted-decimal form) and which is not a number inet_aton reads.
//
// The port is 1 to 65535; 0 means DefaultPort (3260).
func ParsePortal(p *TargetPortal) (Portal, error) {
	if p == nil {
		return Portal{}, errdefs.Errorf(errdefs.ErrInvalidArgument, "target_portal is missing")
	}
	addr := p.TargetAddress
	if addr == "" {
		return Portal{}, errdefs.Errorf(errdefs.ErrInvalidArgument, "target_portal.target_address is empty")
	}
	host, why := portalHost(addr)
	if why != "" {
		return Portal{}, errdefs.Errorf(errdefs.ErrInvalidArgument, "target_portal.target_address %s is neither an IP address nor a host name: it %s", printable.Quote(addr), why)
	}
	port := p.TargetPort
	if port == 0 {
		port = DefaultPort
	}
	if port > 65535 {
		return Portal{}, errdefs.Errorf(errdefs.ErrInvalidArgument, "target_portal.target_port %d is not a TCP port (1 to 65535)", port)
	}
	return Portal{Address: host, Port: port}, nil
}

// portalHost returns the address a portal names (an IPv6 address without
// its brackets), or why addr is none of the accepted forms.
func portalHost(addr string) (string, string) {
	if len(addr) > 255 {
		return "", fmt.Sprintf("is %d bytes long; a host name has at most 253", len(addr))
	}
	if err := printable.Check("target_portal.target_address", addr); err != nil {
		return "", "is not printable text"
	}
	if inner, ok := strings.CutPrefix(addr, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		if a, err := netip.ParseAddr(inner); !ok || err != nil || !a.Is6() || a.Is4In6() || a.Zone() != "" {
			return "", "is not an IPv6 address in brackets ([fd00::1])"
		}
		return inner, ""
	}
	if strings.ContainsAny(addr, "[]") {
		return "", "has an unbalanced bracket"
	}
	if strings.Contains(addr, ":") {
		a, err := netip.ParseAddr(addr)
		switch {
		case err != nil || !a.Is6():
			return "", "has a colon but is not an IPv6 address (a port goes in target_port)"
		case a.Zone() != "":
			return "", "is an IPv6 address with a zone, which names an interface of this node"
		case a.Is4In6():
			return "", "is an IPv4-mapped IPv6 address; send the IPv4 address"
		}
		return addr, ""
	}
	labels := strings.Split(addr, ".")
	if isDecimal(labels[len(labels)-1]) || inetAtonForm(labels) {
		if a, err := netip.ParseAddr(addr); err == nil && a.Is4() {
			return addr, ""
		}
		return "", "is not an IPv4 address in dotted-quad form (four numbers 0 to 255 without leading zeros)"
	}
	if len(addr) > 253 {
		return "", fmt.Sprintf("is %d bytes long; a host name has at most 253", len(addr))
	}
	for _, l := range labels {
		if !hostLabel(l) {
			return "", fmt.Sprintf("is not an RFC 1123 host name: label %q", l)
		}
	}
	return addr, ""
}

// hostLabel tells whether l is a host name label: 1 to 63 ASCII letters,
// digits and hyphens, not starting or ending with a hyphen.
func hostLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !isAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// inetAtonForm tells whether inet_aton(3) would read the labels as an IPv4
// address: one to four parts, each a C number (decimal, 0x hexadecimal or
// 0 octal), such as 0x7f000001 or 0x7f.1, which are valid host names by
// RFC 1123's letters but not names.
func inetAtonForm(labels []string) bool {
	if len(labels) > 4 {
		return false
	}
	for _, l := range labels {
		digits := l
		hex := false
		if len(l) >= 2 && l[0] == '0' && (l[1] == 'x' || l[1] == 'X') {
			digits, hex = l[2:], true
		}
		if digits == "" && !hex {
			return false
		}
		for i := 0; i < len(digits); i++ {
			c := digits[i]
			if hex && !isHexDigit(c) || !hex && !isDigit(c) {
				return false
			}
		}
	}
	return true
}

// maxIQN is the longest iSCSI name in bytes (RFC 3720 3.2.6.1).
const maxIQN = 223

// CheckIQN validates an iSCSI name (RFC 3720 3.2.6.3, RFC 3721):
//
//   - iqn.yyyy-mm.<naming authority>[:<id>]: a date with a month from 01
//     to 12, the authority a reversed domain name in lower case (labels of
//     a-z, 0-9 and inner hyphens), and an optional non-empty id;
//   - eui.<16 hex digits> (an EUI-64);
//   - naa.<16 or 32 hex digits> (an NAA identifier).
//
// The id holds only the characters RFC 3720 3.2.6.2 lists for a name after
// the RFC 3722 string profile: ASCII letters, digits, '-', '.' and ':'.
// Upper-case letters are accepted as a spelling the profile folds to lower
// case (some targets, such as Synology's, put them in their names, and
// open-iscsi compares names as given). Non-ASCII characters, which the
// profile allows after NFKC normalisation, are refused: the proxy does not
// run the profile, so it could not tell two spellings of one name apart,
// and no target is known to use them. A name is at most 223 bytes.
func CheckIQN(name string) error {
	if name == "" {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "iqn is empty")
	}
	if why := iqnProblem(name); why != "" {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "iqn %s is not an iSCSI name (iqn.yyyy-mm.domain[:id], eui.<16 hex digits>, naa.<16 or 32 hex digits>): %s", printable.Quote(name), why)
	}
	return nil
}

// iqnProblem says why name is not an iSCSI name, or returns "".
func iqnProblem(name string) string {
	if len(name) > maxIQN {
		return fmt.Sprintf("%d bytes long, the limit is %d", len(name), maxIQN)
	}
	if rest, ok := strings.CutPrefix(name, "eui."); ok {
		if !isHex(rest) || len(rest) != 16 {
			return "an EUI name has 16 hex digits"
		}
		return ""
	}
	if rest, ok := strings.CutPrefix(name, "naa."); ok {
		if !isHex(rest) || len(rest) != 16 && len(rest) != 32 {
			return "an NAA name has 16 or 32 hex digits"
		}
		return ""
	}
	rest, ok := strings.CutPrefix(name, "iqn.")
	if !ok {
		return "the type is not iqn., eui. or naa."
	}
	if len(rest) < 8 || !isDecimal(rest[:4]) || rest[4] != '-' || !isDecimal(rest[5:7]) || rest[7] != '.' ||
		rest[5:7] < "01" || rest[5:7] > "12" {
		return "no yyyy-mm. date after iqn."
	}
	authority, id, hasID := strings.Cut(rest[8:], ":")
	for _, l := range strings.Split(authority, ".") {
		if !hostLabel(l) || strings.ToLower(l) != l {
			return "the naming authority is not a reversed domain name in lower case"
		}
	}
	if hasID && id == "" {
		return "nothing after the colon"
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !isAlnum(c) && c != '-' && c != '.' && c != ':' {
			return fmt.Sprintf("the id holds %q; an iSCSI name holds only letters, digits, '-', '.' and ':'", rune(c))
		}
	}
	return ""
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHexDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool    { return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isHexDigit(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// checkChap validates a CHAP field (user name or secret) without ever
// quoting it: its length, then printable text (package printable).
func checkChap(field, v string, min, max int) error {
	if len(v) < min || len(v) > max {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "%s must be %d to %d bytes long, not %d", field, min, max, len(v))
	}
	return printable.CheckSecret(field, v)
}

func portalKey(p Portal) string {
	return "portal/" + net.JoinHostPort(strings.ToLower(p.Address), strconv.Itoa(int(p.Port)))
}

// AddTargetPortal implements Interface.
func (s *Service) AddTargetPortal(ctx context.Context, req *AddTargetPortalRequest) (*AddTargetPortalResponse, error) {
	if err := s.changePortal(ctx, req.TargetPortal, "add", s.host.AddTargetPortal); err != nil {
		return nil, err
	}
	return &AddTargetPortalResponse{}, nil
}

// DiscoverTargetPortal implements Interface.
func (s *Service) DiscoverTargetPortal(ctx context.Context, req *DiscoverTargetPortalRequest) (*DiscoverTargetPortalResponse, error) {
	p, err := ParsePortal(req.TargetPortal)
	if err != nil {
		return nil, err
	}
	iqns, err := s.host.DiscoverTargetPortal(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("discover portal %s:%d: %w", p.Address, p.Port, err)
	}
	return &DiscoverTargetPortalResponse{IQNs: iqns}, nil
}

// RemoveTargetPortal implements Interface.
func (s *Service) RemoveTargetPortal(ctx context.Context, req *RemoveTargetPortalRequest) (*RemoveTargetPortalResponse, error) {
	if err := s.changePortal(ctx, req.TargetPortal, "remove", s.host.RemoveTargetPortal); err != nil {
		return nil, err
	}
	return &RemoveTargetPortalResponse{}, nil
}

// changePortal is AddTargetPortal and RemoveTargetPortal: it parses the
// wire portal and calls the host with it under the portal's lock (verb
// words the host's error).
func (s *Service) changePortal(ctx context.Context, wire *TargetPortal, verb string, call func(context.Context, Portal) error) error {
	p, err := ParsePortal(wire)
	if err != nil {
		return err
	}
	return s.underLock(ctx, p, "", verb, func() error { return call(ctx, p) })
}

// underLock runs call, which changes portal p (iqn "") or the session
// with target iqn at p, while holding that portal's or session's lock, so
// a retry or a second caller waits for the first call to finish rather
// than racing it on the host. A lock error (the context's) is returned as
// it is; the host's is wrapped with verb, the target and the portal, as
// in "add portal 10.0.0.1:3260" or
// "connect to iqn.2003-01.org.example:t1 at 10.0.0.1:3260".
func (s *Service) underLock(ctx context.Context, p Portal, iqn, verb string, call func() error) error {
	key, what := portalKey(p), verb+" portal"
	if iqn != "" {
		key, what = key+"/"+iqn, verb+" "+iqn+" at"
	}
	unlock, err := s.locks.Lock(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	if err := call(); err != nil {
		return fmt.Errorf("%s %s:%d: %w", what, p.Address, p.Port, err)
	}
	return nil
}

// parseTarget validates the portal and the iSCSI name of a call that
// names one target at one portal (ConnectTarget, DisconnectTarget,
// GetTargetDisks), in the order every such call reports them: the portal
// first.
func parseTarget(wire *TargetPortal, iqn string) (Portal, error) {
	p, err := ParsePortal(wire)
	if err != nil {
		return Portal{}, err
	}
	return p, CheckIQN(iqn)
}

// ListTargetPortals implements Interface.
func (s *Service) ListTargetPortals(ctx context.Context, _ *ListTargetPortalsRequest) (*ListTargetPortalsResponse, error) {
	ps, err := s.host.ListTargetPortals(ctx)
	if err != nil {
		return nil, fmt.Errorf("list portals: %w", err)
	}
	out := &ListTargetPortalsResponse{TargetPortals: make([]*TargetPortal, 0, len(ps))}
	for _, p := range ps {
		out.TargetPortals = append(out.TargetPortals, &TargetPortal{TargetAddress: p.Address, TargetPort: p.Port})
	}
	return out, nil
}

// ConnectTarget implements Interface.
func (s *Service) ConnectTarget(ctx context.Context, req *ConnectTargetRequest) (*ConnectTargetResponse, error) {
	p, err := parseTarget(req.TargetPortal, req.IQN)
	if err != nil {
		return nil, err
	}
	l := Login{Portal: p, IQN: req.IQN, AuthType: req.AuthType}
	switch req.AuthType {
	case AuthNone:
		if req.ChapUsername != "" || req.ChapSecret != "" {
			return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "chap_username and chap_secret must be empty with auth_type NONE")
		}
	case AuthOneWayCHAP, AuthMutualCHAP:
		if err := checkChap("chap_username", req.ChapUsername, 1, 223); err != nil {
			return nil, err
		}
		// At least 12 bytes (96 bits), as RFC 3720 section 8.2.1 requires;
		// at most 16, the Microsoft iSCSI initiator's limit, so a secret
		// that works on one backend works on the other.
		if err := checkChap("chap_secret", req.ChapSecret, 12, 16); err != nil {
			return nil, err
		}
		l.Username, l.Secret = req.ChapUsername, req.ChapSecret
	default:
		return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "auth_type %d is not NONE, ONE_WAY_CHAP or MUTUAL_CHAP", int32(req.AuthType))
	}
	if err := s.underLock(ctx, p, req.IQN, "connect to", func() error { return s.host.ConnectTarget(ctx, l) }); err != nil {
		return nil, err
	}
	return &ConnectTargetResponse{}, nil
}

// DisconnectTarget implements Interface.
func (s *Service) DisconnectTarget(ctx context.Context, req *DisconnectTargetRequest) (*DisconnectTargetResponse, error) {
	p, err := parseTarget(req.TargetPortal, req.IQN)
	if err != nil {
		return nil, err
	}
	if err := s.underLock(ctx, p, req.IQN, "disconnect from", func() error { return s.host.DisconnectTarget(ctx, p, req.IQN) }); err != nil {
		return nil, err
	}
	return &DisconnectTargetResponse{}, nil
}

// GetTargetDisks implements Interface.
func (s *Service) GetTargetDisks(ctx context.Context, req *GetTargetDisksRequest) (*GetTargetDisksResponse, error) {
	p, err := parseTarget(req.TargetPortal, req.IQN)
	if err != nil {
		return nil, err
	}
	disks, err := s.host.TargetDisks(ctx, p, req.IQN)
	if err != nil {
		return nil, fmt.Errorf("disks of %s at %s:%d: %w", req.IQN, p.Address, p.Port, err)
	}
	sort.Slice(disks, func(i, j int) bool { return disks[i] < disks[j] })
	out := &GetTargetDisksResponse{DiskIDs: make([]string, 0, len(disks))}
	for _, d := range disks {
		out.DiskIDs = append(out.DiskIDs, strconv.FormatUint(uint64(d), 10))
	}
	return out, nil
}

// SetMutualChapSecret implements Interface.
func (s *Service) SetMutualChapSecret(ctx context.Context, req *SetMutualChapSecretRequest) (*SetMutualChapSecretResponse, error) {
	if err := checkChap("MutualChapSecret", req.MutualChapSecret, 12, 16); err != nil {
		return nil, err
	}
	if err := s.host.SetMutualChapSecret(ctx, req.MutualChapSecret); err != nil {
		return nil, fmt.Errorf("set mutual CHAP secret: %w", err)
	}
	return &SetMutualChapSecretResponse{}, nil
}
