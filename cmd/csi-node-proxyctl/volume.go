package main

import (
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/csi-node-proxy/csi-node-proxy/groups/volume"
	"github.com/csi-node-proxy/csi-node-proxy/host/simulated"
)

// volumeListOutput is "volume list -o json".
type volumeListOutput struct {
	DiskNumber uint32      `json:"disk_number" doc:"the disk asked for"`
	Volumes    []volumeRow `json:"volumes" doc:"the disk's volumes, sorted by ID"`
}

// volumeRow is one volume in "volume list".
type volumeRow struct {
	VolumeID  string `json:"volume_id" doc:"the host's volume ID (\\\\?\\Volume{GUID}\\ on Windows)"`
	Formatted bool   `json:"formatted" doc:"whether the volume carries a filesystem"`
	SizeBytes *int64 `json:"size_bytes" doc:"size in bytes; null for an unformatted volume, which has no stats"`
	UsedBytes *int64 `json:"used_bytes" doc:"bytes in use; null for an unformatted volume"`
}

// volumeStatsOutput is "volume stats -o json".
type volumeStatsOutput struct {
	VolumeID  string `json:"volume_id" doc:"the volume asked for"`
	SizeBytes int64  `json:"size_bytes" doc:"size in bytes"`
	UsedBytes int64  `json:"used_bytes" doc:"bytes in use"`
	FreeBytes int64  `json:"free_bytes" doc:"size_bytes minus used_bytes"`
}

// volumeIDOutput is "volume id-of -o json".
type volumeIDOutput struct {
	Path     string `json:"path" doc:"the path asked for"`
	VolumeID string `json:"volume_id" doc:"the volume mounted there (with --closest: the volume holding the path)"`
}

// volumeDiskOutput is "volume disk-of -o json".
type volumeDiskOutput struct {
	VolumeID   string `json:"volume_id" doc:"the volume asked for"`
	DiskNumber uint32 `json:"disk_number" doc:"the disk it lives on"`
}

// volumeFormattedOutput is "volume is-formatted -o json".
type volumeFormattedOutput struct {
	VolumeID  string `json:"volume_id" doc:"the volume asked for"`
	Formatted bool   `json:"formatted" doc:"whether it carries a filesystem"`
}

// volumeChangeOutput is what the volume commands that change a volume
// print.
type volumeChangeOutput struct {
	VolumeID  string `json:"volume_id" doc:"the volume changed"`
	Action    string `json:"action" doc:"what was done: mounted, unmounted, formatted, resized or flushed"`
	Path      string `json:"path" doc:"the mount path (mount, unmount); empty otherwise"`
	SizeBytes int64  `json:"size_bytes" doc:"the size asked for (resize; 0 means as large as the disk allows); 0 otherwise"`
}

var (
	volumeIDArg   = argSpec{name: "ID", help: `volume ID, as volume list shows it (\\?\Volume{GUID}\ on Windows)`, check: checkVolumeID}
	volumePathArg = argSpec{name: "PATH", help: "a mount path inside the proxy's working directories", check: checkHostPath}
)

