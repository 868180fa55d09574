package smbmappings

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// Service is the SMB mappings group on top of a Host and the SMB group's
// Service: the one implementation of Interface that every transport uses.
type Service struct {
	host   Host
	shares *smb.Service
	paths  *hostpath.Policy
	now    func() time.Time

	mu        sync.Mutex
	firstSeen map[string]time.Time // guarded by mu; share -> first listing that saw it

	census atomic.Pointer[Census]
}

var _ Interface = (*Service)(nil)

// Census is what the last look at the node found: the gauges of
// docs/metrics.md.
type Census struct {
	// Mappings is the number of SMB global mappings.
	Mappings int
	// NotOK is how many of them were not OK.
	NotOK int
	// Time is when the look was taken.
	Time time.Time
}

// NewService returns the SMB mappings group served by host, changing
// mappings through shares (the node's SMB group, whose per-share locks it
// shares), with the links under paths' working directories counting as
// references. A nil host answers every call with errdefs.ErrUnimplemented.
func NewService(host Host, shares *smb.Service, paths *hostpath.Policy) *Service {
	return &Service{host: host, shares: shares, paths: paths, now: time.Now, firstSeen: map[string]time.Time{}}
}

// Census returns what the last List, Reconcile or Collect found; ok is
// false before the first.
func (s *Service) Census() (c Census, ok bool) {
	if p := s.census.Load(); p != nil {
		return *p, true
	}
	return Census{}, false
}

