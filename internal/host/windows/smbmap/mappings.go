package smbmap

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/internal/host/windows/wmi"
)

// mappingClass is the WMI class of SMB global mappings, in
// Root\Microsoft\Windows\Smb. There is no Win32 API for global mappings
// (WNetAddConnection2 maps for one logon session only), so this is the one
// WMI dependency of the SMB backend.
const mappingClass = "MSFT_SmbGlobalMapping"

// MSFT_SmbGlobalMapping.Status values (the MSFT_SmbMapping enumeration:
// OK 0, Paused 1, Disconnected 2, NetworkError 3, Connecting 4,
// Reconnecting 5, Unavailable 6). Only OK counts as healthy.
const (
	statusOK           = 0
	statusDisconnected = 2
)

// mapping is an existing global mapping.
type mapping struct {
	RemotePath string
	Status     uint32
}

// credential is what Create authenticates with; nil maps with the
// machine's identity.
type credential struct {
	User string
	// Password is a secret.
	Password string
}

// smbMappings is the seam between the mapping logic and the host: the
// operations on MSFT_SmbGlobalMapping the logic needs.
type smbMappings interface {
	// List returns every global mapping.
	List(ctx context.Context) ([]mapping, error)
	// Get returns the global mapping of share (\\server\share), found
	// without case; ok is false when there is none.
	Get(ctx context.Context, share string) (m mapping, ok bool, err error)
	// Create maps share with cred (nil: no credential) and RequirePrivacy.
	Create(ctx context.Context, share string, cred *credential, requirePrivacy bool) error
	// Remove removes the mapping of share with Force; no mapping is an
	// error wrapping errdefs.ErrNotFound.
	Remove(ctx context.Context, share string) error
}

// wmiMappings implements smbMappings over the project's WMI client. It is
// platform-neutral: on Linux it runs against a fake wmi.API in tests, and
// wmi.Client reports errdefs.ErrUnimplemented.
type wmiMappings struct {
	c wmi.API
}

var _ smbMappings = wmiMappings{}

// byRemotePath selects the mapping of share. The value goes through the
// WMI package's WQL literal escaping; WQL compares strings without case.
func byRemotePath(share string) *wmi.WQL {
	return wmi.Query(mappingClass).Where("RemotePath", share)
}

// Get implements smbMappings.
func (w wmiMappings) Get(ctx context.Context, share string) (mapping, bool, error) {
	rows, err := w.c.Query(ctx, byRemotePath(share).Select("RemotePath", "Status"))
	if err != nil {
		return mapping{}, false, hostError(err, noHint, nil, "query %s for %s", mappingClass, share)
	}
	for _, r := range rows {
		rp, err := r.String("RemotePath")
		if err != nil {
			return mapping{}, false, fmt.Errorf("%s of %s: %w", mappingClass, share, err)
		}
		if !strings.EqualFold(strings.TrimRight(rp, `\`), share) {
			continue
		}
		st, err := r.Uint32("Status")
		if err != nil {
			return mapping{}, false, fmt.Errorf("%s of %s: %w", mappingClass, share, err)
		}
		return mapping{RemotePath: rp, Status: st}, true, nil
	}
	return mapping{}, false, nil
}

// Create implements smbMappings with the static method
// MSFT_SmbGlobalMapping.Create. Parameters are set by name on the method's
// InParameters object, never pasted into any text. Only the parameters
// upstream passes are set (RemotePath, Credential, RequirePrivacy); the
// provider defaults the others (Persistent's default is unconfirmed).
func (w wmiMappings) Create(ctx context.Context, share string, cred *credential, requirePrivacy bool) error {
	var c any // nil: the parameter stays unset
	var secrets []string
	if cred != nil {
		s := credentialString(cred.User, cred.Password)
		c, secrets = s, []string{s, cred.Password}
	}
	_, err := w.c.CallStatic(ctx, mappingClass, "Create",
		wmi.Arg("RemotePath", share),
		wmi.Arg("Credential", c),
		wmi.Arg("RequirePrivacy", requirePrivacy),
	)
	if err != nil {
		user := ""
		if cred != nil {
			user = cred.User
		}
		return hostError(err, createHint(share, user, requirePrivacy), secrets, "map %s", share)
	}
	return nil
}

// Remove implements smbMappings with MSFT_SmbGlobalMapping.Remove(Force =
// true), which removes the mapping even while files on it are open, as
// upstream does.
func (w wmiMappings) Remove(ctx context.Context, share string) error {
	_, err := w.c.Call(ctx, byRemotePath(share), "Remove", wmi.Arg("Force", true))
	if err != nil {
		code, ok := win32Code(err)
		if ok && code == nerrUseNotFound || !ok && errors.Is(err, errdefs.ErrNotFound) {
			return errdefs.Errorf(errdefs.ErrNotFound, "there is no SMB global mapping of %s", share)
		}
		return hostError(err, noHint, nil, "remove the SMB global mapping of %s", share)
	}
	return nil
}

func noHint(uint32) string { return "" }

// createHint adds what an operator needs to know for the codes drivers
// hit most (upstream issues: csi-driver-smb#219, #1007, csi-proxy#311).
func createHint(share, user string, requirePrivacy bool) func(uint32) string {
	server := share
	if i := strings.IndexByte(share[2:], '\\'); i >= 0 {
		server = share[:i+2]
	}
	return func(code uint32) string {
		switch code {
		case errSessionCredConflict:
			return fmt.Sprintf("this node already has an SMB session to %s under another user name, and Windows allows one user name per server: use the same credentials for every volume on %s, or remove the other mappings of that server first", server, server)
		case errLogonFailure, errInvalidPassword:
			return fmt.Sprintf("check the user name %q and password in the volume's secret", user)
		case errNetworkAccessDenied:
			if requirePrivacy {
				return fmt.Sprintf("the mapping asks for SMB encryption (RequirePrivacy, the proxy's -require-privacy flag, is true); a server without SMB 3 encryption refuses it: enable encryption on %s or run the proxy with -require-privacy=false", server)
			}
			return "the server refused the connection (RequirePrivacy is off)"
		case errBadNetPath, errBadNetName:
			return fmt.Sprintf("check that %s exists and that this node can reach %s (TCP 445)", share, server)
		}
		return ""
	}
}
