package wirecompat

import (
	"strings"
	"testing"

	diskv1beta1 "github.com/kubernetes-csi/csi-proxy/client/api/disk/v1beta1"
	fsv1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v1alpha1"
	fsv1beta1 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v1beta1"
	fsv1beta2 "github.com/kubernetes-csi/csi-proxy/client/api/filesystem/v1beta2"
	iscsiv1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/iscsi/v1alpha1"
	smbv1alpha1 "github.com/kubernetes-csi/csi-proxy/client/api/smb/v1alpha1"
	smbv1beta1 "github.com/kubernetes-csi/csi-proxy/client/api/smb/v1beta1"
	smbv1beta2 "github.com/kubernetes-csi/csi-proxy/client/api/smb/v1beta2"
	"google.golang.org/grpc/codes"
)

// ---------------------------------------------------------------- smb

// smbFlow is csi-driver-smb's stage and unstage through one older smb
// version and the filesystem version it falls back with. The callbacks
// return the response's error string ("" for versions without one).
type smbFlow struct {
	mkdir, rmdirForce     func(path string) error
	isLink                func(path string) (bool, error)
	newMapping            func(remote, local, user, pass string) (string, error)
	removeMapping         func(remote string) (string, error)
	parent, local, remote string
}

func (f smbFlow) run(t *testing.T) {
	t.Helper()
	// Failures first: nothing is mapped yet.
	for _, c := range []struct {
		what                      string
		remote, local, user, pass string
		want                      codes.Code
	}{
		{"wrong password", f.remote, "", smbUser, "wrong", codes.PermissionDenied},
		{"unknown share", `\\fileserver\nosuch`, "", smbUser, smbPass, codes.NotFound},
		{"not a UNC path", `fileserver\share`, "", smbUser, smbPass, codes.InvalidArgument},
		{"local path outside", f.remote, outside, smbUser, smbPass, codes.PermissionDenied},
	} {
		_, err := f.newMapping(c.remote, c.local, c.user, c.pass)
		wantCode(t, "NewSmbGlobalMapping "+c.what, err, c.want)
		if err != nil && strings.Contains(err.Error(), smbPass) {
			t.Errorf("NewSmbGlobalMapping %s: the error quotes the password: %v", c.what, err)
		}
	}
	_, err := f.removeMapping(share)
	wantCode(t, "RemoveSmbGlobalMapping unmapped", err, codes.NotFound)

	if err := f.mkdir(f.parent); err != nil {
		t.Fatalf("Mkdir parent: %v", err)
	}
	e, err := f.newMapping(f.remote, f.local, smbUser, smbPass)
	if err != nil {
		t.Fatalf("NewSmbGlobalMapping: %v", err)
	}
	wantEmptyError(t, "NewSmbGlobalMapping", e)
	if _, err := f.newMapping(f.remote, f.local, smbUser, smbPass); err != nil {
		t.Errorf("NewSmbGlobalMapping again: %v", err)
	}
	if ok, err := f.isLink(f.local); err != nil || !ok {
		t.Errorf("local SMB link: is a link %v, %v", ok, err)
	}
	if err := f.rmdirForce(f.local); err != nil {
		t.Errorf("Rmdir local: %v", err)
	}
	e, err = f.removeMapping(f.remote)
	if err != nil {
		t.Fatalf("RemoveSmbGlobalMapping: %v", err)
	}
	wantEmptyError(t, "RemoveSmbGlobalMapping", e)
	_, err = f.removeMapping(f.remote)
	wantCode(t, "RemoveSmbGlobalMapping twice", err, codes.NotFound)
	if err := f.rmdirForce(f.parent); err != nil {
		t.Errorf("Rmdir parent: %v", err)
	}
}

func TestSmbV1alpha1(t *testing.T) {
	sc := smbv1alpha1.NewSmbClient(conn(t, "smb/v1alpha1"))
	fc := fsv1alpha1.NewFilesystemClient(conn(t, "filesystem/v1alpha1"))
	x := ctx(t)
	parent := kubelet + `\plugins\kubernetes.io\csi\smb.csi.k8s.io\a1`
	smbFlow{
		parent: parent, local: parent + `\globalmount`, remote: share + `\pvc-1`,
		mkdir: func(p string) error {
			_, err := fc.Mkdir(x, &fsv1alpha1.MkdirRequest{Path: p, Context: fsv1alpha1.PathContext_PLUGIN})
			return err
		},
		rmdirForce: func(p string) error {
			_, err := fc.Rmdir(x, &fsv1alpha1.RmdirRequest{Path: p, Force: true})
			return err
		},
		isLink: func(p string) (bool, error) {
			r, err := fc.IsMountPoint(x, &fsv1alpha1.IsMountPointRequest{Path: p})
			return r.GetIsMountPoint(), err
		},
		newMapping: func(remote, local, user, pass string) (string, error) {
			r, err := sc.NewSmbGlobalMapping(x, &smbv1alpha1.NewSmbGlobalMappingRequest{RemotePath: remote, LocalPath: local, Username: user, Password: pass})
			return r.GetError(), err
		},
		removeMapping: func(remote string) (string, error) {
			r, err := sc.RemoveSmbGlobalMapping(x, &smbv1alpha1.RemoveSmbGlobalMappingRequest{RemotePath: remote})
			return r.GetError(), err
		},
	}.run(t)
}

