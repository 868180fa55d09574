package iscsiinit

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// Target is one target a portal reports in SendTargets discovery.
type Target struct {
	// Name is the target's iSCSI name (IQN, EUI or NAA).
	Name string
	// Addresses are the TargetAddress values reported for it, as sent:
	// "address:port,portal-group-tag". Empty means the portal asked.
	Addresses []string
}

// maxTextResponse bounds the accumulated SendTargets text: thousands of
// targets fit; a target streaming forever does not.
const maxTextResponse = 4 << 20

// declaredMaxRecv is the MaxRecvDataSegmentLength discovery sessions
// declare. A variable only so that tests can force a real target to split
// its answer (RFC 7143 allows 512 to 2^24-1).
var declaredMaxRecv = maxDataSegment

// logoutWait bounds the courtesy logout after discovery.
const logoutWait = 2 * time.Second

// SendTargets runs a SendTargets discovery session (RFC 7143 section 4.3
// and appendix C) against the portal at address ("host:port") as
// initiatorName: it logs in with SessionType=Discovery and AuthMethod=None,
// sends a Text Request "SendTargets=All", collects the response (following
// continuations), and logs out. ctx bounds the whole exchange.
//
// This is a minimal pure-Go initiator: it needs no kernel iSCSI support
// and leaves no discovery records behind, unlike iscsiadm discovery, which
// needs the iscsi_tcp kernel module even for discovery and writes
// /etc/iscsi/send_targets. Discovery CHAP is not implemented (the API has
// no discovery credentials): a portal that demands it is
// errdefs.ErrPermissionDenied.
//
// Errors wrap errdefs kinds: a portal that cannot be reached or does not
// answer is ErrUnavailable, a host name that does not resolve ErrNotFound,
// a login the portal rejects ErrPermissionDenied, ErrNotFound or
// ErrUnavailable after its status (see newLoginError). Protocol
// violations wrap no kind.
func SendTargets(ctx context.Context, address, initiatorName string) ([]Target, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", address)
	if err != nil {
		return nil, dialError(ctx, address, err)
	}
	defer func() { _ = conn.Close() }()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	s := &discovery{conn: conn, rd: bufio.NewReader(conn), address: address, maxRecv: declaredMaxRecv}
	if _, err := rand.Read(s.isid[1:]); err != nil {
		return nil, err
	}
	// ISID type 10b, "random" (RFC 7143 section 11.12.5).
	s.isid[0] = 0x80 | s.isid[0]&0x3f
	if err := s.login(initiatorName); err != nil {
		return nil, s.ioError(ctx, "log in to", err)
	}
	text, err := s.sendTargets()
	if err != nil {
		return nil, s.ioError(ctx, "query", err)
	}
	s.logout()
	return parseSendTargets(text)
}

// dialError maps a failed TCP connect to a portal.
func dialError(ctx context.Context, address string, err error) error {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return errdefs.Errorf(errdefs.ErrNotFound, "iSCSI portal %s: host not found", address)
	}
	if ce := ctx.Err(); errors.Is(ce, context.Canceled) {
		return fmt.Errorf("connect to iSCSI portal %s: %w", address, ce)
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		err = oe.Err
	}
	return errdefs.Errorf(errdefs.ErrUnavailable, "cannot connect to iSCSI portal %s: %v", address, err)
}

// discovery is one discovery session on one connection.
type discovery struct {
	conn      net.Conn
	rd        *bufio.Reader
	address   string
	maxRecv   int // the MaxRecvDataSegmentLength declared
	isid      [6]byte
	tsih      uint16
	cmdSN     uint32
	expStatSN uint32
}

// ioError classifies a failure of an established session: time-outs and
// dropped connections are ErrUnavailable; login rejections and protocol
// errors keep their own error.
func (s *discovery) ioError(ctx context.Context, what string, err error) error {
	var le *loginError
	if errors.As(err, &le) {
		return err
	}
	if ce := ctx.Err(); errors.Is(ce, context.Canceled) {
		return fmt.Errorf("%s iSCSI portal %s: %w", what, s.address, ce)
	}
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() || ctx.Err() != nil {
		return errdefs.Errorf(errdefs.ErrUnavailable, "%s iSCSI portal %s: no answer in time", what, s.address)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, new(*net.OpError)) {
		return errdefs.Errorf(errdefs.ErrUnavailable, "%s iSCSI portal %s: connection lost: %v", what, s.address, err)
	}
	return fmt.Errorf("%s iSCSI portal %s: %w", what, s.address, err)
}

