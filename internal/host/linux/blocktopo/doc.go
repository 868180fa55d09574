// Package blocktopo reads the block topology of a Linux node without
// changing anything on it: the disks and the kernel's partitions from
// sysfs (sysfs-block(5); there is no udev on the nodes the proxy runs on),
// what each disk holds (its GUID partition table, or a whole-disk
// filesystem and its MBR) through a device reader, and the mount tables
// and swap devices, into an immutable Snapshot: every disk with its
// number, partitions, volumes and mounts, and why it belongs to the host
// when it does.
//
// It is the read half of the Linux disk and volume backend
// (internal/host/linux/blockdev), which keeps everything that acts on the
// node: the per-disk locks, the bounded wait for a disk that does not
// answer (through its own DeviceReader), giving partitions kernel devices
// (BLKPG), writing partition tables, running tools and mounting. A read of
// the node is a Read and nothing else, so the backend's listings and the
// policy's questions cannot change the node by accident.
//
// The GPT codec lives here too: a change to a table (a new partition, a
// grown one, new identities for a clone) is made on a Clone of the table
// a Snapshot holds and encoded by the same code that decodes it; where
// and when it is written is the backend's business. The parsers (GPT, VPD
// pages, superblocks, sysfs) and the classification are built on every OS
// and tested against the fixture tree under testdata/.
package blocktopo