// TestSmbV1beta1 is csi-driver-smb's fallback: filesystem and smb v1beta1.
func TestSmbV1beta1(t *testing.T) {
	sc := smbv1beta1.NewSmbClient(conn(t, "smb/v1beta1"))
	fc := fsv1beta1.NewFilesystemClient(conn(t, "filesystem/v1beta1"))
	x := ctx(t)
	parent := kubelet + `\plugins\kubernetes.io\csi\smb.csi.k8s.io\b1`
	smbFlow{
		parent: parent, local: parent + `\globalmount`, remote: share + `\pvc-1`,
		mkdir: func(p string) error {
			_, err := fc.Mkdir(x, &fsv1beta1.MkdirRequest{Path: p})
			return err
		},
		rmdirForce: func(p string) error {
			_, err := fc.Rmdir(x, &fsv1beta1.RmdirRequest{Path: p, Force: true})
			return err
		},
		isLink: func(p string) (bool, error) {
			r, err := fc.IsMountPoint(x, &fsv1beta1.IsMountPointRequest{Path: p})
			return r.GetIsMountPoint(), err
		},
		newMapping: func(remote, local, user, pass string) (string, error) {
			r, err := sc.NewSmbGlobalMapping(x, &smbv1beta1.NewSmbGlobalMappingRequest{RemotePath: remote, LocalPath: local, Username: user, Password: pass})
			return r.GetError(), err
		},
		removeMapping: func(remote string) (string, error) {
			r, err := sc.RemoveSmbGlobalMapping(x, &smbv1beta1.RemoveSmbGlobalMappingRequest{RemotePath: remote})
			return r.GetError(), err
		},
	}.run(t)
}

func TestSmbV1beta2(t *testing.T) {
	sc := smbv1beta2.NewSmbClient(conn(t, "smb/v1beta2"))
	fc := fsv1beta2.NewFilesystemClient(conn(t, "filesystem/v1beta2"))
	x := ctx(t)
	parent := kubelet + `\plugins\kubernetes.io\csi\smb.csi.k8s.io\b2`
	smbFlow{
		parent: parent, local: parent + `\globalmount`, remote: share + `\pvc-1`,
		mkdir: func(p string) error {
			_, err := fc.Mkdir(x, &fsv1beta2.MkdirRequest{Path: p})
			return err
		},
		rmdirForce: func(p string) error {
			_, err := fc.Rmdir(x, &fsv1beta2.RmdirRequest{Path: p, Force: true})
			return err
		},
		isLink: func(p string) (bool, error) {
			r, err := fc.IsSymlink(x, &fsv1beta2.IsSymlinkRequest{Path: p})
			return r.GetIsSymlink(), err
		},
		newMapping: func(remote, local, user, pass string) (string, error) {
			_, err := sc.NewSmbGlobalMapping(x, &smbv1beta2.NewSmbGlobalMappingRequest{RemotePath: remote, LocalPath: local, Username: user, Password: pass})
			return "", err
		},
		removeMapping: func(remote string) (string, error) {
			_, err := sc.RemoveSmbGlobalMapping(x, &smbv1beta2.RemoveSmbGlobalMappingRequest{RemotePath: remote})
			return "", err
		},
	}.run(t)
}

// ---------------------------------------------------------------- iscsi v1alpha1

