package iscsi_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
)

// The seed corpora in testdata/fuzz/ hold the hostile-input suite's
// portals, IQNs and CHAP settings (test/hostile, TestFuzzCorpus writes
// them); the f.Add seeds are good ones.

// FuzzParsePortal checks ParsePortal: a refusal is InvalidArgument; an
// accepted portal has a port from 1 to 65535 (0 asks for 3260) and an
// address that is an IP address or an RFC 1123 host name (labels of
// letters, digits and inner hyphens, at most 63 bytes each and 253 in all,
// the last not all digits, so 256.1.1.1 is neither), sent bare or, for
// IPv6, in one pair of brackets; and it parses again to itself.
func FuzzParsePortal(f *testing.F) {
	for _, a := range []string{"10.0.0.1", "[fd00::1]", "::1", "target.example.com", "t-1"} {
		f.Add(a, uint32(3260))
	}
	f.Add("10.0.0.1", uint32(0))
	f.Fuzz(func(t *testing.T, addr string, port uint32) {
		p, err := iscsi.ParsePortal(&iscsi.TargetPortal{TargetAddress: addr, TargetPort: port})
		if err != nil {
			if !errors.Is(err, errdefs.ErrInvalidArgument) || p != (iscsi.Portal{}) {
				t.Fatalf("ParsePortal(%q, %d) = %+v, %v: want only InvalidArgument", addr, port, p, err)
			}
			return
		}
		wantPort := port
		if port == 0 {
			wantPort = iscsi.DefaultPort
		}
		if p.Port != wantPort || p.Port < 1 || p.Port > 65535 {
			t.Fatalf("ParsePortal(%q, %d): port %d", addr, port, p.Port)
		}
		ip := net.ParseIP(p.Address)
		switch {
		case ip == nil && !hostName(p.Address):
			t.Fatalf("ParsePortal(%q, %d): address %q is neither an IP address nor a host name", addr, port, p.Address)
		case addr != p.Address && (addr != "["+p.Address+"]" || ip == nil || ip.To4() != nil):
			t.Fatalf("ParsePortal(%q, %d): address %q was accepted as %q; only an IPv6 address may come in brackets", addr, port, addr, p.Address)
		}
		if again, err := iscsi.ParsePortal(&iscsi.TargetPortal{TargetAddress: p.Address, TargetPort: p.Port}); err != nil || again != p {
			t.Fatalf("ParsePortal(%q, %d) = %+v, but that parses to %+v, %v", addr, port, p, again, err)
		}
	})
}

// hostName is RFC 1123 section 2.1, written without a regular expression.
func hostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' {
				return false
			}
		}
	}
	// "a valid host name can never have the dotted-decimal form #.#.#.#,
	// since at least the highest-level component label will be alphabetic"
	top := labels[len(labels)-1]
	return strings.Trim(top, "0123456789") != ""
}

// FuzzCheckIQN checks CheckIQN against RFC 3720 section 3.2.6 and the
// characters RFC 3722 allows: a refusal is InvalidArgument; an accepted
// name is at most 223 bytes of UTF-8 and is iqn.yyyy-mm.<reversed domain
// name>[:<id>], eui.<16 hex digits> or naa.<16 or 32 hex digits>, where the
// id holds only letters, digits, '-', '.' and ':' of ASCII (RFC 3720
// 3.2.6.2; the proxy does not run the RFC 3722 profile, so it refuses the
// non-ASCII characters the profile would allow).
func FuzzCheckIQN(f *testing.F) {
	for _, s := range []string{"iqn.2003-01.org.example:target-1", "iqn.1992-08.com.netapp:sn.84183797", "eui.0123456789ABCDEF", "naa.60a98000486e2f34576f2f51715a3f55"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := iscsi.CheckIQN(name)
		if err != nil {
			if !errors.Is(err, errdefs.ErrInvalidArgument) {
				t.Fatalf("CheckIQN(%q) = %v: want InvalidArgument", name, err)
			}
			return
		}
		if len(name) > 223 || !utf8.ValidString(name) {
			t.Fatalf("CheckIQN accepted %q (%d bytes, UTF-8 %v)", name, len(name), utf8.ValidString(name))
		}
		if why := iqnProblem(name); why != "" {
			t.Fatalf("CheckIQN accepted %q: %s", name, why)
		}
	})
}

