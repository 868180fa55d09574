package simulated_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/smb"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
)

const secret = "S3cr3t-Passw0rd"

func smbHost(t *testing.T) *simulated.Host {
	t.Helper()
	cfg := simulated.DefaultConfig(nil)
	cfg.SMBShares = []simulated.SMBShare{
		{Path: `\\FileServer\Share`, Username: `CONTOSO\csi`, Password: secret, Dirs: []string{"pvc-1"}},
		{Path: `\\fileserver\extra`, Username: `CONTOSO\csi`, Password: secret},
		{Path: `\\fileserver\second`, Username: `CONTOSO\someone`, Password: secret},
		{Path: `\\nas\public`},
	}
	h := newHost(t, cfg)
	must(t, h.Filesystem().Mkdir(ctx, kubelet+`\plugins\smb`))
	return h
}

// mapping builds the Mapping the smb Service would hand over.
func mapping(t *testing.T, remote, local, user, pass string) smb.Mapping {
	t.Helper()
	share, full, err := smb.ParseRemotePath(remote)
	must(t, err)
	return smb.Mapping{Share: share, RemotePath: full, LocalPath: local, Username: user, Password: pass}
}

func TestSmbMappingAndLink(t *testing.T) {
	h := smbHost(t)
	fs := h.Filesystem()
	local := kubelet + `\plugins\smb\pv1`
	must(t, h.SMB().NewSmbGlobalMapping(ctx, mapping(t, `\\fileserver\share\pvc-1`, local, `contoso\CSI`, secret)))
	if got := h.SMBMappings(); !reflect.DeepEqual(got, []simulated.SMBMappingInfo{{Share: `\\fileserver\share`, Username: `contoso\CSI`, Status: simulated.SMBOK}}) {
		t.Errorf("SMBMappings = %+v", got)
	}
	if ok, err := fs.IsSymlink(ctx, local); !ok || err != nil {
		t.Errorf("IsSymlink(SMB link) = %v, %v", ok, err)
	}
	// Files written through the link land on the share.
	must(t, fs.Mkdir(ctx, local+`\dir`))
	if ok, _ := fs.PathExists(ctx, local+`\dir`); !ok {
		t.Error("the directory made through the link is not visible")
	}
	must(t, h.WriteFile(`\\fileserver\share\pvc-1\dir\f`, []byte("server side")))
	if got, err := h.ReadFile(local + `\dir\f`); err != nil || string(got) != "server side" {
		t.Errorf("ReadFile through the link = %q, %v", got, err)
	}
	// Again, same user in another case: reused; the link exists already.
	must(t, h.SMB().NewSmbGlobalMapping(ctx, mapping(t, `\\FILESERVER\share\pvc-1`, local, `CONTOSO\csi`, secret)))
	// A link to a directory the share does not have does not count.
	must(t, h.SMB().NewSmbGlobalMapping(ctx, mapping(t, `\\fileserver\share\pvc-404`, kubelet+`\plugins\smb\pv404`, `CONTOSO\csi`, secret)))
	if ok, _ := fs.IsSymlink(ctx, kubelet+`\plugins\smb\pv404`); ok {
		t.Error("IsSymlink is true for a link to a missing directory on the share")
	}
	// Removing the mapping leaves the link, which stops resolving.
	must(t, h.SMB().RemoveSmbGlobalMapping(ctx, `\\fileserver\share`))
	wantErr(t, h.SMB().RemoveSmbGlobalMapping(ctx, `\\fileserver\share`), errdefs.ErrNotFound, "no SMB global mapping")
	if ok, _ := fs.PathExists(ctx, local); !ok {
		t.Error("the link went with the mapping")
	}
	if ok, _ := fs.IsSymlink(ctx, local); ok {
		t.Error("IsSymlink is true without a mapping")
	}
	_, err := fs.PathExists(ctx, local+`\dir`)
	wantErr(t, err, errdefs.ErrFailedPrecondition, "no SMB global mapping")
	// Rmdir(force) on the link keeps the share's files.
	must(t, fs.Rmdir(ctx, local, true))
	if _, err := h.ReadFile(`\\fileserver\share\pvc-1\dir\f`); err != nil {
		t.Errorf("Rmdir of the SMB link touched the share: %v", err)
	}
}

func TestSmbErrors(t *testing.T) {
	h := smbHost(t)
	s := h.SMB()
	err := s.NewSmbGlobalMapping(ctx, mapping(t, `\\fileserver\share`, "", `CONTOSO\csi`, "wrong-"+secret))
	wantErr(t, err, errdefs.ErrPermissionDenied, "logon failure", `CONTOSO\\csi`)
	if strings.Contains(err.Error(), secret) {
		t.Errorf("the error %q contains the password", err)
	}
	wantErr(t, s.NewSmbGlobalMapping(ctx, mapping(t, `\\fileserver\share`, "", `CONTOSO\eve`, secret)), errdefs.ErrPermissionDenied)
	wantErr(t, s.NewSmbGlobalMapping(ctx, mapping(t, `\\fileserver\nothere`, "", "u", "p")), errdefs.ErrNotFound, "network name cannot be found")
	wantErr(t, s.NewSmbGlobalMapping(ctx, mapping(t, `\\elsewhere\share`, "", "u", "p")), errdefs.ErrNotFound, "network path was not found")
	if m := h.SMBMappings(); len(m) != 0 {
		t.Errorf("failed calls left mappings: %+v", m)
	}

	// The local path must be free and its parent must exist; on failure
	// nothing is mapped.
	must(t, h.Filesystem().Mkdir(ctx, kubelet+`\busy`))
	wantErr(t, s.NewSmbGlobalMapping(ctx, mapping(t, `\\fileserver\share`, kubelet+`\busy`, `CONTOSO\csi`, secret)), errdefs.ErrAlreadyExists)
	wantErr(t, s.NewSmbGlobalMapping(ctx, mapping(t, `\\fileserver\share`, kubelet+`\no\parent`, `CONTOSO\csi`, secret)), errdefs.ErrNotFound)
	if m := h.SMBMappings(); len(m) != 0 {
		t.Errorf("failed calls left mappings: %+v", m)
	}
	// Guest shares take any credentials.
	must(t, s.NewSmbGlobalMapping(ctx, mapping(t, `\\nas\public`, "", "", "")))
}