// volumeCommands are the volume group's commands.
func volumeCommands() []command {
	return []command{
		{
			group: "volume", name: "list", args: []argSpec{{name: "N", help: "disk number, as disk list shows it (or --disk N)", optional: true, check: checkDiskNumber}},
			summary: "List the volumes on a disk with their size and use",
			about: `Calls ListVolumesOnDisk for disk N (and --partition), then IsVolumeFormatted
for each volume and GetVolumeStats for each formatted one. The disk is a
positional argument, as for the disk commands (disk stats N); --disk N says
the same and is kept for scripts written before.`,
			example: `csi-node-proxyctl volume list 1
csi-node-proxyctl volume list 1 -o json | jq -r '.volumes[0].volume_id'`,
			exits:  []int{exitNotFound, exitInvalid},
			output: volumeListOutput{},
			flags: func(fs *flag.FlagSet) runFunc {
				d := fs.String("disk", "", "Disk `number` whose volumes to list; the same as the argument N")
				p := fs.Uint("partition", 0, "Partition `number` to list only its volume (0: every partition)")
				return func(c *call) (*view, error) {
					disk, err := volumeListDisk(c.args, *d)
					if err != nil {
						return nil, err
					}
					return runVolumeList(c, disk, *p)
				}
			},
		},
		{
			group: "volume", name: "stats", args: []argSpec{volumeIDArg},
			summary: "Show a volume's size, used and free bytes",
			about: `Calls GetVolumeStats. An unformatted volume has no stats (exit 1, failed
precondition).`,
			example: `csi-node-proxyctl volume stats '\\?\Volume{...}\'`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  volumeStatsOutput{},
			flags:   noFlags(runVolumeStats),
		},
		{
			group: "volume", name: "id-of", args: []argSpec{volumePathArg},
			summary: "Show the volume mounted at a path",
			about: `Calls GetVolumeIDFromTargetPath: the volume whose mount is PATH itself; a
path where nothing is mounted is not found (exit 3). With --closest it calls
GetClosestVolumeIDFromTargetPath instead: the volume holding PATH, its own
mount or the nearest ancestor's, following symlinks.`,
			example: `csi-node-proxyctl volume id-of 'C:\var\lib\kubelet\plugins\csi\staging\pv1'
csi-node-proxyctl volume id-of --closest 'C:\var\lib\kubelet\pods\p1\volumes\v\mount\data'`,
			exits:  []int{exitNotFound, exitInvalid},
			output: volumeIDOutput{},
			flags: func(fs *flag.FlagSet) runFunc {
				closest := fs.Bool("closest", false, "Find the volume holding the path (its own mount or the nearest ancestor's), not only one mounted exactly there")
				return func(c *call) (*view, error) { return runVolumeIDOf(c, *closest) }
			},
		},
		{
			group: "volume", name: "disk-of", args: []argSpec{volumeIDArg},
			summary: "Show the disk a volume lives on",
			about:   `Calls GetDiskNumberFromVolumeID.`,
			example: `csi-node-proxyctl volume disk-of '\\?\Volume{...}\'`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  volumeDiskOutput{},
			flags:   noFlags(runVolumeDiskOf),
		},
		{
			group: "volume", name: "is-formatted", args: []argSpec{volumeIDArg},
			summary: "Tell whether a volume carries a filesystem",
			about:   `Calls IsVolumeFormatted. Both answers exit 0; the output says which.`,
			example: `csi-node-proxyctl volume is-formatted '\\?\Volume{...}\' -o json | jq .formatted`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  volumeFormattedOutput{},
			flags:   noFlags(runVolumeIsFormatted),
		},
		{
			group: "volume", name: "format", args: []argSpec{volumeIDArg},
			summary: "Create the host's default filesystem on a volume", mutating: true,
			about: `Calls FormatVolume. A volume that is formatted already is refused (exit 1,
failed precondition) rather than erased.`,
			example: `csi-node-proxyctl volume format '\\?\Volume{...}\' --yes`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  volumeChangeOutput{},
			flags:   noFlags(runVolumeFormat),
		},
		{
			group: "volume", name: "mount", args: []argSpec{volumeIDArg, volumePathArg},
			summary: "Mount a volume at a path", mutating: true,
			about: `Calls MountVolume. The same volume at the same path again succeeds; another
volume mounted there is refused (exit 1, failed precondition).`,
			example: `csi-node-proxyctl volume mount '\\?\Volume{...}\' 'C:\var\lib\kubelet\staging\pv1' --yes`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  volumeChangeOutput{},
			flags:   noFlags(func(c *call) (*view, error) { return runVolumeMount(c, true) }),
		},
		{
			group: "volume", name: "unmount", args: []argSpec{volumeIDArg, volumePathArg},
			summary: "Flush a volume and remove its mount at a path", mutating: true,
			about:   `Calls UnmountVolume. Nothing mounted at the path is success.`,
			example: `csi-node-proxyctl volume unmount '\\?\Volume{...}\' 'C:\var\lib\kubelet\staging\pv1' --yes`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  volumeChangeOutput{},
			flags:   noFlags(func(c *call) (*view, error) { return runVolumeMount(c, false) }),
		},
		{
			group: "volume", name: "resize", args: []argSpec{volumeIDArg},
			summary: "Grow a volume and its filesystem", mutating: true,
			about: `Calls ResizeVolume with --size (default: as large as the disk allows).
Volumes never shrink: a smaller size, or a gain under 100 MiB, is skipped and
reported as success, as upstream does; a size beyond what the disk allows
is out of range (exit 1).`,
			example: `csi-node-proxyctl volume resize '\\?\Volume{...}\' --size 20GiB --yes`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  volumeChangeOutput{},
			flags: func(fs *flag.FlagSet) runFunc {
				size := fs.String("size", "0", "Wanted `size`: bytes, or a number with KiB, MiB, GiB or TiB; 0 means as large as the disk allows")
				return func(c *call) (*view, error) { return runVolumeResize(c, *size) }
			},
		},
		{
			group: "volume", name: "flush", args: []argSpec{volumeIDArg},
			summary: "Write a volume's cached data to disk",
			about: `Calls WriteVolumeCache. Flushing changes no data and so does not ask for
confirmation.`,
			example: `csi-node-proxyctl volume flush '\\?\Volume{...}\'`,
			exits:   []int{exitNotFound, exitInvalid},
			output:  volumeChangeOutput{},
			flags:   noFlags(runVolumeFlush),
		},
	}
}

