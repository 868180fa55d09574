package simulated_test

import (
	"encoding/json"
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/csi-node-proxy/csi-node-proxy/groups/system"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
)

func TestLoadConfigExample(t *testing.T) {
	cfg, err := simulated.LoadConfig("testdata/simulated-host.json")
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t, cfg)

	disks := h.ListDisks()
	var numbers []uint32
	for _, d := range disks {
		numbers = append(numbers, d.Number)
	}
	// Disk 7 is fixed; the automatic ones take the lowest free numbers.
	if want := []uint32{0, 1, 2, 7}; !reflect.DeepEqual(numbers, want) {
		t.Fatalf("disk numbers = %v; want %v", numbers, want)
	}
	if d := disks[3]; d.Online || d.Size != 2<<30 || d.Location != "1:0:0:1" {
		t.Errorf("disk 7 = %+v; want offline, 2 GiB, at 1:0:0:1", d)
	}
	if d := disks[2]; d.PartitionStyle != "GPT" || d.Size != 20<<30 {
		t.Errorf("disk 2 = %+v; want a 20 GiB GPT disk", d)
	}
	for _, p := range []string{kubelet, `C:\csi`, `D:\`} {
		if ok, err := h.Filesystem().PathExists(ctx, p); !ok || err != nil {
			t.Errorf("PathExists(%q) = %v, %v; want true", p, ok, err)
		}
	}
	if sn, _ := h.System().BIOSSerialNumber(ctx); sn != "SIMULATED-0001" {
		t.Errorf("BIOS serial = %q", sn)
	}
	info, err := h.System().GetService(ctx, "dependent")
	if err != nil || info.Status != system.StatusRunning || info.StartType != system.StartAutomatic || info.DisplayName != "Dependent" {
		t.Errorf("GetService(dependent) = %+v, %v", info, err)
	}
	if _, err := h.System().GetService(ctx, "LanmanServer"); err == nil {
		t.Error("configured services must replace the defaults")
	}
	// The share's configured directory exists server-side.
	must(t, h.WriteFile(`\\fileserver\share\pvc-2\data\f`, []byte("x")))

	// The seed makes volume IDs reproducible.
	h2 := newHost(t, cfg)
	if a, b := h.ListVolumes(), h2.ListVolumes(); !reflect.DeepEqual(a, b) {
		t.Errorf("same seed, different worlds:\n%+v\n%+v", a, b)
	}
}

func TestZeroAndDefaultConfig(t *testing.T) {
	h := newHost(t, simulated.Config{})
	if d := h.ListDisks(); len(d) != 1 || !d[0].System || d[0].Size != int64(simulated.DefaultSystemDiskSize) {
		t.Errorf("zero config disks = %+v; want only the system disk", d)
	}
	if _, err := h.System().GetService(ctx, "MSiSCSI"); err != nil {
		t.Errorf("zero config must have the default services: %v", err)
	}
	if sn, _ := h.System().BIOSSerialNumber(ctx); sn != simulated.DefaultBIOSSerial {
		t.Errorf("BIOS serial = %q", sn)
	}

	h = defaultHost(t)
	disks := h.ListDisks()
	if len(disks) != 3 || disks[1].Size != 1<<30 || disks[2].Size != 2<<30 || disks[1].PartitionStyle != "RAW" {
		t.Fatalf("default disks = %+v", disks)
	}
	if ok, _ := h.Filesystem().PathExists(ctx, kubelet); !ok {
		t.Error("the default working dir does not exist")
	}
	if got := h.WorkingDirs(); !reflect.DeepEqual(got, []string{kubelet}) {
		t.Errorf("WorkingDirs = %v", got)
	}
	// Services: an explicit empty list means none.
	h = newHost(t, simulated.Config{Services: []simulated.ServiceSpec{}})
	if _, err := h.System().GetService(ctx, "MSiSCSI"); err == nil {
		t.Error("Services: [] must mean no services")
	}
}

func TestParseConfigErrors(t *testing.T) {
	cases := map[string]struct{ json, want string }{
		"unknown field":       {`{"disk": []}`, `unknown field "disk"`},
		"trailing data":       {`{} {}`, "after the configuration object"},
		"bad size unit":       {`{"disks": [{"size": "10GB"}]}`, "decimal units are ambiguous"},
		"size too small":      {`{"disks": [{"size": "1MiB"}]}`, "out of range"},
		"size missing":        {`{"disks": [{"serial": "x"}]}`, "out of range"},
		"size not a number":   {`{"disks": [{"size": true}]}`, "neither a whole number"},
		"duplicate number":    {`{"disks": [{"number": 3, "size": "1GiB"}, {"number": 3, "size": "1GiB"}]}`, "disk number 3 is already used"},
		"number of system":    {`{"disks": [{"number": 0, "size": "1GiB"}]}`, "disk number 0 is already used by the system disk"},
		"bad location":        {`{"disks": [{"size": "1GiB", "location": "0:0:1"}]}`, "adapter:bus:target:lun"},
		"bad file system":     {`{"disks": [{"size": "1GiB", "fileSystem": "ReFS"}]}`, "only NTFS"},
		"bad bus type":        {`{"disks": [{"size": "1GiB", "busType": "SATA"}]}`, `busType "SATA"`},
		"NVMe SCSI location":  {`{"disks": [{"size": "1GiB", "busType": "NVMe", "location": "1:0:0:0"}]}`, "PCI bus number"},
		"NVMe bus too large":  {`{"disks": [{"size": "1GiB", "busType": "NVMe", "location": "256"}]}`, "PCI bus number"},
		"SCSI namespace ID":   {`{"disks": [{"size": "1GiB", "namespaceID": 2}]}`, "NVMe bus"},
		"SCSI product":        {`{"disks": [{"size": "1GiB", "product": "msft_nvme_accele"}]}`, "NVMe bus"},
		"long product":        {`{"disks": [{"size": "1GiB", "busType": "NVMe", "product": "msft_nvme_accelerator"}]}`, "16 characters"},
		"product with space":  {`{"disks": [{"size": "1GiB", "busType": "NVMe", "product": "msft nvme"}]}`, "device instance ID"},
		"NVMe iSCSI LUN":      {`{"iscsiTargets": [{"portal": {"address": "h"}, "iqn": "iqn.2000-01.com.example:a", "luns": [{"size": "1GiB", "busType": "NVMe"}]}]}`, "iSCSI LUN"},
		"letter without fs":   {`{"disks": [{"size": "1GiB", "driveLetter": "D"}]}`, "needs fileSystem"},
		"letter C taken":      {`{"disks": [{"size": "1GiB", "fileSystem": "NTFS", "driveLetter": "c:"}]}`, "drive letter C: is already used"},
		"working dir drive":   {`{"workingDirs": ["E:\\k"]}`, "drive E:, which no volume provides"},
		"bad working dir":     {`{"workingDirs": ["relative\\dir"]}`, "workingDirs[0]"},
		"no system disk":      {`{"noSystemDisk": true, "workingDirs": ["C:\\k"]}`, "drive C:"},
		"small system disk":   {`{"systemDiskSize": "512MiB"}`, "systemDiskSize"},
		"share subdir":        {`{"smbShares": [{"path": "\\\\srv\\share\\sub"}]}`, "not a share root"},
		"duplicate share":     {`{"smbShares": [{"path": "\\\\srv\\share"}, {"path": "\\\\SRV\\Share"}]}`, "listed twice"},
		"bad share dir":       {`{"smbShares": [{"path": "\\\\srv\\share", "dirs": ["a\\..\\b"]}]}`, "dirs[0]"},
		"duplicate iqn":       {`{"iscsiTargets": [{"portal": {"address": "10.0.0.1"}, "iqn": "iqn.2000-01.com.example:a"}, {"portal": {"address": "10.0.0.2"}, "iqn": "iqn.2000-01.com.example:A"}]}`, "listed twice"},
		"bad iqn":             {`{"iscsiTargets": [{"portal": {"address": "10.0.0.1"}, "iqn": "target1"}]}`, "not an iSCSI name"},
		"no portal":           {`{"iscsiTargets": [{"iqn": "iqn.2000-01.com.example:a"}]}`, "portal.address is empty"},
		"short chap secret":   {`{"iscsiTargets": [{"portal": {"address": "h"}, "iqn": "iqn.2000-01.com.example:a", "chapSecret": "short"}]}`, "12 to 16 bytes"},
		"mutual without chap": {`{"iscsiTargets": [{"portal": {"address": "h"}, "iqn": "iqn.2000-01.com.example:a", "mutualSecret": "0123456789ab"}]}`, "needs chapSecret"},
		"mutual equals chap":  {`{"iscsiTargets": [{"portal": {"address": "h"}, "iqn": "iqn.2000-01.com.example:a", "chapSecret": "0123456789ab", "mutualSecret": "0123456789ab"}]}`, "must differ"},
		"lun with number":     {`{"iscsiTargets": [{"portal": {"address": "h"}, "iqn": "iqn.2000-01.com.example:a", "luns": [{"number": 4, "size": "1GiB"}]}]}`, "cannot have a disk number"},
		"duplicate service":   {`{"services": [{"name": "a"}, {"name": "A"}]}`, "listed twice"},
		"bad start type":      {`{"services": [{"name": "a", "startType": "sometimes"}]}`, "startType"},
		"bad status":          {`{"services": [{"name": "a", "status": "paused"}]}`, "status"},
		"disabled running":    {`{"services": [{"name": "a", "startType": "disabled", "status": "running"}]}`, "disabled service cannot be running"},
		"missing dependency":  {`{"services": [{"name": "a", "dependsOn": ["b"]}]}`, `depends on "b", which is not listed`},
		"stopped dependency":  {`{"services": [{"name": "a", "status": "running", "dependsOn": ["b"]}, {"name": "b"}]}`, "its dependency"},
		"dependency cycle":    {`{"services": [{"name": "a", "dependsOn": ["b"]}, {"name": "b", "dependsOn": ["a"]}]}`, "dependency cycle"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := simulated.ParseConfig([]byte(c.json))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ParseConfig(%s) = %v; want an error mentioning %q", c.json, err, c.want)
			}
			// New validates too.
			var cfg simulated.Config
			if name != "unknown field" && json.Unmarshal([]byte(c.json), &cfg) == nil {
				if _, err := simulated.New(cfg); err == nil {
					t.Errorf("New accepted the configuration")
				}
			}
		})
	}
}

func TestParseConfigReportsEveryProblem(t *testing.T) {
	_, err := simulated.ParseConfig([]byte(`{"disks": [{"size": 5}], "services": [{"name": "a", "status": "up"}]}`))
	if err == nil || !strings.Contains(err.Error(), "disks[0]") || !strings.Contains(err.Error(), "services[0]") {
		t.Fatalf("err = %v; want both problems", err)
	}
}

func TestNoSystemDiskWithDriveD(t *testing.T) {
	h := newHost(t, simulated.Config{
		NoSystemDisk: true,
		WorkingDirs:  []string{`D:\kubelet`},
		Disks:        []simulated.DiskSpec{{Size: 1 << 30, FileSystem: "ntfs", DriveLetter: "D:"}},
	})
	if d := h.ListDisks(); len(d) != 1 || d[0].Number != 0 || d[0].System {
		t.Fatalf("disks = %+v; want one data disk numbered 0", d)
	}
	if ok, _ := h.Filesystem().PathExists(ctx, `D:\kubelet`); !ok {
		t.Error(`D:\kubelet was not created`)
	}
	if ok, _ := h.Filesystem().PathExists(ctx, `C:\`); ok {
		t.Error(`C:\ exists without a system disk`)
	}
}

func TestParseSize(t *testing.T) {
	good := map[string]simulated.Size{
		"0": 0, "1073741824": 1 << 30, "512KiB": 512 << 10, "100MiB": 100 << 20, "10GiB": 10 << 30,
		"2TiB": 2 << 40, "10g": 10 << 30, " 3 mib ": 3 << 20, "7B": 7, "8388607T": 8388607 << 40,
	}
	for in, want := range good {
		if got, err := simulated.ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "-1GiB", "10GB", "10 potatoes", "8388608TiB", "99999999999999999999"} {
		if got, err := simulated.ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d; want an error", in, got)
		}
	}
}

func TestSizeJSON(t *testing.T) {
	for _, s := range []simulated.Size{10 << 30, 1536 << 20, 123, 1 << 40} {
		b, err := json.Marshal(s)
		must(t, err)
		var back simulated.Size
		if err := json.Unmarshal(b, &back); err != nil || back != s {
			t.Errorf("%d -> %s -> %d, %v", s, b, back, err)
		}
	}
	if got := simulated.Size(10 << 30).String(); got != "10GiB" {
		t.Errorf("String = %q", got)
	}
	if got := simulated.Size(1536 << 20).String(); got != "1536MiB" {
		t.Errorf("String = %q", got)
	}
}

func TestParseDiskFlag(t *testing.T) {
	d, err := simulated.ParseDiskFlag("size=10GiB,page83=60022480abcd,serial=SN1,location=0:0:1:0")
	must(t, err)
	if d.Size != 10<<30 || d.Page83 != "60022480abcd" || d.Serial != "SN1" || d.Location != "0:0:1:0" || d.Number != nil || d.Offline {
		t.Errorf("ParseDiskFlag = %+v", d)
	}
	d, err = simulated.ParseDiskFlag("number=4, size=1073741824, offline, fs=NTFS, letter=E, partitioned=false")
	must(t, err)
	if d.Number == nil || *d.Number != 4 || d.Size != 1<<30 || !d.Offline || d.FileSystem != "NTFS" || d.DriveLetter != "E" || d.Partitioned {
		t.Errorf("ParseDiskFlag = %+v", d)
	}
	d, err = simulated.ParseDiskFlag("size=1GiB,readonly,offline=false")
	must(t, err)
	if !d.ReadOnly || d.Offline {
		t.Errorf("ParseDiskFlag(readonly) = %+v", d)
	}
	d, err = simulated.ParseDiskFlag("size=1GiB,bus=NVMe,location=3")
	must(t, err)
	if d.BusType != "NVMe" || d.Location != "3" {
		t.Errorf("ParseDiskFlag = %+v", d)
	}
	bad := map[string]string{
		"":                            "empty item",
		"size=1GiB,bus=sata":          "busType",
		"serial=x":                    "size is required",
		"size=10GiB,size=1GiB":        "given twice",
		"size=10GiB,colour=blue":      `unknown key "colour"`,
		"size=10GB":                   "ambiguous",
		"size=1KiB":                   "out of range",
		"size=1GiB,number=-1":         "number",
		"size=1GiB,location=1:2":      "adapter:bus:target:lun",
		"size=1GiB,offline=maybe":     "offline",
		"size=1GiB,letter=D":          "needs fileSystem",
		"size=1GiB,serial":            "needs a value",
		"size=1GiB,,serial=x":         "empty item",
		"size=1GiB,fs=FAT32,letter=D": "only NTFS",
	}
	for in, want := range bad {
		if _, err := simulated.ParseDiskFlag(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseDiskFlag(%q) = %v; want an error mentioning %q", in, err, want)
		}
	}
}

func TestDiskFlagsIsAFlagValue(t *testing.T) {
	var disks simulated.DiskFlags
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&disks, "sim-disk", "a simulated disk")
	must(t, fs.Parse([]string{"--sim-disk=size=1GiB", "-sim-disk", "size=2GiB,serial=B"}))
	if len(disks) != 2 || disks[0].Size != 1<<30 || disks[1].Serial != "B" {
		t.Fatalf("disks = %+v", disks)
	}
	if err := fs.Parse([]string{"--sim-disk=size=nope"}); err == nil {
		t.Error("a bad disk flag was accepted")
	}
	h := newHost(t, simulated.Config{Disks: disks})
	if n := len(h.ListDisks()); n != 3 {
		t.Errorf("%d disks; want 3", n)
	}
}

func TestConfigJSONRoundTrip(t *testing.T) {
	cfg, err := simulated.LoadConfig("testdata/simulated-host.json")
	must(t, err)
	b, err := json.Marshal(cfg)
	must(t, err)
	back, err := simulated.ParseConfig(b)
	if err != nil {
		t.Fatalf("ParseConfig(Marshal(cfg)): %v\n%s", err, b)
	}
	if !reflect.DeepEqual(back, cfg) {
		t.Errorf("round trip changed the config:\n%+v\n%+v", cfg, back)
	}
}
