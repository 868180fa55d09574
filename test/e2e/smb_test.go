package e2e

import (
	"slices"
	"testing"

	"google.golang.org/grpc/codes"

	filesystemv1 "github.com/csi-node-proxy/csi-node-proxy/api/filesystem/v1"
	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
)

// smbMapping is a request to map remote with the share's credentials and
// link local to it ("" for no link).
func smbMapping(remote, local string) *smbv1.NewSmbGlobalMappingRequest {
	return &smbv1.NewSmbGlobalMappingRequest{RemotePath: remote, LocalPath: local, Username: smbUser, Password: smbPassword}
}

// TestSmbV1 calls every method of smb v1.
func TestSmbV1(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	c := e.smb
	newMapping := func(req *smbv1.NewSmbGlobalMappingRequest) error {
		_, err := c.NewSmbGlobalMapping(ctx, req)
		return err
	}
	removeMapping := func(remote string) error {
		_, err := c.RemoveSmbGlobalMapping(ctx, &smbv1.RemoveSmbGlobalMappingRequest{RemotePath: remote})
		return err
	}
	isSymlink := func(p string) bool {
		t.Helper()
		r, err := e.fs1.IsSymlink(ctx, &filesystemv1.IsSymlinkRequest{Path: p})
		ok(t, "IsSymlink", err)
		return r.GetIsSymlink()
	}
	mappings := func() []simulated.SMBMappingInfo { return e.host.SMBMappings() }
	shareMapped := []simulated.SMBMappingInfo{{Share: smbShare, Username: smbUser, Status: simulated.SMBOK}}

	remote := smbShare + `\pvc-1`
	podDir := kubelet + `\pods\3a4b\volumes\kubernetes.io~csi\pvc-smb`
	local := podDir + `\mount`
	_, err := e.fs1.Mkdir(ctx, &filesystemv1.MkdirRequest{Path: podDir})
	ok(t, "Mkdir", err)
	payload := []byte("on the file server")
	ok(t, "WriteFile on the share", e.host.WriteFile(remote+`\hello.txt`, payload))

	// Failures before anything is mapped.
	wrong := smbMapping(smbTeam, "")
	wrong.Password = wrongPassword
	wantErr(t, "NewSmbGlobalMapping(wrong password)", newMapping(wrong), codes.PermissionDenied, "logon failure")
	wrong = smbMapping(smbTeam, "")
	wrong.Username = `CONTOSO\nobody`
	wantErr(t, "NewSmbGlobalMapping(wrong user)", newMapping(wrong), codes.PermissionDenied, "logon failure")
	wantErr(t, "NewSmbGlobalMapping(unknown share)", newMapping(smbMapping(`\\fileserver\nope`, "")), codes.NotFound, "the network name cannot be found")
	wantErr(t, "NewSmbGlobalMapping(unknown server)", newMapping(smbMapping(`\\nosuchserver\share`, "")), codes.NotFound, "the network path was not found")
	for remote, substr := range map[string]string{
		"":                        "remote_path is empty",
		`fileserver\share`:        `is not of the form \\server\share`,
		`C:\share`:                `is not of the form \\server\share`,
		`\\fileserver`:            `is not of the form \\server\share`,
		`\\fileserver\share\..\x`: `".."`,
		`\\fileserver\sh|are`:     "a character Windows does not allow",
	} {
		wantErr(t, "NewSmbGlobalMapping(remote "+remote+")", newMapping(smbMapping(remote, "")), codes.InvalidArgument, substr)
	}
	badUser := smbMapping(smbShare, "")
	badUser.Username = `CONTOSO\a:b`
	wantErr(t, "NewSmbGlobalMapping(bad username)", newMapping(badUser), codes.InvalidArgument, "which an account name cannot")
	for _, bp := range badPaths[1:] { // an empty local path means no link
		wantErr(t, "NewSmbGlobalMapping(local "+bp.path+")", newMapping(smbMapping(remote, bp.path)), bp.code, bp.substr)
	}
	// A local path that exists (and is not our link), or whose parent is
	// missing, fails before anything is mapped.
	wantErr(t, "NewSmbGlobalMapping(local path exists)", newMapping(smbMapping(remote, podDir)), codes.AlreadyExists, "already exists")
	wantErr(t, "NewSmbGlobalMapping(local parent missing)", newMapping(smbMapping(remote, kubelet+`\no\such\dir\mount`)), codes.NotFound, "does not exist")
	if m := mappings(); len(m) != 0 {
		t.Fatalf("failed NewSmbGlobalMapping calls left mappings %+v", m)
	}

	// NewSmbGlobalMapping with a local link, twice (kubelet retries).
	twice(t, "NewSmbGlobalMapping", func() error { return newMapping(smbMapping(remote, local)) })
	if m := mappings(); !slices.Equal(m, shareMapped) {
		t.Errorf("mappings = %+v, want %+v", m, shareMapped)
	}
	if !isSymlink(local) {
		t.Error("IsSymlink(local path) = false after NewSmbGlobalMapping, want true")
	}
	if got, err := e.host.ReadFile(local + `\hello.txt`); err != nil || string(got) != string(payload) {
		t.Errorf("file through the local link = %q, %v; want %q", got, err, payload)
	}
	// Another PV on the same share reuses the mapping; user names compare
	// without case and the password is not checked again.
	second := smbMapping(smbShare+`\pvc-2\data`, "")
	second.Username = `contoso\CSI`
	ok(t, "NewSmbGlobalMapping(same share, other PV)", newMapping(second))

	// A healthy mapping is reused whoever asks, as upstream (it never
	// compares user names, issue 11 item 6); the mappings stay as they are.
	intruder := smbMapping(smbShare, "")
	intruder.Username, intruder.Password = `CONTOSO\intruder`, wrongPassword
	ok(t, "NewSmbGlobalMapping(mapped share, other user)", newMapping(intruder))
	// Windows error 1219: one user name per server for a new mapping.
	intruder.RemotePath = smbTeam
	wantErr(t, "NewSmbGlobalMapping(other share on the server, other user)", newMapping(intruder), codes.AlreadyExists, "Windows error 1219")
	if m := mappings(); !slices.Equal(m, shareMapped) {
		t.Errorf("mappings after refused calls = %+v, want %+v", m, shareMapped)
	}

	// RemoveSmbGlobalMapping: any path on the share names its mapping. The
	// link stays and no longer resolves.
	ok(t, "RemoveSmbGlobalMapping", removeMapping(remote))
	if m := mappings(); len(m) != 0 {
		t.Errorf("mappings after RemoveSmbGlobalMapping = %+v, want none", m)
	}
	if isSymlink(local) {
		t.Error("IsSymlink(local path) = true without a mapping, want false")
	}
	wantErr(t, "RemoveSmbGlobalMapping(not mapped)", removeMapping(remote), codes.NotFound, "no SMB global mapping")
	wantErr(t, "RemoveSmbGlobalMapping(unknown share)", removeMapping(`\\fileserver\nope`), codes.NotFound, "no SMB global mapping")
	wantErr(t, "RemoveSmbGlobalMapping(bad path)", removeMapping(`C:\share`), codes.InvalidArgument, `is not of the form \\server\share`)
	wantErr(t, "RemoveSmbGlobalMapping(empty)", removeMapping(""), codes.InvalidArgument, "remote_path is empty")

	// Re-staging after the mapping was lost finds its own link in place.
	ok(t, "NewSmbGlobalMapping(re-stage)", newMapping(smbMapping(remote, local)))
	if !isSymlink(local) {
		t.Error("IsSymlink(local path) = false after re-staging, want true")
	}
	// A stale (Disconnected) mapping is re-created.
	ok(t, "DisconnectSMB", e.host.DisconnectSMB(smbShare))
	if isSymlink(local) {
		t.Error("IsSymlink(local path) = true through a disconnected mapping, want false")
	}
	ok(t, "NewSmbGlobalMapping(stale mapping)", newMapping(smbMapping(remote, local)))
	if m := mappings(); !slices.Equal(m, shareMapped) || !isSymlink(local) {
		t.Errorf("after re-mapping a stale mapping: mappings %+v, link resolves %v; want %+v, true", m, isSymlink(local), shareMapped)
	}
	ok(t, "RemoveSmbGlobalMapping", removeMapping(smbShare))
}
