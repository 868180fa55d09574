package iscsi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
	"github.com/csi-node-proxy/csi-node-proxy/groups/iscsi"
)

// TestParsePortalForms: the accepted address forms and what they become,
// and the look-alikes inet_aton(3) or a careless trim would read as
// another address.
func TestParsePortalForms(t *testing.T) {
	good := map[string]string{
		"10.0.0.1": "10.0.0.1", "0.0.0.0": "0.0.0.0", "255.255.255.255": "255.255.255.255",
		"::1": "::1", "[fd00::1]": "fd00::1", "[64:ff9b::10.0.0.1]": "64:ff9b::10.0.0.1",
		"target.example.com": "target.example.com", "t-1": "t-1", "Target.Example": "Target.Example",
		"node1.3com": "node1.3com", "a.0x1": "a.0x1", strings.Repeat("a", 63) + ".example": strings.Repeat("a", 63) + ".example",
	}
	for in, want := range good {
		p, err := iscsi.ParsePortal(&iscsi.TargetPortal{TargetAddress: in})
		if err != nil || p.Address != want || p.Port != iscsi.DefaultPort {
			t.Errorf("ParsePortal(%q) = %+v, %v; want %q port 3260", in, p, err, want)
		}
	}
	for _, in := range []string{
		"256.1.1.1", "1.2.3.4.5", "1.2.3", "0", "00", "2130706433", "127.1", "0x7f.1", "0x7f000001", "0X7F.0.0.1",
		"010.0.0.1", "10.0.0.01", "0x", "1.2.3.4.", "a.123", "[127.0.0.1]", "[127.0.0.1", "::1]", "[::1", "[[::1]]",
		"[::1]:3260", "10.0.0.1:3260", "target:3260", "fe80::1%eth0", "[fe80::1%eth0]", "::ffff:10.0.0.1", "[::ffff:10.0.0.1]",
		"-a", "a-", "a..b", ".a", "a_b", "a b", " a", "a\n", "a\u0085", "ä.example", "a\xff", "$(id)", "a;b",
		strings.Repeat("a", 64) + ".example", strings.Repeat("a.", 127) + "aa",
	} {
		if p, err := iscsi.ParsePortal(&iscsi.TargetPortal{TargetAddress: in}); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("ParsePortal(%q) = %+v, %v; want InvalidArgument", in, p, err)
		} else if !strings.Contains(err.Error(), "target_portal.target_address") {
			t.Errorf("ParsePortal(%q): message %q does not name the field", in, err)
		}
	}
	for port, ok := range map[uint32]bool{1: true, 65535: true, 65536: false, 1 << 31: false} {
		_, err := iscsi.ParsePortal(&iscsi.TargetPortal{TargetAddress: "10.0.0.1", TargetPort: port})
		if (err == nil) != ok {
			t.Errorf("port %d: %v", port, err)
		}
	}
}

// TestCheckIQNForms: RFC 3720's three name types, with the character set
// of RFC 3720 3.2.6.2.
func TestCheckIQNForms(t *testing.T) {
	for _, in := range []string{
		"iqn.2003-01.org.example", "iqn.2003-01.org.example:target-1", "iqn.1992-08.com.netapp:sn.84183797",
		"iqn.2000-01.com.synology:DiskStation.Target-1.3a9ad6d15b", "iqn.2004-04.com.qnap:ts-453a:iscsi.target0.abc",
		"eui.0123456789ABCDEF", "eui.02004567a425678d", "naa.60a98000486e2f34", "naa.60a98000486e2f34576f2f51715a3f55",
		"iqn.2003-12.x:" + strings.Repeat("a", 223-len("iqn.2003-12.x:")),
	} {
		if err := iscsi.CheckIQN(in); err != nil {
			t.Errorf("CheckIQN(%q) = %v", in, err)
		}
	}
	for _, in := range []string{
		"", "iqn", "iqn.", "iqn.2003-01", "iqn.2003-01.", "iqn.2003-1.org.example", "iqn.03-01.org.example",
		"iqn.2003-00.org.example", "iqn.2003-13.org.example", "iqn.2003-01.Org.example", "iqn.2003-01.org..example",
		"iqn.2003-01.-org.example", "iqn.2003-01.org.example.", "iqn.2003-01.org_x.example", "iqn.2003-01.org.example:",
		"iqn.2003-01.org.example:a b", "iqn.2003-01.org.example:a/b", "iqn.2003-01.org.example:$(id)", "iqn.2003-01.org.example:x!",
		"iqn.2003-01.org.example:a_b", "iqn.2003-01.org.example:ä", "iqn.2003-01.org.example:a\u0085b", "iqn.2003-01.org.example:\xff",
		"IQN.2003-01.org.example", "eui.0123456789ABCDE", "eui.0123456789ABCDEG", "naa.123", "naa." + strings.Repeat("a", 20),
		"iqn.2003-12.x:" + strings.Repeat("a", 224-len("iqn.2003-12.x:")), "-oflag", " iqn.2003-01.org.example",
	} {
		if err := iscsi.CheckIQN(in); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("CheckIQN(%q) = %v; want InvalidArgument", in, err)
		}
	}
}