// login runs the login phase: security negotiation (AuthMethod=None), then
// operational negotiation, to full feature phase.
func (s *discovery) login(initiatorName string) error {
	const itt = 0
	s.cmdSN = 1
	csg, nsg := byte(stageSecurity), byte(stageOperational)
	keys := encodeText(
		kv{"InitiatorName", initiatorName},
		kv{"SessionType", "Discovery"},
		kv{"AuthMethod", "None"},
	)
	for range 8 { // a target that never lets us through is broken
		if err := writePDU(s.conn, loginRequest(true, csg, nsg, s.isid, 0, itt, s.cmdSN, s.expStatSN, keys)); err != nil {
			return err
		}
		resp, err := s.read()
		if err != nil {
			return err
		}
		switch resp.opcode() {
		case opLoginResp:
		case opReject:
			return fmt.Errorf("target rejected the login request (reason %#02x)", resp.rejectReason())
		default:
			return fmt.Errorf("unexpected opcode %#02x during login", resp.opcode())
		}
		if resp.itt() != itt {
			return fmt.Errorf("login response for task %#x, not %#x", resp.itt(), itt)
		}
		pairs, err := parseText(resp.data)
		if err != nil {
			return err
		}
		if c, d := resp.statusClass(), resp.statusDetail(); c != 0 {
			return newLoginError(s.address, c, d, pairs)
		}
		if v := resp.versionActive(); v != 0 {
			return fmt.Errorf("target chose iSCSI version %d; only version 0 exists", v)
		}
		s.expStatSN = resp.statSN() + 1
		if csg == stageSecurity {
			if m, ok := lookup(pairs, "AuthMethod"); ok && m != "None" {
				return &loginError{kind: errdefs.ErrPermissionDenied, msg: fmt.Sprintf("iSCSI portal %s requires discovery authentication (AuthMethod=%s), which this initiator does not support", s.address, m)}
			}
		}
		keys = nil
		if !resp.loginTransit() {
			continue // the target wants another round in this stage
		}
		if resp.loginNSG() == stageFullFeature {
			s.tsih = resp.tsih()
			s.cmdSN = resp.expCmdSN()
			return nil
		}
		csg, nsg = resp.loginNSG(), stageFullFeature
		if csg == stageOperational {
			keys = encodeText(
				kv{"HeaderDigest", "None"},
				kv{"DataDigest", "None"},
				kv{"MaxRecvDataSegmentLength", strconv.Itoa(s.maxRecv)},
			)
		}
	}
	return errors.New("login did not reach full feature phase in 8 rounds")
}

// read reads the next PDU, answering and skipping NOP-Ins and skipping
// asynchronous messages, which a target may send at any time.
func (s *discovery) read() (*pdu, error) {
	for range 64 {
		p, err := readPDU(s.rd, s.maxRecv)
		if err != nil {
			return nil, err
		}
		switch p.opcode() {
		case opNopIn:
			s.expStatSN = p.statSN() + 1
			if p.ttt() != reservedTag {
				if err := writePDU(s.conn, nopOutReply(p, s.cmdSN, s.expStatSN)); err != nil {
					return nil, err
				}
			}
			continue
		case opAsyncMessage:
			continue
		}
		return p, nil
	}
	return nil, errors.New("target sent only NOP-In and asynchronous messages")
}

