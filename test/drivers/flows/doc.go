// Package flows replays the Windows node code of five CSI drivers that run on
// csi-proxy today (azuredisk-csi-driver, aws-ebs-csi-driver,
// gcp-compute-persistent-disk-csi-driver, csi-driver-smb and
// vsphere-csi-driver): the csi-proxy calls each makes for NodeStageVolume,
// NodePublishVolume, NodeGetVolumeStats, NodeExpandVolume,
// NodeUnpublishVolume and NodeUnstageVolume, in the driver's order, and what
// the driver then does with each answer (the error texts it matches, the
// values it reads). Each driver's file cites the repository, files and
// commit it was learned from; the code is ours.
//
// The flows call a narrow Proxy whose methods have the signatures of the
// model group interfaces (groups/disk, groups/volume, ...), so any
// groups.Node satisfies it as it is, and so does an adapter over upstream's
// own client stubs. The package links no wire package: a binary that holds
// upstream's generated protos and ours panics at start (same proto names).
// Runners: test/drivers (library mode, and the Linux backend as root),
// test/drivers/upstreamwire (upstream v1.3.0's stubs against the daemon on
// the simulated host) and internal/host/windows/storage (the Windows backend over its
// model of a Windows node).
//
// A MounterPlan runs the same flows with each driver's node operations
// done through the shared mounter (client/mounter) instead of the driver's
// own raw calls (mounter.go): same volumes, kubelet steps, order and
// checks, so that a driver adopting the mounter is shown to end where the
// five drivers' own mounters end. Its runners: library mode, our client
// against the daemon and the Linux backend as root (test/drivers), and the
// Windows backend over its model (internal/host/windows/storage).
package flows