// volumeListDisk picks the disk of "volume list" from its argument or
// --disk: one of them, or both saying the same.
func volumeListDisk(args []string, flagValue string) (string, error) {
	switch {
	case len(args) == 0 && flagValue == "":
		return "", usagef("missing argument N: the disk whose volumes to list (or --disk N)")
	case len(args) == 0:
		return flagValue, nil
	case flagValue != "" && flagValue != args[0]:
		return "", usagef("disk %s and --disk %s disagree: give the disk once", args[0], flagValue)
	}
	return args[0], nil
}

func runVolumeList(c *call, diskArg string, partition uint) (*view, error) {
	d, err := parseDiskNumber(diskArg)
	if err != nil {
		return nil, err
	}
	if partition > math.MaxUint32 {
		return nil, usagef("--partition %d: too large", partition)
	}
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	vols, err := n.Volume().ListVolumesOnDisk(c.ctx, &volume.ListVolumesOnDiskRequest{DiskNumber: d, PartitionNumber: uint32(partition)})
	if err != nil {
		return nil, err
	}
	ids := slices.Sorted(slices.Values(vols.VolumeIDs))
	out := volumeListOutput{DiskNumber: d, Volumes: []volumeRow{}}
	v := &view{header: []string{"VOLUME", "FORMATTED", "SIZE", "SIZE_BYTES", "USED", "USED_BYTES"},
		wideHeader: []string{"FREE", "FREE_BYTES", "USE%"}}
	for _, id := range ids {
		row := volumeRow{VolumeID: id}
		f, err := n.Volume().IsVolumeFormatted(c.ctx, &volume.IsVolumeFormattedRequest{VolumeID: id})
		if err != nil {
			return nil, fmt.Errorf("volume %s: %w", id, err)
		}
		row.Formatted = f.Formatted
		cells, wide := []string{id, yesNo(f.Formatted), "-", "-", "-", "-"}, []string{"-", "-", "-"}
		if f.Formatted {
			st, err := n.Volume().GetVolumeStats(c.ctx, &volume.GetVolumeStatsRequest{VolumeID: id})
			if err != nil {
				return nil, fmt.Errorf("volume %s: %w", id, err)
			}
			row.SizeBytes, row.UsedBytes = &st.TotalBytes, &st.UsedBytes
			cells = []string{id, "yes", humanSize(st.TotalBytes), strconv.FormatInt(st.TotalBytes, 10),
				humanSize(st.UsedBytes), strconv.FormatInt(st.UsedBytes, 10)}
			free := st.TotalBytes - st.UsedBytes
			wide = []string{humanSize(free), strconv.FormatInt(free, 10), usePercent(st.UsedBytes, st.TotalBytes)}
		}
		out.Volumes = append(out.Volumes, row)
		v.rows = append(v.rows, cells)
		v.wideRows = append(v.wideRows, wide)
	}
	v.json = out
	return v, nil
}

// usePercent renders used/total as df does, rounded up ("-" for an empty
// volume).
func usePercent(used, total int64) string {
	if total <= 0 {
		return "-"
	}
	return strconv.FormatFloat(math.Ceil(float64(used)*100/float64(total)), 'f', 0, 64) + "%"
}

func runVolumeStats(c *call) (*view, error) {
	id := c.args[0]
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	st, err := n.Volume().GetVolumeStats(c.ctx, &volume.GetVolumeStatsRequest{VolumeID: id})
	if err != nil {
		return nil, err
	}
	out := volumeStatsOutput{VolumeID: id, SizeBytes: st.TotalBytes, UsedBytes: st.UsedBytes, FreeBytes: st.TotalBytes - st.UsedBytes}
	return &view{
		json:   out,
		header: []string{"VOLUME", "SIZE", "SIZE_BYTES", "USED", "USED_BYTES", "FREE", "FREE_BYTES"},
		rows: [][]string{{id, humanSize(out.SizeBytes), strconv.FormatInt(out.SizeBytes, 10),
			humanSize(out.UsedBytes), strconv.FormatInt(out.UsedBytes, 10),
			humanSize(out.FreeBytes), strconv.FormatInt(out.FreeBytes, 10)}},
		wideHeader: []string{"USE%"},
		wideRows:   [][]string{{usePercent(out.UsedBytes, out.SizeBytes)}},
	}, nil
}

func runVolumeIDOf(c *call, closest bool) (*view, error) {
	path := c.args[0]
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	var id string
	if closest {
		r, err := n.Volume().GetClosestVolumeIDFromTargetPath(c.ctx, &volume.GetClosestVolumeIDFromTargetPathRequest{TargetPath: path})
		if err != nil {
			return nil, err
		}
		id = r.VolumeID
	} else {
		r, err := n.Volume().GetVolumeIDFromTargetPath(c.ctx, &volume.GetVolumeIDFromTargetPathRequest{TargetPath: path})
		if err != nil {
			return nil, err
		}
		id = r.VolumeID
	}
	return &view{json: volumeIDOutput{Path: path, VolumeID: id}, header: []string{"PATH", "VOLUME"}, rows: [][]string{{path, id}}}, nil
}

