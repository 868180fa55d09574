package simulated

import (
	"cmp"
	"context"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
)

// target is an iSCSI target the simulated network offers. Its LUN disks
// exist while no session is connected too (they are the target's
// storage); a session attaches them under fresh disk numbers.
type target struct {
	portal       iscsi.Portal
	iqn          string
	chapUser     string
	chapSecret   string
	mutualSecret string
	luns         []*diskState
	connected    bool
}

// portalKey names a portal without case, applying the default port for
// direct callers that pass 0.
func portalKey(p iscsi.Portal) string {
	if p.Port == 0 {
		p.Port = iscsi.DefaultPort
	}
	return strings.ToLower(strings.Trim(p.Address, "[]")) + "|" + strconv.FormatUint(uint64(p.Port), 10)
}

func portalString(p iscsi.Portal) string {
	if p.Port == 0 {
		p.Port = iscsi.DefaultPort
	}
	return net.JoinHostPort(p.Address, strconv.FormatUint(uint64(p.Port), 10))
}

func (w *world) addTarget(t ISCSITarget) {
	p := iscsi.Portal{Address: strings.Trim(t.Portal.Address, "[]"), Port: t.Portal.Port}
	if p.Port == 0 {
		p.Port = iscsi.DefaultPort
	}
	tg := &target{portal: p, iqn: t.IQN, chapUser: t.ChapUsername, chapSecret: t.ChapSecret, mutualSecret: t.MutualSecret}
	for _, spec := range t.LUNs {
		d := w.buildDisk(spec)
		d.target = tg
		tg.luns = append(tg.luns, d)
	}
	w.targets = append(w.targets, tg)
}

// answers tells whether some target listens at p.
func (w *world) answers(p iscsi.Portal) bool {
	for _, t := range w.targets {
		if portalKey(t.portal) == portalKey(p) {
			return true
		}
	}
	return false
}

// findTarget returns the target iqn at portal p.
func (w *world) findTarget(p iscsi.Portal, iqn string) (*target, error) {
	for _, t := range w.targets {
		if portalKey(t.portal) == portalKey(p) && strings.EqualFold(t.iqn, iqn) {
			return t, nil
		}
	}
	return nil, errdefs.Errorf(errdefs.ErrNotFound, "target %s is not offered at portal %s", iqn, portalString(p))
}

// iscsiView is the iSCSI group backend.
type iscsiView struct{ h *Host }

// AddTargetPortal implements iscsi.Host. Like New-IscsiTargetPortal it
// contacts the portal: one no target listens at is errdefs.ErrNotFound.
func (v iscsiView) AddTargetPortal(ctx context.Context, p iscsi.Portal) error {
	return v.h.do(ctx, func(w *world) error {
		if !w.answers(p) {
			return errdefs.Errorf(errdefs.ErrNotFound, "no iSCSI portal answers at %s", portalString(p))
		}
		if p.Port == 0 {
			p.Port = iscsi.DefaultPort
		}
		w.portals[portalKey(p)] = p
		return nil
	})
}

// DiscoverTargetPortal implements iscsi.Host: the IQNs offered at p, sorted.
// It contacts the portal directly, so p need not be registered.
func (v iscsiView) DiscoverTargetPortal(ctx context.Context, p iscsi.Portal) ([]string, error) {
	return read(ctx, v.h, func(w *world) ([]string, error) {
		if !w.answers(p) {
			return nil, errdefs.Errorf(errdefs.ErrNotFound, "no iSCSI portal answers at %s", portalString(p))
		}
		iqns := []string{}
		for _, t := range w.targets {
			if portalKey(t.portal) == portalKey(p) {
				iqns = append(iqns, t.iqn)
			}
		}
		sort.Strings(iqns)
		return iqns, nil
	})
}

// RemoveTargetPortal implements iscsi.Host. Sessions through the portal
// stay connected, as on Windows.
func (v iscsiView) RemoveTargetPortal(ctx context.Context, p iscsi.Portal) error {
	return v.h.do(ctx, func(w *world) error {
		k := portalKey(p)
		if _, ok := w.portals[k]; !ok {
			return errdefs.Errorf(errdefs.ErrNotFound, "portal %s is not registered", portalString(p))
		}
		delete(w.portals, k)
		return nil
	})
}

// ListTargetPortals implements iscsi.Host, sorted by address and port.
func (v iscsiView) ListTargetPortals(ctx context.Context) ([]iscsi.Portal, error) {
	return read(ctx, v.h, func(w *world) ([]iscsi.Portal, error) {
		out := []iscsi.Portal{}
		for _, p := range w.portals {
			out = append(out, p)
		}
		slices.SortFunc(out, func(a, b iscsi.Portal) int {
			return cmp.Or(cmp.Compare(a.Address, b.Address), cmp.Compare(a.Port, b.Port))
		})
		return out, nil
	})
}

