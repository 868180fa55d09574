package iscsi

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/keylock"
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

// hostname follows RFC 1123: dot-separated labels of letters, digits and
// hyphens.
var hostname = regexp.MustCompile(`^([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$`)

// iqn matches iSCSI names (RFC 3720 3.2.6.3): iqn.yyyy-mm.reverse-domain[:id]
// and the eui.<16 hex> and naa.<16 or 32 hex> forms.
var iqn = regexp.MustCompile(`^(iqn\.[0-9]{4}-[0-9]{2}\.[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[^\x00-\x20\x7f]+)?|eui\.[0-9a-fA-F]{16}|naa\.([0-9a-fA-F]{16}|[0-9a-fA-F]{32}))$`)

// ParsePortal validates a wire portal and applies the default port.
func ParsePortal(p *TargetPortal) (Portal, error) {
	if p == nil {
		return Portal{}, errdefs.Errorf(errdefs.ErrInvalidArgument, "target_portal is missing")
	}
	addr := p.TargetAddress
	if addr == "" {
		return Portal{}, errdefs.Errorf(errdefs.ErrInvalidArgument, "target_portal.target_address is empty")
	}
	if len(addr) > 253 || (net.ParseIP(strings.Trim(addr, "[]")) == nil && !hostname.MatchString(addr)) {
		return Portal{}, errdefs.Errorf(errdefs.ErrInvalidArgument, "target_portal.target_address %q is neither an IP address nor a host name", addr)
	}
	port := p.TargetPort
	if port == 0 {
		port = DefaultPort
	}
	if port > 65535 {
		return Portal{}, errdefs.Errorf(errdefs.ErrInvalidArgument, "target_portal.target_port %d is not a TCP port", port)
	}
	return Portal{Address: strings.Trim(addr, "[]"), Port: port}, nil
}

// CheckIQN validates an iSCSI qualified name.
func CheckIQN(name string) error {
	if name == "" {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "iqn is empty")
	}
	if len(name) > 223 || !iqn.MatchString(name) {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "iqn %q is not an iSCSI name (iqn.yyyy-mm.domain[:id], eui. or naa.)", name)
	}
	return nil
}

// checkChap validates CHAP fields without ever quoting the secret.
func checkChap(field, v string, min, max int) error {
	if len(v) < min || len(v) > max {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "%s must be %d to %d bytes long, not %d", field, min, max, len(v))
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return errdefs.Errorf(errdefs.ErrInvalidArgument, "%s contains a control character", field)
		}
	}
	return nil
}

func portalKey(p Portal) string {
	return "portal/" + net.JoinHostPort(strings.ToLower(p.Address), strconv.Itoa(int(p.Port)))
}

// AddTargetPortal implements Interface.
func (s *Service) AddTargetPortal(ctx context.Context, req *AddTargetPortalRequest) (*AddTargetPortalResponse, error) {
	p, err := ParsePortal(req.TargetPortal)
	if err != nil {
		return nil, err
	}
	unlock, err := s.locks.Lock(ctx, portalKey(p))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.host.AddTargetPortal(ctx, p); err != nil {
		return nil, fmt.Errorf("add portal %s:%d: %w", p.Address, p.Port, err)
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
	p, err := ParsePortal(req.TargetPortal)
	if err != nil {
		return nil, err
	}
	unlock, err := s.locks.Lock(ctx, portalKey(p))
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.host.RemoveTargetPortal(ctx, p); err != nil {
		return nil, fmt.Errorf("remove portal %s:%d: %w", p.Address, p.Port, err)
	}
	return &RemoveTargetPortalResponse{}, nil
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
	p, err := ParsePortal(req.TargetPortal)
	if err != nil {
		return nil, err
	}
	if err := CheckIQN(req.IQN); err != nil {
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
		// RFC 3720 wants 12 to 16 byte secrets; Windows enforces the same.
		if err := checkChap("chap_secret", req.ChapSecret, 12, 16); err != nil {
			return nil, err
		}
		l.Username, l.Secret = req.ChapUsername, req.ChapSecret
	default:
		return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "auth_type %d is not NONE, ONE_WAY_CHAP or MUTUAL_CHAP", int32(req.AuthType))
	}
	unlock, err := s.locks.Lock(ctx, portalKey(p)+"/"+req.IQN)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.host.ConnectTarget(ctx, l); err != nil {
		return nil, fmt.Errorf("connect to %s at %s:%d: %w", req.IQN, p.Address, p.Port, err)
	}
	return &ConnectTargetResponse{}, nil
}

// DisconnectTarget implements Interface.
func (s *Service) DisconnectTarget(ctx context.Context, req *DisconnectTargetRequest) (*DisconnectTargetResponse, error) {
	p, err := ParsePortal(req.TargetPortal)
	if err != nil {
		return nil, err
	}
	if err := CheckIQN(req.IQN); err != nil {
		return nil, err
	}
	unlock, err := s.locks.Lock(ctx, portalKey(p)+"/"+req.IQN)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.host.DisconnectTarget(ctx, p, req.IQN); err != nil {
		return nil, fmt.Errorf("disconnect from %s at %s:%d: %w", req.IQN, p.Address, p.Port, err)
	}
	return &DisconnectTargetResponse{}, nil
}

// GetTargetDisks implements Interface.
func (s *Service) GetTargetDisks(ctx context.Context, req *GetTargetDisksRequest) (*GetTargetDisksResponse, error) {
	p, err := ParsePortal(req.TargetPortal)
	if err != nil {
		return nil, err
	}
	if err := CheckIQN(req.IQN); err != nil {
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
