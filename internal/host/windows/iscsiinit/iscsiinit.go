// Package iscsiinit is the Windows backend of the iSCSI group
// (iscsi.Host): target portals, discovery, logins and the disks of a
// session, through the documented Win32 iSCSI discovery API
// (iscsidsc.dll) instead of upstream's WMI classes (MSFT_iSCSI*). No
// process is started.
//
// Behaviour drivers depend on (upstream csi-proxy): AddTargetPortal,
// ConnectTarget and DisconnectTarget are idempotent; port 0 already means
// 3260 when the group Service calls this backend; sessions are not
// persistent (upstream's MSFT_iSCSITarget.Connect passes no IsPersistent),
// and DisconnectTarget also removes a persistent login, as upstream
// unregisters persistent sessions.
//
// Everything iscsidsc.dll returns in buffers is decoded by
// platform-neutral code (layout.go) that checks every length and never
// follows a pointer outside the buffer, tested on constructed buffers.
// The Win32 seam (initiatorAPI) is implemented in initiator_windows.go.
// CHAP secrets go into the login options only, never into an error.
package iscsiinit

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
	"github.com/csi-node-proxy/csi-node-proxy/internal/leaf/ctxsleep"
)

// Host implements iscsi.Host on Windows.
type Host struct {
	api initiatorAPI
	// busyRetries and busyWait bound the retries of GetDevicesForIScsiSessionW
	// while a session is busy (os-win retries the same way).
	busyRetries int
	busyWait    time.Duration
	sleep       func(ctx context.Context, d time.Duration) error
}

var _ iscsi.Host = (*Host)(nil)

func newHost(api initiatorAPI) *Host {
	return &Host{api: api, busyRetries: 5, busyWait: 200 * time.Millisecond, sleep: ctxsleep.Sleep}
}

func spec(p iscsi.Portal) portalSpec { return portalSpec{Address: p.Address, Port: uint16(p.Port)} }

func portalString(p iscsi.Portal) string { return fmt.Sprintf("%s:%d", p.Address, p.Port) }

// portals returns the registered SendTargets portals.
func (h *Host) portals() ([]portalInfo, error) {
	buf, n, err := h.api.SendTargetPortals()
	if err != nil {
		return nil, isdscError(err, "list the iSCSI target portals")
	}
	return parsePortalInfos(buf, n)
}

func matches(pi portalInfo, p iscsi.Portal) bool {
	return strings.EqualFold(strings.Trim(pi.Address, "[]"), p.Address) && uint32(pi.Port) == p.Port
}

func (h *Host) registered(p iscsi.Portal) (bool, error) {
	ps, err := h.portals()
	if err != nil {
		return false, err
	}
	for _, pi := range ps {
		if matches(pi, p) {
			return true, nil
		}
	}
	return false, nil
}

// AddTargetPortal implements iscsi.Host. A registered portal is success
// without a call; so is ISDSC_TARGET_PORTAL_ALREADY_EXISTS from a
// concurrent registration. Windows runs SendTargets discovery when the
// portal is added, so a portal that does not answer fails here
// (ISDSC_CONNECTION_FAILED: errdefs.ErrUnavailable).
func (h *Host) AddTargetPortal(ctx context.Context, p iscsi.Portal) error {
	ok, err := h.registered(p)
	if err != nil || ok {
		return err
	}
	err = ignoreWarning(h.api.AddSendTargetPortal(spec(p)))
	if err != nil && statusOf(err) != isdscTargetPortalExists {
		return isdscError(err, "add iSCSI target portal %s", portalString(p))
	}
	return nil
}

// RemoveTargetPortal implements iscsi.Host: every registration of the
// portal goes (the one made for any initiator first, then any made for a
// specific initiator instance or port). An unregistered portal is
// errdefs.ErrNotFound. Sessions through the portal stay connected.
func (h *Host) RemoveTargetPortal(ctx context.Context, p iscsi.Portal) error {
	ok, err := h.registered(p)
	if err != nil {
		return err
	}
	if !ok {
		return errdefs.Errorf(errdefs.ErrNotFound, "iSCSI target portal %s is not registered", portalString(p))
	}
	err = ignoreWarning(h.api.RemoveSendTargetPortal("", allInitiatorPorts, spec(p)))
	if err != nil && statusOf(err) != isdscPortalNotFound {
		return isdscError(err, "remove iSCSI target portal %s", portalString(p))
	}
	ps, err := h.portals()
	if err != nil {
		return err
	}
	for _, pi := range ps {
		if !matches(pi, p) {
			continue
		}
		err := ignoreWarning(h.api.RemoveSendTargetPortal(pi.Initiator, pi.InitiatorPort, spec(p)))
		if err != nil && statusOf(err) != isdscPortalNotFound {
			return isdscError(err, "remove iSCSI target portal %s (initiator %q, port %d)", portalString(p), pi.Initiator, pi.InitiatorPort)
		}
	}
	return nil
}