// ConnectTarget implements iscsi.Host. The portal must be registered
// (errdefs.ErrFailedPrecondition) and offer the target
// (errdefs.ErrNotFound). Authentication must match the target: a target
// with a CHAP secret refuses NONE, one without refuses CHAP, and a wrong
// user or secret fails; mutual CHAP also needs the target's mutual secret
// to equal the initiator's (SetMutualChapSecret). Failures are
// errdefs.ErrPermissionDenied and never quote a secret; mutual CHAP before
// SetMutualChapSecret is errdefs.ErrFailedPrecondition. A connected target
// is success without a new login. Connecting attaches the target's LUNs
// as disks with the lowest free numbers.
func (v iscsiView) ConnectTarget(ctx context.Context, l iscsi.Login) error {
	return v.h.do(ctx, func(w *world) error {
		if _, ok := w.portals[portalKey(l.Portal)]; !ok {
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "portal %s is not registered; add it with AddTargetPortal first", portalString(l.Portal))
		}
		t, err := w.findTarget(l.Portal, l.IQN)
		if err != nil {
			return err
		}
		if t.connected {
			return nil
		}
		if err := w.authenticate(t, l); err != nil {
			return err
		}
		for _, d := range t.luns {
			d.number = w.freeNumber()
			w.disks[d.number] = d
		}
		t.connected = true
		return nil
	})
}

func (w *world) authenticate(t *target, l iscsi.Login) error {
	denied := func(why string) error {
		return errdefs.Errorf(errdefs.ErrPermissionDenied, "CHAP authentication failed for target %s: %s", t.iqn, why)
	}
	switch l.AuthType {
	case iscsi.AuthNone:
		if t.chapSecret != "" {
			return denied("the target requires CHAP but the login used none")
		}
		return nil
	case iscsi.AuthOneWayCHAP, iscsi.AuthMutualCHAP:
	default:
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "authentication type %v is not supported", l.AuthType)
	}
	if t.chapSecret == "" {
		return denied("the target is not configured for CHAP")
	}
	if (t.chapUser != "" && l.Username != t.chapUser) || l.Secret != t.chapSecret {
		return denied("wrong CHAP user name or secret")
	}
	if l.AuthType == iscsi.AuthMutualCHAP {
		switch {
		case w.mutualSecret == "":
			return errdefs.Errorf(errdefs.ErrFailedPrecondition, "mutual CHAP needs the initiator's mutual CHAP secret; set it with SetMutualChapSecret")
		case t.mutualSecret == "" || t.mutualSecret != w.mutualSecret:
			return denied("the target did not prove the initiator's mutual CHAP secret")
		}
	}
	return nil
}

// DisconnectTarget implements iscsi.Host: the LUN disks detach (their
// volumes and files stay with the target for the next session). No session
// is success.
func (v iscsiView) DisconnectTarget(ctx context.Context, p iscsi.Portal, iqn string) error {
	return v.h.do(ctx, func(w *world) error {
		t, err := w.findTarget(p, iqn)
		if err != nil || !t.connected {
			return nil
		}
		for _, d := range t.luns {
			if w.disks[d.number] == d {
				delete(w.disks, d.number)
			}
		}
		t.connected = false
		return nil
	})
}

// TargetDisks implements iscsi.Host: the disk numbers of a connected
// target's LUNs. A target without a session gives an empty list, as
// upstream answers for a target that is not connected (csi-proxy
// pkg/os/iscsi/api.go GetTargetDisks, commit eeba4706); a target the
// portal does not offer, or a portal that is not registered, is
// errdefs.ErrNotFound, as upstream cannot find its MSFT_iSCSITarget.
func (v iscsiView) TargetDisks(ctx context.Context, p iscsi.Portal, iqn string) ([]uint32, error) {
	return read(ctx, v.h, func(w *world) ([]uint32, error) {
		t, err := w.findTarget(p, iqn)
		if err != nil {
			return nil, err
		}
		disks := []uint32{}
		if !t.connected {
			if _, ok := w.portals[portalKey(p)]; !ok {
				return nil, errdefs.Errorf(errdefs.ErrNotFound, "target %s is not known through portal %s: it is not registered", iqn, portalString(p))
			}
			return disks, nil
		}
		for _, d := range t.luns {
			disks = append(disks, d.number)
		}
		return disks, nil
	})
}

// SetMutualChapSecret implements iscsi.Host.
func (v iscsiView) SetMutualChapSecret(ctx context.Context, secret string) error {
	return v.h.do(ctx, func(w *world) error {
		w.mutualSecret = secret
		return nil
	})
}
