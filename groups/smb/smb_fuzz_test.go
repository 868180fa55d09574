package smb_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/hostpath"
)

// The seed corpora in testdata/fuzz/ hold the hostile-input suite's remote
// paths, user names and local paths (test/hostile, TestFuzzCorpus writes
// them); the f.Add seeds are good ones.

// FuzzParseRemotePath checks ParseRemotePath: a refusal is
// InvalidArgument; an accepted path is valid UTF-8 without control
// characters, its server and share names keep the share-name rules, its
// share is lower-case, has exactly two non-empty elements
// (server, share) and is a prefix of the lower-cased full path, and both
// parse again to themselves.
func FuzzParseRemotePath(f *testing.F) {
	for _, s := range []string{`\\server\share`, `//Server/Share/dir/`, `\\10.0.0.1\pv-1\a\b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		share, full, err := smb.ParseRemotePath(p)
		if err != nil {
			if !errors.Is(err, errdefs.ErrInvalidArgument) || share != "" || full != "" {
				t.Fatalf("ParseRemotePath(%q) = %q, %q, %v: want only InvalidArgument", p, share, full, err)
			}
			return
		}
		if !utf8.ValidString(full) {
			t.Fatalf("ParseRemotePath(%q) accepted a path that is not UTF-8 (share %q)", p, share)
		}
		for _, r := range full {
			if unicode.IsControl(r) {
				t.Fatalf("ParseRemotePath(%q) accepted the control character %U", p, r)
			}
		}
		if share != strings.ToLower(share) {
			t.Fatalf("ParseRemotePath(%q): share %q is not lower-case", p, share)
		}
		elems := strings.Split(strings.TrimPrefix(share, `\\`), `\`)
		if !strings.HasPrefix(share, `\\`) || len(elems) != 2 || elems[0] == "" || elems[1] == "" {
			t.Fatalf("ParseRemotePath(%q): share %q is not \\\\server\\share", p, share)
		}
		// [MS-FSCC] 2.1.6 / [MS-SRVS] 2.2.2.8: server and share names hold
		// none of the share-name characters; the share is at most 80
		// UTF-16 code units.
		if strings.ContainsAny(elems[0], `"\/[]:|<>+=;,*?`) || strings.ContainsAny(elems[1], `"\/[]:|<>+=;,*?`) || len(utf16.Encode([]rune(elems[1]))) > 80 {
			t.Fatalf("ParseRemotePath(%q): share %q breaks the share-name rules", p, share)
		}
		if lf := strings.ToLower(full); !strings.HasPrefix(lf, share) || len(lf) > len(share) && lf[len(share)] != '\\' {
			t.Fatalf("ParseRemotePath(%q): share %q does not start the full path %q", p, share, full)
		}
		if strings.Contains(full, "/") || strings.Contains(full[2:], `\\`) || strings.HasSuffix(full, `\`) {
			t.Fatalf("ParseRemotePath(%q): full path %q is not canonical", p, full)
		}
		for _, e := range strings.Split(full[2:], `\`) {
			if e == "." || e == ".." || strings.ContainsAny(e, `<>:"|?*`) {
				t.Fatalf("ParseRemotePath(%q): full path %q holds the element %q", p, full, e)
			}
		}
		if s2, f2, err := smb.ParseRemotePath(full); err != nil || s2 != share || f2 != full {
			t.Fatalf("ParseRemotePath(%q) = %q, %q; but ParseRemotePath(%q) = %q, %q, %v", p, share, full, full, s2, f2, err)
		}
		if s2, f2, err := smb.ParseRemotePath(share); err != nil || s2 != share || f2 != share {
			t.Fatalf("ParseRemotePath(%q) = share %q; but ParseRemotePath(%q) = %q, %q, %v", p, share, share, s2, f2, err)
		}
	})
}

// mappingHost records the mapping the Service hands over.
type mappingHost struct{ got *smb.Mapping }

func (h *mappingHost) NewSmbGlobalMapping(_ context.Context, m smb.Mapping) error {
	h.got = &m
	return nil
}

func (h *mappingHost) RemoveSmbGlobalMapping(context.Context, string) error { return nil }

// FuzzNewSmbGlobalMapping checks the Service's other SMB fields: an error
// is InvalidArgument or PermissionDenied (local path outside) and its
// message does not depend on the password's content (it never quotes it); what reaches the host is the parsed share, a user
// name of at most 256 bytes of UTF-8 (Windows names are UTF-16) without
// ASCII control characters or the characters no Windows account name has, a password of at most 1024
// bytes, and a local path inside the working directory.
func FuzzNewSmbGlobalMapping(f *testing.F) {
	f.Add(`\\srv\share`, "/var/lib/kubelet/plugins/smb/pv1", `CONTOSO\csi`, "Sh4re-P@ssw0rd!")
	f.Add(`\\srv\share\sub`, "", "csi@contoso.example", "")
	f.Fuzz(func(t *testing.T, remote, local, user, password string) {
		paths, err := hostpath.NewPolicy(hostpath.POSIX, []string{"/var/lib/kubelet"})
		if err != nil {
			t.Fatal(err)
		}
		newMapping := func(h smb.Host, password string) error {
			_, err := smb.NewService(h, paths).NewSmbGlobalMapping(context.Background(), &smb.NewSmbGlobalMappingRequest{
				RemotePath: remote, LocalPath: local, Username: user, Password: password,
			})
			return err
		}
		h := &mappingHost{}
		err = newMapping(h, password)
		if err != nil {
			if !errors.Is(err, errdefs.ErrInvalidArgument) && !errors.Is(err, errdefs.ErrPermissionDenied) {
				t.Fatalf("error %v: want InvalidArgument or PermissionDenied", err)
			}
			// The message may depend on the password's length, never on
			// its content.
			if other := strings.Repeat("x", len(password)); other != password {
				if err2 := newMapping(&mappingHost{}, other); err2 == nil || err2.Error() != err.Error() {
					t.Fatalf("the error depends on the password's content: %q for one password, %v for another of the same length", err, err2)
				}
			}
			if h.got != nil {
				t.Fatalf("refused (%v), but the host got %+v", err, *h.got)
			}
			return
		}
		m := h.got
		if m == nil {
			t.Fatal("accepted, but the host got nothing")
		}
		share, full, perr := smb.ParseRemotePath(remote)
		if perr != nil || m.Share != share || m.RemotePath != full {
			t.Fatalf("the host got share %q path %q for remote path %q (parsed %q, %q, %v)", m.Share, m.RemotePath, remote, share, full, perr)
		}
		if len(m.Username) > 256 || !utf8.ValidString(m.Username) || strings.ContainsAny(m.Username, `"/[]:|<>+=;,?*`) {
			t.Fatalf("accepted the user name %q", m.Username)
		}
		for _, r := range m.Username {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("accepted the user name %q: control character %U", m.Username, r)
			}
		}
		if len(m.Password) > 1024 || m.Password != password {
			t.Fatalf("the host got a password of %d bytes for one of %d", len(m.Password), len(password))
		}
		if local == "" {
			if m.LocalPath != "" {
				t.Fatalf("no local path asked, the host got %q", m.LocalPath)
			}
			return
		}
		if m.LocalPath != "/var/lib/kubelet" && !strings.HasPrefix(m.LocalPath, "/var/lib/kubelet/") {
			t.Fatalf("local path %q became %q, outside the working directory", local, m.LocalPath)
		}
	})
}
