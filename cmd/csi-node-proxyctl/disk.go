package main

import (
	"flag"
	"fmt"
	"slices"
	"strconv"

	"github.com/csi-node-proxy/csi-node-proxy/groups/disk"
)

// diskListOutput is "disk list -o json".
type diskListOutput struct {
	Disks []diskRow `json:"disks" doc:"every disk, by disk number"`
}

// diskRow is one disk in "disk list".
type diskRow struct {
	DiskNumber   uint32        `json:"disk_number" doc:"the host's disk number (PhysicalDrive number on Windows)"`
	Location     *diskLocation `json:"location" doc:"where the disk sits on its bus; null if the host reports none"`
	Page83       string        `json:"page83" doc:"SCSI VPD page 0x83 identifier; empty if none"`
	SerialNumber string        `json:"serial_number" doc:"serial number; empty if none"`
	SizeBytes    int64         `json:"size_bytes" doc:"size in bytes"`
	Online       bool          `json:"online" doc:"whether the disk is online"`
}

// diskLocation is a disk's bus location, as the host reports it.
type diskLocation struct {
	Adapter string `json:"adapter" doc:"adapter (host) number"`
	Bus     string `json:"bus" doc:"bus (channel) number"`
	Target  string `json:"target" doc:"target number"`
	LUNID   string `json:"lun_id" doc:"logical unit number"`
}

// String renders the location as adapter:bus:target:lun, the form the
// simulated host's --sim-disk takes.
func (l *diskLocation) String() string {
	if l == nil {
		return ""
	}
	return l.Adapter + ":" + l.Bus + ":" + l.Target + ":" + l.LUNID
}

// diskIDsOutput is "disk ids -o json".
type diskIDsOutput struct {
	Disks []diskIDRow `json:"disks" doc:"every disk, by disk number"`
}

// diskIDRow is one disk in "disk ids".
type diskIDRow struct {
	DiskNumber   uint32 `json:"disk_number" doc:"the host's disk number"`
	Page83       string `json:"page83" doc:"SCSI VPD page 0x83 identifier; empty if none"`
	SerialNumber string `json:"serial_number" doc:"serial number; empty if none"`
}

// diskStatsOutput is "disk stats -o json".
type diskStatsOutput struct {
	DiskNumber uint32 `json:"disk_number" doc:"the disk number asked for"`
	SizeBytes  int64  `json:"size_bytes" doc:"size in bytes"`
	Online     bool   `json:"online" doc:"whether the disk is online"`
}

// diskChangeOutput is what the disk commands that change a disk print.
type diskChangeOutput struct {
	DiskNumber  uint32 `json:"disk_number" doc:"the disk changed"`
	Online      *bool  `json:"online" doc:"the disk's state now (online, offline); null for partition"`
	Partitioned bool   `json:"partitioned" doc:"true after partition: the disk has GPT and a data partition"`
}

// rescanOutput is "disk rescan -o json".
type rescanOutput struct {
	Rescanned bool `json:"rescanned" doc:"always true: the host looked for new disks and changed sizes"`
}

// diskNumberArg is the N argument of the disk commands.
var diskNumberArg = argSpec{name: "N", help: "disk number, as disk list shows it", check: checkDiskNumber}

// checkDiskNumber refuses a disk number that is not one before anything
// is asked or called.
func checkDiskNumber(s string) error {
	_, err := parseDiskNumber(s)
	return err
}

// parseDiskNumber parses a disk number argument or flag value.
func parseDiskNumber(s string) (uint32, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return 0, usagef("disk number %q: want a whole number from 0 to 4294967295", s)
	}
	return uint32(n), nil
}

