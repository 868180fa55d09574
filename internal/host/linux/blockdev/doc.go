// Package blockdev is the Linux host backend of the disk and volume groups:
// it serves them on the node's real block devices with sysfs, ioctls and
// system calls, and runs a tool only where the tool is the implementation
// (mkfs, e2fsck, resize2fs, xfs_growfs, and blkid as a second opinion
// before formatting).
//
// The Windows model maps onto Linux like this (docs/linux-block.md has the
// full story, with what needs which privilege):
//
//   - disk number: the kernel's diskseq of a whole disk, unique per boot and
//     never reused, so a number stays valid exactly as long as its disk;
//   - disk location: the SCSI address host:channel:target:lun;
//   - disk IDs: VPD page 0x83 (decoded like upstream) or wwid, and the
//     serial; an NVMe namespace's NGUID or EUI-64 in Windows' forms; a loop
//     device falls back to its GPT disk GUID and backing file;
//   - PartitionDisk: a GPT with one 1 MiB-aligned partition, written by this
//     package and announced to the kernel with BLKPG (the kernels this runs
//     on may not scan partition tables, and a re-read would drop partitions);
//   - volume: a GPT partition; its ID is the partition's unique GUID in lower
//     case, which is stored on disk and so survives reboots. A disk formatted
//     whole (no partition table, as Linux drivers format) is one volume
//     named by its filesystem UUID. A clone's duplicate GUIDs are replaced
//     when it is brought online;
//   - format: mkfs.ext4 or mkfs.xfs, refused on anything the probe or
//     blkid -p recognises; mount: e2fsck -p for ext when its superblock
//     says a check is due, then mount(2) into a
//     directory,
//     which is resolved beneath the working directories (package beneath)
//     so a link that leads out of them is refused, and mounted on through
//     the resolved descriptor;
//   - offline: SCSI device state "offline", or the kernel read-only flag for
//     other disks, with the backend refusing changes while it is set;
//   - host disks (anything mounted outside the working directories, in the
//     proxy's mount namespace or the host's, swap, device-mapper) are listed
//     but never changed.
//
// A read never changes the node. The kernels this runs on scan no
// partition tables, so the backend gives GPT partitions kernel devices
// itself (BLKPG add, resize and delete, "reconciling" the kernel's view
// with the table on the disk), but only inside calls that change a disk:
// PartitionDisk, SetDiskState online, Rescan (every disk), and
// FormatVolume, MountVolume and ResizeVolume for the volume's disk. The
// listings, lookups by ID or path, sizes, stats, FlushVolume and the
// policy's questions (objecthost) read the tables and report what the
// disk says, reading a partition the kernel lacks through the disk at
// the table's offsets, and leave the kernel's partitions as they are.
//
// Backend.VolumeMounts also tells where a volume is mounted anywhere on the
// node, for the policy's object confinement (objecthost.NewHostObjects asks
// it), from the same two mount tables, by device number.
//
// What the node looks like is read by package blocktopo, which only
// reads: sysfs, the partition tables and signatures, the mount tables
// this package hands it, into an immutable snapshot. This package keeps
// what acts on the node or holds state between calls: the per-disk locks
// and the bounded wait for a disk that does not answer (scan.go,
// disklock.go), reconciling the kernel's partitions (reconcile.go),
// writing tables, running tools and mounting (disk_host.go,
// volume_host.go, volume_paths_linux.go), the numbering of disks without
// diskseq and the memory of disks read-only by themselves. Its decisions
// are tested on every OS against blocktopo's fixture tree with a fake
// kernel; kernel_linux.go issues the system calls and
// volume_paths_linux.go resolves the paths callers name.
package blockdev