// ListTargetPortals implements iscsi.Host: the registered portals, once
// each (a portal registered for several initiators is listed once),
// sorted by address and port.
func (h *Host) ListTargetPortals(ctx context.Context) ([]iscsi.Portal, error) {
	ps, err := h.portals()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	out := []iscsi.Portal{}
	for _, pi := range ps {
		p := iscsi.Portal{Address: strings.Trim(pi.Address, "[]"), Port: uint32(pi.Port)}
		k := fmt.Sprintf("%s|%d", strings.ToLower(p.Address), p.Port)
		if !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Address != out[j].Address {
			return out[i].Address < out[j].Address
		}
		return out[i].Port < out[j].Port
	})
	return out, nil
}

// DiscoverTargetPortal implements iscsi.Host: SendTargets discovery runs
// again on the portal (RefreshIScsiSendTargetPortalW), then the targets
// whose discovery mechanism names this portal are returned, sorted. The
// portal must be registered (errdefs.ErrFailedPrecondition), as upstream
// requires its MSFT_iSCSITargetPortal instance.
func (h *Host) DiscoverTargetPortal(ctx context.Context, p iscsi.Portal) ([]string, error) {
	ok, err := h.registered(p)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errdefs.Errorf(errdefs.ErrFailedPrecondition, "iSCSI target portal %s is not registered; add it with AddTargetPortal first", portalString(p))
	}
	if err := ignoreWarning(h.api.RefreshSendTargetPortal(spec(p))); err != nil {
		return nil, isdscError(err, "refresh iSCSI target portal %s", portalString(p))
	}
	out, unparsed, err := h.targetsOf(p)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 && unparsed != "" {
		// Better an error than a silently empty list if Windows writes
		// the (undocumented) mechanism strings differently.
		return nil, errUnparsedMechanism(p, unparsed)
	}
	sort.Strings(out)
	return out, nil
}

func errUnparsedMechanism(p iscsi.Portal, mechanism string) error {
	return fmt.Errorf("discover iSCSI target portal %s: cannot read the discovery mechanism %q of a target", portalString(p), mechanism)
}

// targetsOf returns the targets Windows knows (ReportIScsiTargetsW, no new
// discovery) whose discovery mechanism names portal p, and the last
// SendTargets mechanism it could not read ("" when none).
func (h *Host) targetsOf(p iscsi.Portal) (out []string, unparsed string, err error) {
	all, err := h.api.Targets()
	if err != nil {
		return nil, "", isdscError(err, "list iSCSI targets")
	}
	for _, t := range multiSZ(all) {
		mech, err := h.api.DiscoveryMechanisms(t)
		if err != nil {
			continue // the target vanished meanwhile, or has no mechanism
		}
		for _, m := range multiSZ(mech) {
			addr, port, ok := parseDiscoveryMechanism(m)
			if !ok {
				if isSendTargets(m) {
					unparsed = m
				}
				continue
			}
			if strings.EqualFold(addr, p.Address) && uint32(port) == p.Port {
				out = append(out, t)
				break
			}
		}
	}
	return out, unparsed, nil
}

// offers tells whether target iqn is known through portal p: p is
// registered and discovery through it reported iqn. It is what upstream's
// MSFT_iSCSITarget lookup by portal answers.
func (h *Host) offers(p iscsi.Portal, iqn string) (bool, error) {
	ok, err := h.registered(p)
	if err != nil || !ok {
		return false, err
	}
	targets, unparsed, err := h.targetsOf(p)
	if err != nil {
		return false, err
	}
	for _, t := range targets {
		if strings.EqualFold(t, iqn) {
			return true, nil
		}
	}
	if unparsed != "" {
		return false, errUnparsedMechanism(p, unparsed)
	}
	return false, nil
}

// sessionsOf returns the sessions with target iqn (matched without case
// against the target node name and the target name).
func (h *Host) sessionsOf(iqn string) ([]session, error) {
	buf, base, n, err := h.api.Sessions()
	if err != nil {
		return nil, isdscError(err, "list iSCSI sessions")
	}
	all, err := parseSessions(buf, base, n)
	if err != nil {
		return nil, err
	}
	var out []session
	for _, s := range all {
		if strings.EqualFold(s.TargetNodeName, iqn) || strings.EqualFold(s.TargetName, iqn) {
			out = append(out, s)
		}
	}
	return out, nil
}

// authTypes maps the group's authentication types to ISCSI_AUTH_TYPES.
var authTypes = map[iscsi.AuthenticationType]uint32{
	iscsi.AuthNone:       authNone,
	iscsi.AuthOneWayCHAP: authCHAP,
	iscsi.AuthMutualCHAP: authMutualCHAP,
}