// TestIscsiV1alpha1 logs in to both targets the way v1alpha1 can: without
// authentication and with one-way CHAP (mutual CHAP needs
// SetMutualChapSecret, which only v1alpha2 has).
func TestIscsiV1alpha1(t *testing.T) {
	ic := iscsiv1alpha1.NewIscsiClient(conn(t, "iscsi/v1alpha1"))
	dc := diskv1beta1.NewDiskClient(conn(t, "disk/v1beta1"))
	x := ctx(t)
	portal := func() *iscsiv1alpha1.TargetPortal {
		return &iscsiv1alpha1.TargetPortal{TargetAddress: portalIP}
	}

	_, err := ic.AddTargetPortal(x, &iscsiv1alpha1.AddTargetPortalRequest{})
	wantCode(t, "AddTargetPortal nil target_portal", err, codes.InvalidArgument)
	_, err = ic.RemoveTargetPortal(x, &iscsiv1alpha1.RemoveTargetPortalRequest{TargetPortal: portal()})
	wantCode(t, "RemoveTargetPortal unregistered", err, codes.NotFound)

	disc := must[*iscsiv1alpha1.DiscoverTargetPortalResponse](t, "DiscoverTargetPortal")(ic.DiscoverTargetPortal(x, &iscsiv1alpha1.DiscoverTargetPortalRequest{TargetPortal: portal()}))
	if got := strings.Join(disc.Iqns, ","); got != chapIQN+","+openIQN {
		t.Errorf("DiscoverTargetPortal = %v", disc.Iqns)
	}
	must[*iscsiv1alpha1.AddTargetPortalResponse](t, "AddTargetPortal")(ic.AddTargetPortal(x, &iscsiv1alpha1.AddTargetPortalRequest{TargetPortal: portal()}))
	list := must[*iscsiv1alpha1.ListTargetPortalsResponse](t, "ListTargetPortals")(ic.ListTargetPortals(x, &iscsiv1alpha1.ListTargetPortalsRequest{}))
	if len(list.TargetPortals) != 1 || list.TargetPortals[0].TargetPort != 3260 {
		t.Errorf("ListTargetPortals = %v, want [%s:3260]", list.TargetPortals, portalIP)
	}

	_, err = ic.ConnectTarget(x, &iscsiv1alpha1.ConnectTargetRequest{TargetPortal: portal(), Iqn: chapIQN, AuthType: iscsiv1alpha1.AuthenticationType_ONE_WAY_CHAP, ChapUsername: chapUser, ChapSecret: "wrongsecret12"})
	wantCode(t, "ConnectTarget wrong CHAP secret", err, codes.PermissionDenied)
	// No session: an empty list, as upstream (issue 11 item 9).
	if d := must[*iscsiv1alpha1.GetTargetDisksResponse](t, "GetTargetDisks without a session")(ic.GetTargetDisks(x, &iscsiv1alpha1.GetTargetDisksRequest{TargetPortal: portal(), Iqn: openIQN})); len(d.DiskIDs) != 0 {
		t.Errorf("GetTargetDisks without a session = %v, want none", d.DiskIDs)
	}

	for _, login := range []*iscsiv1alpha1.ConnectTargetRequest{
		{TargetPortal: portal(), Iqn: openIQN},
		{TargetPortal: portal(), Iqn: chapIQN, AuthType: iscsiv1alpha1.AuthenticationType_ONE_WAY_CHAP, ChapUsername: chapUser, ChapSecret: chapPass},
	} {
		must[*iscsiv1alpha1.ConnectTargetResponse](t, "ConnectTarget "+login.Iqn)(ic.ConnectTarget(x, login))
		disks := must[*iscsiv1alpha1.GetTargetDisksResponse](t, "GetTargetDisks")(ic.GetTargetDisks(x, &iscsiv1alpha1.GetTargetDisksRequest{TargetPortal: portal(), Iqn: login.Iqn}))
		if len(disks.DiskIDs) != 1 {
			t.Fatalf("GetTargetDisks(%s) = %q, want one disk", login.Iqn, disks.DiskIDs)
		}
		// The disk ID is a disk v1beta1 disk ID.
		if st, err := dc.DiskStats(x, &diskv1beta1.DiskStatsRequest{DiskID: disks.DiskIDs[0]}); err != nil || st.DiskSize <= 0 {
			t.Errorf("DiskStats(%q) of %s's LUN = %v, %v", disks.DiskIDs[0], login.Iqn, st, err)
		}
	}
	for _, iqn := range []string{openIQN, chapIQN} {
		must[*iscsiv1alpha1.DisconnectTargetResponse](t, "DisconnectTarget")(ic.DisconnectTarget(x, &iscsiv1alpha1.DisconnectTargetRequest{TargetPortal: portal(), Iqn: iqn}))
	}
	_, err = ic.DisconnectTarget(x, &iscsiv1alpha1.DisconnectTargetRequest{TargetPortal: portal(), Iqn: "bad iqn"})
	wantCode(t, "DisconnectTarget malformed IQN", err, codes.InvalidArgument)
	must[*iscsiv1alpha1.RemoveTargetPortalResponse](t, "RemoveTargetPortal")(ic.RemoveTargetPortal(x, &iscsiv1alpha1.RemoveTargetPortalRequest{TargetPortal: portal()}))
	if l := must[*iscsiv1alpha1.ListTargetPortalsResponse](t, "ListTargetPortals")(ic.ListTargetPortals(x, &iscsiv1alpha1.ListTargetPortalsRequest{})); len(l.TargetPortals) != 0 {
		t.Errorf("ListTargetPortals after removal = %v", l.TargetPortals)
	}
}