// diskCommands are the disk group's commands.
func diskCommands() []command {
	return []command{
		{
			group: "disk", name: "list",
			summary: "List every disk with its location, IDs, size and online state",
			about: `Calls ListDiskLocations and ListDiskIDs, then GetDiskStats and GetDiskState
for each disk, and shows one row per disk sorted by number. A disk the host
gives no bus location shows "-" (null in JSON).`,
			example: `csi-node-proxyctl disk list
csi-node-proxyctl disk list -o json | jq '.disks[] | select(.online | not) | .disk_number'`,
			output: diskListOutput{},
			flags:  noFlags(runDiskList),
		},
		{
			group: "disk", name: "ids",
			summary: "List every disk's page 0x83 ID and serial number",
			about:   `Calls ListDiskIDs: the identifiers CSI drivers match a volume's disk by.`,
			example: `csi-node-proxyctl disk ids
csi-node-proxyctl disk ids -o json | jq -r '.disks[] | select(.serial_number == "SN1") | .disk_number'`,
			output: diskIDsOutput{},
			flags:  noFlags(runDiskIDs),
		},
		{
			group: "disk", name: "stats", args: []argSpec{diskNumberArg},
			summary: "Show a disk's size and online state",
			about:   `Calls GetDiskStats and GetDiskState for disk N.`,
			example: `csi-node-proxyctl disk stats 1`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  diskStatsOutput{},
			flags:   noFlags(runDiskStats),
		},
		{
			group: "disk", name: "online", args: []argSpec{diskNumberArg},
			summary: "Bring a disk online", mutating: true,
			about: `Calls SetDiskState with online true. A disk that is online already is
success.`,
			example: `csi-node-proxyctl disk online 1 --yes`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  diskChangeOutput{},
			flags:   noFlags(func(c *call) (*view, error) { return runSetDiskState(c, true) }),
		},
		{
			group: "disk", name: "offline", args: []argSpec{diskNumberArg},
			summary: "Take a disk offline", mutating: true,
			about: `Calls SetDiskState with online false. A disk that is offline already is
success; the system disk cannot be taken offline (exit 1).`,
			example: `csi-node-proxyctl disk offline 1 --yes`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  diskChangeOutput{},
			flags:   noFlags(func(c *call) (*view, error) { return runSetDiskState(c, false) }),
		},
		{
			group: "disk", name: "partition", args: []argSpec{diskNumberArg},
			summary: "Give a disk a GPT with one data partition", mutating: true,
			about: `Calls PartitionDisk. A disk that already has a data partition is left
alone and the command succeeds.`,
			example: `csi-node-proxyctl disk partition 1 --yes`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  diskChangeOutput{},
			flags:   noFlags(runPartitionDisk),
		},
		{
			group: "disk", name: "rescan",
			summary: "Ask the host to look for new disks and changed sizes",
			about: `Calls Rescan. It only refreshes the host's view of its disks, changes none
of them and so does not ask for confirmation.`,
			example: `csi-node-proxyctl disk rescan && csi-node-proxyctl disk list`,
			output:  rescanOutput{},
			flags:   noFlags(runRescan),
		},
	}
}

// noFlags is the flags function of a command without flags of its own.
func noFlags(run runFunc) func(*flag.FlagSet) runFunc {
	return func(*flag.FlagSet) runFunc { return run }
}

func runDiskList(c *call) (*view, error) {
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	locs, err := n.Disk().ListDiskLocations(c.ctx, &disk.ListDiskLocationsRequest{})
	if err != nil {
		return nil, err
	}
	ids, err := n.Disk().ListDiskIDs(c.ctx, &disk.ListDiskIDsRequest{})
	if err != nil {
		return nil, err
	}
	numbers := map[uint32]bool{}
	for d := range locs.DiskLocations {
		numbers[d] = true
	}
	for d := range ids.DiskIDs {
		numbers[d] = true
	}
	out := diskListOutput{Disks: []diskRow{}}
	for _, d := range sortedKeys(numbers) {
		row := diskRow{DiskNumber: d}
		if l := locs.DiskLocations[d]; l != nil {
			row.Location = &diskLocation{Adapter: l.Adapter, Bus: l.Bus, Target: l.Target, LUNID: l.LUNID}
		}
		if id := ids.DiskIDs[d]; id != nil {
			row.Page83, row.SerialNumber = id.Page83, id.SerialNumber
		}
		stats, err := n.Disk().GetDiskStats(c.ctx, &disk.GetDiskStatsRequest{DiskNumber: d})
		if err != nil {
			return nil, fmt.Errorf("disk %d: %w", d, err)
		}
		state, err := n.Disk().GetDiskState(c.ctx, &disk.GetDiskStateRequest{DiskNumber: d})
		if err != nil {
			return nil, fmt.Errorf("disk %d: %w", d, err)
		}
		row.SizeBytes, row.Online = stats.TotalBytes, state.IsOnline
		out.Disks = append(out.Disks, row)
	}
	v := &view{json: out, header: []string{"DISK", "LOCATION", "PAGE83", "SERIAL", "SIZE", "BYTES", "ONLINE"}}
	for _, r := range out.Disks {
		v.rows = append(v.rows, []string{fmtUint(r.DiskNumber), orDash(r.Location.String()), orDash(r.Page83),
			orDash(r.SerialNumber), humanSize(r.SizeBytes), strconv.FormatInt(r.SizeBytes, 10), yesNo(r.Online)})
	}
	return v, nil
}