func TestSmbError1219(t *testing.T) {
	h := smbHost(t)
	s := h.SMB()
	must(t, s.NewSmbGlobalMapping(ctx, mapping(t, `\\fileserver\share`, "", `CONTOSO\csi`, secret)))
	// Another share on the same server, another user: Windows allows one
	// user name per server, so Create fails.
	err := s.NewSmbGlobalMapping(ctx, mapping(t, `\\fileserver\second`, "", `CONTOSO\someone`, secret))
	wantErr(t, err, errdefs.ErrAlreadyExists, "1219", "multiple connections")
	// Another share on the same server, same user: fine.
	must(t, s.NewSmbGlobalMapping(ctx, mapping(t, `\\fileserver\extra`, "", `CONTOSO\csi`, secret)))
}

// TestSmbHealthyMappingReusedWhateverTheUser follows upstream csi-proxy
// (pkg/server/smb/server.go NewSmbGlobalMapping, commit eeba4706): an OK
// mapping of the share is reused for any user name, including the same
// user spelled without its domain, and keeps the user that made it.
func TestSmbHealthyMappingReusedWhateverTheUser(t *testing.T) {
	h := smbHost(t)
	s := h.SMB()
	must(t, s.NewSmbGlobalMapping(ctx, mapping(t, `\\fileserver\share`, "", `CONTOSO\csi`, secret)))
	for i, user := range []string{`csi`, `CONTOSO\someone`, `csi@contoso.example`} {
		local := kubelet + `\plugins\smb\pv` + string(rune('a'+i))
		if err := s.NewSmbGlobalMapping(ctx, mapping(t, `\\fileserver\share\pvc-1`, local, user, "not checked again")); err != nil {
			t.Fatalf("mapping the share again as %q: %v; want the OK mapping reused", user, err)
		}
		if ok, err := h.Filesystem().IsSymlink(ctx, local); err != nil || !ok {
			t.Errorf("IsSymlink(%s) = %v, %v; want a working link", local, ok, err)
		}
	}
	if m := h.SMBMappings(); len(m) != 1 || m[0].Username != `CONTOSO\csi` || m[0].Status != simulated.SMBOK {
		t.Errorf("mappings %+v; want the one OK mapping of CONTOSO\\csi", m)
	}
}

func TestSmbStaleMappingIsRecreated(t *testing.T) {
	h := smbHost(t)
	s, fs := h.SMB(), h.Filesystem()
	local := kubelet + `\plugins\smb\pv1`
	must(t, s.NewSmbGlobalMapping(ctx, mapping(t, `\\fileserver\share\pvc-1`, local, `CONTOSO\csi`, secret)))
	must(t, h.DisconnectSMB(`\\FileServer\Share`))
	wantErr(t, h.DisconnectSMB(`\\nas\public`), errdefs.ErrNotFound)
	if m := h.SMBMappings(); m[0].Status != simulated.SMBDisconnected {
		t.Fatalf("status = %s", m[0].Status)
	}
	if ok, _ := fs.IsSymlink(ctx, local); ok {
		t.Error("IsSymlink is true through a disconnected mapping")
	}
	_, err := fs.PathExists(ctx, local+`\x`)
	wantErr(t, err, errdefs.ErrUnavailable, "Disconnected")
	// A stale mapping does not block new credentials: the password is
	// checked again when it is re-created.
	wantErr(t, s.NewSmbGlobalMapping(ctx, mapping(t, `\\fileserver\share\pvc-1`, local, `CONTOSO\csi`, "bad")), errdefs.ErrPermissionDenied)
	must(t, s.NewSmbGlobalMapping(ctx, mapping(t, `\\fileserver\share\pvc-1`, local, `CONTOSO\csi`, secret)))
	if m := h.SMBMappings(); m[0].Status != simulated.SMBOK {
		t.Errorf("status after re-mapping = %s", m[0].Status)
	}
	if ok, _ := fs.IsSymlink(ctx, local); !ok {
		t.Error("IsSymlink is false after re-mapping")
	}
}

func TestSmbViewChecksDirectCallers(t *testing.T) {
	h := smbHost(t)
	for _, m := range []smb.Mapping{
		{},
		{Share: "share", RemotePath: "share"},
		{Share: `\\fileserver\share`, RemotePath: `\\fileserver\extra\x`},
	} {
		wantErr(t, h.SMB().NewSmbGlobalMapping(ctx, m), errdefs.ErrInvalidArgument)
	}
}
