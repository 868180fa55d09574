// Package simulated is an in-memory Windows node: a host backend for all
// six API groups (disk, volume, filesystem, smb, iscsi, system) that keeps
// disks, volumes, files, SMB mappings, iSCSI sessions and services in
// memory and follows Windows semantics.
//
// It has two uses, and it is never the default:
//
//   - the daemon's --host=simulated, so csi-node-proxy runs on any OS
//     with a believable node behind it;
//   - a test double for CSI driver authors, who can run their Windows
//     node code on Linux, in-process, through the group Services.
//
// For example:
//
//	h, err := simulated.New(simulated.DefaultConfig(nil))
//	paths, _ := hostpath.NewPolicy(hostpath.Windows, h.WorkingDirs())
//	vols := volume.NewService(h.Volume(), paths)
//	disks := disk.NewService(h.Disk())
//	n, _ := h.AddDisk(simulated.DiskSpec{Size: 10 << 30, Location: "1:0:0:5"})
//	// ... drive NodeStageVolume against disks, vols, ...
//
// # The world
//
// Disks have a number, a bus (SCSI, or NVMe), an optional location
// (adapter:bus:target:lun on SCSI, the PCI bus number on NVMe; reported
// by ListDiskLocations as Windows reports it: see DiskSpec.Location), page
// 0x83 and serial IDs, a size, an online flag and a partition style, RAW or
// GPT. Disk 0 is the system disk (unless Config.NoSystemDisk): GPT with an
// EFI system partition (FAT32, 100 MiB), a Microsoft Reserved partition (16
// MiB, no volume) and C: (NTFS) on the rest. PartitionDisk gives a RAW disk
// GPT and one data partition from 1 MiB to the last 1 MiB boundary at least
// 1 MiB before the end (the backup GPT), so a 1 GiB disk gets a 1022 MiB
// partition; no MSR partition is created on data disks. Each data
// partition holds a volume named \\?\Volume{guid}\ with a random version 4
// GUID in lower case (deterministic with Config.Seed). Volume IDs compare
// without case; methods return the canonical spelling. New disks take the
// lowest free number, as on Windows, so a number can come back after its
// disk is gone.
//
// An offline disk keeps its size, IDs and partition table (PartitionDisk
// reads it and leaves a partitioned disk as it is), but
// ListVolumesOnDisk fails with errdefs.ErrFailedPrecondition ("disk N is
// offline"). Its volumes are gone while it is offline, as on Windows:
// every volume call on them is errdefs.ErrNotFound ("volume … does not
// exist: disk N is offline"), a path through one of their mount points
// does not exist, and UnmountVolume removes such a mount point, which
// needs no volume. The mount points stay, naming their volumes, and the
// volumes come back with their files when the disk is online again. A
// missing disk or volume is errdefs.ErrNotFound.
//
// A volume's size is its partition's; it can grow up to the next
// partition or the backup GPT, so growing the disk (ResizeDisk) lets
// ResizeVolume grow it. VolumeStats reports NTFSOverhead(size) plus the
// volume's files, each rounded up to 4 KiB clusters; C: adds 12 GiB (at
// most a quarter of it) for the Windows installation. A RAW volume can be
// mounted (Windows allows it) but not entered, and VolumeStats refuses it.
//
// Files: every formatted volume and every SMB share has its own tree of
// directories, files, symbolic links and mount points. Names keep the
// case they were created with and compare without case. Drive letters
// root paths (C:\ always exists with the system disk); a mount point is a
// directory in one volume that leads to another volume's tree, so a
// volume's files follow it when it is unmounted and mounted elsewhere, and
// Rmdir with force never reaches them. A symbolic link holds a drive path
// or a UNC path; lookups follow at most 63 links. As with Go's os.Symlink
// on Windows, a link created while its source is not an existing directory
// is a file link and cannot later be traversed as a directory.
//
// SMB: Config.SMBShares are the shares on the simulated network. Global
// mappings are keyed by share root and carry the user name and a status,
// OK or Disconnected (DisconnectSMB). One user name per server, as Windows
// error 1219 enforces. A link to a UNC path resolves while the share's
// mapping is OK and the directory exists on the share (Config dirs,
// MkdirAll and WriteFile can create them server-side).
//
// iSCSI: Config.ISCSITargets are the targets on the network, each at one
// portal, with optional one-way and mutual CHAP and LUNs. Connecting
// attaches the LUNs as disks with fresh numbers; disconnecting detaches
// them; their partitions and files persist in the target between sessions.
//
// System: the BIOS serial number and services with start types, states
// and dependencies (DefaultServices when none are configured). Starting a
// service starts its dependencies; stopping one with running dependents
// needs force.
//
// # Errors
//
// Every error wraps an errdefs sentinel: ErrNotFound, ErrAlreadyExists,
// ErrFailedPrecondition, ErrPermissionDenied, ErrOutOfRange,
// ErrInvalidArgument, ErrUnavailable. Messages never contain passwords or
// CHAP secrets. Where drivers match message text, the text follows
// Windows: VolumeAt on a missing path says "because it does not exist",
// a busy mount path "the requested access path ... is already in use".
//
// # Configuration file
//
// LoadConfig reads JSON; all fields are optional, sizes are numbers of
// bytes or strings with a binary suffix, and unknown fields are errors
// (testdata/simulated-host.json is a complete example):
//
//	{
//	  "workingDirs": ["C:\\var\\lib\\kubelet", "C:\\csi"],
//	  "systemDiskSize": "128GiB",
//	  "biosSerial": "SIMULATED-0001",
//	  "seed": 42,
//	  "disks": [
//	    {"size": "1GiB", "location": "1:0:0:0", "page83": "60022480000000000000000000000001", "serial": "SIM-DATA-0001"},
//	    {"number": 7, "size": "2GiB", "offline": true},
//	    {"size": "4GiB", "busType": "NVMe", "location": "2", "serial": "NVME-1"},
//	    {"size": "20GiB", "fileSystem": "NTFS", "driveLetter": "D"}
//	  ],
//	  "smbShares": [
//	    {"path": "\\\\fileserver\\share", "username": "CONTOSO\\csi", "password": "p@ss", "dirs": ["pvc-1"]}
//	  ],
//	  "iscsiTargets": [
//	    {"portal": {"address": "10.0.0.10", "port": 3260}, "iqn": "iqn.2003-01.org.example:target1",
//	     "chapUsername": "initiator", "chapSecret": "0123456789ab", "mutualSecret": "ba9876543210",
//	     "luns": [{"size": "1GiB", "page83": "60014050000000000000000000000001"}]}
//	  ],
//	  "services": [
//	    {"name": "MSiSCSI", "displayName": "Microsoft iSCSI Initiator Service", "startType": "manual", "status": "stopped"},
//	    {"name": "Dependent", "startType": "automatic", "status": "running", "dependsOn": ["W32Time"]},
//	    {"name": "W32Time", "displayName": "Windows Time", "startType": "manual", "status": "running"}
//	  ]
//	}
//
// A daemon can also take disks from flags with ParseDiskFlag (DiskFlags is
// a flag.Value), e.g. --sim-disk=size=10GiB,page83=6002248012,serial=SN1,location=0:0:1:0.
//
// # What it does not model
//
// Time (everything is instant: no pending service states, no slow
// formats), MBR disks, read-only disks, more than one data partition made
// by the API, shrinking disks, file systems other than NTFS (and FAT32 on
// the EFI partition), permissions and ACLs, file attributes and times,
// SMB share contents' size limits and RequirePrivacy, iSCSI multipath and
// persistent logins, and the contents of files beyond what WriteFile
// stores. Rescan only counts calls: changes are visible at once.
// Lenient where drivers differ: MountVolume creates a missing mount
// directory whose parent exists.
package simulated
