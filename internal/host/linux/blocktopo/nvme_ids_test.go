package blocktopo

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNVMeIDsAsWindows: an NVMe namespace's IDs as Windows presents them
// through its NVMe-SCSI translation, which is what upstream's drivers look
// for: Page83 is the namespace's NGUID (32 hex digits) or else its EUI-64
// (16), whatever the kernel's wwid prefers (it puts a namespace UUID
// first); SerialNumber is the same ID in upper-case groups of four joined
// by "_" and ended by "." (Windows' "0025_3858_81B0_A1B2."). A namespace
// with neither keeps the kernel's wwid and the controller's serial (an EBS
// volume: vol…). The attribute files are in the kernel's formats
// (drivers/nvme/host/sysfs.c: nguid "%pU", eui "%8ph", wwid "uuid.%pU").
func TestNVMeIDsAsWindows(t *testing.T) {
	for _, tc := range []struct {
		name           string
		attrs          map[string]string
		page83, serial string
	}{
		{
			"NGUID, EUI-64 and UUID",
			map[string]string{
				"wwid":          "uuid.6a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9",
				"uuid":          "6a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9",
				"nguid":         "e8238fa6-bf53-0001-001b-448b4a5c1234",
				"eui":           "00 25 38 8b 91 c3 d1 a2",
				"device/serial": "S4EWNF0M123456",
			},
			"e8238fa6bf530001001b448b4a5c1234", "E823_8FA6_BF53_0001_001B_448B_4A5C_1234.",
		},
		{
			"EUI-64 only",
			map[string]string{
				"wwid":          "eui.0025385881b0a1b2",
				"eui":           "00 25 38 58 81 b0 a1 b2",
				"device/serial": "S4EWNF0M654321",
			},
			"0025385881b0a1b2", "0025_3858_81B0_A1B2.",
		},
		{
			"neither (EBS)",
			map[string]string{
				"wwid":          "nvme.1d0f-766f6c30313233-416d617a6f6e-00000001",
				"device/serial": "vol0123456789abcdef0",
			},
			"nvme.1d0f-766f6c30313233-416d617a6f6e-00000001", "vol0123456789abcdef0",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "nvme1n1")
			for name, v := range tc.attrs {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			page83, serial := readDiskIDs(dir)
			if page83 != tc.page83 || serial != tc.serial {
				t.Fatalf("IDs = %q, %q; want %q, %q", page83, serial, tc.page83, tc.serial)
			}
		})
	}
}