func runVolumeDiskOf(c *call) (*view, error) {
	id := c.args[0]
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	r, err := n.Volume().GetDiskNumberFromVolumeID(c.ctx, &volume.GetDiskNumberFromVolumeIDRequest{VolumeID: id})
	if err != nil {
		return nil, err
	}
	return &view{
		json:   volumeDiskOutput{VolumeID: id, DiskNumber: r.DiskNumber},
		header: []string{"VOLUME", "DISK"},
		rows:   [][]string{{id, fmtUint(r.DiskNumber)}},
	}, nil
}

func runVolumeIsFormatted(c *call) (*view, error) {
	id := c.args[0]
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	r, err := n.Volume().IsVolumeFormatted(c.ctx, &volume.IsVolumeFormattedRequest{VolumeID: id})
	if err != nil {
		return nil, err
	}
	return &view{
		json:   volumeFormattedOutput{VolumeID: id, Formatted: r.Formatted},
		header: []string{"VOLUME", "FORMATTED"},
		rows:   [][]string{{id, yesNo(r.Formatted)}},
	}, nil
}

func runVolumeFormat(c *call) (*view, error) {
	id := c.args[0]
	n, err := c.confirmConnect("format volume " + id + " with the host's default filesystem")
	if err != nil {
		return nil, err
	}
	done := c.progress("Formatting volume " + id)
	_, err = n.Volume().FormatVolume(c.ctx, &volume.FormatVolumeRequest{VolumeID: id})
	done()
	if err != nil {
		return nil, err
	}
	return &view{json: volumeChangeOutput{VolumeID: id, Action: "formatted"}, message: "volume " + id + " is formatted"}, nil
}

func runVolumeMount(c *call, mount bool) (*view, error) {
	id, path := c.args[0], c.args[1]
	what := "mount volume " + id + " at " + path
	if !mount {
		what = "unmount volume " + id + " from " + path
	}
	n, err := c.confirmConnect(what)
	if err != nil {
		return nil, err
	}
	if mount {
		if _, err := n.Volume().MountVolume(c.ctx, &volume.MountVolumeRequest{VolumeID: id, TargetPath: path}); err != nil {
			return nil, err
		}
		return &view{json: volumeChangeOutput{VolumeID: id, Action: "mounted", Path: path}, message: "volume " + id + " is mounted at " + path}, nil
	}
	if _, err := n.Volume().UnmountVolume(c.ctx, &volume.UnmountVolumeRequest{VolumeID: id, TargetPath: path}); err != nil {
		return nil, err
	}
	return &view{json: volumeChangeOutput{VolumeID: id, Action: "unmounted", Path: path}, message: "volume " + id + " is unmounted from " + path}, nil
}

func runVolumeResize(c *call, sizeArg string) (*view, error) {
	id := c.args[0]
	size, err := parseSize(sizeArg)
	if err != nil {
		return nil, usagef("--size: %v", err)
	}
	what := "grow volume " + id + " and its filesystem to " + humanSize(size)
	if size == 0 {
		what = "grow volume " + id + " and its filesystem as far as the disk allows"
	}
	n, err := c.confirmConnect(what)
	if err != nil {
		return nil, err
	}
	done := c.progress("Resizing volume " + id)
	_, err = n.Volume().ResizeVolume(c.ctx, &volume.ResizeVolumeRequest{VolumeID: id, SizeBytes: size})
	done()
	if err != nil {
		return nil, err
	}
	return &view{json: volumeChangeOutput{VolumeID: id, Action: "resized", SizeBytes: size}, message: "volume " + id + " is resized"}, nil
}

func runVolumeFlush(c *call) (*view, error) {
	id := c.args[0]
	n, err := c.connect()
	if err != nil {
		return nil, err
	}
	if _, err := n.Volume().WriteVolumeCache(c.ctx, &volume.WriteVolumeCacheRequest{VolumeID: id}); err != nil {
		return nil, err
	}
	return &view{json: volumeChangeOutput{VolumeID: id, Action: "flushed"}, message: "volume " + id + " is flushed"}, nil
}

// parseSize parses a byte count: a whole number of bytes, or one with a
// binary suffix (KiB, MiB, GiB, TiB; K, M, G, T alone mean the same).
// Decimal units are refused as ambiguous. It is the grammar of the
// project's other size flags (--sim-disk size=, the simulated host's
// config), so the CLI uses that parser rather than a second one.
func parseSize(s string) (int64, error) {
	n, err := simulated.ParseSize(s)
	return int64(n), err
}