// ConnectTarget implements iscsi.Host. A target with a session is success
// without a login (upstream checks IsConnected the same way), and so is
// ISDSC_TARGET_ALREADY_LOGGED_IN from a concurrent login. The login goes
// through the given portal and is not persistent. With one-way CHAP the
// CHAP name and secret go in the login options; with mutual CHAP the same,
// and Windows answers the target's challenge with the initiator secret
// set by SetMutualChapSecret. A rejected secret is ISDSC_AUTHENTICATION_FAILURE:
// errdefs.ErrPermissionDenied; a target the portal did not report is
// ISDSC_TARGET_NOT_FOUND: errdefs.ErrNotFound.
func (h *Host) ConnectTarget(ctx context.Context, l iscsi.Login) error {
	ss, err := h.sessionsOf(l.IQN)
	if err != nil {
		return err
	}
	if len(ss) > 0 {
		return nil
	}
	t, ok := authTypes[l.AuthType]
	if !ok {
		return errdefs.Errorf(errdefs.ErrInvalidArgument, "authentication type %d is not supported", int32(l.AuthType))
	}
	auth := loginAuth{Type: t}
	if t != authNone {
		auth.User, auth.Secret = l.Username, l.Secret
	}
	err = ignoreWarning(h.api.Login(l.IQN, spec(l.Portal), auth))
	if err != nil && statusOf(err) != isdscTargetAlreadyLoggedIn {
		return isdscError(err, "log in to iSCSI target %s at %s", l.IQN, portalString(l.Portal))
	}
	return nil
}

// DisconnectTarget implements iscsi.Host: every session with the target
// ends; no session is success. A persistent login of the target is
// removed first (best effort: its absence is reported with a code that is
// not documented), so it does not come back at the next boot, as
// upstream unregisters persistent sessions. A session already gone
// (ISDSC_INVALID_SESSION_ID) is success; a disk still in use
// (ISDSC_DEVICE_BUSY_ON_SESSION) is errdefs.ErrFailedPrecondition.
func (h *Host) DisconnectTarget(ctx context.Context, p iscsi.Portal, iqn string) error {
	ss, err := h.sessionsOf(iqn)
	if err != nil || len(ss) == 0 {
		return err
	}
	_ = h.api.RemovePersistentTarget(iqn)
	for _, s := range ss {
		err := ignoreWarning(h.api.Logout(s.ID))
		if err != nil && statusOf(err) != isdscInvalidSessionID {
			return isdscError(err, "log out of iSCSI target %s", iqn)
		}
	}
	return nil
}

// TargetDisks implements iscsi.Host: the disk numbers of the devices of
// every session with the target (STORAGE_DEVICE_NUMBER.DeviceNumber of
// the FILE_DEVICE_DISK devices), without duplicates. A busy session is
// retried a few times.
//
// Without a session the answer is an empty list when the target is known
// through p (p registered, discovery reported the target), as upstream
// answers for a target that is not connected (kubernetes-csi/csi-proxy
// pkg/os/iscsi/api.go GetTargetDisks, commit eeba4706); otherwise
// errdefs.ErrNotFound, as upstream fails to find the MSFT_iSCSITarget.
func (h *Host) TargetDisks(ctx context.Context, p iscsi.Portal, iqn string) ([]uint32, error) {
	ss, err := h.sessionsOf(iqn)
	if err != nil {
		return nil, err
	}
	if len(ss) == 0 {
		known, err := h.offers(p, iqn)
		switch {
		case err != nil:
			return nil, err
		case !known:
			return nil, errdefs.Errorf(errdefs.ErrNotFound, "iSCSI target %s is not known through portal %s: add the portal (AddTargetPortal) and discover its targets first", iqn, portalString(p))
		}
		return []uint32{}, nil
	}
	seen := map[uint32]bool{}
	out := []uint32{}
	for _, s := range ss {
		devs, err := h.devices(ctx, s.ID, iqn)
		if err != nil {
			return nil, err
		}
		for _, d := range devs {
			if d.Type == fileDeviceDisk && !seen[d.Number] {
				seen[d.Number] = true
				out = append(out, d.Number)
			}
		}
	}
	return out, nil
}

func (h *Host) devices(ctx context.Context, id uniqueID, iqn string) ([]device, error) {
	for try := 0; ; try++ {
		buf, n, err := h.api.Devices(id)
		if err == nil {
			return parseDevices(buf, n)
		}
		if c := statusOf(err); (c != isdscSessionBusy && c != isdscDeviceBusyOnSession) || try >= h.busyRetries {
			if c == isdscInvalidSessionID {
				return nil, nil // the session ended meanwhile: no disks
			}
			return nil, isdscError(err, "list the disks of iSCSI target %s", iqn)
		}
		if err := h.sleep(ctx, h.busyWait); err != nil {
			return nil, err
		}
	}
}

// SetMutualChapSecret implements iscsi.Host with
// SetIScsiInitiatorCHAPSharedSecret. The group Service has checked the
// length (12 to 16 bytes); Windows rejects others with
// ISDSC_INVALID_INITIATOR_CHAP_SECRET (errdefs.ErrInvalidArgument).
func (h *Host) SetMutualChapSecret(ctx context.Context, secret string) error {
	if err := ignoreWarning(h.api.SetInitiatorCHAPSecret([]byte(secret))); err != nil {
		return isdscError(err, "set the initiator's mutual CHAP secret")
	}
	return nil
}