// sendTargets sends SendTargets=All and returns the whole response text,
// asking for continuations while the target sets C or clears F.
func (s *discovery) sendTargets() ([]byte, error) {
	const itt = 1
	data := encodeText(kv{"SendTargets", "All"})
	ttt := uint32(reservedTag)
	var text []byte
	for range 1 << 16 {
		if err := writePDU(s.conn, textRequest(itt, ttt, s.cmdSN, s.expStatSN, data)); err != nil {
			return nil, err
		}
		s.cmdSN++
		resp, err := s.read()
		if err != nil {
			return nil, err
		}
		switch resp.opcode() {
		case opTextResp:
		case opReject:
			return nil, fmt.Errorf("target rejected SendTargets (reason %#02x)", resp.rejectReason())
		default:
			return nil, fmt.Errorf("unexpected opcode %#02x answering SendTargets", resp.opcode())
		}
		if resp.itt() != itt {
			return nil, fmt.Errorf("text response for task %#x, not %#x", resp.itt(), itt)
		}
		s.expStatSN = resp.statSN() + 1
		if len(text)+len(resp.data) > maxTextResponse {
			return nil, fmt.Errorf("SendTargets response exceeds %d bytes", maxTextResponse)
		}
		text = append(text, resp.data...)
		if resp.flags()&flagFinal != 0 && resp.flags()&flagContinue == 0 {
			return text, nil
		}
		// More to come: an empty request with the target's transfer tag.
		ttt, data = resp.ttt(), nil
	}
	return nil, errors.New("SendTargets response did not end")
}

// logout closes the session politely; failures do not matter, the
// connection is closed anyway.
func (s *discovery) logout() {
	_ = s.conn.SetDeadline(time.Now().Add(logoutWait))
	const itt = 2
	if writePDU(s.conn, logoutRequest(itt, s.cmdSN, s.expStatSN)) != nil {
		return
	}
	for range 4 {
		p, err := s.read()
		if err != nil || p.opcode() == opLogoutResp {
			return
		}
	}
}

// parseSendTargets turns SendTargets text into targets: each TargetName
// starts a target and the TargetAddress values after it belong to it.
func parseSendTargets(text []byte) ([]Target, error) {
	pairs, err := parseText(text)
	if err != nil {
		return nil, err
	}
	var out []Target
	for _, p := range pairs {
		switch p.key {
		case "TargetName":
			if p.value == "" {
				return nil, errors.New("iscsi: empty TargetName in SendTargets response")
			}
			out = append(out, Target{Name: p.value})
		case "TargetAddress":
			if len(out) == 0 {
				return nil, errors.New("iscsi: TargetAddress before any TargetName in SendTargets response")
			}
			out[len(out)-1].Addresses = append(out[len(out)-1].Addresses, p.value)
		}
	}
	return out, nil
}

// loginError is a login the target answered with a non-zero status.
type loginError struct {
	kind error
	msg  string
}

func (e *loginError) Error() string { return e.msg + ": " + e.kind.Error() }
func (e *loginError) Unwrap() error { return e.kind }

// newLoginError maps a Login Response status (RFC 7143 section 11.13.5).
func newLoginError(address string, class, detail byte, pairs []kv) error {
	kind, what := errdefs.ErrUnavailable, "target error"
	switch class {
	case 1:
		to, _ := lookup(pairs, "TargetAddress")
		what = "the portal redirects to " + to + "; redirection is not supported"
	case 2:
		switch detail {
		case 0x01:
			kind, what = errdefs.ErrPermissionDenied, "authentication failure"
		case 0x02:
			kind, what = errdefs.ErrPermissionDenied, "authorization failure: this initiator is not allowed"
		case 0x03:
			kind, what = errdefs.ErrNotFound, "target not found"
		case 0x04:
			kind, what = errdefs.ErrNotFound, "target removed"
		case 0x05:
			kind, what = errdefs.ErrFailedPrecondition, "unsupported iSCSI version"
		case 0x06:
			what = "too many connections"
		case 0x09:
			kind, what = errdefs.ErrFailedPrecondition, "the portal does not support discovery sessions"
		default:
			kind, what = errdefs.ErrFailedPrecondition, "initiator error"
		}
	case 3:
		switch detail {
		case 0x01:
			what = "service unavailable"
		case 0x02:
			what = "out of resources"
		}
	}
	return &loginError{kind: kind, msg: fmt.Sprintf("iSCSI portal %s refused the discovery login: %s (status %#02x%02x)", address, what, class, detail)}
}