// ShareOfLinkTarget returns the share root (lower-cased \\server\share) a
// link target leads into, or ok false for a target that is not an SMB
// path. It reads every form a link to a share is stored in: plain UNC
// (\\server\share\dir\, ours and the PowerShell-era drivers'), the long
// form \\?\UNC\server\share\dir, the NT form \??\UNC\..., and upstream's
// \\?\\\server\share\dir\ (kubernetes-csi/csi-proxy pkg/os/smb/api.go
// NewSmbLink, commit eeba4706, prefixes \\?\ to a UNC path).
func ShareOfLinkTarget(target string) (share string, ok bool) {
	t := strings.ReplaceAll(target, "/", `\`)
	for _, prefix := range []string{`\\?\UNC\`, `\??\UNC\`} {
		if len(t) >= len(prefix) && strings.EqualFold(t[:len(prefix)], prefix) {
			t = `\\` + t[len(prefix):]
		}
	}
	if strings.HasPrefix(t, `\\?\\\`) {
		t = t[4:]
	}
	if !strings.HasPrefix(t, `\\`) || strings.HasPrefix(t, `\\?\`) || strings.HasPrefix(t, `\\.\`) {
		return "", false
	}
	share, _, err := smb.ParseRemotePath(t)
	if err != nil {
		return "", false
	}
	return share, true
}

// snapshot lists the mappings and the links and joins them by share.
func (s *Service) snapshot(ctx context.Context) (map[string]*SmbGlobalMapping, error) {
	if s.host == nil {
		return nil, errdefs.Errorf(errdefs.ErrUnimplemented, "this node has no backend for the SMB mappings group")
	}
	ms, err := s.host.ListSmbGlobalMappings(ctx)
	if err != nil {
		return nil, fmt.Errorf("list SMB global mappings: %w", err)
	}
	links, err := s.host.ListSmbLinks(ctx, s.paths.Roots())
	if err != nil {
		return nil, fmt.Errorf("list the links under the working directories: %w", err)
	}
	now := s.now()
	out := map[string]*SmbGlobalMapping{}
	census := Census{Time: now}
	s.mu.Lock()
	seen := map[string]bool{}
	for _, m := range ms {
		share, ok := ShareOfLinkTarget(m.Share)
		if !ok {
			share = strings.ToLower(m.Share) // reported as it is, never collected by a key it cannot have
		}
		if out[share] != nil {
			continue // one entry per share; Windows keeps one mapping per remote path
		}
		g := &SmbGlobalMapping{RemotePath: share, Status: m.Status}
		if !m.Created.IsZero() {
			g.AgeSeconds = int64(now.Sub(m.Created) / time.Second)
		} else {
			first, ok := s.firstSeen[share]
			if !ok {
				first = now
				s.firstSeen[share] = now
			}
			g.AgeSeconds, g.AgeIsFirstSeen = int64(now.Sub(first)/time.Second), true
		}
		seen[share] = true
		out[share] = g
		census.Mappings++
		if m.Status != StatusOK {
			census.NotOK++
		}
	}
	for share := range s.firstSeen {
		if !seen[share] {
			delete(s.firstSeen, share) // gone: a new mapping of it is new
		}
	}
	s.mu.Unlock()
	for _, l := range links {
		share, ok := ShareOfLinkTarget(l.Target)
		if !ok {
			continue
		}
		g := out[share]
		if g == nil {
			g = &SmbGlobalMapping{RemotePath: share, Status: StatusMissing}
			out[share] = g
		}
		g.Links = append(g.Links, l.Path)
	}
	for _, g := range out {
		slices.Sort(g.Links)
	}
	s.census.Store(&census)
	return out, nil
}

func sorted(m map[string]*SmbGlobalMapping) []*SmbGlobalMapping {
	out := make([]*SmbGlobalMapping, 0, len(m))
	for _, g := range m {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b *SmbGlobalMapping) int { return strings.Compare(a.RemotePath, b.RemotePath) })
	return out
}

// ListSmbGlobalMappings implements Interface.
func (s *Service) ListSmbGlobalMappings(ctx context.Context, _ *ListSmbGlobalMappingsRequest) (*ListSmbGlobalMappingsResponse, error) {
	snap, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return &ListSmbGlobalMappingsResponse{Mappings: sorted(snap)}, nil
}

// ReconcileSmbGlobalMapping implements Interface. It holds the share's
// lock (the SMB group's) from the look to the repair, so a concurrent
// NewSmbGlobalMapping or RemoveSmbGlobalMapping of the share waits. The
// repair is the SMB backend's NewSmbGlobalMapping with the share root and
// no local path: it removes a mapping that is not OK and makes it again
// with the credentials given, as it does for a stale mapping at stage
// time.
func (s *Service) ReconcileSmbGlobalMapping(ctx context.Context, req *ReconcileSmbGlobalMappingRequest) (*ReconcileSmbGlobalMappingResponse, error) {
	share, _, err := smb.ParseRemotePath(req.RemotePath)
	if err != nil {
		return nil, err
	}
	if err := smb.CheckCredentials(req.Username, req.Password); err != nil {
		return nil, err
	}
	var out *ReconcileSmbGlobalMappingResponse
	err = s.shares.WithShares(ctx, []string{share}, func(h smb.Host) error {
		snap, err := s.snapshot(ctx)
		if err != nil {
			return err
		}
		out = &ReconcileSmbGlobalMappingResponse{RemotePath: share, PreviousStatus: StatusMissing}
		g := snap[share]
		if g != nil {
			out.PreviousStatus, out.Links = g.Status, g.Links
		}
		switch {
		case len(out.Links) == 0:
			out.Action = ActionUnreferenced
			return nil
		case out.PreviousStatus == StatusOK:
			out.Action = ActionHealthy
			return nil
		case out.PreviousStatus == StatusMissing:
			out.Action = ActionCreated
		default:
			out.Action = ActionRecreated
		}
		m := smb.Mapping{Share: share, RemotePath: share, Username: req.Username, Password: req.Password}
		if err := h.NewSmbGlobalMapping(ctx, m); err != nil {
			return fmt.Errorf("re-create the mapping of %s (%s, %d links): %w", share, out.PreviousStatus, len(out.Links), err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CollectSmbGlobalMappings implements Interface. It looks once to find the
// candidates, then takes their shares' locks and looks again, removing
// only what is still unreferenced: a driver that mapped and linked a
// share meanwhile keeps it.
func (s *Service) CollectSmbGlobalMappings(ctx context.Context, req *CollectSmbGlobalMappingsRequest) (*CollectSmbGlobalMappingsResponse, error) {
	grace := req.GraceSeconds
	switch {
	case grace < 0 || grace > MaxGraceSeconds:
		return nil, errdefs.Errorf(errdefs.ErrInvalidArgument, "grace_seconds is %d, want 0 (the default, %d) to %d", grace, DefaultGraceSeconds, MaxGraceSeconds)
	case grace == 0:
		grace = DefaultGraceSeconds
	}
	split := func(snap map[string]*SmbGlobalMapping) (old, young []*SmbGlobalMapping) {
		for _, g := range sorted(snap) {
			if g.Status == StatusMissing || len(g.Links) > 0 {
				continue
			}
			if g.AgeSeconds < grace {
				young = append(young, g)
			} else {
				old = append(old, g)
			}
		}
		return old, young
	}
	snap, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	old, young := split(snap)
	out := &CollectSmbGlobalMappingsResponse{KeptYoung: young}
	if req.DryRun || len(old) == 0 {
		out.Removed = old
		return out, nil
	}
	keys := make([]string, len(old))
	for i, g := range old {
		keys[i] = g.RemotePath
	}
	err = s.shares.WithShares(ctx, keys, func(h smb.Host) error {
		snap, err := s.snapshot(ctx)
		if err != nil {
			return err
		}
		still, _ := split(snap)
		for _, g := range still {
			if !slices.Contains(keys, g.RemotePath) {
				continue // appeared since the first look: the next run decides
			}
			if err := h.RemoveSmbGlobalMapping(ctx, g.RemotePath); err != nil && !errors.Is(err, errdefs.ErrNotFound) {
				return fmt.Errorf("remove the unreferenced mapping of %s (removed so far: %d): %w", g.RemotePath, len(out.Removed), err)
			}
			out.Removed = append(out.Removed, g)
			s.uncount(g)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// uncount takes a removed mapping out of the census, so that the gauges
// do not show it until the next look.
func (s *Service) uncount(g *SmbGlobalMapping) {
	c, ok := s.Census()
	if !ok {
		return
	}
	c.Mappings--
	if g.Status != StatusOK {
		c.NotOK--
	}
	s.census.Store(&c)
}
