//go:build linux

package cifs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	smb2 "github.com/hirochachacha/go-smb2"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
)

// NTSTATUS codes (MS-ERREF 2.3) the check tells apart.
const (
	statusAccessDenied        = 0xC0000022
	statusNoSuchUser          = 0xC0000064
	statusWrongPassword       = 0xC000006A
	statusLogonFailure        = 0xC000006D
	statusAccountRestriction  = 0xC000006E
	statusInvalidLogonHours   = 0xC000006F
	statusPasswordExpired     = 0xC0000071
	statusAccountDisabled     = 0xC0000072
	statusBadNetworkPath      = 0xC00000BE
	statusNetworkAccessDenied = 0xC00000CA
	statusBadNetworkName      = 0xC00000CC
	statusLogonTypeNotGranted = 0xC000015B
	statusAccountExpired      = 0xC0000193
	statusPasswordMustChange  = 0xC0000224
	statusAccountLockedOut    = 0xC0000234
)

// checkShare verifies that the SMB server of m.Share answers on port,
// accepts m's credentials and offers the share, all within timeout. It
// returns the server's IP address as dialled (the kernel cannot resolve
// host names, so the mount needs it as "ip=").
//
// Errors: a server that does not answer is errdefs.ErrUnavailable, a host
// name that does not resolve errdefs.ErrNotFound, rejected credentials
// errdefs.ErrPermissionDenied ("logon failure for user X on \\server\share")
// and an unknown share errdefs.ErrNotFound. No error contains the password.
func checkShare(ctx context.Context, m smb.Mapping, port int, timeout time.Duration) (string, error) {
	server, _, err := splitShare(m.Share)
	if err != nil {
		return "", err
	}
	if err := checkCredentials(m); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	addr := net.JoinHostPort(server, strconv.Itoa(port))
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return "", errdefs.Errorf(errdefs.ErrNotFound, "SMB server %s not found: the network path was not found", server)
		}
		if ce := ctx.Err(); ce != nil && errors.Is(ce, context.Canceled) {
			return "", fmt.Errorf("reach SMB server %s: %w", addr, ce)
		}
		return "", errdefs.Errorf(errdefs.ErrUnavailable, "cannot reach SMB server %s: %v", addr, opError(err))
	}
	defer func() { _ = conn.Close() }()
	// go-smb2 honours ctx only while negotiating; a deadline bounds the
	// rest, and cancelling ctx unblocks it at once.
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	user, domain := splitUser(m.Username)
	dialer := &smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: user, Password: m.Password, Domain: domain}}
	s, err := dialer.DialContext(ctx, conn)
	if err != nil {
		return "", sessionError(ctx, m, addr, err)
	}
	defer func() { _ = s.Logoff() }()
	share, err := s.WithContext(ctx).Mount(m.Share)
	if err != nil {
		return "", sessionError(ctx, m, addr, err)
	}
	_ = share.Umount()
	ip, _, err := net.SplitHostPort(conn.RemoteAddr().String())
	if err != nil {
		return "", fmt.Errorf("SMB server address %s: %w", conn.RemoteAddr(), err)
	}
	return ip, nil
}

// sessionError maps a go-smb2 failure. It quotes the user name and the
// share, never the password (go-smb2's own messages do not contain it
// either, but they are not passed through verbatim where a kind is known).
func sessionError(ctx context.Context, m smb.Mapping, addr string, err error) error {
	var re *smb2.ResponseError
	if errors.As(err, &re) {
		switch re.Code {
		case statusLogonFailure, statusWrongPassword, statusNoSuchUser:
			return errdefs.Errorf(errdefs.ErrPermissionDenied, "logon failure for user %q on %s: unknown user name or bad password (Windows error 1326)", m.Username, m.Share)
		case statusAccountDisabled, statusAccountLockedOut, statusAccountExpired, statusAccountRestriction,
			statusInvalidLogonHours, statusPasswordExpired, statusPasswordMustChange, statusLogonTypeNotGranted:
			return errdefs.Errorf(errdefs.ErrPermissionDenied, "logon failure for user %q on %s: the account may not log on now (NTSTATUS 0x%08X)", m.Username, m.Share, re.Code)
		case statusAccessDenied, statusNetworkAccessDenied:
			return errdefs.Errorf(errdefs.ErrPermissionDenied, "user %q may not access %s: access is denied (NTSTATUS 0x%08X)", m.Username, m.Share, re.Code)
		case statusBadNetworkName:
			return errdefs.Errorf(errdefs.ErrNotFound, "share %s not found: the network name cannot be found", m.Share)
		case statusBadNetworkPath:
			return errdefs.Errorf(errdefs.ErrNotFound, "share %s not found: the network path was not found", m.Share)
		}
		return fmt.Errorf("SMB server %s refused %s for user %q: NTSTATUS 0x%08X", addr, m.Share, m.Username, re.Code)
	}
	if ce := ctx.Err(); ce != nil {
		if errors.Is(ce, context.Canceled) {
			return fmt.Errorf("check %s: %w", m.Share, ce)
		}
		return errdefs.Errorf(errdefs.ErrUnavailable, "SMB server %s did not answer in time", addr)
	}
	var te *smb2.TransportError
	var ne net.Error
	if errors.As(err, &te) || errors.As(err, &ne) || errors.Is(err, os.ErrDeadlineExceeded) {
		return errdefs.Errorf(errdefs.ErrUnavailable, "SMB server %s dropped the connection: %v", addr, err)
	}
	return fmt.Errorf("SMB session with %s for %s: %w", addr, m.Share, err)
}

// opError drops the "dial tcp" prefix noise but keeps the cause.
func opError(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}