func runDiskIDs(c *call) (*view, error) {
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	ids, err := n.Disk().ListDiskIDs(c.ctx, &disk.ListDiskIDsRequest{})
	if err != nil {
		return nil, err
	}
	out := diskIDsOutput{Disks: []diskIDRow{}}
	v := &view{header: []string{"DISK", "PAGE83", "SERIAL"}}
	for _, d := range sortedKeys(ids.DiskIDs) {
		id := ids.DiskIDs[d]
		row := diskIDRow{DiskNumber: d}
		if id != nil {
			row.Page83, row.SerialNumber = id.Page83, id.SerialNumber
		}
		out.Disks = append(out.Disks, row)
		v.rows = append(v.rows, []string{fmtUint(d), orDash(row.Page83), orDash(row.SerialNumber)})
	}
	v.json = out
	return v, nil
}

func runDiskStats(c *call) (*view, error) {
	d, err := parseDiskNumber(c.args[0])
	if err != nil {
		return nil, err
	}
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	stats, err := n.Disk().GetDiskStats(c.ctx, &disk.GetDiskStatsRequest{DiskNumber: d})
	if err != nil {
		return nil, err
	}
	state, err := n.Disk().GetDiskState(c.ctx, &disk.GetDiskStateRequest{DiskNumber: d})
	if err != nil {
		return nil, err
	}
	out := diskStatsOutput{DiskNumber: d, SizeBytes: stats.TotalBytes, Online: state.IsOnline}
	return &view{
		json:   out,
		header: []string{"DISK", "SIZE", "BYTES", "ONLINE"},
		rows:   [][]string{{fmtUint(d), humanSize(out.SizeBytes), strconv.FormatInt(out.SizeBytes, 10), yesNo(out.Online)}},
	}, nil
}

func runSetDiskState(c *call, online bool) (*view, error) {
	d, err := parseDiskNumber(c.args[0])
	if err != nil {
		return nil, err
	}
	state, what := "offline", fmt.Sprintf("take disk %d offline", d)
	if online {
		state, what = "online", fmt.Sprintf("bring disk %d online", d)
	}
	n, err := c.confirmConnect(what)
	if err != nil {
		return nil, err
	}
	if _, err := n.Disk().SetDiskState(c.ctx, &disk.SetDiskStateRequest{DiskNumber: d, IsOnline: online}); err != nil {
		return nil, err
	}
	return &view{
		json:    diskChangeOutput{DiskNumber: d, Online: &online},
		message: fmt.Sprintf("disk %d is %s", d, state),
	}, nil
}

func runPartitionDisk(c *call) (*view, error) {
	d, err := parseDiskNumber(c.args[0])
	if err != nil {
		return nil, err
	}
	n, err := c.confirmConnect(fmt.Sprintf("partition disk %d (GPT with one data partition) unless it has a data partition already", d))
	if err != nil {
		return nil, err
	}
	if _, err := n.Disk().PartitionDisk(c.ctx, &disk.PartitionDiskRequest{DiskNumber: d}); err != nil {
		return nil, err
	}
	return &view{
		json:    diskChangeOutput{DiskNumber: d, Partitioned: true},
		message: fmt.Sprintf("disk %d is partitioned", d),
	}, nil
}

func runRescan(c *call) (*view, error) {
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	if _, err := n.Disk().Rescan(c.ctx, &disk.RescanRequest{}); err != nil {
		return nil, err
	}
	return &view{json: rescanOutput{Rescanned: true}, message: "rescanned the host's disks"}, nil
}

// sortedKeys returns a disk-number map's keys in order.
func sortedKeys[V any](m map[uint32]V) []uint32 {
	keys := make([]uint32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// fmtUint renders a disk number.
func fmtUint(n uint32) string { return strconv.FormatUint(uint64(n), 10) }