// iqnProblem says why name is not an iSCSI name, or "".
func iqnProblem(name string) string {
	hex := func(s string, n ...int) bool {
		ok := false
		for _, l := range n {
			ok = ok || len(s) == l
		}
		return ok && strings.Trim(s, "0123456789abcdefABCDEF") == ""
	}
	switch {
	case strings.HasPrefix(name, "eui."):
		if !hex(name[4:], 16) {
			return "not eui. and 16 hex digits"
		}
		return ""
	case strings.HasPrefix(name, "naa."):
		if !hex(name[4:], 16, 32) {
			return "not naa. and 16 or 32 hex digits"
		}
		return ""
	case !strings.HasPrefix(name, "iqn."):
		return "no iqn., eui. or naa. prefix"
	}
	rest := name[4:]
	if len(rest) < 8 || strings.Trim(rest[:4], "0123456789") != "" || rest[4] != '-' || strings.Trim(rest[5:7], "0123456789") != "" || rest[7] != '.' {
		return "no yyyy-mm. date"
	}
	authority, id, hasID := strings.Cut(rest[8:], ":")
	if authority == "" || strings.Trim(authority, "abcdefghijklmnopqrstuvwxyz0123456789.-") != "" ||
		strings.HasPrefix(authority, ".") || strings.HasPrefix(authority, "-") || strings.HasSuffix(authority, ".") || strings.HasSuffix(authority, "-") {
		return "the naming authority is not a lower-case reversed domain name"
	}
	if hasID && id == "" {
		return "an empty id after the colon"
	}
	for _, r := range id {
		switch {
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == ':'):
		default:
			return fmt.Sprintf("the id holds %q (%U), which RFC 3722 does not allow in iSCSI names", r, r)
		}
	}
	return ""
}

// maskSecret replaces every printable ASCII byte of a secret with another
// one, keeping its length and its control characters.
func maskSecret(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c > 0x20 && c < 0x7f && c != 'x':
			b[i] = 'x'
		case c > 0x20 && c < 0x7f:
			b[i] = 'y'
		}
	}
	return string(b)
}

// loginHost records the login the Service hands over.
type loginHost struct{ got *iscsi.Login }

func (h *loginHost) AddTargetPortal(context.Context, iscsi.Portal) error { return nil }
func (h *loginHost) DiscoverTargetPortal(context.Context, iscsi.Portal) ([]string, error) {
	return nil, nil
}
func (h *loginHost) RemoveTargetPortal(context.Context, iscsi.Portal) error       { return nil }
func (h *loginHost) ListTargetPortals(context.Context) ([]iscsi.Portal, error)    { return nil, nil }
func (h *loginHost) DisconnectTarget(context.Context, iscsi.Portal, string) error { return nil }
func (h *loginHost) TargetDisks(context.Context, iscsi.Portal, string) ([]uint32, error) {
	return nil, nil
}
func (h *loginHost) SetMutualChapSecret(context.Context, string) error { return nil }
func (h *loginHost) ConnectTarget(_ context.Context, l iscsi.Login) error {
	h.got = &l
	return nil
}

// FuzzConnectTarget checks the CHAP rules: an error is InvalidArgument and
// its message does not depend on the secret's content (it never quotes it); an accepted login has auth NONE without user or
// secret, or CHAP with a user of 1 to 223 bytes and a secret of 12 to 16
// bytes (RFC 3720), both UTF-8 without control characters.
func FuzzConnectTarget(f *testing.F) {
	f.Add(int32(0), "", "")
	f.Add(int32(1), "initiator", "secret-123456")
	f.Add(int32(2), "initiator", "0123456789abcdef")
	f.Fuzz(func(t *testing.T, auth int32, user, secret string) {
		connect := func(h iscsi.Host, secret string) error {
			_, err := iscsi.NewService(h).ConnectTarget(context.Background(), &iscsi.ConnectTargetRequest{
				TargetPortal: &iscsi.TargetPortal{TargetAddress: "10.0.0.1"}, IQN: "iqn.2003-01.org.example:t",
				AuthType: iscsi.AuthenticationType(auth), ChapUsername: user, ChapSecret: secret,
			})
			return err
		}
		h := &loginHost{}
		err := connect(h, secret)
		if err != nil {
			if !errors.Is(err, errdefs.ErrInvalidArgument) {
				t.Fatalf("ConnectTarget(auth %d) = %v: want InvalidArgument", auth, err)
			}
			// The message may depend on the secret's length and control
			// characters, never on its other content.
			if other := maskSecret(secret); other != secret {
				if err2 := connect(&loginHost{}, other); err2 == nil || err2.Error() != err.Error() {
					t.Fatalf("the error depends on the secret's content: %q for one secret, %v for another of the same shape", err, err2)
				}
			}
			if h.got != nil {
				t.Fatalf("refused (%v), but the host got a login", err)
			}
			return
		}
		l := h.got
		if l == nil {
			t.Fatal("accepted, but the host got nothing")
		}
		switch l.AuthType {
		case iscsi.AuthNone:
			if user != "" || secret != "" || l.Username != "" || l.Secret != "" {
				t.Fatalf("auth NONE accepted with user %q and a %d-byte secret", user, len(secret))
			}
		case iscsi.AuthOneWayCHAP, iscsi.AuthMutualCHAP:
			if len(l.Username) < 1 || len(l.Username) > 223 || len(l.Secret) < 12 || len(l.Secret) > 16 {
				t.Fatalf("CHAP accepted with a %d-byte user and a %d-byte secret", len(l.Username), len(l.Secret))
			}
			for _, v := range []string{l.Username, l.Secret} {
				if !utf8.ValidString(v) {
					t.Fatalf("CHAP accepted a user or secret that is not UTF-8")
				}
				for _, r := range v {
					if unicode.IsControl(r) {
						t.Fatalf("CHAP accepted a user or secret with the control character %U", r)
					}
				}
			}
		default:
			t.Fatalf("auth type %d accepted", auth)
		}
	})
}
