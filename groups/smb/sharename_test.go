package smb_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// TestShareNameRules checks the share element of a remote path against the
// share-name rules of [MS-FSCC] 2.1.6 and [MS-SRVS] 2.2.2.8 (NAMETYPE_SHARE):
// at most 80 characters, none of " \ / [ ] : | < > + = ; , * ? and no
// control character. Characters that only file names may hold stay legal
// below the share.
func TestShareNameRules(t *testing.T) {
	for _, bad := range []string{
		`\\host\share;touch x`,
		`\\host\share;touch x\dir`,
		`\\host\a+b`,
		`\\host\a=b`,
		`\\host\a,b`,
		`\\host\a[b]`,
		`\\host\` + strings.Repeat("s", 81),
		`\\host\` + strings.Repeat("é", 81), // 81 characters, 162 bytes
		`\\host;x\share`,                    // the server name has the same forbidden set
		`\\ho+st\share`,
	} {
		share, full, err := smb.ParseRemotePath(bad)
		if !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("ParseRemotePath(%q) = %q, %q, %v; want InvalidArgument", bad, share, full, err)
		}
	}
	for _, good := range []string{
		`\\host\` + strings.Repeat("s", 80),
		`\\host\` + strings.Repeat("é", 80),
		`\\host\C$`,
		`\\host\my share\a;b\c+d=e,f[g]`, // file names below the share may hold them
		`\\10.0.0.1\pv-1`,
		`\\files.example.com\vols_2\x`,
	} {
		if _, _, err := smb.ParseRemotePath(good); err != nil {
			t.Errorf("ParseRemotePath(%q) = %v; want it accepted", good, err)
		}
	}
}

// refusingHost fails the test if the Service hands it anything: a refused
// share name must cause no traffic.
type refusingHost struct{ t *testing.T }

func (h refusingHost) NewSmbGlobalMapping(_ context.Context, m smb.Mapping) error {
	h.t.Errorf("the host was asked to map %q", m.RemotePath)
	return errdefs.Errorf(errdefs.ErrUnavailable, "the network was reached")
}

func (h refusingHost) RemoveSmbGlobalMapping(_ context.Context, share string) error {
	h.t.Errorf("the host was asked to unmap %q", share)
	return errdefs.Errorf(errdefs.ErrUnavailable, "the network was reached")
}

// TestForbiddenShareNameNeverReachesHost is issue 15's hostile case: the
// Service refuses \\host\share;touch x with InvalidArgument before any
// backend (and so any network) sees it.
func TestForbiddenShareNameNeverReachesHost(t *testing.T) {
	paths, err := hostpath.NewPolicy(hostpath.Windows, []string{`C:\var\lib\kubelet`})
	if err != nil {
		t.Fatal(err)
	}
	s := smb.NewService(refusingHost{t}, paths)
	_, err = s.NewSmbGlobalMapping(context.Background(), &smb.NewSmbGlobalMappingRequest{RemotePath: `\\host\share;touch x`, Username: "u", Password: "p"})
	if !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("NewSmbGlobalMapping: %v; want InvalidArgument", err)
	}
	_, err = s.RemoveSmbGlobalMapping(context.Background(), &smb.RemoveSmbGlobalMappingRequest{RemotePath: `\\host\share;touch x`})
	if !errors.Is(err, errdefs.ErrInvalidArgument) {
		t.Errorf("RemoveSmbGlobalMapping: %v; want InvalidArgument", err)
	}
}
